/* Broadcast down a binomial tree rooted at root (ranks relative to root).
 * A rank receives once from its parent, then sends to its children,
 * largest subtree first. Cost: ceil(lg p) * (alpha + n * beta); best for
 * short messages. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_bcast_binomial(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, vr = coll_mod(a->comm->rank - a->root, p);
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            tern_sched_recv(s, a->rbuf, a->bytes, (vr - mask + a->root) % p);
            tern_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            tern_sched_send(s, a->rbuf, a->bytes, (vr + mask + a->root) % p);
    return tern_sched_error(s);
}
