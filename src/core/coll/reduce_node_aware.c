/* Reduce, node-aware (commutative ops): reduce inside each node to its
 * leader (shared memory), across the leaders to the root's leader, which
 * hands the result to the root if it is not the root itself. Cost: lg
 * nodes network steps of n bytes. */
#include "core/coll/node_util.h"

tern_status_t tern_coll_reduce_node_aware(tern_sched_t *s, const tern_coll_args_t *a)
{
    coll_nodes_t nd;
    tern_status_t st = coll_nodes(s, a->comm, &nd);
    if (st != TERN_OK)
        return st;
    size_t n = a->count * a->esz;
    int r = a->comm->rank, root_node = nd.node_index[a->root];
    int root_leader = nd.leaders[root_node];
    const void *part;
    st = coll_list_reduce(s, nd.local, nd.n_local, nd.my_local, 0, a->sbuf, a, &part);
    if (st != TERN_OK)
        return st;
    if (nd.my_leader >= 0) {
        const void *total;
        st = coll_list_reduce(s, nd.leaders, nd.n_leaders, nd.my_leader, root_node, part, a,
                              &total);
        if (st != TERN_OK)
            return st;
        if (r == root_leader) {
            if (r == a->root)
                tern_sched_copy(s, total, a->rbuf, n);
            else
                tern_sched_send(s, total, n, a->root);
        }
    }
    if (r == a->root && r != root_leader)
        tern_sched_recv(s, a->rbuf, n, root_leader);
    tern_sched_fence(s);
    return tern_sched_error(s);
}
