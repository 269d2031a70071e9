/* Alltoall on an intercommunicator: every rank exchanges its block i
 * directly with rank i of the other group, all posted at once. Cost:
 * alpha + p_remote n beta. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_alltoall_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    int q = a->comm->remote_size, r = a->comm->rank;
    for (int i = 0; i < q; i++) {
        int peer = (r + i) % q;
        tern_sched_recv(s, coll_at(a->rbuf, (size_t)peer * a->rbytes), a->rbytes, peer);
        tern_sched_send(s, coll_at(a->sbuf, (size_t)peer * a->bytes), a->bytes, peer);
    }
    return tern_sched_error(s);
}
