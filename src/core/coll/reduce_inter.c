/* Reduce on an intercommunicator: the sending group reduces to its rank 0
 * (binomial, rank order kept) and sends the result to the root (MPI_ROOT)
 * of the other group. Cost: the local reduce + alpha + n beta. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_reduce_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    size_t n = a->count * a->esz;
    if (a->root == MPI_PROC_NULL)
        return TERN_OK;
    if (a->root == MPI_ROOT) {
        tern_sched_recv(s, a->rbuf, n, 0);
        return tern_sched_error(s);
    }
    tern_coll_args_t l = *a;
    l.comm = a->comm->local_comm;
    l.root = 0;
    l.rbuf = l.comm->rank == 0 ? tern_sched_tmp(s, n) : NULL;
    if (l.comm->rank == 0 && !l.rbuf)
        return tern_sched_error(s);
    tern_sched_use_comm(s, l.comm);
    tern_status_t st = tern_coll_reduce_binomial(s, &l);
    if (st != TERN_OK || l.comm->rank != 0)
        return st;
    tern_sched_use_comm(s, a->comm);
    tern_sched_send(s, l.rbuf, n, a->root);
    return tern_sched_error(s);
}
