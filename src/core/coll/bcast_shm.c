/* Bcast, shared memory: the root copies the message into its slot and
 * stores its enter flag; the others wait for the flag and copy it out: one
 * copy in, one copy out per rank, no message. A message larger than a slot
 * goes in slot-sized chunks, one step each, alternating between the root's
 * two slots, so the root fills chunk k + 1 while the others read chunk k.
 * Node-local communicators (shm_region.h); run by shm_coll.c. */
#include "core/coll/shm_coll.h"

tern_status_t tern_coll_bcast_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    int served;
    tern_status_t st = tern_shm_coll_build(s, a, TERN_COLL_BCAST, &served);
    return st != TERN_OK || served ? st : tern_coll_bcast_binomial(s, a);
}
