/* Allreduce, shared memory: as reduce_shm.c, but every rank takes the
 * result: small vectors, every rank folds the p slots itself (no second
 * synchronisation); from TERN_SHM_PARALLEL_MIN bytes, every rank folds its
 * slice into the shared result slot, waits for all slices and copies the
 * whole result out. Node-local communicators
 * (shm_region.h); run by shm_coll.c. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_allreduce_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_ALLREDUCE, &served);
    return st != TERN_OK || served ? st : tern_coll_allreduce_recursive_doubling(s, a);
}
