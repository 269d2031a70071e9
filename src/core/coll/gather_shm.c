/* Gather, shared memory: every rank copies its block into its slot and stores
 * its enter flag; the root waits for them and copies every slot into its
 * receive buffer. One copy in, one copy out, no message; blocks larger than
 * a slot go in slot-sized chunks, one step each.
 * Node-local communicators (shm_region.h); run by shm_coll.c. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_gather_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_GATHER, &served);
    return st != TERN_OK || served ? st : tern_coll_gather_binomial(s, a);
}
