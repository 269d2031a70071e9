/* Broadcast for long messages (van de Geijn): the root scatters the message
 * in p chunks down a binomial tree, then a ring allgather reassembles it
 * everywhere. Cost: (lg p + p - 1) * alpha + 2 * (p - 1) / p * n * beta,
 * about twice the bandwidth of binomial's lg p * n * beta for large p. */
#include "core/coll/coll_util.h"

/* Byte range of the chunks of relative ranks [first, end). */
static size_t lo(size_t chunk, size_t n, int first)
{
    size_t o = (size_t)first * chunk;
    return o < n ? o : n;
}

tern_status_t tern_coll_bcast_scatter_allgather(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, vr = coll_mod(a->comm->rank - a->root, p);
    size_t n = a->bytes, chunk = (n + (size_t)p - 1) / (size_t)p;
    char *buf = a->rbuf;
    if (p == 1)
        return TERN_OK;
    /* Scatter: the subtree of vr (relative ranks [vr, vr + mask)) gets
     * its chunks from the parent. */
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            int end = vr + mask < p ? vr + mask : p;
            size_t b = lo(chunk, n, vr), e = lo(chunk, n, end);
            tern_sched_recv(s, buf + b, e - b, (vr - mask + a->root) % p);
            tern_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p) {
            int end = vr + 2 * mask < p ? vr + 2 * mask : p;
            size_t b = lo(chunk, n, vr + mask), e = lo(chunk, n, end);
            tern_sched_send(s, buf + b, e - b, (vr + mask + a->root) % p);
        }
    tern_sched_fence(s);
    /* Ring allgather of the chunks. */
    int right = (a->comm->rank + 1) % p, left = coll_mod(a->comm->rank - 1, p);
    for (int i = 0; i < p - 1; i++) {
        int sc = coll_mod(vr - i, p), rc = coll_mod(vr - i - 1, p);
        size_t sb = lo(chunk, n, sc), se = lo(chunk, n, sc + 1);
        size_t rb = lo(chunk, n, rc), re = lo(chunk, n, rc + 1);
        tern_sched_recv(s, buf + rb, re - rb, left);
        tern_sched_send(s, buf + sb, se - sb, right);
        tern_sched_fence(s);
    }
    return tern_sched_error(s);
}
