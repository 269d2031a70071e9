/* Reduce, shared memory: every rank copies its vector into its slot and
 * stores its enter flag. Small vectors: the root folds the p slots into
 * its result (p - 1 op applications on n bytes). From
 * TERN_SHM_PARALLEL_MIN bytes: every rank folds its 1/p slice of all the
 * slots into the shared result slot, and the root copies the result out
 * (each rank applies the op to n/p bytes). Folds run from the right, in
 * rank order, so non-commutative ops are served. Larger vectors go in
 * slot-sized chunks, one step each. Blocking calls on node-local
 * communicators (shm_region.h). */
#include "core/coll/shm_region.h"
#include "core/coll/shm_reduce.h"

tern_status_t tern_coll_reduce_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    tern_shm_region_t *reg = NULL;
    tern_status_t st = tern_sched_is_immediate(s) ? tern_shm_region_get(a->comm, &reg) : TERN_OK;
    if (st != TERN_OK)
        return st;
    if (!reg)
        return tern_coll_reduce_binomial(s, a);
    return tern_shm_reduce_chunks(reg, a, a->root);
}
