/* Alltoall, direct: every receive and send posted at once, one wait.
 * Cost: alpha + (p - 1) * n * beta in the best case; for small blocks,
 * where latency dominates and the flood is harmless. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_alltoall_direct(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t b = a->bytes;
    for (int i = 1; i < p; i++) {
        int from = coll_mod(r - i, p);
        tern_sched_recv(s, coll_at(a->rbuf, (size_t)from * b), b, from);
    }
    for (int i = 1; i < p; i++) {
        int to = (r + i) % p;
        tern_sched_send(s, coll_at(a->sbuf, (size_t)to * b), b, to);
    }
    tern_sched_copy(s, coll_at(a->sbuf, (size_t)r * b), coll_at(a->rbuf, (size_t)r * b), b);
    return tern_sched_error(s);
}
