/* Reduce up a binomial tree. A rank combines its subtree's partial
 * results, lower ranks always on the left (acc = acc op child), and sends
 * the result to its parent. Commutative ops use a tree rooted at the root;
 * non-commutative ones a tree rooted at rank 0, whose subtrees are runs of
 * consecutive ranks, so the result is x_0 op x_1 op ... op x_(p-1); rank 0
 * then hands it to the root. Cost: lg p * (alpha + n * beta + n * gamma). */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_reduce_binomial(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    int pivot = a->commutative ? a->root : 0;
    int vr = coll_mod(r - pivot, p);
    size_t n = a->count * a->esz;
    const char *acc = a->sbuf;
    char *bufs[2] = {NULL, NULL};
    int next = 0;
    int mask = 1;
    if (r == a->root && vr == 0 && a->rbuf != a->sbuf) {
        /* The root's last partial result lands in the receive buffer
         * itself (no scratch, no copy at the end: 64 KB at 2 ranks spent a
         * third of its time on them): the buffers alternate, so the first
         * is it when the root has an odd number of children. */
        int children = 0;
        for (int m = 1; m < p; m <<= 1)
            children++;
        bufs[(children - 1) & 1] = a->rbuf;
    }
    for (; mask < p; mask <<= 1) {
        if (vr & mask) {
            int parent = (vr - mask + pivot) % p;
            tern_sched_send(s, acc, n, parent);
            if (r == a->root) /* non-commutative: rank 0 has the result */
                tern_sched_recv(s, a->rbuf, n, pivot);
            return tern_sched_error(s);
        }
        int child = vr + mask;
        if (child >= p)
            continue;
        if (!bufs[next] && !(bufs[next] = tern_sched_tmp(s, n)))
            return tern_sched_error(s);
        char *in = bufs[next];
        tern_sched_recv(s, in, n, (child + pivot) % p);
        tern_sched_reduce(s, acc, in, a->count, a->dt, a->op); /* in = acc op in */
        acc = in;
        next ^= 1;
    }
    /* vr == 0: this rank holds the result. */
    if (r == a->root) {
        tern_sched_copy(s, acc, a->rbuf, n);
    } else {
        tern_sched_send(s, acc, n, a->root);
        tern_sched_fence(s);
    }
    return tern_sched_error(s);
}
