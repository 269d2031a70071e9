/* The point-to-point protocols (p2p.h): sends and receives, the packets'
 * handler, failures. Packets that wait for room in a transport, and the
 * streams of a rendezvous, are p2p_queue.c's. */
#include "core/pt2pt/p2p.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/eager_parts.h"
#include "core/pt2pt/p2p_coop.h"
#include "core/pt2pt/p2p_pkt.h"
#include "core/pt2pt/p2p_queue.h"
#include "core/pt2pt/rndv_path.h"
#include "core/pt2pt/rndv_write.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/send_cancel.h"
#include "core/runtime/runtime.h"
#include "base/config.h"
#include "base/copy_movsb.h"
#include "base/copy_store.h"
#include "base/copy_vec.h"
#include "base/log.h"
#include "base/profile.h"
#include "base/pvars.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Flow-control cost of one eager message: its bytes plus a fixed charge, so
 * a flood of empty messages is bounded too. */
#define EAGER_COST(bytes) ((long)(bytes) + 64)

/* ------------------------------------------------------------------------ */
/* Sender side. */

void tern_p2p_send_complete(tern_req_t *req)
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

/* A match header stored where it goes, one field at a time: one built on
 * the stack and copied by 16-byte loads right after its 4-byte stores
 * cannot be forwarded from them, and the loads wait until the stores reach
 * the cache (optimisation log, `stlf`). */
static inline void put_match(char *p, uint32_t type, int32_t tag, uint32_t ctx, int32_t src)
{
    memcpy(p + offsetof(pkt_match_t, type), &type, sizeof type);
    memcpy(p + offsetof(pkt_match_t, tag), &tag, sizeof tag);
    memcpy(p + offsetof(pkt_match_t, context_id), &ctx, sizeof ctx);
    memcpy(p + offsetof(pkt_match_t, src), &src, sizeof src);
}

/* The header's context id and source, neighbours in pkt_match_t, as one
 * word in memory order: one register across the transport's am_reserve
 * where two were spilled around it, and one 8-byte store into the cell
 * (which this process never reads back, so no load waits on it). */
_Static_assert(offsetof(pkt_match_t, src) == offsetof(pkt_match_t, context_id) + 4,
               "context_id and src are one word");
static inline uint64_t match_ctx_src(uint32_t ctx, int32_t src)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (uint64_t)ctx | (uint64_t)(uint32_t)src << 32;
#else
    return (uint64_t)(uint32_t)src | (uint64_t)ctx << 32;
#endif
}

/* tern_p2p_send_eager_now from eager_align_min, or through a transport
 * without am_reserve (the peer's checks made). Out of line, so that the
 * small sends' path keeps its few values in registers (below). */
static __attribute__((noinline)) int send_eager_other(int comm_rank, uint32_t ctx, const void *buf,
                                                      size_t bytes, int dest_world, int tag)
{
    tern_peer_t *peer = &tern_rt.peers[dest_world];
    if (peer->ops->am_reserve) {
        /* Written in place (shm: straight into the queue cell), field by
         * field from registers; eager_max leaves room for either header
         * (it is at most am_max - 64). */
        size_t hdr_len = sizeof(pkt_eager_aligned_t);
        char *p = peer->ops->am_reserve(peer->tl, dest_world, hdr_len + bytes);
        if (p == NULL)
            return 0;
        if (bytes - tern_rt.eager_vec_min <= tern_rt.eager_vec_span &&
            peer->ops->am_reserved_warm &&
            peer->ops->am_reserved_warm(peer->tl, dest_world, hdr_len + bytes)) {
            /* the receiver copies out by the same loop */
            put_match(p, PKT_EAGER_VEC, tag, ctx, comm_rank);
            tern_copy_vec(p + hdr_len, buf, bytes);
            tern_pvar_add(TERN_PVAR_P2P_EAGER_VEC_SENT, 1);
        } else {
            put_match(p, PKT_EAGER_ALIGNED, tag, ctx, comm_rank);
            tern_copy_to_cell(p + hdr_len, buf, bytes, tern_rt.eager_movsb_max);
        }
        peer->ops->am_commit(peer->tl, dest_world, hdr_len + bytes);
    } else {
        pkt_match_t m = {.type = PKT_EAGER, .tag = tag, .context_id = ctx, .src = comm_rank};
        tern_status_t st = peer->ops->am_send(peer->tl, dest_world, &m, sizeof m, buf, bytes);
        if (st == TERN_ERR_AGAIN)
            return 0;
        if (st != TERN_OK) {
            /* The general path then completes the send with the error. */
            tern_p2p_peer_broken(dest_world, st, "sending a message failed");
            return 0;
        }
    }
    peer->match_sent++;
    peer->credits -= EAGER_COST(bytes);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_SENT, 1);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_SENT_BYTES, bytes);
    if (__builtin_expect(tern_profile_rec, 0))
        tern_profile_row_add(0, dest_world, bytes);
    return 1;
}

int tern_p2p_send_eager_now(int comm_rank, uint32_t ctx, const void *buf, size_t bytes,
                            int dest_world, int tag)
{
    tern_peer_t *peer = &tern_rt.peers[dest_world];
    if (bytes > peer->eager_max || peer->credits < EAGER_COST(bytes) || peer->pending_head)
        return 0;
    if (!peer->ops->am_reserve || bytes >= tern_rt.eager_align_min)
        return send_eager_other(comm_rank, ctx, buf, bytes, dest_world, tag);
    /* Below eager_align_min, in place (shm: straight into the queue cell).
     * Few values live across the transport's two calls (the cost is
     * recomputed from bytes, the context id and source travel as one
     * word), so few go to the stack and back. Data of 4-16 bytes is copied
     * by two loads and two stores, not a call into libc. The counters are
     * added on either side of am_commit, so that the compiler does not
     * merge them into a 16-byte load, add and store (optimisation log,
     * `send3`: 8 B MPI_Send 271 -> 252 instructions). */
    uint64_t ctx_src = match_ctx_src(ctx, comm_rank);
    char *p = peer->ops->am_reserve(peer->tl, dest_world, sizeof(pkt_match_t) + bytes);
    if (p == NULL)
        return 0;
    uint32_t type = PKT_EAGER;
    memcpy(p + offsetof(pkt_match_t, type), &type, sizeof type);
    memcpy(p + offsetof(pkt_match_t, tag), &tag, sizeof tag);
    memcpy(p + offsetof(pkt_match_t, context_id), &ctx_src, sizeof ctx_src);
    if (bytes - 8 <= 8) {
        uint64_t head, tail;
        memcpy(&head, buf, 8);
        memcpy(&tail, (const char *)buf + bytes - 8, 8);
        memcpy(p + sizeof(pkt_match_t), &head, 8);
        memcpy(p + sizeof(pkt_match_t) + bytes - 8, &tail, 8);
    } else if (bytes - 4 <= 3) {
        uint32_t head, tail;
        memcpy(&head, buf, 4);
        memcpy(&tail, (const char *)buf + bytes - 4, 4);
        memcpy(p + sizeof(pkt_match_t), &head, 4);
        memcpy(p + sizeof(pkt_match_t) + bytes - 4, &tail, 4);
    } else if (bytes) {
        memcpy(p + sizeof(pkt_match_t), buf, bytes);
    }
    tern_pvar_add(TERN_PVAR_P2P_EAGER_SENT, 1);
    peer->ops->am_commit(peer->tl, dest_world, sizeof(pkt_match_t) + bytes);
    peer->match_sent++;
    peer->credits -= EAGER_COST(bytes);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_SENT_BYTES, bytes);
    /* The destination from the peer (live here), not dest_world: keeping
     * that alive across the transport's calls cost 3 more instructions a
     * message with the profile off. */
    if (__builtin_expect(tern_profile_rec, 0))
        tern_profile_row_add(0, (int)(peer - tern_rt.peers), bytes);
    return 1;
}

/* Non-contiguous eager data packed straight into the transport's message
 * (shm: the queue cell), one copy instead of pack + copy. 0 when the
 * transport cannot (no am_reserve, packets queued before it, queue full). */
static int eager_pack_in_place(tern_peer_t *peer, tern_req_t *req, pkt_match_t *m)
{
    if (!peer->ops->am_reserve || peer->pending_head)
        return 0;
    size_t hdr_len = req->mode != TERN_SEND_SYNC ? sizeof *m : sizeof(pkt_sync_t);
    char *p = peer->ops->am_reserve(peer->tl, req->peer_world, hdr_len + req->bytes);
    if (p == NULL)
        return 0;
    take_match_seq(peer, req);
    if (req->mode != TERN_SEND_SYNC) {
        m->type = PKT_EAGER;
        memcpy(p, m, sizeof *m);
    } else {
        pkt_sync_t s = {.m = *m, .sreq = (uint64_t)(uintptr_t)req};
        s.m.type = PKT_EAGER_SYNC;
        memcpy(p, &s, sizeof s);
    }
    tern_p2p_pack_range(req, 0, p + hdr_len, req->bytes);
    peer->ops->am_commit(peer->tl, req->peer_world, hdr_len + req->bytes);
    /* A synchronous send completes with the acknowledgement. */
    if (req->mode != TERN_SEND_SYNC)
        tern_p2p_send_complete(req);
    else
        tern_p2p_inflight_add(peer, req);
    return 1;
}

/* One part of a message written in parts (eager_big_send), by the stores chosen for it (memcpy when
 * untimed); its cycles where they are timed, else 0. */
static uint64_t copy_part(int stores, char *dst, const char *src, size_t n)
{
    if (stores == TERN_STORES_UNTIMED) {
        memcpy(dst, src, n);
        return 0;
    }
    uint64_t t0 = tern_store_clock();
    tern_copy_stores(stores, dst, src, n, SIZE_MAX);
    return tern_store_clock() - t0;
}

/* A contiguous message above eager_max up to eager_big_max, eager through
 * the transport's large ordered messages (shm: bulk cells, one up to 64 KB,
 * the message running on into the next cells above): no
 * rendezvous handshake before the data, the receiver copies it out as any
 * eager message (into the unexpected queue when no receive is posted, so
 * the channel never waits). Above TERN_P2P_EAGER_BIG_PART it goes in parts, the
 * message published after the first, so the receiver copies part k while
 * this writes k + 1 (eager_parts_recv.c). 0 when there is no room now (or
 * packets queued before it): the caller goes by rendezvous.
 *
 * Not inside a window: a send with no match packet received from the peer
 * since our last one here, while the peer has not yet taken our earlier
 * cells (bw, bibw windows), goes by rendezvous, whose stream kept both
 * cores' copies overlapping; a window of whole-message cells ran at about
 * half the stream's bibw in the VM's slow mode (optimisation log,
 * `bibw3`). A ping-pong receives between its sends, and a one-way send
 * after a barrier finds the channel idle: both keep the eager path. */
static int eager_big_send(tern_peer_t *peer, tern_req_t *req, pkt_match_t *m, long cost)
{
    if (peer->pending_head)
        return 0;
    if ((uint32_t)peer->match_recvd + 1 == peer->eager_big_recvd && peer->ops->am_big_idle &&
        !peer->ops->am_big_idle(peer->tl, req->peer_world))
        return 0;
    /* Room for the parts' longer header (the one-piece message is 32
     * bytes shorter: the cells reserved and not committed stay free). */
    size_t part = peer->ops->am_big_grow ? tern_rt.eager_big_part : 0,
           len = EAGER_PARTS_HDR + req->bytes;
    char *p = peer->ops->am_big_reserve(peer->tl, req->peer_world, len);
    if (p == NULL)
        return 0;
    size_t room;
    big_at(peer, req->peer_world, p, 0, &room);
    const char *src = req->buf;
    if (room >= sizeof *m + req->bytes && (part == 0 || req->bytes <= part)) {
        m->type = PKT_EAGER;
        memcpy(p, m, sizeof *m);
        memcpy(p + sizeof *m, src, req->bytes);
        peer->ops->am_big_commit(peer->tl, req->peer_world, sizeof *m + req->bytes,
                                 sizeof *m + req->bytes);
    } else {
        /* In parts (a message past its first piece always: each piece
         * ends a part). */
        if (part == 0)
            part = SIZE_MAX;
        size_t first = room - EAGER_PARTS_HDR;
        first = first < part ? first : part;
        /* From the transport's bulk_nt_min the stream's choice of stores,
         * one for the whole message (the header tells the receiver, which
         * times its copies out by them), timed per peer: in the VM's slow
         * mode the receiver reads streamed parts from memory faster than
         * plain ones from our cache, near it is the other way. */
        int stores = req->bytes >= peer->bulk_nt_min
                         ? tern_p2p_bulk_choose(req->peer_world, req->bytes)
                         : TERN_STORES_UNTIMED;
        char *data = p + EAGER_PARTS_HDR;
        uint64_t cycles = copy_part(stores, data, src, first);
        /* The header after the first part, next to the commit: it shares
         * its line with the cell's flag, which the receiver polls, so the
         * line crosses once to us and once back per message, not twice. */
        pkt_eager_aligned_t h = {.m = *m, .stores = (uint32_t)stores};
        h.m.type = PKT_EAGER_PARTS;
        memcpy(p, &h, sizeof h);
        peer->ops->am_big_commit(peer->tl, req->peer_world, len, EAGER_PARTS_HDR + first);
        /* No progress until the last part: the receiver's handler waits
         * for them (it cannot deadlock: the cells were ours before the
         * commit). The transport is asked only at each piece's end. */
        char *piece = p;
        size_t piece_off = 0, piece_end = room;
        for (size_t off = first; off < req->bytes;) {
            if (EAGER_PARTS_HDR + off >= piece_end) {
                piece_off = EAGER_PARTS_HDR + off;
                piece = big_at(peer, req->peer_world, p, piece_off, &room);
                piece_end = piece_off + room;
            }
            char *dst = piece + (EAGER_PARTS_HDR + off - piece_off);
            size_t n = req->bytes - off < part ? req->bytes - off : part;
            n = n < piece_end - (EAGER_PARTS_HDR + off) ? n : piece_end - (EAGER_PARTS_HDR + off);
            cycles += copy_part(stores, dst, src + off, n);
            off += n;
            peer->ops->am_big_grow(peer->tl, p, EAGER_PARTS_HDR + off);
        }
        if (stores)
            tern_p2p_bulk_timed(req->peer_world, stores, req->bytes, cycles);
        tern_pvar_add(TERN_PVAR_P2P_EAGER_PARTS_SENT, 1);
    }
    take_match_seq(peer, req);
    peer->eager_big_recvd = (uint32_t)peer->match_recvd + 1;
    peer->credits -= cost;
    tern_pvar_add(TERN_PVAR_P2P_EAGER_SENT, 1);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_SENT_BYTES, req->bytes);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_BIG_SENT, 1);
    tern_profile_all_send(req->peer_world, req->bytes);
    tern_p2p_send_complete(req);
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
        tern_pvar_add(TERN_PVAR_P2P_EAGER_SENT, 1);
        tern_pvar_add(TERN_PVAR_P2P_EAGER_SENT_BYTES, req->bytes);
        tern_profile_all_send(req->peer_world, req->bytes);
        if (__builtin_expect(req->noncontig, 0) && eager_pack_in_place(peer, req, &m))
            return TERN_OK;
        const void *payload = req->buf;
        if (__builtin_expect(req->noncontig, 0) &&
            !(payload = tern_p2p_scratch_pack(req, 0, req->bytes))) {
            peer->credits += cost;
            return TERN_ERR_NOMEM;
        }
        take_match_seq(peer, req);
        if (req->mode != TERN_SEND_SYNC) {
            m.type = PKT_EAGER;
            tern_p2p_send_packet(req->peer_world, &m, sizeof m, payload, req->bytes, req);
        } else {
            /* Built from req, not copied from m: a copy of m's 4-byte
             * stores by a 16-byte load cannot be forwarded (put_match). */
            pkt_sync_t s = {.m = {.type = PKT_EAGER_SYNC, .tag = req->tag,
                                  .context_id = req->context_id, .src = req->comm_rank},
                            .sreq = (uint64_t)(uintptr_t)req};
            /* Completion comes with the acknowledgement, not when sent. */
            tern_p2p_inflight_add(peer, req);
            tern_p2p_send_packet(req->peer_world, &s, sizeof s, payload, req->bytes, NULL);
        }
        if (__builtin_expect(req->noncontig, 0))
            tern_p2p_eager_unscratch(req);
        return TERN_OK;
    }

    if (req->bytes <= peer->eager_big_max && peer->credits >= cost && !req->noncontig &&
        req->mode != TERN_SEND_SYNC && eager_big_send(peer, req, &m, cost))
        return TERN_OK;

    /* A failed peer has no eager room nor credit left (tern_p2p_fail_peer_requests),
     * so every send to it comes here: it fails at once. */
    if (__builtin_expect(peer->failed != TERN_OK, 0)) {
        req->error = peer->failed;
        tern_p2p_send_complete(req);
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
    tern_p2p_inflight_add(peer, req); /* until its FIN, or its stream is out */
    take_match_seq(peer, req);
    tern_rndv_path_sending(peer, req);
    tern_pvar_add(TERN_PVAR_P2P_RNDV_SENT, 1);
    tern_pvar_add(TERN_PVAR_P2P_RNDV_SENT_BYTES, req->bytes);
    tern_profile_all_send(req->peer_world, req->bytes);
    tern_event4(TERN_EVENT_P2P_RNDV_STARTED, req->peer_world, req->tag, req->bytes, 0);
    tern_p2p_send_packet(req->peer_world, &r, sizeof r, NULL, 0, NULL);
    return TERN_OK;
}

/* ------------------------------------------------------------------------ */
/* Receiver side. */

void tern_p2p_credit_consumed(int src_world, size_t bytes)
{
    tern_peer_t *peer = &tern_rt.peers[src_world];
    peer->consumed += EAGER_COST(bytes);
    if (peer->consumed >= tern_rt.credit_max / 4) {
        tern_p2p_send_ctrl(src_world, PKT_CREDIT, (uint64_t)peer->consumed);
        peer->consumed = 0;
    }
}

static void rndv_get_done(tern_tl_comp_t *comp, tern_status_t st)
{
    tern_req_t *req = (tern_req_t *)((char *)comp - offsetof(tern_req_t, get_comp));
    if (st != TERN_OK) {
        /* The sender waits for a FIN that will not come: the pair is
         * broken (this request fails with the others in flight). */
        tern_p2p_peer_broken(req->peer_world, st, "a rendezvous read failed");
        return;
    }
    tern_p2p_send_ctrl(req->peer_world, PKT_FIN, req->remote_req);
    tern_p2p_rndv_landed(req->peer_world, req, req->transfer_bytes - req->coop_bytes);
}

void tern_p2p_rndv_landed(int peer_world, tern_req_t *req, size_t bytes)
{
    req->offset += bytes;
    if (req->offset < req->transfer_bytes)
        return; /* the other part of a cooperative copy */
    tern_p2p_inflight_remove(&tern_rt.peers[peer_world], req);
    tern_rndv_path_landed(&tern_rt.peers[peer_world], req);
    tern_req_complete(req);
}

/* A receive meets an eager message (data, size bytes): status, copy or
 * unpack, credit. The caller completes the request (after the
 * acknowledgement of a synchronous send). */
static inline __attribute__((always_inline)) void deliver_eager_by(tern_req_t *req, int src_world,
                                                                   int src, int tag, size_t size,
                                                                   const void *data, int vec)
{
    size_t n = size <= req->bytes ? size : req->bytes;
    eager_status(req, src_world, src, tag, size, n);
    /* Non-contiguous receives unpack straight out of the message. */
    if (__builtin_expect(req->noncontig, 0))
        tern_datatype_unpack_range(data, n, req->buf, (size_t)req->count, req->datatype, 0);
    else if (vec)
        tern_copy_vec(req->buf, data, n);
    else if (n)
        memcpy(req->buf, data, n);
    eager_taken(req, src_world, size);
}

static void deliver_eager(tern_req_t *req, int src_world, int src, int tag, size_t size,
                          const void *data)
{
    deliver_eager_by(req, src_world, src, tag, size, data, 0);
}

/* A receive meets its message (straight from the transport or from the
 * unexpected queue). */
static void deliver(tern_req_t *req, const tern_msg_t *msg)
{
    if (msg->type == PKT_EAGER || msg->type == PKT_EAGER_SYNC) {
        deliver_eager(req, msg->src_world, msg->src, msg->tag, msg->size, msg->data);
        if (msg->type == PKT_EAGER_SYNC)
            tern_p2p_send_ctrl(msg->src_world, PKT_SYNC_ACK, msg->sreq);
        tern_req_complete(req);
        return;
    }

    size_t n = msg->size <= req->bytes ? msg->size : req->bytes;
    req->status_source = msg->src;
    req->status_tag = msg->tag;
    req->status_bytes = n;
    req->error = msg->size > req->bytes ? TERN_ERR_TRUNCATE : TERN_OK;
    req->peer_world = msg->src_world;
    tern_watch_recv(req->context_id, msg->size);

    switch (msg->type) {
    case PKT_RTS: {
        tern_peer_t *peer = &tern_rt.peers[msg->src_world];
        req->remote_req = msg->sreq;
        req->transfer_bytes = n;
        req->offset = 0;
        if (n == 0) {
            tern_p2p_send_ctrl(msg->src_world, PKT_FIN, msg->sreq);
            tern_req_complete(req);
            return;
        }
        /* Below rma_min the receiver's measurements decide (rndv_path.h),
         * before the request joins the in-flight list they look at. */
        req->rndv_sample = 0;
        int by_write = (peer->caps & TERN_TL_CAP_RNDV_WRITE) && !req->noncontig &&
                       !(msg->rts_flags & RTS_STREAM) && n >= (size_t)peer->write_min_kb << 10;
        int by_get = !by_write && (peer->caps & TERN_TL_CAP_GET) && !req->noncontig &&
                     !(msg->rts_flags & RTS_STREAM) &&
                     (n >= peer->rma_min || tern_rndv_path_by_get(peer, req, n));
        /* Until the read completes or the last fragment arrives. */
        tern_p2p_inflight_add(peer, req);
        tern_pvar_add(TERN_PVAR_P2P_RNDV_HANDSHAKES, 1);
        /* The sender writes (rndv_write.h); unregistrable: the stream. */
        if (by_write && tern_p2p_rndv_write_begin(msg->src_world, req, n, msg->sreq))
            return;
        if (by_get) {
            req->get_comp.cb = rndv_get_done;
            size_t head = tern_p2p_coop_begin(msg->src_world, req, n, msg->sreq);
            tern_status_t st = peer->ops->get(peer->tl, msg->src_world, req->buf, head, msg->addr,
                                              &msg->rkey, &req->get_comp);
            if (st == TERN_OK) {
                tern_pvar_add(TERN_PVAR_P2P_RNDV_GET, 1);
                tern_pvar_add(TERN_PVAR_P2P_RNDV_GET_BYTES, n);
                tern_pvar_add(peer->ops == &tern_tl_shm_ops ? TERN_PVAR_P2P_RNDV_CMA_BYTES
                                                            : TERN_PVAR_P2P_RNDV_RDMA_BYTES, n);
                return;
            }
            if (st != TERN_ERR_NOT_SUPPORTED || req->coop_bytes) {
                tern_p2p_peer_broken(msg->src_world, st, "a rendezvous read failed");
                return;
            }
            /* The transport lost the ability (e.g. CMA denied): stream. */
            peer->caps &= ~TERN_TL_CAP_GET;
        }
        tern_pvar_add(TERN_PVAR_P2P_RNDV_STREAM, 1);
        tern_pvar_add(TERN_PVAR_P2P_RNDV_STREAM_BYTES, n);
        pkt_cts_t c = {.type = PKT_CTS, .sreq = msg->sreq, .rreq = (uint64_t)(uintptr_t)req,
                       .bytes = n};
        tern_p2p_send_packet(msg->src_world, &c, sizeof c, NULL, 0, NULL);
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
    tern_p2p_credit_consumed(u->msg.src_world, u->msg.size);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_RECVD, 1);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_RECVD_BYTES, u->msg.size);
    tern_watch_recv(ctx, u->msg.size);
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
    tern_p2p_credit_consumed(u->msg.src_world, u->msg.size);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_RECVD, 1);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_RECVD_BYTES, u->msg.size);
    tern_watch_recv(ctx, u->msg.size);
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

/* A match packet; vec: a PKT_EAGER_VEC, whose data a posted receive
 * copies out by base/copy_vec.h (the sender's copy in). */
static inline __attribute__((always_inline)) void match_packet(int src_world, const void *pkt,
                                                               size_t len, int vec)
{
    const pkt_match_t *m = pkt;
    int eager = vec || m->type == PKT_EAGER || m->type == PKT_EAGER_ALIGNED;
    size_t hdr_len = m->type == PKT_EAGER                  ? sizeof(pkt_match_t)
                     : vec || m->type == PKT_EAGER_ALIGNED ? sizeof(pkt_eager_aligned_t)
                     : m->type == PKT_EAGER_SYNC           ? sizeof(pkt_sync_t)
                                                           : sizeof(pkt_rts_t);
    uint64_t seq = tern_rt.peers[src_world].match_recvd++; /* counted as the sender does */
    if (eager && __builtin_expect(len >= hdr_len, 1)) {
        /* The common case, a plain eager message meeting a posted receive,
         * matches on the packet header itself (no tern_msg_t is built). */
        tern_req_t *req = tern_match_take_posted(m->context_id, m->src, m->tag);
        if (req) {
            deliver_eager_by(req, src_world, m->src, m->tag, len - hdr_len,
                             (const char *)pkt + hdr_len, vec);
            tern_req_complete(req);
            return;
        }
    }
    if (__builtin_expect(len < hdr_len, 0)) {
        tern_p2p_peer_broken(src_world, TERN_ERR_INTERNAL,
                             "corrupt packet of type %u: %zu bytes, under its %zu-byte header",
                             (unsigned)m->type, len, hdr_len);
        return;
    }
    tern_msg_t msg = {.type = m->type, .src_world = src_world, .src = m->src, .tag = m->tag,
                      .context_id = m->context_id, .size = len - hdr_len, .seq = seq};
    switch (m->type) {
    case PKT_EAGER_ALIGNED: /* the header's form ends here */
    case PKT_EAGER_VEC:     /* and so does the copy's */
        msg.type = PKT_EAGER;
        msg.data = (const char *)pkt + sizeof(pkt_eager_aligned_t);
        break;
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
        tern_p2p_peer_broken(src_world, st, "an unexpected message could not be stored");
}

static void handle_match_packet(int src_world, const void *pkt, size_t len)
{
    match_packet(src_world, pkt, len, 0);
}

static __attribute__((noinline)) void handle_eager_vec(int src_world, const void *pkt, size_t len)
{
    match_packet(src_world, pkt, len, 1);
}

void tern_p2p_am_handler(void *ctx, int src_world, const void *pkt, size_t len)
{
    (void)ctx;
    uint32_t type = *(const uint32_t *)pkt;
    switch (type) {
    case PKT_EAGER:
    case PKT_EAGER_ALIGNED:
    case PKT_EAGER_SYNC:
    case PKT_RTS:
        handle_match_packet(src_world, pkt, len);
        return;
    case PKT_EAGER_VEC:
        handle_eager_vec(src_world, pkt, len);
        return;
    case PKT_EAGER_PARTS:
        tern_p2p_eager_parts_packet(src_world, pkt, len);
        return;
    case PKT_CTS: {
        const pkt_cts_t *c = pkt;
        tern_req_t *req = (tern_req_t *)(uintptr_t)c->sreq;
        req->remote_req = c->rreq;
        req->transfer_bytes = c->bytes;
        req->offset = 0;
        tern_p2p_stream_start(src_world, req);
        return;
    }
    case PKT_DATA: {
        const pkt_data_t *d = pkt;
        tern_req_t *req = (tern_req_t *)(uintptr_t)d->rreq;
        size_t n = len - sizeof *d;
        if (__builtin_expect(req->noncontig, 0))
            tern_datatype_unpack_range((const char *)pkt + sizeof *d, n, req->buf,
                                       (size_t)req->count, req->datatype, d->offset);
        else if (d->stores) { /* timed for the sender's choice of stores */
            uint64_t t0 = tern_store_clock();
            memcpy((char *)req->buf + d->offset, (const char *)pkt + sizeof *d, n);
            tern_p2p_bulk_read_timed(src_world, (int)d->stores, n, tern_store_clock() - t0);
        } else
            memcpy((char *)req->buf + d->offset, (const char *)pkt + sizeof *d, n);
        req->offset += n;
        if (req->offset == req->transfer_bytes) {
            tern_p2p_inflight_remove(&tern_rt.peers[src_world], req);
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
        tern_p2p_inflight_remove(peer, req);
        tern_p2p_send_complete(req);
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
    case TERN_PKT_WCTS:
    case TERN_PKT_WDONE:
        tern_p2p_rndv_write_packet(src_world, pkt, len);
        return;
    case TERN_PKT_ULFM:
        tern_peer_failure_packet(src_world, pkt, len);
        return;
    default:
        tern_p2p_peer_broken(src_world, TERN_ERR_INTERNAL, "corrupt packet of unknown type %u",
                             type);
    }
}

/* ------------------------------------------------------------------------ */
/* Header-only packets (p2p_queue.h), and what send_cancel.c needs. */

void tern_p2p_send_header(int peer_world, const void *hdr, size_t hdr_len)
{
    tern_p2p_send_packet(peer_world, hdr, hdr_len, NULL, 0, NULL);
}

void tern_p2p_drop_unexpected(tern_unexp_t *u)
{
    if (u->msg.type == PKT_EAGER || u->msg.type == PKT_EAGER_SYNC)
        tern_p2p_credit_consumed(u->msg.src_world, u->msg.size);
    tern_match_free_unexpected(u);
}
