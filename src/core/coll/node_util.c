/* Building blocks of the node-aware collectives (see node_util.h). */
#include "core/coll/node_util.h"
#include "core/coll/coll_util.h"
#include "core/runtime/runtime.h"
#include "base/config.h"

tern_status_t coll_nodes(tern_sched_t *s, tern_comm_t *comm, coll_nodes_t *nd)
{
    int p = comm->size;
    long per = tern_knob_count(TERN_KNOB_COLL_RANKS_PER_NODE);
    int *node = tern_sched_tmp(s, (size_t)p * sizeof(int));
    int *buf = tern_sched_tmp(s, 3 * (size_t)p * sizeof(int));
    if (!node || !buf)
        return tern_sched_error(s);
    nd->local = buf;
    nd->leaders = buf + p;
    nd->node_index = buf + 2 * p;
    nd->n_local = nd->n_leaders = 0;
    nd->my_leader = -1;
    for (int q = 0; q < p; q++) {
        int w = tern_comm_local_world_rank(comm, q);
        node[q] = per > 0 ? (int)(w / per) : tern_rt.node_of_rank[w];
    }
    for (int q = 0; q < p; q++) {
        int k = 0;
        while (k < nd->n_leaders && node[nd->leaders[k]] != node[q])
            k++;
        if (k == nd->n_leaders)
            nd->leaders[nd->n_leaders++] = q;
        nd->node_index[q] = k;
        if (q == comm->rank && nd->leaders[k] == q)
            nd->my_leader = k;
        if (node[q] == node[comm->rank]) {
            if (q == comm->rank)
                nd->my_local = nd->n_local;
            nd->local[nd->n_local++] = q;
        }
    }
    return TERN_OK;
}

void coll_list_barrier(tern_sched_t *s, const int *list, int n, int me)
{
    for (int k = 1; k < n; k <<= 1) {
        tern_sched_recv(s, NULL, 0, list[coll_mod(me - k, n)]);
        tern_sched_send(s, NULL, 0, list[(me + k) % n]);
        tern_sched_fence(s);
    }
}

void coll_list_bcast(tern_sched_t *s, const int *list, int n, int me, int root, void *buf,
                     size_t bytes)
{
    int vr = coll_mod(me - root, n), mask = 1;
    while (mask < n) {
        if (vr & mask) {
            tern_sched_recv(s, buf, bytes, list[(vr - mask + root) % n]);
            tern_sched_fence(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            tern_sched_send(s, buf, bytes, list[(vr + mask + root) % n]);
}

tern_status_t coll_list_reduce(tern_sched_t *s, const int *list, int n, int me, int root,
                               const void *sbuf, const tern_coll_args_t *a,
                               const void **result_p)
{
    int vr = coll_mod(me - root, n);
    size_t bytes = a->count * a->esz;
    const char *acc = sbuf;
    char *bufs[2] = {NULL, NULL};
    int next = 0;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            tern_sched_send(s, acc, bytes, list[(vr - mask + root) % n]);
            *result_p = NULL;
            return tern_sched_error(s);
        }
        if (vr + mask >= n)
            continue;
        if (!bufs[next] && !(bufs[next] = tern_sched_tmp(s, bytes)))
            return tern_sched_error(s);
        tern_sched_recv(s, bufs[next], bytes, list[(vr + mask + root) % n]);
        tern_sched_reduce(s, acc, bufs[next], a->count, a->dt, a->op);
        acc = bufs[next];
        next ^= 1;
    }
    *result_p = acc;
    return tern_sched_error(s);
}
