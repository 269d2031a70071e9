/* The eager protocol in parts (TERN_P2P_EAGER_BIG_PART, docs/design.md
 * "Point-to-point protocols"): a contiguous message above eager_max goes
 * through the transport's large ordered messages (shm: bulk cells) behind a
 * PKT_EAGER_PARTS header, the message published after its first part, so the
 * receiver copies part k while the sender writes k + 1. The sender is
 * p2p.c's eager_big_send; the receiver, eager_parts_recv.c. Internal to
 * pt2pt: the layout both halves share, the receiver's handler, and what it
 * shares with p2p.c's delivery of the other eager messages. */
#ifndef TERN_CORE_PT2PT_EAGER_PARTS_H
#define TERN_CORE_PT2PT_EAGER_PARTS_H

#include "core/pt2pt/p2p_pkt.h"
#include "core/pt2pt/request.h"
#include "core/runtime/runtime.h"
#include "base/pvars.h"

#include <stddef.h>
#include <stdint.h>

/* Byte off of a large ordered message at pkt, ours or the peer's, and in
 * *room the bytes in place from there (shm: to the end of its bulk cell;
 * a transport without am_big_at keeps each message contiguous). */
static inline char *big_at(const tern_peer_t *peer, int world, const void *pkt, size_t off, size_t *room)
{
    if (!peer->ops->am_big_at) {
        *room = SIZE_MAX - off; /* off + *room does not wrap */
        return (char *)pkt + off;
    }
    return peer->ops->am_big_at(peer->tl, world, pkt, off, room);
}

/* A message in parts starts its data on a cache line of the cell (the
 * header padded, PKT_EAGER_ALIGNED's form): a copy between the page-aligned
 * buffers of most programs and data 32 bytes into a line ran 5-8% slower
 * in the VM's slow mode (optimisation log, `ml32`). */
#define EAGER_PARTS_HDR sizeof(pkt_eager_aligned_t)

/* A PKT_EAGER_PARTS packet of len bytes from src_world (eager_parts_recv.c):
 * returns once the whole message is written and delivered or queued. */
void tern_p2p_eager_parts_packet(int src_world, const void *pkt, size_t len);

/* From p2p.c, for both kinds of eager delivery: */

/* An eager message of size bytes consumed from src_world: its credit goes
 * back to the sender once a quarter of credit_max has built up. */
void tern_p2p_credit_consumed(int src_world, size_t bytes);

/* An eager message of size bytes, of which req takes n, meets req: its
 * status. Inline in p2p.c's deliver_eager and in eager_parts_recv.c alike. */
static inline __attribute__((always_inline)) void eager_status(tern_req_t *req, int src_world,
                                                               int src, int tag, size_t size,
                                                               size_t n)
{
    req->status_source = src;
    req->status_tag = tag;
    req->status_bytes = n;
    req->error = size > req->bytes ? TERN_ERR_TRUNCATE : TERN_OK;
    req->peer_world = src_world;
}

/* An eager message taken: its credit returned, its counters. */
static inline __attribute__((always_inline)) void eager_taken(const tern_req_t *req, int src_world,
                                                              size_t size)
{
    tern_p2p_credit_consumed(src_world, size);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_RECVD, 1);
    tern_pvar_add(TERN_PVAR_P2P_EAGER_RECVD_BYTES, size);
    tern_watch_recv(req->context_id, size);
}

#endif
