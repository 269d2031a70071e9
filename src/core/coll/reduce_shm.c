/* Reduce, shared memory: every rank copies its vector into its slot and
 * stores its enter flag (the root, unless in place, keeps its own in its
 * buffer). Small vectors, and any vector at 2 ranks: the root folds the p
 * terms into its result (p - 1 op applications on n bytes). From
 * TERN_SHM_PARALLEL_MIN bytes: every rank folds its 1/p slice of all the
 * slots into the shared result slot, and the root copies the result out
 * (each rank applies the op to n/p bytes). Folds run from the right, in
 * rank order, so non-commutative ops are served. Larger vectors go in
 * slot-sized chunks, one step each. Node-local
 * communicators (shm_region.h); run by shm_coll.c. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_reduce_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_REDUCE, &served);
    return st != TERN_OK || served ? st : tern_coll_reduce_binomial(s, a);
}
