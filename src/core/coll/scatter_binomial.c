/* Scatter down a binomial tree (ranks relative to the root): each rank
 * receives its whole subtree's blocks from its parent in one message and
 * forwards the children's parts. Cost: lg p * alpha + (p - 1) / p *
 * n_total * beta; fewer messages than linear, for small blocks. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_scatter_binomial(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank, vr = coll_mod(r - a->root, p);
    size_t b = a->bytes;
    int span = 1;
    while (span < p && !(vr & span))
        span <<= 1;
    int n_blocks = vr + span < p ? span : p - vr;
    if (n_blocks == 1) {
        if (vr != 0)
            tern_sched_recv(s, a->rbuf, b, coll_mod(r - span, p));
        else
            tern_sched_copy(s, a->sbuf, a->rbuf, b);
        return tern_sched_error(s);
    }
    const char *blocks;
    if (vr == 0 && a->root == 0) {
        blocks = a->sbuf;
    } else {
        char *tmp = tern_sched_tmp(s, (size_t)n_blocks * b);
        if (!tmp)
            return tern_sched_error(s);
        if (vr == 0) { /* rotate into relative order */
            size_t head = (size_t)(p - a->root) * b;
            tern_sched_copy(s, coll_at(a->sbuf, (size_t)a->root * b), tmp, head);
            tern_sched_copy(s, a->sbuf, tmp + head, (size_t)a->root * b);
        } else {
            tern_sched_recv(s, tmp, (size_t)n_blocks * b, coll_mod(r - span, p));
            tern_sched_fence(s);
        }
        blocks = tmp;
    }
    for (int mask = span >> 1; mask > 0; mask >>= 1) {
        int child = vr + mask;
        if (child >= p)
            continue;
        int cb = child + mask < p ? mask : p - child;
        tern_sched_send(s, blocks + (size_t)mask * b, (size_t)cb * b, (child + a->root) % p);
    }
    tern_sched_copy(s, blocks, a->rbuf, b);
    return tern_sched_error(s);
}
