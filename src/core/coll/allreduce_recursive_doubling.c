/* Allreduce by recursive doubling: with p' the largest power of two <= p,
 * the first 2 (p - p') ranks first fold pairwise (odd ranks keep x_even op
 * x_odd), then in round k ranks exchange their whole vector with the
 * partner 2^k away and combine, lower ranks on the left, and the folded-out
 * ranks get the result back. Every block of ranks combined is a run of
 * consecutive ranks, so non-commutative ops are correct, and both partners
 * compute the same bits. Cost: (lg p' + 2) * (alpha + n * beta + n *
 * gamma); for short vectors. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allreduce_recursive_doubling(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t n = a->count * a->esz;
    char *rb = a->rbuf;
    tern_sched_copy(s, a->sbuf, rb, n);
    if (p == 1)
        return tern_sched_error(s);
    char *tmp = tern_sched_tmp(s, n);
    if (!tmp)
        return tern_sched_error(s);
    int pof2 = coll_pof2_floor(p), rem = p - pof2, newrank;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            tern_sched_send(s, rb, n, r + 1);
            newrank = -1;
        } else {
            tern_sched_recv(s, tmp, n, r - 1);
            tern_sched_reduce(s, tmp, rb, a->count, a->dt, a->op);
            newrank = r / 2;
        }
    } else {
        newrank = r - rem;
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            tern_sched_recv(s, tmp, n, dst);
            tern_sched_send(s, rb, n, dst);
            tern_sched_fence(s);
            if (dst < r) {
                tern_sched_reduce(s, tmp, rb, a->count, a->dt, a->op);
            } else {
                tern_sched_reduce(s, rb, tmp, a->count, a->dt, a->op);
                tern_sched_copy(s, tmp, rb, n);
            }
        }
    }
    tern_sched_fence(s);
    if (r < 2 * rem) {
        if (r % 2 == 0)
            tern_sched_recv(s, rb, n, r + 1);
        else
            tern_sched_send(s, rb, n, r - 1);
    }
    return tern_sched_error(s);
}
