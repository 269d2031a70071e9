/* Reduce-scatter, direct: every rank sends each other rank that rank's
 * segment of its vector, and each rank folds the p pieces of its own
 * segment in rank order, x_0 op x_1 op ... op x_(p-1) (any op). A rank
 * whose segment is empty gets no message and folds nothing. Cost per rank:
 * (p - 1) * alpha + (p - 1) / p * n * (beta + gamma) for even segments;
 * one step, and no rank waits for another's partial result, so a
 * descheduled rank holds up only the owners of its segments: for small
 * vectors when ranks outnumber cores (where the binomial reduce of
 * reduce_scatterv makes inner ranks and the root wait in turn). Also
 * serves reduce_scatter_block. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_reduce_scatter_direct(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t e = a->esz, off = 0, my_off = 0, mine = a->rcounts[r] * e;
    for (int i = 0; i < p; i++) {
        size_t n = a->rcounts[i] * e;
        if (i == r)
            my_off = off;
        else if (n)
            tern_sched_send(s, coll_at(a->sbuf, off), n, i);
        off += n;
    }
    if (!mine)
        return tern_sched_error(s);
    char *blocks = tern_sched_tmp(s, (size_t)p * mine);
    if (!blocks)
        return tern_sched_error(s);
    for (int i = 0; i < p; i++)
        if (i != r)
            tern_sched_recv(s, blocks + (size_t)i * mine, mine, i);
    tern_sched_copy(s, coll_at(a->sbuf, my_off), blocks + (size_t)r * mine, mine);
    /* Left fold: block i+1 = block i op block i+1; the last holds it all. */
    for (int i = 0; i + 1 < p; i++)
        tern_sched_reduce(s, blocks + (size_t)i * mine, blocks + (size_t)(i + 1) * mine,
                          a->rcounts[r], a->dt, a->op);
    tern_sched_copy(s, blocks + (size_t)(p - 1) * mine, a->rbuf, mine);
    return tern_sched_error(s);
}

tern_status_t tern_coll_reduce_scatter_block_direct(tern_sched_t *s, const tern_coll_args_t *a)
{
    return tern_coll_reduce_scatter_direct(s, a);
}
