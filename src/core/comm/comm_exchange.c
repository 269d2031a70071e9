#include "core/comm/comm_exchange.h"
#include "core/comm/comm_p2p.h"
#include "core/pt2pt/progress.h"

#include <stdlib.h>
#include <string.h>

tern_xchg_t tern_xchg_over(tern_comm_t *comm, int tag)
{
    return (tern_xchg_t){.comm = comm, .ctx = comm->context_id + 1, .n = comm->size,
                         .me = comm->rank, .tag = tag};
}

static int peer_rank(const tern_xchg_t *x, int index)
{
    return x->members ? x->members[index] : index;
}

static tern_status_t wait_release(tern_req_t *req)
{
    tern_progress_wait(&req->complete);
    tern_status_t st = req->error;
    tern_req_release(req);
    return st;
}

static tern_status_t send_to(const tern_xchg_t *x, int index, int tag, const void *buf,
                             size_t bytes)
{
    tern_req_t *req;
    tern_status_t st = tern_comm_isend(x->comm, x->ctx, buf, bytes, peer_rank(x, index), tag,
                                      TERN_SEND_STANDARD, &req);
    return st != TERN_OK ? st : wait_release(req);
}

static tern_status_t recv_from(const tern_xchg_t *x, int index, int tag, void *buf, size_t bytes)
{
    tern_req_t *req;
    tern_status_t st = tern_comm_irecv(x->comm, x->ctx, buf, bytes, peer_rank(x, index), tag, &req);
    if (st != TERN_OK)
        return st;
    size_t got = 0;
    tern_progress_wait(&req->complete);
    st = req->error;
    got = req->status_bytes;
    tern_req_release(req);
    if (st == TERN_OK && got != bytes)
        st = TERN_ERR_INTERNAL; /* peers disagree on the exchange: a bug */
    return st;
}

/* Binomial tree on indices relative to the root. */
tern_status_t tern_xchg_bcast(const tern_xchg_t *x, int root, void *buf, size_t bytes)
{
    int n = x->n, vr = (x->me - root + n) % n, mask = 1;
    tern_status_t st;
    while (mask < n) {
        if (vr & mask) {
            st = recv_from(x, (vr - mask + root) % n, x->tag - 1, buf, bytes);
            if (st != TERN_OK)
                return st;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n) {
            st = send_to(x, (vr + mask + root) % n, x->tag - 1, buf, bytes);
            if (st != TERN_OK)
                return st;
        }
    return TERN_OK;
}

tern_status_t tern_xchg_reduce(const tern_xchg_t *x, int root, void *buf, size_t bytes,
                               tern_xchg_combine_fn combine)
{
    int n = x->n, vr = (x->me - root + n) % n;
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return TERN_ERR_NOMEM;
    tern_status_t st = TERN_OK;
    for (int mask = 1; mask < n && st == TERN_OK; mask <<= 1) {
        if (vr & mask) {
            st = send_to(x, (vr - mask + root) % n, x->tag, buf, bytes);
            break;
        }
        if (vr + mask < n) {
            st = recv_from(x, (vr + mask + root) % n, x->tag, tmp, bytes);
            if (st == TERN_OK)
                combine(buf, tmp, bytes);
        }
    }
    free(tmp);
    return st;
}

/* Binomial gather to index 0 (each subtree holds a contiguous block of
 * indices), then a bcast of the whole array. */
tern_status_t tern_xchg_allgather(const tern_xchg_t *x, const void *mine, void *all, size_t item)
{
    int n = x->n, me = x->me, have = 1;
    char *a = all;
    memcpy(a + (size_t)me * item, mine, item);
    tern_status_t st = TERN_OK;
    for (int mask = 1; mask < n && st == TERN_OK; mask <<= 1) {
        if (me & mask) {
            st = send_to(x, me - mask, x->tag - 2, a + (size_t)me * item, (size_t)have * item);
            break;
        }
        if (me + mask < n) {
            int k = n - me - mask < mask ? n - me - mask : mask;
            st = recv_from(x, me + mask, x->tag - 2, a + (size_t)(me + mask) * item,
                           (size_t)k * item);
            have += k;
        }
    }
    if (st != TERN_OK)
        return st;
    return tern_xchg_bcast(x, 0, all, (size_t)n * item);
}

tern_status_t tern_xchg_sendrecv(tern_comm_t *comm, uint32_t ctx, int peer, int tag,
                                 const void *sbuf, size_t sbytes, void *rbuf, size_t rbytes)
{
    tern_req_t *rreq, *sreq;
    tern_status_t st = tern_comm_irecv(comm, ctx, rbuf, rbytes, peer, tag, &rreq);
    if (st != TERN_OK)
        return st;
    st = tern_comm_isend(comm, ctx, sbuf, sbytes, peer, tag, TERN_SEND_STANDARD, &sreq);
    if (st != TERN_OK) {
        tern_progress_wait(&rreq->complete);
        tern_req_release(rreq);
        return st;
    }
    tern_progress_wait(&rreq->complete);
    st = rreq->error;
    if (st == TERN_OK && rreq->status_bytes != rbytes)
        st = TERN_ERR_INTERNAL;
    tern_req_release(rreq);
    tern_status_t st2 = wait_release(sreq);
    return st != TERN_OK ? st : st2;
}
