/* Exclusive scan by recursive doubling: as the inclusive one, but a rank's
 * result gathers only what lower partners sent (the first such block is
 * copied, later ones folded in on the left). Any op. Cost: lg p * (alpha +
 * n * beta + 2 n * gamma). */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_exscan_recursive_doubling(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t n = a->count * a->esz;
    char *partial = tern_sched_tmp(s, n), *tmp = tern_sched_tmp(s, n);
    if (!partial || !tmp)
        return tern_sched_error(s);
    tern_sched_copy(s, a->sbuf, partial, n);
    int have = 0;
    for (int mask = 1; mask < p; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        tern_sched_recv(s, tmp, n, dst);
        tern_sched_send(s, partial, n, dst);
        tern_sched_fence(s);
        if (r > dst) {
            tern_sched_reduce(s, tmp, partial, a->count, a->dt, a->op);
            if (!have)
                tern_sched_copy(s, tmp, a->rbuf, n);
            else
                tern_sched_reduce(s, tmp, a->rbuf, a->count, a->dt, a->op);
            have = 1;
        } else {
            tern_sched_reduce(s, partial, tmp, a->count, a->dt, a->op);
            tern_sched_copy(s, tmp, partial, n);
        }
    }
    return tern_sched_error(s);
}
