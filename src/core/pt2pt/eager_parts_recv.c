/* The receiving half of the eager protocol in parts (eager_parts.h): the
 * PKT_EAGER_PARTS handler, which matches the message on its header and
 * copies it part by part as the sender's count of bytes written passes
 * each, and the unpacking into a non-contiguous receive. Off the fast
 * path, and kept there: with LTO a function called once would be inlined
 * into tern_p2p_am_handler (p2p.c), the small packets' handler. */
#include "core/pt2pt/eager_parts.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/match.h"
#include "core/pt2pt/p2p_queue.h"
#include "base/copy_store.h"

#include <string.h>

/* Copies want bytes of a message written in parts to dst as the parts
 * land, piece by piece (big_at), then waits for the rest (the cells are
 * freed when this returns). 0 when the sender died first. The copies are
 * timed, not the waits, for the sender's choice of stores (the header's). */
static int copy_parts(tern_peer_t *peer, int src_world, const void *pkt, size_t len, char *dst,
                      size_t want)
{
    size_t done = 0, piece_off = 0, piece_end = 0; /* message offsets of the piece at piece */
    const char *piece = pkt;
    int stores = (int)((const pkt_eager_aligned_t *)pkt)->stores;
    uint64_t cycles = 0;
    while (done < want) {
        size_t have = peer->ops->am_big_wait(peer->tl, src_world, pkt, EAGER_PARTS_HDR + done + 1);
        if (have == 0)
            return 0;
        have -= EAGER_PARTS_HDR;
        for (size_t upto = have < want ? have : want; done < upto;) {
            size_t at = EAGER_PARTS_HDR + done, room;
            if (at >= piece_end) { /* the transport is asked once per piece */
                piece = big_at(peer, src_world, pkt, at, &room);
                piece_off = at;
                piece_end = at + room;
            }
            size_t n = upto - done < piece_end - at ? upto - done : piece_end - at;
            uint64_t t0 = stores ? tern_store_clock() : 0;
            memcpy(dst + done, piece + (at - piece_off), n);
            if (stores)
                cycles += tern_store_clock() - t0;
            done += n;
        }
    }
    if (stores)
        tern_p2p_bulk_read_timed(src_world, stores, want, cycles);
    return peer->ops->am_big_wait(peer->tl, src_world, pkt, len) != 0;
}

/* A whole message in parts unpacked into a non-contiguous receive, piece
 * by piece. */
static void unpack_parts(const tern_peer_t *peer, int src_world, const void *pkt, tern_req_t *req,
                         size_t n)
{
    for (size_t done = 0; done < n;) {
        size_t room;
        const char *from = big_at(peer, src_world, pkt, EAGER_PARTS_HDR + done, &room);
        size_t k = n - done < room ? n - done : room;
        tern_datatype_unpack_range(from, k, req->buf, (size_t)req->count, req->datatype, done);
        done += k;
    }
}

/* A PKT_EAGER_PARTS message (p2p.c's eager_big_send): matched on its header, then
 * copied part by part into the posted receive, or into an unexpected
 * entry queued once whole (so the channel never waits for a receive). A
 * non-contiguous receive unpacks it once whole. Off the fast path. */
__attribute__((noinline)) void tern_p2p_eager_parts_packet(int src_world, const void *pkt,
                                                            size_t len)
{
    tern_peer_t *peer = &tern_rt.peers[src_world];
    const pkt_match_t *m = pkt;
    size_t size = len - EAGER_PARTS_HDR;
    uint64_t seq = peer->match_recvd++;
    tern_req_t *req = tern_match_take_posted(m->context_id, m->src, m->tag);
    if (req) {
        int whole = req->noncontig ? copy_parts(peer, src_world, pkt, len, NULL, 0)
                                   : copy_parts(peer, src_world, pkt, len, req->buf,
                                                size <= req->bytes ? size : req->bytes);
        if (!whole) {
            req->error = TERN_ERR_PEER;
            tern_req_complete(req);
            tern_p2p_peer_broken(src_world, TERN_ERR_PEER, "it died while writing an eager message");
            return;
        }
        /* deliver_eager without its copy: the parts are in place, or
         * unpacked here piece by piece. */
        size_t n = size <= req->bytes ? size : req->bytes;
        eager_status(req, src_world, m->src, m->tag, size, n);
        if (req->noncontig)
            unpack_parts(peer, src_world, pkt, req, n);
        eager_taken(req, src_world, size);
        tern_req_complete(req);
        return;
    }
    tern_msg_t msg = {.type = PKT_EAGER, .src_world = src_world, .src = m->src, .tag = m->tag,
                      .context_id = m->context_id, .size = size, .seq = seq};
    tern_unexp_t *u = tern_match_new_unexpected(&msg, size);
    if (!u || !copy_parts(peer, src_world, pkt, len, (char *)u->msg.data, size)) {
        if (u)
            tern_match_free_unexpected(u);
        else
            copy_parts(peer, src_world, pkt, len, NULL, 0); /* the cell is freed after */
        tern_p2p_peer_broken(src_world, u ? TERN_ERR_PEER : TERN_ERR_NOMEM,
                             "an unexpected message could not be stored");
        return;
    }
    tern_match_queue_unexpected(u);
}
