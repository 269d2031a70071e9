/* Bcast, shared memory: the root copies the message into its slot and
 * stores its enter flag; the others wait for the flag and copy it out: one
 * copy in, one copy out per rank, no message. A message larger than a slot
 * goes in slot-sized chunks, one step each, alternating between the root's
 * two slots, so the root fills chunk k + 1 while the others read chunk k.
 * Blocking calls on node-local communicators (shm_region.h). */
#include "core/coll/shm_region.h"

#include <string.h>

tern_status_t tern_coll_bcast_shm(tern_sched_t *s, const tern_coll_args_t *a)
{
    tern_shm_region_t *reg = NULL;
    tern_status_t st = tern_sched_is_immediate(s) ? tern_shm_region_get(a->comm, &reg) : TERN_OK;
    if (st != TERN_OK)
        return st;
    if (!reg)
        return tern_coll_bcast_binomial(s, a);
    char *buf = a->rbuf;
    size_t slot = tern_shm_slot_bytes(reg);
    int root = a->root, me = a->comm->rank;
    for (size_t off = 0; off < a->bytes && st == TERN_OK; off += slot) {
        size_t len = a->bytes - off < slot ? a->bytes - off : slot;
        uint64_t n = tern_shm_next_step(reg);
        if (me == root) {
            st = tern_shm_wait_slot_free(reg, n);
            if (st != TERN_OK)
                break;
            memcpy(tern_shm_slot(reg, root, n), buf + off, len);
            tern_shm_set(reg, TERN_SHM_ENTER, n);
        } else {
            st = tern_shm_wait(reg, TERN_SHM_ENTER, root, n);
            if (st != TERN_OK)
                break;
            memcpy(buf + off, tern_shm_slot(reg, root, n), len);
        }
        tern_shm_set(reg, TERN_SHM_LEAVE, n);
    }
    return st;
}
