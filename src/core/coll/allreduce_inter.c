/* Allreduce on an intercommunicator: each group reduces to its rank 0
 * (rank order kept), the leaders swap results, and each leader broadcasts
 * the other group's result in its group. Cost: local reduce + alpha + n
 * beta + local broadcast. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allreduce_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    size_t n = a->count * a->esz;
    tern_coll_args_t l = *a;
    l.comm = a->comm->local_comm;
    l.root = 0;
    int leader = l.comm->rank == 0;
    l.rbuf = leader ? tern_sched_tmp(s, n) : NULL;
    if (leader && !l.rbuf)
        return tern_sched_error(s);
    tern_sched_use_comm(s, l.comm);
    tern_status_t st = tern_coll_reduce_binomial(s, &l);
    if (st != TERN_OK)
        return st;
    /* The reduce may still read sbuf, which may be rbuf (never in place on
     * intercommunicators, but keep the order simple). */
    tern_sched_fence(s);
    if (leader) {
        tern_sched_use_comm(s, a->comm);
        tern_sched_recv(s, a->rbuf, n, 0);
        tern_sched_send(s, l.rbuf, n, 0);
        tern_sched_fence(s);
        tern_sched_use_comm(s, l.comm);
    }
    l.rbuf = a->rbuf;
    l.bytes = n;
    return tern_coll_bcast_binomial(s, &l);
}
