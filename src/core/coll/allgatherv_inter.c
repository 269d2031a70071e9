/* Allgatherv on an intercommunicator, direct: every rank sends its block to
 * each rank of the other group and receives theirs at their displacements,
 * all posted at once. Cost: alpha + (p_remote n_me + sum(n_i)) beta. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allgatherv_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    int q = a->comm->remote_size, r = a->comm->rank;
    for (int i = 0; i < q; i++) {
        int peer = (r + i) % q;
        tern_sched_recv(s, coll_at(a->rbuf, a->rdispls[peer]), a->rcounts[peer], peer);
        tern_sched_send(s, a->sbuf, a->bytes, peer);
    }
    return tern_sched_error(s);
}
