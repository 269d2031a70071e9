/* Barrier, shared memory: every rank stores its enter flag for the step
 * and waits until it sees every other rank's. No message; on p ranks each
 * reads p - 1 cache lines. Node-local communicators
 * (shm_region.h); run by shm_coll.c. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_barrier_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_BARRIER, &served);
    return st != TERN_OK || served ? st : tern_coll_barrier_dissemination(s, a);
}
