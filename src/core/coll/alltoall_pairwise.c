/* Alltoall, pairwise exchange: in step i rank r sends to r + i and
 * receives from r - i, one pair of messages in flight. Cost: (p - 1) *
 * (alpha + n * beta); keeps the network uncongested for large blocks. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_alltoall_pairwise(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t b = a->bytes;
    tern_sched_copy(s, coll_at(a->sbuf, (size_t)r * b), coll_at(a->rbuf, (size_t)r * b), b);
    for (int i = 1; i < p; i++) {
        int to = (r + i) % p, from = coll_mod(r - i, p);
        tern_sched_recv(s, coll_at(a->rbuf, (size_t)from * b), b, from);
        tern_sched_send(s, coll_at(a->sbuf, (size_t)to * b), b, to);
        tern_sched_fence(s);
    }
    return tern_sched_error(s);
}
