/* Reduce-scatter, recursive halving (commutative ops): with q the largest
 * power of two <= p and m = p - q, the first 2m ranks pair up and the even
 * one hands its vector to the odd one; the q ranks left halve the vector
 * lg q times, each keeping the half holding its own segments and folding
 * the partner's copy of it in; an odd rank of the first 2m then sends its
 * even partner that rank's segment. Cost: lg q * alpha + (q - 1) / q * n *
 * (beta + gamma) (plus n for the pairs). A message whose part is empty is
 * not sent: both sides know every count, so with a vector shorter than the
 * communicator (8 B over 8 ranks) a rank that owns nothing sends once and
 * leaves, and the owners wait for lg q messages, not p - 1 as in direct.
 * Also serves reduce_scatter_block. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_reduce_scatter_recursive_halving(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t e = a->esz, n = a->count * e;
    int q = coll_pof2_floor(p), m = p - q;
    size_t *off = tern_sched_tmp(s, (size_t)(p + 1) * sizeof *off);
    char *work = tern_sched_tmp(s, n), *in = tern_sched_tmp(s, n);
    if (!off || !work || !in)
        return tern_sched_error(s);
    off[0] = 0;
    for (int i = 0; i < p; i++)
        off[i + 1] = off[i] + a->rcounts[i];
    if (r < 2 * m && r % 2 == 0) {
        if (n)
            tern_sched_send(s, a->sbuf, n, r + 1);
        /* In place sbuf is rbuf: the segment comes back only after the
         * partner has received the vector. */
        if (a->rcounts[r])
            tern_sched_recv(s, a->rbuf, a->rcounts[r] * e, r + 1);
        return tern_sched_error(s);
    }
    tern_sched_copy(s, a->sbuf, work, n);
    if (r < 2 * m && n) {
        tern_sched_recv(s, in, n, r - 1);
        tern_sched_fence(s);
        tern_sched_reduce(s, in, work, a->count, a->dt, a->op);
    }
    int nr = r < 2 * m ? r / 2 : r - m;
    int lo = 0, hi = q; /* the new ranks whose segments this rank still holds */
    for (int mask = q / 2; mask > 0; mask /= 2) {
        coll_halving_step_t st = coll_halving_step(nr, mask, m, off, &lo, &hi);
        if (st.keep)
            tern_sched_recv(s, in, st.keep * e, st.peer);
        if (st.give)
            tern_sched_send(s, work + st.give_at * e, st.give * e, st.peer);
        tern_sched_fence(s);
        if (st.keep)
            tern_sched_reduce(s, in, work + st.keep_at * e, st.keep, a->dt, a->op);
    }
    /* Now lo == nr: this rank holds the sums of new rank nr's segments. */
    if (r < 2 * m && a->rcounts[r - 1])
        tern_sched_send(s, work + off[r - 1] * e, a->rcounts[r - 1] * e, r - 1);
    tern_sched_copy(s, work + off[r] * e, a->rbuf, a->rcounts[r] * e);
    return tern_sched_error(s);
}

tern_status_t tern_coll_reduce_scatter_block_recursive_halving(tern_sched_t *s,
                                                               const tern_coll_args_t *a)
{
    return tern_coll_reduce_scatter_recursive_halving(s, a);
}
