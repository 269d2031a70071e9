/* Bcast, shared memory: the root copies the message into a cell of the
 * region's bcast ring and stores its enter flag; the others wait for the
 * flag and copy it out: one copy in, one copy out per rank, no message. A
 * message larger than a cell goes in cell-sized chunks, one step each,
 * round the ring, so the root fills the next cells (of this bcast or the
 * next ones) while the others read the earlier ones. Node-local
 * communicators (shm_region.h); run by shm_coll.c. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_bcast_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_BCAST, &served);
    return st != TERN_OK || served ? st : tern_coll_bcast_binomial(s, a);
}
