/* Allgather, ring: in step i rank r passes block (r - i) to r + 1 and
 * receives block (r - i - 1) from r - 1. Cost: (p - 1) * (alpha + n *
 * beta): bandwidth-optimal, latency linear in p; for large blocks. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allgather_ring(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t b = a->bytes;
    char *rb = a->rbuf;
    tern_sched_copy(s, a->sbuf, rb + (size_t)r * b, b);
    for (int i = 0; i < p - 1; i++) {
        tern_sched_recv(s, rb + (size_t)coll_mod(r - i - 1, p) * b, b, coll_mod(r - 1, p));
        /* The first step sends this rank's own block from the send
         * buffer, not from the copy just made: a line the copy left
         * modified in this core's cache costs the reader more to fetch
         * (2 bound ranks, 64 KB: 16-21 against 8-9 us, as fast as the
         * alltoall that sends from its send buffer). */
        const char *out = i == 0 ? (const char *)a->sbuf : rb + (size_t)coll_mod(r - i, p) * b;
        tern_sched_send(s, out, b, (r + 1) % p);
        tern_sched_fence(s);
    }
    return tern_sched_error(s);
}
