/* Alltoallv and alltoallw on an intercommunicator, direct: block i goes to
 * rank i of the other group and block i comes from it, all posted at
 * once. Cost: alpha + the blocks' bytes * beta. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_alltoallv_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    int q = a->comm->remote_size, r = a->comm->rank;
    for (int i = 0; i < q; i++) {
        int peer = (r + i) % q;
        tern_sched_recv(s, coll_at(a->rbuf, a->rdispls[peer]), a->rcounts[peer], peer);
        tern_sched_send(s, coll_at(a->sbuf, a->sdispls[peer]), a->scounts[peer], peer);
    }
    return tern_sched_error(s);
}

tern_status_t tern_coll_alltoallw_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    return tern_coll_alltoallv_inter(s, a);
}
