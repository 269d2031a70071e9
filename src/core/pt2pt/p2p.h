/* Point-to-point protocols over the transports: eager (data inside the
 * active message, with credit-based flow control), synchronous eager (an
 * acknowledgement on match), and rendezvous (request-to-send; then a one-sided
 * get by the receiver, or a clear-to-send answered by a pipelined stream of
 * data fragments when the transport cannot do a get). */
#ifndef TERN_CORE_P2P_H
#define TERN_CORE_P2P_H

#include "core/datatype/datatype.h"
#include "core/pt2pt/match.h"
#include "core/pt2pt/request.h"

/* Peers are world ranks, matching is on (context id, source rank in the
 * communicator, tag): the protocols never see a communicator object
 * (core/comm/comm_p2p.h addresses peers by communicator rank). */

/* Start a send/receive described by a request whose comm, context_id, peer,
 * peer_world, tag, buf, bytes and mode are set. */
tern_status_t tern_p2p_start_send(tern_req_t *req);
tern_status_t tern_p2p_start_recv(tern_req_t *req);
/* Sets buf, bytes, count and datatype of a request from the user's
 * (buf, count, dt): contiguous data gets buf at its first byte and bytes =
 * count * size; anything else is marked noncontig and moved packed (bytes =
 * packed size), with a reference on dt until the request is released. */
void tern_p2p_set_data(tern_req_t *req, const void *buf, MPI_Count count, MPI_Datatype dt);
/* The same from a type already described (the MPI layer decodes it once). */
void tern_p2p_set_data_desc(tern_req_t *req, const void *buf, MPI_Count count, MPI_Datatype dt,
                            const tern_dt_desc_t *d);
/* MPI_Send's common case (and collective schedules' sends, on context
 * ctx; comm_rank is the sender's rank in the communicator): contiguous
 * data small enough to go eager now, pushed straight into the transport
 * without a request. 1 when sent; 0 when it must take the
 * general path (too large, no credit, packets queued before it, transport
 * full). */
int tern_p2p_send_eager_now(int comm_rank, uint32_t ctx, const void *buf, size_t bytes,
                            int dest_world, int tag);
/* Collective schedules' receives (contiguous bytes): when the first match
 * is an eager message already in the unexpected queue, copy it into buf
 * now, without a request. 1 when received (*err: TERN_ERR_TRUNCATE if it
 * was longer than bytes, else TERN_OK); 0 when the receive must be posted. */
int tern_p2p_recv_eager_now(uint32_t ctx, void *buf, size_t bytes, int src, int tag,
                            tern_status_t *err);
/* MPI_Recv's common case when its message is already here: the first
 * match in the unexpected queue is an eager message of at most `bytes`
 * (contiguous); it is copied into buf and its source, tag and size
 * reported, without a request. 0 (nothing taken) otherwise. */
typedef struct {
    int source;
    int tag;
    size_t bytes;
} tern_recv_done_t;
int tern_p2p_recv_fitting_now(uint32_t ctx, void *buf, size_t bytes, int src, int tag,
                              tern_recv_done_t *done);
/* Receive a message already taken from the unexpected queue (Mrecv). */
tern_status_t tern_p2p_recv_unexpected(tern_req_t *req, tern_unexp_t *u);
/* The number of the last match packet sent to peer_world (a send that
 * went by tern_p2p_send_eager_now; send_cancel.h). */
uint64_t tern_p2p_last_match_seq(int peer_world);
/* Cancel a receive that has not matched yet; 1 if cancelled. */
int tern_p2p_cancel_recv(tern_req_t *req);

/* The active-message handler given to every transport. */
void tern_p2p_am_handler(void *ctx, int src_world, const void *msg, size_t len);
/* Push packets that waited for room in the transports. */
int tern_p2p_flush_pending(void);
/* A peer has failed (tern_rt.peers[peer_world].failed is set): completes
 * every request that waits for it with that status, drops the packets
 * queued for it, and leaves it no eager room nor credit, so later sends to
 * it take the rendezvous branch, which fails them at once. */
void tern_p2p_fail_peer_requests(int peer_world);

#endif
