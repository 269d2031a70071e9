/* Rendezvous by the sender's RDMA write (TERN_OFI_RNDV_WRITE): where the
 * transport offers it for the peer (TERN_TL_CAP_RNDV_WRITE: ofi, off-host
 * peers or all, by the knob), the receiver of an RTS answers with
 * TERN_PKT_WCTS, its buffer's address and key, instead of reading the
 * sender's buffer; the sender writes the data (delivery complete, from its
 * RDMA endpoint), then sends TERN_PKT_WDONE and its request is done; the
 * receive completes on the WDONE, which the write's completion precedes.
 * Over TCP the data then leaves on the sender's own connection, which
 * carries bulk one way and only ACKs back, where the receiver's reads
 * made its connection carry small requests one way and bulk the other
 * (the kernel's delayed ACKs stalled those: docs/performance.md).
 * Contiguous receive and send buffers only; everything else keeps the get
 * or the stream. */
#ifndef TERN_CORE_PT2PT_RNDV_WRITE_H
#define TERN_CORE_PT2PT_RNDV_WRITE_H

#include "core/pt2pt/request.h"
#include <stddef.h>
#include <stdint.h>

/* Packet types, beside p2p_pkt.h's, send_cancel.h's, p2p_coop.h's and
 * peer_failure.h's. */
enum { TERN_PKT_WCTS = 69, TERN_PKT_WDONE = 70 };

/* Receiver, on the RTS of a contiguous n-byte (n > 0) message from
 * src_world whose sender request is sreq, req in the peer's in-flight
 * list: asks the sender to write and returns 1, or 0 when the buffer
 * cannot be registered (the caller reads or streams as before). */
int tern_p2p_rndv_write_begin(int src_world, tern_req_t *req, size_t n, uint64_t sreq);
/* TERN_PKT_WCTS / TERN_PKT_WDONE from src_world. */
void tern_p2p_rndv_write_packet(int src_world, const void *pkt, size_t len);

#endif
