/* Inclusive scan along a chain: rank r waits for the prefix of ranks
 * 0..r-1 from r - 1, computes prefix op x_r and passes it on. Cost:
 * (p - 1) * (alpha + n * beta + n * gamma) end to end; any op, minimal
 * work. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_scan_linear(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t n = a->count * a->esz;
    if (r > 0) {
        char *tmp = tern_sched_tmp(s, n);
        if (!tmp)
            return tern_sched_error(s);
        tern_sched_recv(s, tmp, n, r - 1);
        tern_sched_copy(s, a->sbuf, a->rbuf, n);
        tern_sched_reduce(s, tmp, a->rbuf, a->count, a->dt, a->op);
    } else {
        tern_sched_copy(s, a->sbuf, a->rbuf, n);
    }
    if (r + 1 < p)
        tern_sched_send(s, a->rbuf, n, r + 1);
    return tern_sched_error(s);
}
