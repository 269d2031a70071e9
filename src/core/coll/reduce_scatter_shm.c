/* Reduce-scatter, shared memory: every rank copies the other ranks'
 * blocks of its vector into its slot and stores its enter flag; each rank
 * then folds its own block out of all the slots (its own term straight
 * from its buffer) into its receive buffer: one step per slot's worth,
 * each rank applying the op to n/p elements and reading only its 1/p of
 * the slots. A vector that fits a slot goes in one step as it is; a larger
 * one in steps of a slot / p elements of every block. Folds run from the
 * right, in rank order, but selection keeps it to commutative ops (the
 * others keep reduce_scatterv). Node-local communicators (shm_region.h);
 * run by shm_coll.c. Also serves reduce_scatter_block. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_reduce_scatter_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_REDUCE_SCATTER, &served);
    return st != TERN_OK || served ? st : tern_coll_reduce_scatter_reduce_scatterv(s, a);
}

tern_status_t tern_coll_reduce_scatter_block_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_REDUCE_SCATTER_BLOCK, &served);
    return st != TERN_OK || served ? st : tern_coll_reduce_scatter_reduce_scatterv(s, a);
}
