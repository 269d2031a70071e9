/* Reduce, linear: the root receives every rank's vector and folds them in
 * rank order, x_0 op x_1 op ... op x_(p-1). Cost: (p - 1) * (alpha + n *
 * beta + n * gamma) at the root, p vectors of memory; for tiny
 * communicators or vectors, and a plain reference order. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_reduce_linear(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t n = a->count * a->esz;
    if (r != a->root) {
        tern_sched_send(s, a->sbuf, n, a->root);
        return tern_sched_error(s);
    }
    if (p == 1) {
        tern_sched_copy(s, a->sbuf, a->rbuf, n);
        return tern_sched_error(s);
    }
    char *blocks = tern_sched_tmp(s, (size_t)p * n);
    if (!blocks)
        return tern_sched_error(s);
    for (int i = 0; i < p; i++)
        if (i != r)
            tern_sched_recv(s, blocks + (size_t)i * n, n, i);
    tern_sched_copy(s, a->sbuf, blocks + (size_t)r * n, n);
    /* Left fold: block i+1 = block i op block i+1; the last holds it all. */
    for (int i = 0; i + 1 < p; i++)
        tern_sched_reduce(s, blocks + (size_t)i * n, blocks + (size_t)(i + 1) * n, a->count,
                          a->dt, a->op);
    tern_sched_copy(s, blocks + (size_t)(p - 1) * n, a->rbuf, n);
    return tern_sched_error(s);
}
