/* Reduce-scatter as a binomial reduce to rank 0 (rank order kept, so any
 * op) followed by a linear scatterv of the segments. Cost: lg p * (alpha +
 * n * beta + n * gamma) + (p - 1) * alpha + n * beta (ranks with an empty
 * part get no message: p - 1 counts the others). Also serves
 * reduce_scatter_block (coll.c gives it equal counts). */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_reduce_scatter_reduce_scatterv(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t n = a->count * a->esz;
    char *full = r == 0 ? tern_sched_tmp(s, n) : NULL;
    size_t *sc = tern_sched_tmp(s, 2 * (size_t)p * sizeof *sc);
    if ((r == 0 && !full) || !sc)
        return tern_sched_error(s);
    size_t *sd = sc + p, off = 0;
    for (int i = 0; i < p; i++) {
        sc[i] = a->rcounts[i] * a->esz;
        sd[i] = off;
        off += sc[i];
    }
    tern_coll_args_t x = *a;
    x.root = 0;
    x.rbuf = full;
    tern_status_t st = tern_coll_reduce_binomial(s, &x);
    if (st != TERN_OK)
        return st;
    tern_sched_fence(s);
    /* The scatterv, less its empty parts: every rank has all the counts,
     * so a rank whose part is empty neither waits for the root nor gets a
     * message; it leaves once its share of the reduce is sent (a vector
     * shorter than the communicator, 8 B over 8 ranks, leaves most ranks
     * so: they run ahead as a gather's senders do). */
    if (r != 0) {
        if (sc[r])
            tern_sched_recv(s, a->rbuf, sc[r], 0);
        return tern_sched_error(s);
    }
    for (int i = 1; i < p; i++)
        if (sc[i])
            tern_sched_send(s, full + sd[i], sc[i], i);
    tern_sched_copy(s, full, a->rbuf, sc[0]);
    return tern_sched_error(s);
}

tern_status_t tern_coll_reduce_scatter_block_reduce_scatterv(tern_sched_t *s,
                                                             const tern_coll_args_t *a)
{
    return tern_coll_reduce_scatter_reduce_scatterv(s, a);
}
