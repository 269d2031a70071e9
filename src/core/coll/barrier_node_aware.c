/* Barrier, node-aware: ranks report to their node's leader (on-node
 * messages, over shared memory), the leaders run a dissemination barrier
 * across nodes, and each leader releases its node. Cost: 2 on-node
 * latencies + ceil(lg nodes) network latencies, one network message per
 * node per round instead of one per rank. */
#include "core/coll/node_util.h"

tern_status_t tern_coll_barrier_node_aware(tern_sched_t *s, const tern_coll_args_t *a)
{
    coll_nodes_t nd;
    tern_status_t st = coll_nodes(s, a->comm, &nd);
    if (st != TERN_OK)
        return st;
    int leader = nd.local[0];
    if (nd.my_leader < 0) {
        tern_sched_send(s, NULL, 0, leader);
        tern_sched_recv(s, NULL, 0, leader);
        return tern_sched_error(s);
    }
    for (int i = 1; i < nd.n_local; i++)
        tern_sched_recv(s, NULL, 0, nd.local[i]);
    tern_sched_fence(s);
    coll_list_barrier(s, nd.leaders, nd.n_leaders, nd.my_leader);
    tern_sched_fence(s);
    for (int i = 1; i < nd.n_local; i++)
        tern_sched_send(s, NULL, 0, nd.local[i]);
    return tern_sched_error(s);
}
