/* Gather on an intercommunicator: the sending group gathers to its rank 0
 * (binomial tree), which sends the whole block, in rank order, to the root
 * (MPI_ROOT) of the other group. Cost: the local gather + alpha +
 * p_remote n beta. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_gather_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return TERN_OK;
    if (a->root == MPI_ROOT) {
        tern_sched_recv(s, a->rbuf, (size_t)a->comm->remote_size * a->bytes, 0);
        return tern_sched_error(s);
    }
    tern_coll_args_t l = *a;
    l.comm = a->comm->local_comm;
    l.root = 0;
    l.rbuf = l.comm->rank == 0 ? tern_sched_tmp(s, (size_t)l.comm->size * a->bytes) : NULL;
    if (l.comm->rank == 0 && !l.rbuf)
        return tern_sched_error(s);
    tern_sched_use_comm(s, l.comm);
    tern_status_t st = tern_coll_gather_binomial(s, &l);
    if (st != TERN_OK || l.comm->rank != 0)
        return st;
    tern_sched_use_comm(s, a->comm);
    tern_sched_send(s, l.rbuf, (size_t)l.comm->size * a->bytes, a->root);
    return tern_sched_error(s);
}
