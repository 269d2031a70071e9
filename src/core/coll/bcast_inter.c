/* Broadcast on an intercommunicator: the root (MPI_ROOT) sends to rank 0
 * of the other group, which broadcasts it there down a binomial tree; the
 * rest of the root's group (MPI_PROC_NULL) does nothing. Cost: alpha + n
 * beta + the local tree. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_bcast_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return TERN_OK;
    if (a->root == MPI_ROOT) {
        tern_sched_send(s, a->rbuf, a->bytes, 0);
        return tern_sched_error(s);
    }
    tern_coll_args_t l = *a;
    l.comm = a->comm->local_comm;
    l.root = 0;
    if (l.comm->rank == 0) {
        tern_sched_recv(s, a->rbuf, a->bytes, a->root);
        tern_sched_fence(s);
    }
    tern_sched_use_comm(s, l.comm);
    return tern_coll_bcast_binomial(s, &l);
}
