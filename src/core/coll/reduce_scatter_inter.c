/* Reduce-scatter on an intercommunicator: each group reduces its vectors
 * to its rank 0 (rank order kept), the leaders swap the results, and each
 * leader scatters the other group's result over its group by the local
 * counts. Cost: local reduce + alpha + n beta + local scatterv. Also serves
 * reduce_scatter_block. */
#include "core/coll/coll_util.h"

tern_status_t tern_coll_reduce_scatter_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    size_t n = a->count * a->esz;
    tern_coll_args_t l = *a;
    l.comm = a->comm->local_comm;
    l.root = 0;
    int p = l.comm->size, leader = l.comm->rank == 0;
    char *mine = leader ? tern_sched_tmp(s, n) : NULL;
    char *theirs = leader ? tern_sched_tmp(s, n) : NULL;
    size_t *sc = tern_sched_tmp(s, 2 * (size_t)p * sizeof *sc);
    if ((leader && (!mine || !theirs)) || !sc)
        return tern_sched_error(s);
    size_t *sd = sc + p, off = 0;
    for (int i = 0; i < p; i++) {
        sc[i] = a->rcounts[i] * a->esz;
        sd[i] = off;
        off += sc[i];
    }
    l.rbuf = mine;
    tern_sched_use_comm(s, l.comm);
    tern_status_t st = tern_coll_reduce_binomial(s, &l);
    if (st != TERN_OK)
        return st;
    tern_sched_fence(s);
    if (leader) {
        tern_sched_use_comm(s, a->comm);
        tern_sched_recv(s, theirs, n, 0);
        tern_sched_send(s, mine, n, 0);
        tern_sched_fence(s);
        tern_sched_use_comm(s, l.comm);
    }
    l.sbuf = theirs;
    l.rbuf = a->rbuf;
    l.scounts = sc;
    l.sdispls = sd;
    l.bytes = sc[l.comm->rank];
    return tern_coll_scatterv_linear(s, &l);
}

tern_status_t tern_coll_reduce_scatter_block_inter(tern_sched_t *s, const tern_coll_args_t *a)
{
    return tern_coll_reduce_scatter_inter(s, a);
}
