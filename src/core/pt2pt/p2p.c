#include "core/pt2pt/p2p.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/p2p_coop.h"
#include "core/pt2pt/rndv_path.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/send_cancel.h"
#include "core/runtime/runtime.h"
#include "base/log.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Packet types. Every packet starts with a 32-bit type. */
enum {
    PKT_EAGER = 1,     /* match header + data */
    PKT_EAGER_SYNC,    /* match header + sender request + data; ack on match */
    PKT_RTS,           /* match header + sender request + address + rkey */
    PKT_CTS,           /* receiver ready: stream `bytes` to receiver request */
    PKT_DATA,          /* a fragment of a streamed rendezvous */
    PKT_FIN,           /* receiver finished its get: sender request done */
    PKT_SYNC_ACK,      /* synchronous eager matched */
    PKT_CREDIT,        /* receiver consumed eager bytes: return credit */
};

/* 16 bytes: behind shm's 16-byte cell header an eager message of up to
 * 32 bytes then fits one cache line (the line is what crosses between
 * cores). An eager message's size is its packet's length less the header;
 * a rendezvous carries it. */
typedef struct {
    uint32_t type;
    int32_t tag;
    uint32_t context_id;
    int32_t src;
} pkt_match_t;

typedef struct {
    pkt_match_t m;
    uint64_t sreq;
} pkt_sync_t;

typedef struct {
    pkt_match_t m;
    uint64_t size;
    uint64_t sreq;
    uint64_t addr;
    tern_rkey_t rkey;
    uint64_t flags; /* RTS_STREAM: no get (non-contiguous sender, or no key) */
} pkt_rts_t;

#define RTS_STREAM 1u

typedef struct {
    uint32_t type;
    uint32_t pad;
    uint64_t sreq;
    uint64_t rreq;
    uint64_t bytes;
} pkt_cts_t;

/* 48 bytes: behind the transport's 16-byte cell header the data then starts
 * on a cache line. */
typedef struct {
    uint32_t type;
    uint32_t pad;
    uint64_t rreq;
    uint64_t offset;
    uint64_t pad2[3];
} pkt_data_t;

typedef struct {
    uint32_t type;
    uint32_t pad;
    uint64_t value; /* FIN, SYNC_ACK: sender request; CREDIT: bytes */
} pkt_ctrl_t;

/* Flow-control cost of one eager message: its bytes plus a fixed charge, so
 * a flood of empty messages is bounded too. */
#define EAGER_COST(bytes) ((long)(bytes) + 64)

/* ------------------------------------------------------------------------ */
/* Packets that wait for room in a transport, kept in order per peer. */

#define PENDING_HDR_MAX 96
_Static_assert(sizeof(pkt_rts_t) <= PENDING_HDR_MAX && sizeof(pkt_sync_t) <= PENDING_HDR_MAX &&
                   sizeof(pkt_cts_t) <= PENDING_HDR_MAX && sizeof(pkt_data_t) <= PENDING_HDR_MAX,
               "every packet header fits a queued packet");

struct tern_pending {
    tern_pending_t *next;
    size_t hdr_len;
    unsigned char hdr[PENDING_HDR_MAX];
    const void *payload;
    size_t payload_len;
    tern_req_t *done_req;   /* complete this send once the packet is out */
    tern_req_t *stream_req; /* stream this request's data as PKT_DATA */
};

static tern_pending_t *pending_new(const void *hdr, size_t hdr_len);

/* A peer whose packet stream broke on our side (a packet that could not be
 * sent or kept, a malformed one): it is treated as failed, like a dead
 * peer, since the protocol state with it can no longer be trusted. */
static __attribute__((cold)) void peer_broken(int peer_world, tern_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The peer's list of requests waiting for a packet from it (runtime.h):
 * only rendezvous and synchronous transfers, never the eager fast path. */
static void inflight_add(tern_peer_t *peer, tern_req_t *req)
{
    req->inflight_prev = NULL;
    req->next = peer->inflight_head;
    if (req->next)
        req->next->inflight_prev = req;
    peer->inflight_head = req;
}

static void inflight_remove(tern_peer_t *peer, tern_req_t *req)
{
    if (req->inflight_prev)
        req->inflight_prev->next = req->next;
    else
        peer->inflight_head = req->next;
    if (req->next)
        req->next->inflight_prev = req->inflight_prev;
    req->next = req->inflight_prev = NULL;
}

static void peer_mark_pending(int peer_world)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    if (!peer->in_pending_list) {
        peer->in_pending_list = 1;
        tern_rt.pending_peers[tern_rt.n_pending_peers++] = peer_world;
    }
}

static void queue_append(tern_pending_t **head, tern_pending_t **tail, tern_pending_t *p)
{
    p->next = NULL;
    if (*tail)
        (*tail)->next = p;
    else
        *head = p;
    *tail = p;
}

static void pending_append(int peer_world, tern_pending_t *p)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    queue_append(&peer->pending_head, &peer->pending_tail, p);
    peer_mark_pending(peer_world);
}

static void stream_append(int peer_world, tern_req_t *req)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    tern_pending_t *p = pending_new(NULL, 0);
    if (!p) {
        peer_broken(peer_world, TERN_ERR_NOMEM, "out of memory queueing a rendezvous stream");
        return;
    }
    p->stream_req = req;
    queue_append(&peer->stream_head, &peer->stream_tail, p);
    peer_mark_pending(peer_world);
}

/* Freed entries are kept: a window of sends larger than the transport's
 * queue puts every message past the queue's depth here, and calloc/free
 * each was a quarter of such a send's instructions. */
enum { PENDING_KEEP_MAX = 256 };
static tern_pending_t *pending_free_list;
static int n_pending_free;

static void pending_free(tern_pending_t *p)
{
    if (n_pending_free >= PENDING_KEEP_MAX) {
        free(p);
        return;
    }
    p->next = pending_free_list;
    pending_free_list = p;
    n_pending_free++;
}

static tern_pending_t *pending_new(const void *hdr, size_t hdr_len)
{
    tern_pending_t *p = pending_free_list;
    if (p) {
        pending_free_list = p->next;
        n_pending_free--;
        p->payload = NULL;
        p->payload_len = 0;
        p->done_req = NULL;
        p->stream_req = NULL;
    } else if (!(p = calloc(1, sizeof *p))) {
        return NULL;
    }
    if (hdr_len)
        memcpy(p->hdr, hdr, hdr_len);
    p->hdr_len = hdr_len;
    return p;
}

static void send_complete(tern_req_t *req);

/* ------------------------------------------------------------------------ */
/* Non-contiguous data: fragments are packed at their offset of the packed
 * stream into a scratch buffer of one active message, never into a
 * full-size copy. The transport copies the payload during am_send (or
 * refuses it with AGAIN and the fragment is packed again later), so one
 * scratch buffer serves every send. */

static char *pack_scratch;
static size_t pack_scratch_len;

/* Packs bytes offset..offset+n of a non-contiguous request's packed stream
 * into dst (scratch, a queue cell or a bulk chunk). */
static void pack_range(const tern_req_t *req, size_t offset, void *dst, size_t n)
{
    tern_status_t st = tern_datatype_pack_range(req->buf, (size_t)req->count, req->datatype, offset, dst, n);
    /* Kept fatal: the request holds a reference on its committed type and
     * the range lies inside its packed size, so this is a broken invariant
     * (and the caller has already reserved the transport's room). */
    if (st != TERN_OK)
        tern_fatal("internal error (a bug in Tern): packing bytes %zu..%zu failed: %s", offset,
                   offset + n, tern_status_string(st));
}

/* NULL when out of memory. */
static void *scratch_pack(const tern_req_t *req, size_t offset, size_t n)
{
    if (n > pack_scratch_len) {
        char *p = realloc(pack_scratch, n);
        if (!p)
            return NULL;
        pack_scratch = p;
        pack_scratch_len = n;
    }
    pack_range(req, offset, pack_scratch, n);
    return pack_scratch;
}

/* One fragment written in place into room the transport reserved (its bulk
 * channel, or an active message: shm cell, ofi send buffer), then
 * committed: the data is copied (or packed, for non-contiguous types) once,
 * straight into it. Returns 0 when the transport has no room now. */
static int stream_push_in_place(tern_peer_t *peer, int peer_world, tern_req_t *req, size_t n,
                                void *(*reserve)(tern_tl_t *, int),
                                void (*commit)(tern_tl_t *, int, size_t))
{
    char *p = reserve(peer->tl, peer_world);
    if (p == NULL)
        return 0;
    pkt_data_t d = {.type = PKT_DATA, .rreq = req->remote_req, .offset = req->offset};
    memcpy(p, &d, sizeof d);
    if (__builtin_expect(req->noncontig, 0))
        pack_range(req, req->offset, p + sizeof d, n);
    else
        memcpy(p + sizeof d, (const char *)req->buf + req->offset, n);
    commit(peer->tl, peer_world, sizeof d + n);
    return 1;
}

/* Pushes as many fragments of a streamed rendezvous as the transport takes
 * (through its bulk channel when it has one; non-contiguous data packed in
 * place when the transport has am_reserve). Returns 1 when the whole
 * message is out. */
static int stream_push(int peer_world, tern_req_t *req)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    int bulk = peer->bulk_max > sizeof(pkt_data_t);
    size_t frag_max = (bulk ? peer->bulk_max : peer->am_max) - sizeof(pkt_data_t);
    while (req->offset < req->transfer_bytes) {
        size_t n = req->transfer_bytes - req->offset;
        if (n > frag_max)
            n = frag_max;
        if (bulk || (__builtin_expect(req->noncontig, 0) && peer->ops->am_reserve)) {
            if (!stream_push_in_place(peer, peer_world, req, n,
                                      bulk ? peer->ops->bulk_reserve : peer->ops->am_reserve,
                                      bulk ? peer->ops->bulk_commit : peer->ops->am_commit))
                return 0;
            req->offset += n;
            continue;
        }
        pkt_data_t d = {.type = PKT_DATA, .rreq = req->remote_req, .offset = req->offset};
        const void *payload = __builtin_expect(req->noncontig, 0)
                                  ? scratch_pack(req, req->offset, n)
                                  : (const char *)req->buf + req->offset;
        tern_status_t st = payload ? peer->ops->am_send(peer->tl, peer_world, &d, sizeof d, payload, n)
                                   : TERN_ERR_NOMEM;
        if (st == TERN_ERR_AGAIN)
            return 0;
        if (st != TERN_OK) {
            /* Fails this request with the others (it is in flight). */
            peer_broken(peer_world, st, "sending rendezvous data failed");
            return 1;
        }
        req->offset += n;
    }
    inflight_remove(peer, req);
    send_complete(req);
    return 1;
}

/* Tries the queues of one peer (packets, then streams); returns packets
 * and streams finished. */
static int pending_flush_peer(int peer_world)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    int n = 0;
    while (peer->pending_head) {
        tern_pending_t *p = peer->pending_head;
        tern_status_t st = peer->ops->am_send(peer->tl, peer_world, p->hdr, p->hdr_len, p->payload,
                                              p->payload_len);
        if (st == TERN_ERR_AGAIN)
            break;
        if (st != TERN_OK) {
            peer_broken(peer_world, st, "sending a queued packet failed"); /* empties the queues */
            return n;
        }
        if (p->done_req)
            send_complete(p->done_req);
        peer->pending_head = p->next;
        if (!peer->pending_head)
            peer->pending_tail = NULL;
        pending_free(p);
        n++;
    }
    while (peer->stream_head) {
        tern_pending_t *p = peer->stream_head;
        if (!stream_push(peer_world, p->stream_req))
            break;
        if (peer->stream_head != p)
            break; /* the peer failed inside stream_push: its queues are empty */
        peer->stream_head = p->next;
        if (!peer->stream_head)
            peer->stream_tail = NULL;
        pending_free(p);
        n++;
    }
    return n;
}

int tern_p2p_flush_pending(void)
{
    int n = 0;
    for (int i = 0; i < tern_rt.n_pending_peers;) {
        int pw = tern_rt.pending_peers[i];
        n += pending_flush_peer(pw);
        if (!tern_rt.peers[pw].pending_head && !tern_rt.peers[pw].stream_head) {
            tern_rt.peers[pw].in_pending_list = 0;
            tern_rt.pending_peers[i] = tern_rt.pending_peers[--tern_rt.n_pending_peers];
        } else {
            i++;
        }
    }
    return n;
}

/* Sends a packet, or queues it behind earlier ones. The header is copied;
 * the payload is not: the caller keeps it valid until the packet is out
 * (done_req completes then; a synchronous send completes later still). */
static void send_packet(int peer_world, const void *hdr, size_t hdr_len, const void *payload,
                        size_t payload_len, tern_req_t *done_req)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    if (!peer->pending_head) {
        tern_status_t st =
            peer->ops->am_send(peer->tl, peer_world, hdr, hdr_len, payload, payload_len);
        if (st == TERN_OK) {
            if (done_req)
                send_complete(done_req);
            return;
        }
        if (st != TERN_ERR_AGAIN) {
            if (done_req)
                inflight_add(peer, done_req); /* so that the failure completes it */
            peer_broken(peer_world, st, "sending a packet failed");
            return;
        }
    }
    tern_pending_t *p = __builtin_expect(peer->failed == TERN_OK, 1) ? pending_new(hdr, hdr_len) : NULL;
    if (!p) {
        /* Nothing more goes to a failed peer (done_req completes with its
         * error); a packet we cannot keep breaks the stream. */
        if (done_req)
            inflight_add(peer, done_req);
        peer_broken(peer_world, TERN_ERR_NOMEM, "out of memory queueing a packet");
        return;
    }
    p->payload = payload;
    p->payload_len = payload_len;
    p->done_req = done_req;
    pending_append(peer_world, p);
}

static void send_ctrl(int peer_world, uint32_t type, uint64_t value)
{
    pkt_ctrl_t c = {.type = type, .value = value};
    send_packet(peer_world, &c, sizeof c, NULL, 0, NULL);
}

/* ------------------------------------------------------------------------ */
/* Sender side. */

static void send_complete(tern_req_t *req)
{
    if (req->staging) {
        free(req->staging);
        req->staging = NULL;
    }
    /* A cancel was asked: the receiver's answer completes it. */
    if (__builtin_expect(req->cancel_state == TERN_CANCEL_ASKED, 0) && tern_send_cancel_defer(req))
        return;
    tern_req_complete(req);
}

/* The match packet this send puts on the wire now gets the peer's next number. */
static inline void take_match_seq(tern_peer_t *peer, tern_req_t *req)
{
    req->match_seq = peer->match_sent++;
    req->has_seq = 1;
}

/* A non-contiguous eager payload was packed into the scratch buffer; if the
 * packet had to wait in the pending queue it needs a copy of its own. */
static void eager_unscratch(tern_req_t *req)
{
    tern_pending_t *p = tern_rt.peers[req->peer_world].pending_tail;
    if (!p || p->payload != pack_scratch)
        return;
    req->staging = malloc(req->bytes ? req->bytes : 1);
    if (!req->staging) {
        peer_broken(req->peer_world, TERN_ERR_NOMEM, "out of memory staging a %zu-byte send",
                    req->bytes);
        return;
    }
    memcpy(req->staging, pack_scratch, req->bytes);
    p->payload = req->staging;
}

int tern_p2p_send_eager_now(int comm_rank, uint32_t ctx, const void *buf, size_t bytes,
                            int dest_world, int tag)
{
    tern_peer_t *peer = &tern_rt.peers[dest_world];
    long cost = EAGER_COST(bytes);
    if (bytes > peer->eager_max || peer->credits < cost || peer->pending_head)
        return 0;
    pkt_match_t m = {.type = PKT_EAGER, .tag = tag, .context_id = ctx, .src = comm_rank};
    if (peer->ops->am_reserve) {
        /* Written in place (shm: straight into the queue cell): the header
         * is a fixed-size store, and eager_max leaves room for it. */
        char *p = peer->ops->am_reserve(peer->tl, dest_world);
        if (p == NULL)
            return 0;
        memcpy(p, &m, sizeof m);
        if (bytes)
            memcpy(p + sizeof m, buf, bytes);
        peer->ops->am_commit(peer->tl, dest_world, sizeof m + bytes);
        peer->match_sent++;
    } else {
        tern_status_t st = peer->ops->am_send(peer->tl, dest_world, &m, sizeof m, buf, bytes);
        if (st == TERN_ERR_AGAIN)
            return 0;
        if (st != TERN_OK) {
            /* The general path then completes the send with the error. */
            peer_broken(dest_world, st, "sending a message failed");
            return 0;
        }
        peer->match_sent++;
    }
    peer->credits -= cost;
    return 1;
}

/* Non-contiguous eager data packed straight into the transport's message
 * (shm: the queue cell), one copy instead of pack + copy. 0 when the
 * transport cannot (no am_reserve, packets queued before it, queue full). */
static int eager_pack_in_place(tern_peer_t *peer, tern_req_t *req, pkt_match_t *m)
{
    if (!peer->ops->am_reserve || peer->pending_head)
        return 0;
    char *p = peer->ops->am_reserve(peer->tl, req->peer_world);
    if (p == NULL)
        return 0;
    take_match_seq(peer, req);
    size_t hdr_len;
    if (req->mode != TERN_SEND_SYNC) {
        m->type = PKT_EAGER;
        memcpy(p, m, sizeof *m);
        hdr_len = sizeof *m;
    } else {
        pkt_sync_t s = {.m = *m, .sreq = (uint64_t)(uintptr_t)req};
        s.m.type = PKT_EAGER_SYNC;
        memcpy(p, &s, sizeof s);
        hdr_len = sizeof s;
    }
    pack_range(req, 0, p + hdr_len, req->bytes);
    peer->ops->am_commit(peer->tl, req->peer_world, hdr_len + req->bytes);
    /* A synchronous send completes with the acknowledgement. */
    if (req->mode != TERN_SEND_SYNC)
        send_complete(req);
    else
        inflight_add(peer, req);
    return 1;
}

tern_status_t tern_p2p_start_send(tern_req_t *req)
{
    tern_peer_t *peer = &tern_rt.peers[req->peer_world];
    pkt_match_t m = {.tag = req->tag, .context_id = req->context_id, .src = req->comm_rank};
    req->complete = 0;
    req->error = TERN_OK;
    req->offset = 0;
    req->has_seq = req->rndv = 0;
    req->cancel_state = TERN_CANCEL_NONE;

    long cost = EAGER_COST(req->bytes);
    if (req->bytes <= peer->eager_max && peer->credits >= cost) {
        peer->credits -= cost;
        if (__builtin_expect(req->noncontig, 0) && eager_pack_in_place(peer, req, &m))
            return TERN_OK;
        const void *payload = req->buf;
        if (__builtin_expect(req->noncontig, 0) && !(payload = scratch_pack(req, 0, req->bytes))) {
            peer->credits += cost;
            return TERN_ERR_NOMEM;
        }
        take_match_seq(peer, req);
        if (req->mode != TERN_SEND_SYNC) {
            m.type = PKT_EAGER;
            send_packet(req->peer_world, &m, sizeof m, payload, req->bytes, req);
        } else {
            pkt_sync_t s = {.m = m, .sreq = (uint64_t)(uintptr_t)req};
            s.m.type = PKT_EAGER_SYNC;
            /* Completion comes with the acknowledgement, not when sent. */
            inflight_add(peer, req);
            send_packet(req->peer_world, &s, sizeof s, payload, req->bytes, NULL);
        }
        if (__builtin_expect(req->noncontig, 0))
            eager_unscratch(req);
        return TERN_OK;
    }

    /* A failed peer has no eager room nor credit left (tern_p2p_fail_peer_requests),
     * so every send to it comes here: it fails at once. */
    if (__builtin_expect(peer->failed != TERN_OK, 0)) {
        req->error = peer->failed;
        send_complete(req);
        return TERN_OK;
    }
    pkt_rts_t r = {.m = m, .size = req->bytes, .sreq = (uint64_t)(uintptr_t)req,
                   .addr = (uint64_t)(uintptr_t)req->buf};
    r.m.type = PKT_RTS;
    if (req->noncontig) {
        /* The receiver cannot read a scattered layout: it asks for a
         * stream of fragments, each packed at its offset. */
        r.flags = RTS_STREAM;
    } else if (peer->caps & TERN_TL_CAP_GET) {
        tern_status_t st = peer->ops->mem_reg(peer->tl, req->buf, req->bytes, &r.rkey);
        if (st != TERN_OK)
            return st;
    } else {
        /* No key to read with: the receiver may still have the ability
         * (CMA allowed on its side only, tests/fault cma_mixed), and a
         * read with an empty key failed as a dead peer. */
        r.flags = RTS_STREAM;
    }
    inflight_add(peer, req); /* until its FIN, or its stream is out */
    take_match_seq(peer, req);
    req->rndv = 1;
    send_packet(req->peer_world, &r, sizeof r, NULL, 0, NULL);
    return TERN_OK;
}

/* ------------------------------------------------------------------------ */
/* Receiver side. */

static void credit_consumed(int src_world, size_t bytes)
{
    tern_peer_t *peer = &tern_rt.peers[src_world];
    peer->consumed += EAGER_COST(bytes);
    if (peer->consumed >= tern_rt.credit_max / 4) {
        send_ctrl(src_world, PKT_CREDIT, (uint64_t)peer->consumed);
        peer->consumed = 0;
    }
}

static void rndv_get_done(tern_tl_comp_t *comp, tern_status_t st)
{
    tern_req_t *req = (tern_req_t *)((char *)comp - offsetof(tern_req_t, get_comp));
    if (st != TERN_OK) {
        /* The sender waits for a FIN that will not come: the pair is
         * broken (this request fails with the others in flight). */
        peer_broken(req->peer_world, st, "a rendezvous read failed");
        return;
    }
    send_ctrl(req->peer_world, PKT_FIN, req->remote_req);
    tern_p2p_rndv_landed(req->peer_world, req, req->transfer_bytes - req->coop_bytes);
}

void tern_p2p_rndv_landed(int peer_world, tern_req_t *req, size_t bytes)
{
    req->offset += bytes;
    if (req->offset < req->transfer_bytes)
        return; /* the other part of a cooperative copy */
    inflight_remove(&tern_rt.peers[peer_world], req);
    tern_rndv_path_landed(&tern_rt.peers[peer_world], req);
    tern_req_complete(req);
}

/* A receive meets an eager message (data, size bytes): status, copy or
 * unpack, credit. The caller completes the request (after the
 * acknowledgement of a synchronous send). */
static void deliver_eager(tern_req_t *req, int src_world, int src, int tag, size_t size,
                          const void *data)
{
    size_t n = size <= req->bytes ? size : req->bytes;
    req->status_source = src;
    req->status_tag = tag;
    req->status_bytes = n;
    req->error = size > req->bytes ? TERN_ERR_TRUNCATE : TERN_OK;
    req->peer_world = src_world;
    /* Non-contiguous receives unpack straight out of the message. */
    if (__builtin_expect(req->noncontig, 0))
        tern_datatype_unpack_range(data, n, req->buf, (size_t)req->count, req->datatype, 0);
    else if (n)
        memcpy(req->buf, data, n);
    credit_consumed(src_world, size);
}

/* A receive meets its message (straight from the transport or from the
 * unexpected queue). */
static void deliver(tern_req_t *req, const tern_msg_t *msg)
{
    if (msg->type == PKT_EAGER || msg->type == PKT_EAGER_SYNC) {
        deliver_eager(req, msg->src_world, msg->src, msg->tag, msg->size, msg->data);
        if (msg->type == PKT_EAGER_SYNC)
            send_ctrl(msg->src_world, PKT_SYNC_ACK, msg->sreq);
        tern_req_complete(req);
        return;
    }

    size_t n = msg->size <= req->bytes ? msg->size : req->bytes;
    req->status_source = msg->src;
    req->status_tag = msg->tag;
    req->status_bytes = n;
    req->error = msg->size > req->bytes ? TERN_ERR_TRUNCATE : TERN_OK;
    req->peer_world = msg->src_world;

    switch (msg->type) {
    case PKT_RTS: {
        tern_peer_t *peer = &tern_rt.peers[msg->src_world];
        req->remote_req = msg->sreq;
        req->transfer_bytes = n;
        req->offset = 0;
        if (n == 0) {
            send_ctrl(msg->src_world, PKT_FIN, msg->sreq);
            tern_req_complete(req);
            return;
        }
        /* Below rma_min the receiver's measurements decide (rndv_path.h),
         * before the request joins the in-flight list they look at. */
        req->rndv_sample = 0;
        int by_get = (peer->caps & TERN_TL_CAP_GET) && !req->noncontig &&
                     !(msg->rts_flags & RTS_STREAM) &&
                     (n >= peer->rma_min || tern_rndv_path_by_get(peer, req, n));
        /* Until the read completes or the last fragment arrives. */
        inflight_add(peer, req);
        if (by_get) {
            req->get_comp.cb = rndv_get_done;
            size_t head = tern_p2p_coop_begin(msg->src_world, req, n, msg->sreq);
            tern_status_t st = peer->ops->get(peer->tl, msg->src_world, req->buf, head, msg->addr,
                                              &msg->rkey, &req->get_comp);
            if (st == TERN_OK)
                return;
            if (st != TERN_ERR_NOT_SUPPORTED || req->coop_bytes) {
                peer_broken(msg->src_world, st, "a rendezvous read failed");
                return;
            }
            /* The transport lost the ability (e.g. CMA denied): stream. */
            peer->caps &= ~TERN_TL_CAP_GET;
        }
        pkt_cts_t c = {.type = PKT_CTS, .sreq = msg->sreq, .rreq = (uint64_t)(uintptr_t)req,
                       .bytes = n};
        send_packet(msg->src_world, &c, sizeof c, NULL, 0, NULL);
        return;
    }
    default: /* only match packets are delivered (handle_match_packet) */
        __builtin_unreachable();
    }
}

int tern_p2p_recv_eager_now(uint32_t ctx, void *buf, size_t bytes, int src, int tag,
                            tern_status_t *err)
{
    tern_unexp_t *u = tern_match_find_unexpected(ctx, src, tag, 0);
    if (!u || u->msg.type != PKT_EAGER)
        return 0;
    u = tern_match_find_unexpected(ctx, src, tag, 1); /* the same entry, now taken */
    size_t n = u->msg.size <= bytes ? u->msg.size : bytes;
    if (n)
        memcpy(buf, u->msg.data, n);
    *err = u->msg.size > bytes ? TERN_ERR_TRUNCATE : TERN_OK;
    credit_consumed(u->msg.src_world, u->msg.size);
    tern_match_free_unexpected(u);
    return 1;
}

int tern_p2p_recv_fitting_now(uint32_t ctx, void *buf, size_t bytes, int src, int tag,
                              tern_recv_done_t *done)
{
    tern_unexp_t *u = tern_match_find_unexpected(ctx, src, tag, 0);
    if (!u || u->msg.type != PKT_EAGER || u->msg.size > bytes)
        return 0;
    u = tern_match_find_unexpected(ctx, src, tag, 1); /* the same entry, now taken */
    if (u->msg.size)
        memcpy(buf, u->msg.data, u->msg.size);
    done->source = u->msg.src;
    done->tag = u->msg.tag;
    done->bytes = u->msg.size;
    credit_consumed(u->msg.src_world, u->msg.size);
    tern_match_free_unexpected(u);
    return 1;
}

tern_status_t tern_p2p_start_recv(tern_req_t *req)
{
    req->complete = 0;
    req->error = TERN_OK;
    req->cancelled = 0;
    tern_unexp_t *u = tern_match_find_unexpected(req->context_id, req->peer, req->tag, 1);
    if (u) {
        deliver(req, &u->msg);
        tern_match_free_unexpected(u);
        return TERN_OK;
    }
    tern_match_post(req);
    return TERN_OK;
}

tern_status_t tern_p2p_recv_unexpected(tern_req_t *req, tern_unexp_t *u)
{
    req->complete = 0;
    req->error = TERN_OK;
    deliver(req, &u->msg);
    tern_match_free_unexpected(u);
    return TERN_OK;
}

int tern_p2p_cancel_recv(tern_req_t *req)
{
    if (!tern_match_unpost(req))
        return 0;
    req->cancelled = 1;
    req->status_source = MPI_ANY_SOURCE;
    req->status_tag = MPI_ANY_TAG;
    req->status_bytes = 0;
    tern_req_complete(req);
    return 1;
}

static void handle_match_packet(int src_world, const void *pkt, size_t len)
{
    const pkt_match_t *m = pkt;
    int eager = m->type == PKT_EAGER;
    uint64_t seq = tern_rt.peers[src_world].match_recvd++; /* counted as the sender does */
    if (eager && __builtin_expect(len >= sizeof *m, 1)) {
        /* The common case, a plain eager message meeting a posted receive,
         * matches on the packet header itself (no tern_msg_t is built). */
        tern_req_t *req = tern_match_take_posted(m->context_id, m->src, m->tag);
        if (req) {
            deliver_eager(req, src_world, m->src, m->tag, len - sizeof *m, m + 1);
            tern_req_complete(req);
            return;
        }
    }
    size_t hdr_len = m->type == PKT_EAGER        ? sizeof(pkt_match_t)
                     : m->type == PKT_EAGER_SYNC ? sizeof(pkt_sync_t)
                                                 : sizeof(pkt_rts_t);
    if (__builtin_expect(len < hdr_len, 0)) {
        peer_broken(src_world, TERN_ERR_INTERNAL,
                    "corrupt packet of type %u: %zu bytes, under its %zu-byte header",
                    (unsigned)m->type, len, hdr_len);
        return;
    }
    tern_msg_t msg = {.type = m->type, .src_world = src_world, .src = m->src, .tag = m->tag,
                      .context_id = m->context_id, .size = len - hdr_len, .seq = seq};
    switch (m->type) {
    case PKT_EAGER:
        msg.data = (const char *)pkt + sizeof(pkt_match_t);
        break;
    case PKT_EAGER_SYNC: {
        const pkt_sync_t *s = pkt;
        msg.data = (const char *)pkt + sizeof(pkt_sync_t);
        msg.sreq = s->sreq;
        break;
    }
    case PKT_RTS: {
        const pkt_rts_t *r = pkt;
        msg.size = r->size;
        msg.sreq = r->sreq;
        msg.addr = r->addr;
        msg.rkey = r->rkey;
        msg.rts_flags = (uint32_t)r->flags;
        break;
    }
    }
    if (!eager) { /* an eager message was matched above */
        tern_req_t *req = tern_match_take_posted(msg.context_id, msg.src, msg.tag);
        if (req) {
            deliver(req, &msg);
            return;
        }
    }
    tern_status_t st = tern_match_add_unexpected(&msg);
    if (st != TERN_OK) /* the message is lost: the pair is broken */
        peer_broken(src_world, st, "an unexpected message could not be stored");
}

void tern_p2p_am_handler(void *ctx, int src_world, const void *pkt, size_t len)
{
    (void)ctx;
    uint32_t type = *(const uint32_t *)pkt;
    switch (type) {
    case PKT_EAGER:
    case PKT_EAGER_SYNC:
    case PKT_RTS:
        handle_match_packet(src_world, pkt, len);
        return;
    case PKT_CTS: {
        const pkt_cts_t *c = pkt;
        tern_req_t *req = (tern_req_t *)(uintptr_t)c->sreq;
        req->remote_req = c->rreq;
        req->transfer_bytes = c->bytes;
        req->offset = 0;
        tern_peer_t *peer = &tern_rt.peers[src_world];
        if (peer->stream_head || !stream_push(src_world, req))
            stream_append(src_world, req);
        return;
    }
    case PKT_DATA: {
        const pkt_data_t *d = pkt;
        tern_req_t *req = (tern_req_t *)(uintptr_t)d->rreq;
        size_t n = len - sizeof *d;
        if (__builtin_expect(req->noncontig, 0))
            tern_datatype_unpack_range((const char *)pkt + sizeof *d, n, req->buf,
                                       (size_t)req->count, req->datatype, d->offset);
        else
            memcpy((char *)req->buf + d->offset, (const char *)pkt + sizeof *d, n);
        req->offset += n;
        if (req->offset == req->transfer_bytes) {
            inflight_remove(&tern_rt.peers[src_world], req);
            tern_rndv_path_landed(&tern_rt.peers[src_world], req);
            tern_req_complete(req);
        }
        return;
    }
    case PKT_FIN:
    case PKT_SYNC_ACK: {
        const pkt_ctrl_t *c = pkt;
        tern_req_t *req = (tern_req_t *)(uintptr_t)c->value;
        tern_peer_t *peer = &tern_rt.peers[src_world];
        if (type == PKT_FIN && (peer->caps & TERN_TL_CAP_GET) && !req->noncontig)
            peer->ops->mem_dereg(peer->tl, req->buf, req->bytes);
        inflight_remove(peer, req);
        send_complete(req);
        return;
    }
    case PKT_CREDIT: {
        const pkt_ctrl_t *c = pkt;
        tern_rt.peers[src_world].credits += (long)c->value;
        return;
    }
    case TERN_PKT_SEND_CANCEL:
    case TERN_PKT_SEND_CANCEL_ANSWER:
        tern_send_cancel_packet(src_world, pkt, len);
        return;
    case TERN_PKT_COOP:
    case TERN_PKT_COOP_DONE:
        tern_p2p_coop_packet(src_world, pkt, len);
        return;
    default:
        peer_broken(src_world, TERN_ERR_INTERNAL, "corrupt packet of unknown type %u", type);
    }
}

/* ------------------------------------------------------------------------ */

void tern_p2p_set_data(tern_req_t *req, const void *buf, MPI_Count count, MPI_Datatype dt)
{
    tern_dt_desc_t d;
    if (!tern_datatype_describe(dt, &d))
        d = (tern_dt_desc_t){.size = 0, .contig = 1}; /* as before: invalid types move nothing */
    tern_p2p_set_data_desc(req, buf, count, dt, &d);
}

void tern_p2p_set_data_desc(tern_req_t *req, const void *buf, MPI_Count count, MPI_Datatype dt,
                            const tern_dt_desc_t *d)
{
    req->count = count;
    req->datatype = dt;
    req->bytes = (size_t)d->size * (size_t)count;
    if (d->contig) {
        /* The fast path: one block, moved with memcpy / get. */
        req->buf = (void *)((uintptr_t)buf + (uintptr_t)d->true_lb);
        return;
    }
    req->buf = (void *)buf;
    req->noncontig = 1;
    tern_datatype_retain(dt);
}

/* ------------------------------------------------------------------------ */
/* Failures (cold paths only). */

static void peer_broken(int peer_world, tern_status_t st, const char *fmt, ...)
{
    char why[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    tern_peer_failed(peer_world, st, why);
}

void tern_p2p_fail_peer_requests(int peer_world)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    tern_status_t st = peer->failed;
    /* No eager room and no credit: the fast paths (send_eager_now, the
     * eager branch of start_send) fall through to the rendezvous branch,
     * which fails the send at once; no new check on the fast path. */
    peer->eager_max = 0;
    peer->credits = LONG_MIN / 2;
    /* No reads from it: a rendezvous with it takes the CTS path, whose
     * packet is refused (send_packet) and fails the receive. */
    peer->caps = 0;
    while (peer->pending_head) {
        tern_pending_t *p = peer->pending_head;
        peer->pending_head = p->next;
        if (p->done_req) {
            p->done_req->error = st;
            send_complete(p->done_req);
        }
        pending_free(p);
    }
    peer->pending_tail = NULL;
    /* Streams: their requests are in the inflight list. */
    while (peer->stream_head) {
        tern_pending_t *p = peer->stream_head;
        peer->stream_head = p->next;
        pending_free(p);
    }
    peer->stream_tail = NULL;
    /* A rendezvous send's registration is not released: the transport
     * drops what it holds for the peer at disconnect, and finalize closes
     * the rest. */
    while (peer->inflight_head) {
        tern_req_t *req = peer->inflight_head;
        inflight_remove(peer, req);
        req->error = st;
        if (req->kind == TERN_REQ_SEND)
            send_complete(req);
        else
            tern_req_complete(req);
    }
    tern_send_cancel_fail_peer(peer_world, st);
}

/* ------------------------------------------------------------------------ */
/* What send_cancel.c needs of the protocols. */

void tern_p2p_send_header(int peer_world, const void *hdr, size_t hdr_len)
{
    send_packet(peer_world, hdr, hdr_len, NULL, 0, NULL);
}

void tern_p2p_drop_unexpected(tern_unexp_t *u)
{
    if (u->msg.type == PKT_EAGER || u->msg.type == PKT_EAGER_SYNC)
        credit_consumed(u->msg.src_world, u->msg.size);
    tern_match_free_unexpected(u);
}

tern_req_t *tern_p2p_retract_send(int peer_world, uint64_t seq)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    for (tern_req_t *r = peer->inflight_head; r; r = r->next) {
        if (r->kind != TERN_REQ_SEND || !r->has_seq || r->match_seq != seq)
            continue;
        /* As the FIN would have (start_send registered it). */
        if (r->rndv && (peer->caps & TERN_TL_CAP_GET) && !r->noncontig)
            peer->ops->mem_dereg(peer->tl, r->buf, r->bytes);
        inflight_remove(peer, r);
        return r;
    }
    return NULL;
}

uint64_t tern_p2p_last_match_seq(int peer_world)
{
    return tern_rt.peers[peer_world].match_sent - 1;
}
