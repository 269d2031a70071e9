/* Barrier, shared memory: every rank stores its enter flag for the step
 * and waits until it sees every other rank's. No message; on p ranks each
 * reads p - 1 cache lines. Blocking calls on node-local communicators
 * (shm_region.h). */
#include "core/coll/shm_region.h"

tern_status_t tern_coll_barrier_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    tern_shm_region_t *reg = NULL;
    tern_status_t st = tern_sched_is_immediate(s) ? tern_shm_region_get(a->comm, &reg) : TERN_OK;
    if (st != TERN_OK)
        return st;
    if (!reg)
        return tern_coll_barrier_dissemination(s, a);
    uint64_t n = tern_shm_next_step(reg);
    tern_shm_set(reg, TERN_SHM_ENTER, n);
    st = tern_shm_wait(reg, TERN_SHM_ENTER, -1, n);
    tern_shm_set(reg, TERN_SHM_LEAVE, n);
    return st;
}
