/* Allgather, Bruck et al. (1997): in round k rank r sends the first
 * min(2^k, p - 2^k) blocks it holds to r - 2^k and appends what r + 2^k
 * sends; then rotates the blocks into rank order. Cost: ceil(lg p) * alpha
 * + (p - 1) * n * beta plus one local rotation; small blocks, any p. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allgather_bruck(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t b = a->bytes;
    char *tmp = tern_sched_tmp(s, (size_t)p * b);
    if (!tmp)
        return tern_sched_error(s);
    tern_sched_copy(s, a->sbuf, tmp, b);
    for (int k = 1; k < p; k <<= 1) {
        int n = k < p - k ? k : p - k;
        tern_sched_recv(s, tmp + (size_t)k * b, (size_t)n * b, (r + k) % p);
        tern_sched_send(s, tmp, (size_t)n * b, coll_mod(r - k, p));
        tern_sched_fence(s);
    }
    /* tmp[j] is rank (r + j) % p's block. */
    size_t head = (size_t)(p - r) * b;
    char *rb = a->rbuf;
    tern_sched_copy(s, tmp, rb + (size_t)r * b, head);
    tern_sched_copy(s, tmp + head, rb, (size_t)r * b);
    return tern_sched_error(s);
}
