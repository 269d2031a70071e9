/* Barrier on an intercommunicator: a barrier in each local group, the two
 * leaders (local rank 0) swap a zero-byte message, and each leader
 * releases its group with a binomial broadcast. No one leaves before both
 * groups arrived. Cost: 2 lg p_local + 1 latencies. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_barrier_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    tern_coll_args_t l = *a;
    l.comm = a->comm->local_comm;
    tern_sched_use_comm(s, l.comm);
    tern_coll_barrier_dissemination(s, &l);
    if (l.comm->rank == 0) {
        tern_sched_use_comm(s, a->comm);
        tern_sched_recv(s, NULL, 0, 0);
        tern_sched_send(s, NULL, 0, 0);
        tern_sched_fence(s);
    }
    tern_sched_use_comm(s, l.comm);
    l.root = 0;
    l.rbuf = NULL;
    l.bytes = 0;
    return tern_coll_bcast_binomial(s, &l);
}
