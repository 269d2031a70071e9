/* The active-message engine of one-sided communication (rma_am.h): the
 * origin's operations in flight, and the target's service of requests,
 * both advanced by one progress hook. */
#include "core/rma/rma_am.h"
#include "core/comm/comm_p2p.h"
#include "core/datatype/datatype.h"
#include "core/datatype/op.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/progress.h"
#include "core/rma/rma_rdma.h"
#include "core/rma/rma_shm.h"
#include "core/rma/rma_track.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A request received by a target, waiting for its payload or its turn. */
typedef struct rma_incoming {
    struct rma_incoming *next;
    rma_hdr_t hdr;
    void *payload;          /* segments then data */
    tern_req_t *data_req;   /* tag-1 receive of a large payload, or NULL */
} rma_incoming_t;

/* An answer on its way back (its buffer lives until sent). */
typedef struct rma_reply {
    struct rma_reply *next;
    tern_req_t *req;
    void *buf;
} rma_reply_t;

static tern_win_t *live;          /* windows served */
static rma_op_t *ops;             /* the origin's operations in flight */
static rma_reply_t *replies;
static int hook_registered, in_poll;
/* The windows are rescanned only when the transports handled an event
 * since the last scan, or this engine sent something (a message to this
 * very rank may complete a receive inside the send): with a thousand
 * windows alive a scan per progress pass cost more than everything else. */
static uint64_t scanned_at;
static int rescan = 1;

static int hook(void)
{
    return tern_rma_am_poll();
}

static tern_status_t post_rx(tern_win_t *w)
{
    w->rx_buf = malloc(sizeof(rma_hdr_t) + RMA_INLINE_MAX);
    if (!w->rx_buf)
        return TERN_ERR_NOMEM;
    tern_status_t st = tern_comm_irecv(w->comm, w->comm->context_id, w->rx_buf,
                                       sizeof(rma_hdr_t) + RMA_INLINE_MAX, MPI_ANY_SOURCE,
                                       RMA_TAG_REQ, &w->rx);
    if (st != TERN_OK) {
        free(w->rx_buf);
        w->rx_buf = NULL;
        w->rx = NULL;
    }
    return st;
}

tern_status_t tern_rma_am_open(tern_win_t *w)
{
    if (!hook_registered) {
        tern_status_t st = tern_progress_register(hook);
        if (st != TERN_OK)
            return st;
        hook_registered = 1;
    }
    w->in_tail = &w->in_head;
    w->waiters_tail = &w->waiters;
    w->excl_holder = -1;
    w->next_tag = RMA_TAG_FIRST_REPLY;
    tern_status_t st = post_rx(w);
    if (st != TERN_OK)
        return st;
    w->next_live = live;
    live = w;
    rescan = 1;
    return TERN_OK;
}

void tern_rma_am_close(tern_win_t *w)
{
    for (tern_win_t **p = &live; *p; p = &(*p)->next_live)
        if (*p == w) {
            *p = w->next_live;
            break;
        }
    if (w->rx) {
        if (!tern_p2p_cancel_recv(w->rx))
            tern_progress_wait(&w->rx->complete);
        tern_req_release(w->rx);
        w->rx = NULL;
    }
    free(w->rx_buf);
    w->rx_buf = NULL;
    while (w->in_head) {
        rma_incoming_t *in = w->in_head;
        w->in_head = in->next;
        if (in->data_req) {
            if (!tern_p2p_cancel_recv(in->data_req))
                tern_progress_wait(&in->data_req->complete);
            tern_req_release(in->data_req);
        }
        free(in->payload);
        free(in);
    }
    while (w->waiters) {
        tern_win_waiter_t *x = w->waiters;
        w->waiters = x->next;
        free(x);
    }
}

/* ------------------------------------------------------------------------ */
/* Origin. */

static uint32_t new_tag(tern_win_t *w)
{
    uint32_t t = w->next_tag++;
    if (w->next_tag > TERN_TAG_UB)
        w->next_tag = RMA_TAG_FIRST_REPLY;
    return t;
}

/* Operations in flight per window, and their bytes (request and answer
 * buffers): past either cap (rma_track.h), an origin waits for answers
 * before it issues more, so a loop of a million puts or gets in one epoch
 * runs in bounded memory. */
static void wait_room(tern_win_t *w, size_t bytes)
{
    unsigned idle = 0;
    for (;;) {
        tern_rma_am_poll();
        if (tern_rma_room(w, bytes))
            return;
        if (!tern_progress())
            tern_progress_idle(&idle);
    }
}

tern_status_t tern_rma_am_issue(tern_win_t *w, int target, rma_hdr_t *hdr,
                                const tern_dt_seg_t *segs, const void *data, size_t reply_bytes,
                                void *result, MPI_Count result_count, MPI_Datatype result_type,
                                rma_op_t **op_p)
{
    size_t footprint = sizeof *hdr + hdr->nsegs * sizeof(tern_dt_seg_t) + hdr->data_bytes +
                       8 + reply_bytes;
    wait_room(w, footprint);
    rma_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return TERN_ERR_NOMEM;
    size_t seg_bytes = hdr->nsegs * sizeof(tern_dt_seg_t);
    size_t payload = seg_bytes + hdr->data_bytes;
    int inline_ = payload <= RMA_INLINE_MAX;
    size_t first = sizeof *hdr + (inline_ ? payload : 0);
    op->msg = malloc(sizeof *hdr + payload);
    op->reply_bytes = 8 + reply_bytes;
    op->reply_buf = malloc(op->reply_bytes);
    if (!op->msg || !op->reply_buf) {
        free(op->msg);
        free(op->reply_buf);
        free(op);
        return TERN_ERR_NOMEM;
    }
    hdr->origin = w->rank;
    hdr->reply_tag = new_tag(w);
    char *m = op->msg;
    memcpy(m, hdr, sizeof *hdr);
    if (seg_bytes)
        memcpy(m + sizeof *hdr, segs, seg_bytes);
    if (hdr->data_bytes)
        memcpy(m + sizeof *hdr + seg_bytes, data, hdr->data_bytes);
    op->win = w;
    op->target = target;
    op->result = result;
    op->result_count = result_count;
    op->result_type = result_type;
    if (result)
        tern_datatype_retain(result_type);
    uint32_t ctx = w->comm->context_id;
    rescan = 1;
    tern_status_t st = tern_comm_irecv(w->comm, ctx, op->reply_buf, op->reply_bytes, target,
                                       (int)hdr->reply_tag, &op->reply);
    if (st == TERN_OK)
        st = tern_comm_isend(w->comm, ctx, m, first, target, RMA_TAG_REQ, TERN_SEND_STANDARD,
                             &op->sends[0]);
    if (st == TERN_OK && !inline_)
        st = tern_comm_isend(w->comm, ctx, m + sizeof *hdr, payload, target, RMA_TAG_DATA,
                             TERN_SEND_STANDARD, &op->sends[1]);
    if (st != TERN_OK) {
        /* Nothing was sent when the first send failed; a failed second
         * send leaves the target waiting, as a failed peer would. */
        if (op->reply && !tern_p2p_cancel_recv(op->reply))
            tern_progress_wait(&op->reply->complete);
        if (op->reply)
            tern_req_release(op->reply);
        for (int i = 0; i < 2; i++)
            if (op->sends[i]) {
                tern_progress_wait(&op->sends[i]->complete);
                tern_req_release(op->sends[i]);
            }
        if (result)
            tern_datatype_release(result_type);
        free(op->msg);
        free(op->reply_buf);
        free(op);
        return st;
    }
    w->pending[target]++;
    w->n_pending++;
    op->footprint = footprint;
    w->inflight_bytes += footprint;
    op->next = ops;
    ops = op;
    if (op_p)
        *op_p = op;
    return TERN_OK;
}

/* 1 when op is over (and freed). */
static int op_progress(rma_op_t *op)
{
    for (int i = 0; i < 2; i++)
        if (op->sends[i]) {
            if (!op->sends[i]->complete)
                return 0;
            tern_req_release(op->sends[i]);
            op->sends[i] = NULL;
        }
    free(op->msg);
    op->msg = NULL;
    if (!op->reply->complete)
        return 0;
    tern_win_t *w = op->win;
    tern_status_t st = (tern_status_t)op->reply->error;
    uint64_t word = TERN_ERR_INTERNAL;
    if (st == TERN_OK && op->reply->status_bytes >= 8)
        memcpy(&word, op->reply_buf, 8);
    if (st == TERN_OK)
        st = (tern_status_t)word;
    tern_win_op_ended(w, op->target, op->footprint, st, (char *)op->reply_buf + 8,
                      op->reply->status_bytes - 8, op->result, op->result_count,
                      op->result_type, op->user_req);
    tern_req_release(op->reply);
    free(op->reply_buf);
    free(op);
    return 1;
}

tern_status_t tern_rma_am_control(tern_win_t *w, int target, uint32_t type, int lock_type,
                                  int want_reply)
{
    rma_hdr_t h = {.type = type, .lock_type = lock_type};
    if (want_reply) {
        tern_status_t st = tern_rma_am_issue(w, target, &h, NULL, NULL, 0, NULL, 0,
                                             MPI_DATATYPE_NULL, NULL);
        return st == TERN_OK ? tern_rma_am_wait_target(w, target) : st;
    }
    /* No answer: the header alone, sent and forgotten (the reply list
     * keeps the buffer until the send is done). */
    rma_reply_t *r = malloc(sizeof *r);
    if (!r || !(r->buf = malloc(sizeof h))) {
        free(r);
        return TERN_ERR_NOMEM;
    }
    h.origin = w->rank;
    memcpy(r->buf, &h, sizeof h);
    rescan = 1;
    tern_status_t st = tern_comm_isend(w->comm, w->comm->context_id, r->buf, sizeof h, target,
                                       RMA_TAG_REQ, TERN_SEND_STANDARD, &r->req);
    if (st != TERN_OK) {
        free(r->buf);
        free(r);
        return st;
    }
    r->next = replies;
    replies = r;
    return TERN_OK;
}

tern_status_t tern_rma_am_wait_target(tern_win_t *w, int target)
{
    unsigned idle = 0;
    tern_rma_rdma_forget(w); /* a synchronisation: keys of dynamic memory may go stale */
    for (;;) {
        tern_rma_am_poll();
        if (target < 0 ? w->n_pending == 0 : w->pending[target] == 0)
            break;
        if (!tern_progress())
            tern_progress_idle(&idle);
    }
    tern_status_t st = w->deferred;
    w->deferred = TERN_OK;
    return st;
}

/* ------------------------------------------------------------------------ */
/* Target. */

static void send_reply(tern_win_t *w, int origin, uint32_t tag, tern_status_t st, void *buf,
                       size_t bytes)
{
    /* buf: 8 bytes of room for the status word, then data (malloc'ed,
     * ours now); NULL for a bare status. */
    if (!buf) {
        buf = malloc(8);
        bytes = 0;
    }
    rma_reply_t *r = malloc(sizeof *r);
    if (!buf || !r) {
        /* The origin then waits: as a failed peer, nothing else to do. */
        free(buf);
        free(r);
        return;
    }
    uint64_t word = (uint64_t)st;
    memcpy(buf, &word, 8);
    r->buf = buf;
    rescan = 1;
    if (tern_comm_isend(w->comm, w->comm->context_id, buf, 8 + bytes, origin, (int)tag,
                        TERN_SEND_STANDARD, &r->req) != TERN_OK) {
        free(buf);
        free(r);
        return;
    }
    r->next = replies;
    replies = r;
}

/* Target memory of a request: NULL when a piece lies outside the window
 * (dynamic windows: outside every attached region). */
static char *target_base(tern_win_t *w, const rma_hdr_t *h, const tern_dt_seg_t *segs)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return (char *)w->base + h->addr;
    /* Each piece within attached memory, which may be several adjacent
     * regions. */
    for (uint64_t i = 0; i < h->nsegs; i++) {
        uintptr_t lo = (uintptr_t)h->addr + (uintptr_t)segs[i].offset;
        uintptr_t hi = lo + segs[i].len;
        while (lo < hi) {
            const tern_win_region_t *r = w->regions;
            while (r && !(lo >= r->base && lo < r->base + r->size))
                r = r->next;
            if (!r)
                return NULL;
            lo = r->base + r->size;
        }
    }
    return (char *)(uintptr_t)h->addr;
}

void tern_rma_accumulate_bytes(MPI_Op op, MPI_Datatype basic, const char *in, char *t,
                               size_t len)
{
    if (op == MPI_NO_OP)
        return;
    if (op == MPI_REPLACE) {
        memcpy(t, in, len);
        return;
    }
    long es = tern_datatype_size(basic);
    if (es <= 0)
        return;
    /* An element's alignment: the largest power of two dividing its size
     * (16 at most). */
    size_t align = (size_t)(es & -es) < 16 ? (size_t)(es & -es) : 16;
    if ((uintptr_t)t % align == 0 || es > 64) {
        tern_op_apply(op, basic, in, t, len / (size_t)es);
        return;
    }
    /* A misaligned target (a window's displacement unit of 1 allows it):
     * the reduction loops read typed elements, so each element is combined
     * in an aligned copy. */
    _Alignas(16) char elem[64];
    for (size_t k = 0; k + (size_t)es <= len; k += (size_t)es) {
        memcpy(elem, t + k, (size_t)es);
        tern_op_apply(op, basic, in + k, elem, 1);
        memcpy(t + k, elem, (size_t)es);
    }
}

void tern_rma_apply(char *base, const rma_hdr_t *h, const tern_dt_seg_t *segs, const char *data,
                    char *o)
{
    if (h->type == RMA_CAS) {
        /* One element: data is the new value, then the compare value. */
        char *t = base + segs[0].offset;
        memcpy(o, t, h->bytes);
        if (!memcmp(t, data + h->bytes, h->bytes))
            memcpy(t, data, h->bytes);
        return;
    }
    int fetch = h->type == RMA_GET || h->type == RMA_GACC;
    for (uint64_t i = 0; i < h->nsegs; i++) {
        char *t = base + segs[i].offset;
        size_t len = segs[i].len;
        if (fetch) {
            memcpy(o, t, len);
            o += len;
        }
        if (h->type == RMA_PUT)
            memcpy(t, data, len);
        else if (h->type == RMA_ACC || h->type == RMA_GACC)
            tern_rma_accumulate_bytes((MPI_Op)h->op, (MPI_Datatype)h->basic, data, t, len);
        if (h->type != RMA_GET)
            data += len;
    }
}

static void serve_data(tern_win_t *w, rma_incoming_t *in)
{
    const rma_hdr_t *h = &in->hdr;
    const tern_dt_seg_t *segs = in->payload;
    const char *data = (const char *)in->payload + h->nsegs * sizeof(tern_dt_seg_t);
    int fetch = h->type == RMA_GET || h->type == RMA_GACC || h->type == RMA_CAS;
    char *base = target_base(w, h, segs);
    if (!base) {
        send_reply(w, h->origin, h->reply_tag,
                   tern_status_detail(TERN_ERR_RMA_RANGE, "target memory not attached"), NULL, 0);
        return;
    }
    char *out = NULL;
    if (fetch && !(out = malloc(8 + h->bytes))) {
        send_reply(w, h->origin, h->reply_tag, TERN_ERR_NOMEM, NULL, 0);
        return;
    }
    /* Origins on this node may apply accumulates here themselves (CMA,
     * rma_cma_acc.c): the same lock makes them atomic with ours. */
    int locked = w->ctrl && (h->type == RMA_ACC || h->type == RMA_GACC || h->type == RMA_CAS);
    if (locked)
        tern_rma_shm_acc_lock(w, w->rank);
    tern_rma_apply(base, h, segs, data, out ? out + 8 : NULL);
    if (locked)
        tern_rma_shm_acc_unlock(w, w->rank);
    send_reply(w, h->origin, h->reply_tag, TERN_OK, out, fetch ? h->bytes : 0);
}

static int grantable(const tern_win_t *w, int type)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        return w->excl_holder < 0 && w->shared_holders == 0;
    return w->excl_holder < 0;
}

static void grant(tern_win_t *w, int origin, int type, uint32_t tag)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        w->excl_holder = origin;
    else
        w->shared_holders++;
    send_reply(w, origin, tag, TERN_OK, NULL, 0);
}

static void serve_control(tern_win_t *w, const rma_hdr_t *h)
{
    switch (h->type) {
    case RMA_LOCK:
        if (!w->waiters && grantable(w, h->lock_type)) {
            grant(w, h->origin, h->lock_type, h->reply_tag);
        } else {
            tern_win_waiter_t *x = malloc(sizeof *x);
            if (!x) {
                send_reply(w, h->origin, h->reply_tag, TERN_ERR_NOMEM, NULL, 0);
                return;
            }
            *x = (tern_win_waiter_t){NULL, h->origin, h->lock_type, h->reply_tag};
            *w->waiters_tail = x;
            w->waiters_tail = &x->next;
        }
        return;
    case RMA_UNLOCK:
        if (w->excl_holder == h->origin)
            w->excl_holder = -1;
        else if (w->shared_holders > 0)
            w->shared_holders--;
        if (h->reply_tag) /* origins do not wait for the release (rma_sync.c) */
            send_reply(w, h->origin, h->reply_tag, TERN_OK, NULL, 0);
        while (w->waiters && grantable(w, w->waiters->type)) {
            tern_win_waiter_t *x = w->waiters;
            if (!(w->waiters = x->next))
                w->waiters_tail = &w->waiters;
            grant(w, x->origin, x->type, x->reply_tag);
            free(x);
        }
        return;
    case RMA_POST:
        w->posts_seen[h->origin]++;
        return;
    case RMA_COMPLETE:
        w->completes_seen[h->origin]++;
        return;
    case RMA_KEYQ: {
        char *buf = malloc(8 + TERN_RMA_RDMA_KEY_BYTES);
        tern_status_t st = buf ? tern_rma_rdma_region_key(w, h->addr, buf + 8) : TERN_ERR_NOMEM;
        if (st != TERN_OK)
            free(buf);
        send_reply(w, h->origin, h->reply_tag, st, st == TERN_OK ? buf : NULL,
                   st == TERN_OK ? TERN_RMA_RDMA_KEY_BYTES : 0);
        return;
    }
    }
}

/* Takes the request that arrived in rx_buf and posts the next receive. */
static int take_request(tern_win_t *w)
{
    tern_req_t *rx = w->rx;
    if (!rx || !rx->complete)
        return 0;
    char *buf = w->rx_buf;
    size_t got = rx->status_bytes;
    tern_status_t err = (tern_status_t)rx->error;
    tern_req_release(rx);
    w->rx = NULL;
    w->rx_buf = NULL;
    post_rx(w); /* out of memory: requests wait in point-to-point's queue */
    rma_incoming_t *in = calloc(1, sizeof *in);
    if (err != TERN_OK || got < sizeof(rma_hdr_t) || !in) {
        free(buf);
        free(in);
        return 1;
    }
    memcpy(&in->hdr, buf, sizeof in->hdr);
    size_t payload = in->hdr.nsegs * sizeof(tern_dt_seg_t) + in->hdr.data_bytes;
    if (got > sizeof(rma_hdr_t) || payload == 0) {
        memmove(buf, buf + sizeof(rma_hdr_t), got - sizeof(rma_hdr_t));
        in->payload = buf;
    } else {
        free(buf);
        in->payload = malloc(payload);
        if (!in->payload ||
            tern_comm_irecv(w->comm, w->comm->context_id, in->payload, payload, in->hdr.origin,
                            RMA_TAG_DATA, &in->data_req) != TERN_OK) {
            send_reply(w, in->hdr.origin, in->hdr.reply_tag, TERN_ERR_NOMEM, NULL, 0);
            free(in->payload);
            free(in);
            return 1;
        }
    }
    *w->in_tail = in;
    w->in_tail = &in->next;
    return 1;
}

static int serve(tern_win_t *w)
{
    int n = 0;
    while (take_request(w))
        n++;
    while (w->in_head) {
        rma_incoming_t *in = w->in_head;
        if (in->data_req) {
            if (!in->data_req->complete)
                break;
            tern_req_release(in->data_req);
            in->data_req = NULL;
        }
        if (!(w->in_head = in->next))
            w->in_tail = &w->in_head;
        if (in->hdr.type >= RMA_LOCK)
            serve_control(w, &in->hdr);
        else
            serve_data(w, in);
        free(in->payload);
        free(in);
        n++;
    }
    return n;
}

int tern_rma_am_poll(void)
{
    if (in_poll)
        return 0;
    in_poll = 1;
    int n = 0;
    if (rescan || scanned_at != tern_progress_events) {
        rescan = 0;
        scanned_at = tern_progress_events;
        for (tern_win_t *w = live; w; w = w->next_live)
            n += serve(w);
        if (n)
            rescan = 1; /* what it served may have let more through */
    }
    for (rma_op_t **p = &ops; *p;) {
        rma_op_t *op = *p;
        rma_op_t *next = op->next;
        if (op_progress(op)) {
            *p = next;
            n++;
        } else {
            p = &op->next;
        }
    }
    for (rma_reply_t **p = &replies; *p;) {
        rma_reply_t *r = *p;
        if (r->req->complete) {
            *p = r->next;
            tern_req_release(r->req);
            free(r->buf);
            free(r);
            n++;
        } else {
            p = &r->next;
        }
    }
    in_poll = 0;
    return n;
}
