/* Cooperative large-message copies between two ranks of a node: in a
 * single-copy rendezvous (the receiver's CMA get of the sender's buffer),
 * the sender writes the tail of the message into the receiver's buffer
 * (CMA put) while the receiver reads the head, so both cores copy at once.
 * The transport's coop_split (shm: TERN_SHM_COOP_SPLIT) is the sender's
 * share in percent (0: off, the receiver copies it all).
 *
 * Receiver: on the RTS, TERN_PKT_COOP (its buffer's address and key, the
 * tail's offset and length) goes to the sender before it starts its get of
 * the head; the get's completion sends the FIN as before (the sender's
 * buffer is no longer read) and the request completes once both parts
 * landed (tern_p2p_rndv_landed). Sender: on TERN_PKT_COOP it puts the tail
 * and answers TERN_PKT_COOP_DONE; its request completes on the FIN, which
 * comes after the COOP packet on the same ordered channel, so after its
 * put. Contiguous data only (the get path is), shm only. */
#ifndef TERN_CORE_P2P_COOP_H
#define TERN_CORE_P2P_COOP_H

#include "core/pt2pt/request.h"
#include <stddef.h>
#include <stdint.h>

/* Packet types, beside p2p_pkt.h's and send_cancel.h's. */
enum { TERN_PKT_COOP = 66, TERN_PKT_COOP_DONE = 67 };

/* Receiver, before its get of an n-byte rendezvous from src_world whose
 * sender request is sreq: asks the sender for the tail when the split is
 * on and sets req->coop_bytes; returns the bytes the receiver reads itself
 * (the head, [0, returned)). */
size_t tern_p2p_coop_begin(int src_world, tern_req_t *req, size_t n, uint64_t sreq);
/* TERN_PKT_COOP(_DONE) from src_world. */
void tern_p2p_coop_packet(int src_world, const void *pkt, size_t len);

/* From p2p.c: bytes of a receive's rendezvous arrived (its get, the
 * sender's put); it completes once all transfer_bytes did. */
void tern_p2p_rndv_landed(int peer_world, tern_req_t *req, size_t bytes);

#endif
