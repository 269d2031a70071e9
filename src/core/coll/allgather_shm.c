/* Allgather, shared memory: every rank copies its block into its slot,
 * stores its enter flag, copies its block to its own place in the receive
 * buffer (never through a slot), waits for everyone's flag and copies the
 * p - 1 other slots out; no message. Blocks larger than a slot go in
 * slot-sized chunks.
 * Node-local communicators (shm_region.h); run by shm_coll.c. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_allgather_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_ALLGATHER, &served);
    return st != TERN_OK || served ? st : tern_coll_allgather_ring(s, a);
}
