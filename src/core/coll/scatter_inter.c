/* Scatter on an intercommunicator: the root (MPI_ROOT) sends all blocks to
 * rank 0 of the other group, which scatters them there (binomial tree).
 * Cost: alpha + p_remote n beta + the local scatter. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_scatter_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return TERN_OK;
    if (a->root == MPI_ROOT) {
        tern_sched_send(s, a->sbuf, (size_t)a->comm->remote_size * a->bytes, 0);
        return tern_sched_error(s);
    }
    tern_coll_args_t l = *a;
    l.comm = a->comm->local_comm;
    l.root = 0;
    if (l.comm->rank == 0) {
        char *all = tern_sched_tmp(s, (size_t)l.comm->size * a->bytes);
        if (!all)
            return tern_sched_error(s);
        tern_sched_recv(s, all, (size_t)l.comm->size * a->bytes, a->root);
        tern_sched_fence(s);
        l.sbuf = all;
    }
    tern_sched_use_comm(s, l.comm);
    return tern_coll_scatter_binomial(s, &l);
}
