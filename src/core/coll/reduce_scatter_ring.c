/* Reduce-scatter, ring: p - 1 steps; in step i rank r passes its partial
 * sum of segment r - i - 1 to r + 1 and adds the one for segment r - i - 2
 * from r - 1, so segment r ends complete on rank r. Cost: (p - 1) alpha +
 * (p - 1) / p * n * (beta + gamma): bandwidth-optimal for long vectors.
 * Commutative ops only. Also serves reduce_scatter_block. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_reduce_scatter_ring(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t e = a->esz, maxc = 0;
    size_t *off = tern_sched_tmp(s, (size_t)p * sizeof *off);
    char *work = tern_sched_tmp(s, a->count * e);
    if (!off || !work)
        return tern_sched_error(s);
    size_t o = 0;
    for (int i = 0; i < p; i++) {
        off[i] = o;
        o += a->rcounts[i];
        if (a->rcounts[i] > maxc)
            maxc = a->rcounts[i];
    }
    char *tmp = tern_sched_tmp(s, maxc * e);
    if (!tmp)
        return tern_sched_error(s);
    tern_sched_copy(s, a->sbuf, work, a->count * e);
    int left = coll_mod(r - 1, p), right = (r + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sg = coll_mod(r - i - 1, p), rg = coll_mod(r - i - 2, p);
        tern_sched_recv(s, tmp, a->rcounts[rg] * e, left);
        tern_sched_send(s, work + off[sg] * e, a->rcounts[sg] * e, right);
        tern_sched_fence(s);
        tern_sched_reduce(s, tmp, work + off[rg] * e, a->rcounts[rg], a->dt, a->op);
    }
    tern_sched_copy(s, work + off[r] * e, a->rbuf, a->rcounts[r] * e);
    return tern_sched_error(s);
}

tern_status_t tern_coll_reduce_scatter_block_ring(tern_sched_t *s, const tern_coll_args_t *a)
{
    return tern_coll_reduce_scatter_ring(s, a);
}
