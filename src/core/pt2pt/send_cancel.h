/* MPI_Cancel on a send: the receiver is asked to take the message out of
 * its unexpected queue. If it is still there the send completes cancelled
 * (MPI_Test_cancelled true) and the message is never received; once
 * matched (or being received) the send completes normally. */
#ifndef TERN_CORE_SEND_CANCEL_H
#define TERN_CORE_SEND_CANCEL_H

#include "core/pt2pt/match.h"
#include "core/pt2pt/request.h"
#include <stddef.h>
#include <stdint.h>

/* Packet types, beside p2p_pkt.h's (numbered apart from them). */
enum { TERN_PKT_SEND_CANCEL = 64, TERN_PKT_SEND_CANCEL_ANSWER = 65 };

/* Asks to cancel an active send (the user's request: standard,
 * synchronous, ready or buffered, persistent or not, complete or not).
 * The request is incomplete until the answer comes. Nothing happens for a
 * send already cancelled or answered, one that failed, or one that sent
 * nothing (MPI_PROC_NULL, a failed peer). */
void tern_send_cancel(tern_req_t *req);
/* send_complete of a request whose cancel was asked: 1 when its completion
 * waits for the answer; 0 when it completes now (it failed). */
int tern_send_cancel_defer(tern_req_t *req);
/* TERN_PKT_SEND_CANCEL(_ANSWER) from src_world. */
void tern_send_cancel_packet(int src_world, const void *pkt, size_t len);
/* The peer failed: asked cancels to it complete with st. */
void tern_send_cancel_fail_peer(int peer_world, tern_status_t st);

/* From p2p.c: an unexpected message dropped (its eager credit returned). */
void tern_p2p_drop_unexpected(tern_unexp_t *u);

#endif
