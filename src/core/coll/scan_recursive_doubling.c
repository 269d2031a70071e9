/* Inclusive scan by recursive doubling: in round k ranks r and r ^ 2^k
 * swap the combination of their current blocks of ranks; the higher one
 * also folds it into its result. Lower ranks always on the left, so any
 * op. Cost: lg p * (alpha + n * beta + 2 n * gamma); for short vectors. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_scan_recursive_doubling(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t n = a->count * a->esz;
    char *partial = tern_sched_tmp(s, n), *tmp = tern_sched_tmp(s, n);
    if (!partial || !tmp)
        return tern_sched_error(s);
    tern_sched_copy(s, a->sbuf, partial, n);
    tern_sched_copy(s, a->sbuf, a->rbuf, n);
    for (int mask = 1; mask < p; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        tern_sched_recv(s, tmp, n, dst);
        tern_sched_send(s, partial, n, dst);
        tern_sched_fence(s);
        if (r > dst) {
            tern_sched_reduce(s, tmp, partial, a->count, a->dt, a->op);
            tern_sched_reduce(s, tmp, a->rbuf, a->count, a->dt, a->op);
        } else {
            tern_sched_reduce(s, partial, tmp, a->count, a->dt, a->op);
            tern_sched_copy(s, tmp, partial, n);
        }
    }
    return tern_sched_error(s);
}
