/* Exclusive scan along a chain: rank r receives the prefix of ranks
 * 0..r-1 (its result) and sends prefix op x_r to r + 1; rank 0's result is
 * undefined and left alone. Cost: (p - 1) * (alpha + n * beta + n * gamma);
 * any op. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_exscan_linear(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t n = a->count * a->esz;
    if (r == 0) {
        if (p > 1)
            tern_sched_send(s, a->sbuf, n, 1);
        return tern_sched_error(s);
    }
    char *mine = NULL;
    if (r + 1 < p) {
        /* Keep x_r: in place, the receive overwrites it. */
        if (!(mine = tern_sched_tmp(s, n)))
            return tern_sched_error(s);
        tern_sched_copy(s, a->sbuf, mine, n);
    }
    tern_sched_recv(s, a->rbuf, n, r - 1);
    if (mine) {
        tern_sched_reduce(s, a->rbuf, mine, a->count, a->dt, a->op);
        tern_sched_send(s, mine, n, r + 1);
    }
    return tern_sched_error(s);
}
