/* Allreduce, shared memory: as reduce_shm.c, but every rank takes the
 * result: small vectors, every rank folds the p slots itself (no second
 * synchronisation); from TERN_SHM_PARALLEL_MIN bytes, every rank folds its
 * slice into the shared result slot, waits for all slices and copies the
 * whole result out. Blocking calls on node-local communicators
 * (shm_region.h). */
#include "core/coll/shm_region.h"
#include "core/coll/shm_reduce.h"

tern_status_t tern_coll_allreduce_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    tern_shm_region_t *reg = NULL;
    tern_status_t st = tern_sched_is_immediate(s) ? tern_shm_region_get(a->comm, &reg) : TERN_OK;
    if (st != TERN_OK)
        return st;
    if (!reg)
        return tern_coll_allreduce_recursive_doubling(s, a);
    return tern_shm_reduce_chunks(reg, a, -1);
}
