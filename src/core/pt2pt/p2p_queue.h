/* Packets that wait for room in a transport (p2p_queue.c). Each peer has a
 * queue of packets, sent in order, and a queue of rendezvous streams (their
 * DATA fragments name their receive request and offset, so they need no
 * order with other packets); progress retries both. Internal to pt2pt:
 * p2p.c's protocols send through it, and it calls back into p2p.c (below). */
#ifndef TERN_CORE_PT2PT_P2P_QUEUE_H
#define TERN_CORE_PT2PT_P2P_QUEUE_H

#include "core/pt2pt/request.h"
#include "core/runtime/runtime.h"
#include <stddef.h>
#include <stdint.h>

/* Sends a packet, or queues it behind earlier ones. The header is copied;
 * the payload is not: the caller keeps it valid until the packet is out
 * (done_req completes then; a synchronous send completes later still). */
void tern_p2p_send_packet(int peer_world, const void *hdr, size_t hdr_len, const void *payload,
                          size_t payload_len, tern_req_t *done_req);
/* A header-only packet, in order with the others (p2p.c; the cancel,
 * cooperative-copy and rendezvous-write packets). */
void tern_p2p_send_header(int peer_world, const void *hdr, size_t hdr_len);
/* A control packet (pkt_ctrl_t: FIN, SYNC_ACK, CREDIT). */
void tern_p2p_send_ctrl(int peer_world, uint32_t type, uint64_t value);
/* A CTS arrived for req: streams its data now, as far as the transport
 * takes it, or queues it behind the peer's earlier streams. */
void tern_p2p_stream_start(int peer_world, tern_req_t *req);
/* Packs bytes offset..offset+n of a non-contiguous request's packed stream
 * into dst (a queue cell, a bulk chunk). */
void tern_p2p_pack_range(const tern_req_t *req, size_t offset, void *dst, size_t n);
/* The same into the one scratch buffer (the transport copies the payload
 * during am_send); NULL when out of memory. */
void *tern_p2p_scratch_pack(const tern_req_t *req, size_t offset, size_t n);

/* Copies n bytes of a contiguous message into the bulk channel for
 * peer_world, with streaming or plain stores as the transport's attributes
 * say (bulk_nt_fixed, else timed per peer; p2p_queue.c says why).
 * Returns the stores taken (TERN_STORES_PLAIN or _STREAMED,
 * base/copy_store.h), which the packet tells the receiver. */
int tern_p2p_bulk_copy(int peer_world, void *dst, const void *src, size_t n);
/* The same for a message of n bytes written in several copies (eager
 * parts): the stores all of them take, then their time, once all are in
 * (cycles of tern_store_clock). */
int tern_p2p_bulk_choose(int peer_world, size_t n);
void tern_p2p_bulk_timed(int peer_world, int stores, size_t n, uint64_t cycles);
/* The receiver's copy out of n bytes peer_world wrote with stores took
 * cycles: shared with the sender, whose choice adds it to its own. */
void tern_p2p_bulk_read_timed(int peer_world, int stores, size_t n, uint64_t cycles);
/* The rate of those copies to peer_world when timed (the faster store's
 * smoothed time per byte), in bytes per ns (GB/s); 0 when not known yet. */
double tern_p2p_bulk_gbs(int peer_world);
/* After a non-contiguous eager send from the scratch buffer: if its packet
 * had to wait in the queue, it gets a copy of its own (req->staging). */
void tern_p2p_eager_unscratch(tern_req_t *req);
/* A failed peer: completes the sends whose packets wait with st and drops
 * the queued packets and streams (a stream's request is in flight, failed
 * with the others). */
void tern_p2p_drop_queued(int peer_world, tern_status_t st);

/* From p2p.c, for the queue's packets and streams: */

/* A send whose packets are out (or that failed): frees its staging and
 * completes it, unless a cancel waits for the receiver's answer. */
void tern_p2p_send_complete(tern_req_t *req);
/* A peer whose packet stream broke on our side (a packet that could not be
 * sent or kept, a malformed one): it is treated as failed, like a dead
 * peer, since the protocol state with it can no longer be trusted. */
__attribute__((cold)) void tern_p2p_peer_broken(int peer_world, tern_status_t st, const char *fmt,
                                                ...) __attribute__((format(printf, 3, 4)));

/* The peer's list of requests waiting for a packet from it (runtime.h):
 * only rendezvous and synchronous transfers, never the eager fast path.
 * Inline: both files use them on their hot paths. */
static inline void tern_p2p_inflight_add(tern_peer_t *peer, tern_req_t *req)
{
    req->inflight_prev = NULL;
    req->next = peer->inflight_head;
    if (req->next)
        req->next->inflight_prev = req;
    peer->inflight_head = req;
}

static inline void tern_p2p_inflight_remove(tern_peer_t *peer, tern_req_t *req)
{
    if (req->inflight_prev)
        req->inflight_prev->next = req->next;
    else
        peer->inflight_head = req->next;
    if (req->next)
        req->next->inflight_prev = req->inflight_prev;
    req->next = req->inflight_prev = NULL;
}

#endif
