/* Allgather on an intercommunicator: each group gathers its blocks to its
 * rank 0, the leaders swap the gathered blocks, and each leader broadcasts
 * the other group's blocks in its group. Cost: local gather + alpha +
 * max(p_a, p_b) n beta + local broadcast. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allgather_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    tern_coll_args_t l = *a;
    l.comm = a->comm->local_comm;
    l.root = 0;
    int leader = l.comm->rank == 0;
    size_t mine = (size_t)l.comm->size * a->bytes, theirs = (size_t)a->comm->remote_size * a->rbytes;
    l.rbuf = leader ? tern_sched_tmp(s, mine) : NULL;
    if (leader && !l.rbuf)
        return tern_sched_error(s);
    tern_sched_use_comm(s, l.comm);
    tern_status_t st = tern_coll_gather_binomial(s, &l);
    if (st != TERN_OK)
        return st;
    if (leader) {
        tern_sched_use_comm(s, a->comm);
        tern_sched_recv(s, a->rbuf, theirs, 0);
        tern_sched_send(s, l.rbuf, mine, 0);
        tern_sched_fence(s);
        tern_sched_use_comm(s, l.comm);
    }
    l.rbuf = a->rbuf;
    l.bytes = theirs;
    return tern_coll_bcast_binomial(s, &l);
}
