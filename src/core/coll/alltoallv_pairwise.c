/* Alltoallv and alltoallw, pairwise exchange: in step i rank r sends its
 * block for r + i and receives the one from r - i, each at its own count
 * and displacement (bytes, after packing). Cost: (p - 1) * alpha +
 * sum of the blocks * beta; one pair in flight at a time. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_alltoallv_pairwise(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    tern_sched_copy(s, coll_at(a->sbuf, a->sdispls[r]), coll_at(a->rbuf, a->rdispls[r]),
                    a->rcounts[r]);
    for (int i = 1; i < p; i++) {
        int to = (r + i) % p, from = coll_mod(r - i, p);
        tern_sched_recv(s, coll_at(a->rbuf, a->rdispls[from]), a->rcounts[from], from);
        tern_sched_send(s, coll_at(a->sbuf, a->sdispls[to]), a->scounts[to], to);
        tern_sched_fence(s);
    }
    return tern_sched_error(s);
}

/* Alltoallw has the same shape once coll.c turned every block into bytes. */
tern_status_t tern_coll_alltoallw_pairwise(tern_sched_t *s, const tern_coll_args_t *a)
{
    return tern_coll_alltoallv_pairwise(s, a);
}
