/* Allreduce as a binomial reduce to rank 0 followed by a binomial
 * broadcast. Cost: 2 lg p * (alpha + n * beta) + lg p * n * gamma; any op
 * (the reduce keeps rank order), a simple and robust baseline. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allreduce_reduce_bcast(tern_sched_t *s, const tern_coll_args_t *a)
{
    tern_coll_args_t x = *a;
    x.root = 0;
    tern_status_t st = tern_coll_reduce_binomial(s, &x);
    if (st != TERN_OK)
        return st;
    /* The reduce may still be reading rbuf (in place) when the bcast
     * would start writing it. */
    tern_sched_fence(s);
    x.bytes = a->count * a->esz;
    return tern_coll_bcast_binomial(s, &x);
}
