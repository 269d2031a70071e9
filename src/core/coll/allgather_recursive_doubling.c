/* Allgather by recursive doubling (power-of-two sizes): in round k ranks
 * r and r ^ 2^k swap everything each has so far, doubling it. Cost:
 * lg p * alpha + (p - 1) * n * beta; for small blocks. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allgather_recursive_doubling(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t b = a->bytes;
    char *rb = a->rbuf;
    tern_sched_copy(s, a->sbuf, rb + (size_t)r * b, b);
    for (int mask = 1; mask < p; mask <<= 1) {
        int peer = r ^ mask;
        size_t mine = (size_t)(r & ~(mask - 1)), theirs = (size_t)(peer & ~(mask - 1));
        tern_sched_recv(s, rb + theirs * b, (size_t)mask * b, peer);
        /* Round one sends the own block from the send buffer, not from
         * its fresh copy (allgather_ring.c says why). */
        tern_sched_send(s, mask == 1 ? (const char *)a->sbuf : rb + mine * b, (size_t)mask * b, peer);
        tern_sched_fence(s);
    }
    return tern_sched_error(s);
}
