/* Broadcast, node-aware: a binomial broadcast inside the root's node
 * (rooted at the root, over shared memory), then one across the node
 * leaders, then inside every other node from its leader. Cost: lg nodes
 * network steps carrying n bytes each, instead of lg p. */
#include "core/coll/node_util.h"

tern_status_t tern_coll_bcast_node_aware(tern_sched_t *s, const tern_coll_args_t *a)
{
    coll_nodes_t nd;
    tern_status_t st = coll_nodes(s, a->comm, &nd);
    if (st != TERN_OK)
        return st;
    int root_node = nd.node_index[a->root];
    int my_node = nd.node_index[a->comm->rank];
    if (my_node == root_node) {
        int root_local = 0;
        while (nd.local[root_local] != a->root)
            root_local++;
        coll_list_bcast(s, nd.local, nd.n_local, nd.my_local, root_local, a->rbuf, a->bytes);
        tern_sched_fence(s);
    }
    if (nd.my_leader >= 0)
        coll_list_bcast(s, nd.leaders, nd.n_leaders, nd.my_leader, root_node, a->rbuf, a->bytes);
    if (my_node != root_node) {
        tern_sched_fence(s);
        coll_list_bcast(s, nd.local, nd.n_local, nd.my_local, 0, a->rbuf, a->bytes);
    }
    return tern_sched_error(s);
}
