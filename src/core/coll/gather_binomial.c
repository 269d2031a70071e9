/* Gather up a binomial tree (ranks relative to the root): each rank
 * collects its subtree's blocks, in relative order, and sends them to its
 * parent in one message. Cost: lg p * alpha + (p - 1) / p * n_total * beta;
 * fewer messages than linear at the price of copies through intermediate
 * ranks. The root rotates the blocks into rank order at the end. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_gather_binomial(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank, vr = coll_mod(r - a->root, p);
    size_t b = a->bytes;
    /* Subtree span: the lowest set bit of vr, or the whole tree at the root. */
    int span = 1;
    while (span < p && !(vr & span))
        span <<= 1;
    int n_blocks = vr + span < p ? span : p - vr;
    if (n_blocks == 1) {
        if (vr != 0)
            tern_sched_send(s, a->sbuf, b, coll_mod(r - span, p));
        else
            tern_sched_copy(s, a->sbuf, a->rbuf, b);
        return tern_sched_error(s);
    }
    /* At root 0 the relative order is the rank order: gather in place. */
    char *tmp = (vr == 0 && a->root == 0) ? a->rbuf : tern_sched_tmp(s, (size_t)n_blocks * b);
    if (!tmp)
        return tern_sched_error(s);
    for (int mask = 1; mask < span && vr + mask < p; mask <<= 1) {
        int child = vr + mask;
        int cb = child + mask < p ? mask : p - child;
        tern_sched_recv(s, tmp + (size_t)mask * b, (size_t)cb * b, (child + a->root) % p);
    }
    tern_sched_copy(s, a->sbuf, tmp, b);
    if (vr != 0) {
        tern_sched_send(s, tmp, (size_t)n_blocks * b, coll_mod(r - span, p));
    } else if (tmp != a->rbuf) {
        /* Relative block j belongs to rank (j + root) % p. */
        size_t head = (size_t)(p - a->root) * b;
        tern_sched_copy(s, tmp, coll_at(a->rbuf, (size_t)a->root * b), head);
        tern_sched_copy(s, tmp + head, a->rbuf, (size_t)a->root * b);
    }
    return tern_sched_error(s);
}
