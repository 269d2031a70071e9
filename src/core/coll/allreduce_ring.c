/* Allreduce, ring: the vector is cut in p segments; a ring reduce-scatter
 * (p - 1 steps, each rank adding the segment it receives) leaves segment
 * r + 1 complete on rank r, and a ring allgather spreads them. Cost:
 * 2 (p - 1) alpha + 2 (p - 1) / p * n * beta + (p - 1) / p * n * gamma:
 * bandwidth-optimal for long vectors. Commutative ops only (each segment
 * is combined starting at a different rank). */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allreduce_ring(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t n = a->count, e = a->esz;
    char *rb = a->rbuf;
    tern_sched_copy(s, a->sbuf, rb, n * e);
    if (p == 1)
        return tern_sched_error(s);
    char *tmp = tern_sched_tmp(s, coll_seg_len(n, p, 0) * e);
    if (!tmp)
        return tern_sched_error(s);
    int left = coll_mod(r - 1, p), right = (r + 1) % p;
    for (int i = 0; i < p - 1; i++) {
        int sg = coll_mod(r - i, p), rg = coll_mod(r - i - 1, p);
        tern_sched_recv(s, tmp, coll_seg_len(n, p, rg) * e, left);
        tern_sched_send(s, rb + coll_seg_off(n, p, sg) * e, coll_seg_len(n, p, sg) * e, right);
        tern_sched_fence(s);
        tern_sched_reduce(s, tmp, rb + coll_seg_off(n, p, rg) * e, coll_seg_len(n, p, rg), a->dt,
                          a->op);
    }
    for (int i = 0; i < p - 1; i++) {
        int sg = coll_mod(r + 1 - i, p), rg = coll_mod(r - i, p);
        tern_sched_recv(s, rb + coll_seg_off(n, p, rg) * e, coll_seg_len(n, p, rg) * e, left);
        tern_sched_send(s, rb + coll_seg_off(n, p, sg) * e, coll_seg_len(n, p, sg) * e, right);
        tern_sched_fence(s);
    }
    return tern_sched_error(s);
}
