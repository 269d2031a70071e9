/* Scatterv on an intercommunicator: the root (MPI_ROOT) posts one send per
 * rank of the other group from its displacement; those ranks receive.
 * Cost: p_remote alpha + sum(n_i) beta at the root. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_scatterv_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    if (a->root == MPI_PROC_NULL)
        return TERN_OK;
    if (a->root == MPI_ROOT) {
        for (int i = 0; i < a->comm->remote_size; i++)
            tern_sched_send(s, coll_at(a->sbuf, a->sdispls[i]), a->scounts[i], i);
        return tern_sched_error(s);
    }
    tern_sched_recv(s, a->rbuf, a->bytes, a->root);
    return tern_sched_error(s);
}
