/* Allreduce, node-aware (commutative ops): reduce inside each node to its
 * leader (shared memory), allreduce across the leaders by recursive
 * doubling, broadcast inside each node. Cost: lg nodes network exchanges
 * of n bytes, plus two on-node trees. */
#include "core/coll/node_util.h"
#include "core/coll/coll_util.h"

tern_status_t tern_coll_allreduce_node_aware(tern_sched_t *s, const tern_coll_args_t *a)
{
    coll_nodes_t nd;
    tern_status_t st = coll_nodes(s, a->comm, &nd);
    if (st != TERN_OK)
        return st;
    size_t n = a->count * a->esz;
    const void *part;
    st = coll_list_reduce(s, nd.local, nd.n_local, nd.my_local, 0, a->sbuf, a, &part);
    if (st != TERN_OK)
        return st;
    if (nd.my_leader >= 0) {
        tern_sched_copy(s, part, a->rbuf, n);
        /* Recursive doubling over the leaders, folding the ones beyond the
         * largest power of two into their neighbours first. */
        int p = nd.n_leaders, me = nd.my_leader, pof2 = coll_pof2_floor(p), rem = p - pof2;
        char *tmp = tern_sched_tmp(s, n);
        if (!tmp)
            return tern_sched_error(s);
        int newrank;
        if (me < 2 * rem) {
            if (me % 2 == 0) {
                tern_sched_send(s, a->rbuf, n, nd.leaders[me + 1]);
                newrank = -1;
            } else {
                tern_sched_recv(s, tmp, n, nd.leaders[me - 1]);
                tern_sched_reduce(s, tmp, a->rbuf, a->count, a->dt, a->op);
                newrank = me / 2;
            }
        } else {
            newrank = me - rem;
        }
        for (int mask = 1; newrank >= 0 && mask < pof2; mask <<= 1) {
            int nd_ = newrank ^ mask;
            int dst = nd_ < rem ? nd_ * 2 + 1 : nd_ + rem;
            tern_sched_recv(s, tmp, n, nd.leaders[dst]);
            tern_sched_send(s, a->rbuf, n, nd.leaders[dst]);
            tern_sched_fence(s);
            /* Same operand order on both sides: identical bits. */
            if (dst < me) {
                tern_sched_reduce(s, tmp, a->rbuf, a->count, a->dt, a->op);
            } else {
                tern_sched_reduce(s, a->rbuf, tmp, a->count, a->dt, a->op);
                tern_sched_copy(s, tmp, a->rbuf, n);
            }
        }
        tern_sched_fence(s);
        if (me < 2 * rem) {
            if (me % 2 == 0)
                tern_sched_recv(s, a->rbuf, n, nd.leaders[me + 1]);
            else
                tern_sched_send(s, a->rbuf, n, nd.leaders[me - 1]);
        }
    }
    /* Wait until the leader is done reading rbuf-sized data before the
     * node's broadcast overwrites rbuf (in place: sbuf == rbuf). */
    tern_sched_fence(s);
    coll_list_bcast(s, nd.local, nd.n_local, nd.my_local, 0, a->rbuf, n);
    return tern_sched_error(s);
}
