/* Allreduce, Rabenseifner (2004): fold to a power of two p' as recursive
 * doubling does, then a reduce-scatter by recursive halving (each round
 * swaps half of the remaining segment range with the partner and combines
 * the half it keeps) and an allgather by recursive doubling that retraces
 * the rounds; then unfold. Cost: 2 lg p' alpha + 2 (p' - 1) / p' * n * beta
 * + (p' - 1) / p' * n * gamma: for long vectors. Commutative ops only.
 * (The index arithmetic follows MPICH's allreduce_intra_reduce_scatter_
 * allgather.) */
#include "core/coll/coll_util.h"

#include <stdlib.h>

tern_status_t tern_coll_allreduce_rabenseifner(tern_sched_t *s, const tern_coll_args_t *a)
{
    int p = a->comm->size, r = a->comm->rank;
    size_t n = a->count, e = a->esz;
    char *rb = a->rbuf;
    tern_sched_copy(s, a->sbuf, rb, n * e);
    if (p == 1)
        return tern_sched_error(s);
    char *tmp = tern_sched_tmp(s, n * e);
    int pof2 = coll_pof2_floor(p), rem = p - pof2, newrank;
    size_t *cnts = tern_sched_tmp(s, 2 * (size_t)pof2 * sizeof *cnts);
    if (!tmp || !cnts)
        return tern_sched_error(s);
    size_t *disps = cnts + pof2;
    for (int i = 0; i < pof2; i++) {
        cnts[i] = coll_seg_len(n, pof2, i);
        disps[i] = coll_seg_off(n, pof2, i);
    }
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            tern_sched_send(s, rb, n * e, r + 1);
            newrank = -1;
        } else {
            tern_sched_recv(s, tmp, n * e, r - 1);
            tern_sched_reduce(s, tmp, rb, n, a->dt, a->op);
            newrank = r / 2;
        }
    } else {
        newrank = r - rem;
    }
    if (newrank >= 0) {
        int mask = 1, send_idx = 0, recv_idx = 0, last_idx = pof2;
        while (mask < pof2) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            size_t send_cnt = 0, recv_cnt = 0;
            if (newrank < newdst) {
                send_idx = recv_idx + pof2 / (mask * 2);
                for (int i = send_idx; i < last_idx; i++) send_cnt += cnts[i];
                for (int i = recv_idx; i < send_idx; i++) recv_cnt += cnts[i];
            } else {
                recv_idx = send_idx + pof2 / (mask * 2);
                for (int i = send_idx; i < recv_idx; i++) send_cnt += cnts[i];
                for (int i = recv_idx; i < last_idx; i++) recv_cnt += cnts[i];
            }
            tern_sched_recv(s, tmp + disps[recv_idx] * e, recv_cnt * e, dst);
            tern_sched_send(s, rb + disps[send_idx] * e, send_cnt * e, dst);
            tern_sched_fence(s);
            tern_sched_reduce(s, tmp + disps[recv_idx] * e, rb + disps[recv_idx] * e, recv_cnt,
                              a->dt, a->op);
            send_idx = recv_idx;
            mask <<= 1;
            if (mask < pof2)
                last_idx = recv_idx + pof2 / mask;
        }
        mask >>= 1;
        while (mask > 0) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            size_t send_cnt = 0, recv_cnt = 0;
            if (newrank < newdst) {
                if (mask != pof2 / 2)
                    last_idx = last_idx + pof2 / (mask * 2);
                recv_idx = send_idx + pof2 / (mask * 2);
                for (int i = send_idx; i < recv_idx; i++) send_cnt += cnts[i];
                for (int i = recv_idx; i < last_idx; i++) recv_cnt += cnts[i];
            } else {
                recv_idx = send_idx - pof2 / (mask * 2);
                for (int i = send_idx; i < last_idx; i++) send_cnt += cnts[i];
                for (int i = recv_idx; i < send_idx; i++) recv_cnt += cnts[i];
            }
            tern_sched_recv(s, rb + disps[recv_idx] * e, recv_cnt * e, dst);
            tern_sched_send(s, rb + disps[send_idx] * e, send_cnt * e, dst);
            tern_sched_fence(s);
            if (newrank > newdst)
                send_idx = recv_idx;
            mask >>= 1;
        }
    }
    tern_sched_fence(s);
    if (r < 2 * rem) {
        if (r % 2 == 0)
            tern_sched_recv(s, rb, n * e, r + 1);
        else
            tern_sched_send(s, rb, n * e, r - 1);
    }
    return tern_sched_error(s);
}
