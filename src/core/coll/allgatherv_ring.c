/* Allgatherv, ring: as the allgather ring, each block at its own count and
 * displacement. Cost: (p - 1) * alpha + sum(n_i) * beta. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allgatherv_ring(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    tern_sched_copy(s, a->sbuf, coll_at(a->rbuf, a->rdispls[r]), a->rcounts[r]);
    for (int i = 0; i < p - 1; i++) {
        int rc = coll_mod(r - i - 1, p), sc = coll_mod(r - i, p);
        tern_sched_recv(s, coll_at(a->rbuf, a->rdispls[rc]), a->rcounts[rc], coll_mod(r - 1, p));
        tern_sched_send(s, coll_at(a->rbuf, a->rdispls[sc]), a->rcounts[sc], (r + 1) % p);
        tern_sched_fence(s);
    }
    return tern_sched_error(s);
}
