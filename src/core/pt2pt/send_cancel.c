/* Cancelling sends. The sender numbers the match packets it sends to each
 * peer and the receiver counts them as they arrive (both in order per
 * pair), so "match packet seq from you" names one message exactly, even
 * among several with the same envelope (MPICH's scancel_unmatch). The
 * cancel request travels behind the message, so the receiver has it by
 * then: still unexpected means never matched, and it is dropped. */
#include "core/pt2pt/send_cancel.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/p2p_queue.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>

typedef struct {
    uint32_t type;
    uint32_t cancelled; /* answer: 1 when the message was taken out */
    uint64_t seq;       /* the send's match packet number */
    uint64_t id;        /* the sender's request, echoed in the answer */
} pkt_cancel_t;

/* Requests whose cancel waits for an answer: few, and never released
 * while here (they are incomplete), so an answer's id is checked here
 * before it is used. */
static tern_req_t **asked;
static int n_asked, cap_asked;

static int asked_index(const tern_req_t *req)
{
    for (int i = 0; i < n_asked; i++)
        if (asked[i] == req)
            return i;
    return -1;
}

static void asked_remove(int i)
{
    asked[i] = asked[--n_asked];
}

/* The user's request completes (cancelled or not, as already set). */
static void finish(tern_req_t *req)
{
    req->cancel_state = TERN_CANCEL_ANSWERED;
    free(req->staging);
    req->staging = NULL;
    tern_req_complete(req);
}

void tern_send_cancel(tern_req_t *req)
{
    if (req->kind != TERN_REQ_SEND || !req->has_seq || req->cancel_state != TERN_CANCEL_NONE ||
        req->error != TERN_OK || req->peer_world < 0 ||
        tern_rt.peers[req->peer_world].failed != TERN_OK)
        return;
    if (n_asked == cap_asked) {
        int cap = cap_asked ? 2 * cap_asked : 16;
        tern_req_t **a = realloc(asked, (size_t)cap * sizeof *a);
        if (!a)
            return; /* it completes normally, as MPI allows */
        asked = a;
        cap_asked = cap;
    }
    asked[n_asked++] = req;
    /* An eager send may be complete already: it waits for the answer now. */
    req->proto_done = req->complete ? 1 : 0;
    req->complete = 0;
    req->cancel_state = TERN_CANCEL_ASKED;
    pkt_cancel_t c = {.type = TERN_PKT_SEND_CANCEL, .seq = req->match_seq,
                      .id = (uint64_t)(uintptr_t)req};
    tern_p2p_send_header(req->peer_world, &c, sizeof c);
    /* To ourselves the answer needs only our own progress: have it now, so
     * that the request is complete when MPI_Cancel returns (mpi4py's
     * pkl5 testISSendCancel reads the status at once, as MPICH allows). */
    if (req->peer_world == tern_rt.rank)
        while (req->cancel_state == TERN_CANCEL_ASKED)
            tern_progress();
}

int tern_send_cancel_defer(tern_req_t *req)
{
    if (req->error == TERN_OK) {
        req->proto_done = 1;
        return 1;
    }
    int i = asked_index(req);
    if (i >= 0)
        asked_remove(i);
    req->cancel_state = TERN_CANCEL_ANSWERED;
    return 0;
}

/* The rendezvous or synchronous send that was match packet seq to
 * peer_world, taken out of the in-flight list (its registration released,
 * as the FIN would have), or NULL. */
static tern_req_t *retract_send(int peer_world, uint64_t seq)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    for (tern_req_t *r = peer->inflight_head; r; r = r->next) {
        if (r->kind != TERN_REQ_SEND || !r->has_seq || r->match_seq != seq)
            continue;
        /* start_send registered it */
        if (r->rndv && (peer->caps & TERN_TL_CAP_GET) && !r->noncontig)
            peer->ops->mem_dereg(peer->tl, r->buf, r->bytes);
        tern_p2p_inflight_remove(peer, r);
        return r;
    }
    return NULL;
}

static void answer(int src_world, const pkt_cancel_t *c)
{
    int i = asked_index((tern_req_t *)(uintptr_t)c->id);
    if (i < 0)
        return; /* completed meanwhile (its peer failed) */
    tern_req_t *req = asked[i];
    asked_remove(i);
    req->cancel_state = TERN_CANCEL_ANSWERED;
    if (c->cancelled) {
        /* A rendezvous or synchronous send waits for a FIN or an
         * acknowledgement that will not come: the user's own request, or
         * a buffered send's copy (released when completed). */
        tern_req_t *proto = retract_send(src_world, c->seq);
        if (proto && proto != req)
            tern_req_complete(proto);
        req->cancelled = 1;
        finish(req);
    } else if (req->proto_done) {
        finish(req);
    }
    /* else matched and still under way: the protocol completes it. */
}

void tern_send_cancel_packet(int src_world, const void *pkt, size_t len)
{
    if (len < sizeof(pkt_cancel_t))
        return;
    const pkt_cancel_t *c = pkt;
    if (c->type == TERN_PKT_SEND_CANCEL_ANSWER) {
        answer(src_world, c);
        return;
    }
    tern_unexp_t *u = tern_match_take_unexpected_seq(src_world, c->seq);
    if (u)
        tern_p2p_drop_unexpected(u);
    pkt_cancel_t a = {.type = TERN_PKT_SEND_CANCEL_ANSWER, .cancelled = u != NULL,
                      .seq = c->seq, .id = c->id};
    tern_p2p_send_header(src_world, &a, sizeof a);
}

void tern_send_cancel_fail_peer(int peer_world, tern_status_t st)
{
    for (int i = 0; i < n_asked;) {
        tern_req_t *req = asked[i];
        if (req->peer_world != peer_world) {
            i++;
            continue;
        }
        asked_remove(i);
        req->error = st;
        finish(req);
    }
}

/* ------------------------------------------------------------------------ */
/* The sender's side of the numbering (p2p.h). */

uint64_t tern_p2p_last_match_seq(int peer_world)
{
    return tern_rt.peers[peer_world].match_sent - 1;
}
