/* User-Level Failure Mitigation (docs/design.md, "Failure handling under
 * ULFM"). Everything here is off the fast path: the fast paths read one
 * word of the communicator (revoked, n_failed).
 *
 * Failed members: a communicator keeps its members known failed in the
 * order this process learnt of them (failed[]); the first n_acked are the
 * acknowledged ones (MPIX_Comm_failure_ack, MPIX_Comm_ack_failed).
 *
 * Revocation and agreement travel as TERN_PKT_ULFM active messages, handled
 * inside progress, so a process answers them whatever it is doing in MPI.
 *
 * Agreement (MPIX_Comm_agree, and shrink's agreement on the failed set and
 * the context id): the coordinator is the lowest member not known failed.
 * Each member sends it its contribution (flag, context-id mask, the members
 * it knows failed); the coordinator waits for a contribution from every
 * member it does not know failed, decides (AND of the flags and masks, OR
 * of the failed sets plus what it knows), and sends the decision to all.
 * When the coordinator dies the next lowest takes over: it first asks
 * every member (QUERY); a member that already holds the decision of that
 * agreement (even one that has returned from it) answers with it, and the
 * new coordinator then hands that decision on instead of deciding anew.
 * Failure detection has no false positives (a process is failed when it
 * is gone), and a transport delivers what a dead process sent before it is
 * declared failed, so a member either got the old coordinator's decision
 * before it turns to the new one, or nobody alive did: every survivor
 * returns the same decision. */
#include "core/comm/ulfm.h"
#include "core/comm/ulfm_int.h"
#include "core/group/group.h"
#include "core/pt2pt/match.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/p2p_queue.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"
#include "base/config.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t type; /* TERN_PKT_ULFM */
    uint32_t kind;
    uint32_t ctx;  /* the communicator's point-to-point context id */
    uint32_t seq;  /* the agreement's number on the communicator */
} pkt_ulfm_t;


int tern_ulfm_ft(void)
{
    static int ft = -1;
    if (ft < 0) {
        ft = tern_knob_bool(TERN_KNOB_FT);
        if (ft)
            tern_peer_watch_all = 1;
    }
    return ft;
}

static int rank_of_world(const tern_comm_t *c, int w)
{
    if (!c->world_ranks && !c->is_inter)
        return w < c->size ? w : -1;
    for (int m = 0; m < n_members(c); m++)
        if (world_of(c, m) == w)
            return m;
    return -1;
}


void tern_ulfm_update_failed(tern_comm_t *c)
{
    struct tern_ulfm *u = tern_ulfm_state(c);
    if (!u || c->n_failed == n_members(c))
        return;
    for (int r = 0; r < n_members(c); r++) {
        if (!member_failed(c, r))
            continue;
        int known = 0;
        for (int i = 0; i < c->n_failed && !known; i++)
            known = u->failed[i] == r;
        if (!known)
            u->failed[c->n_failed++] = r;
    }
}

/* ---- messages -------------------------------------------------------- */

/* Payloads queued for a peer stay until its queue is empty. */
typedef struct outbox {
    struct outbox *next;
    int peer_world;
    unsigned char data[];
} outbox_t;
static outbox_t *outbox;

static void outbox_sweep(void)
{
    for (outbox_t **p = &outbox; *p;) {
        const tern_peer_t *peer = &tern_rt.peers[(*p)->peer_world];
        if (!peer->pending_head || peer->failed != TERN_OK) {
            outbox_t *o = *p;
            *p = o->next;
            free(o);
        } else {
            p = &(*p)->next;
        }
    }
}

void tern_ulfm_send(tern_comm_t *c, int r, uint32_t kind, uint32_t seq, const unsigned char *body)
{
    int w = world_of(c, r);
    if (tern_rt.peers[w].failed != TERN_OK)
        return;
    pkt_ulfm_t h = {.type = TERN_PKT_ULFM, .kind = kind, .ctx = c->context_id, .seq = seq};
    size_t n = body ? c->ulfm->body_bytes : 0;
    const void *payload = NULL;
    if (n) {
        outbox_sweep();
        outbox_t *o = malloc(sizeof *o + n);
        if (!o) {
            tern_warn("ULFM: out of memory for a message to world rank %d; it is not sent", w);
            return;
        }
        memcpy(o->data, body, n);
        o->peer_world = w;
        o->next = outbox;
        outbox = o;
        payload = o->data;
    }
    tern_p2p_send_packet(w, &h, sizeof h, payload, n, NULL);
}

/* Messages for a context no communicator here has yet (a member that
 * created the communicator and started an agreement before we did). */
typedef struct orphan {
    struct orphan *next;
    int src_world;
    size_t len;
    unsigned char pkt[];
} orphan_t;
static orphan_t *orphans;

static void deliver(tern_comm_t *c, int src_world, const void *pkt, size_t len);

struct tern_ulfm *tern_ulfm_state(tern_comm_t *c)
{
    if (c->ulfm)
        return c->ulfm;
    struct tern_ulfm *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    size_t n = (size_t)n_members(c);
    u->body_bytes = sizeof(body_t) + (n + 7) / 8;
    u->failed = malloc(n * sizeof *u->failed);
    u->contrib = calloc(n * 2, sizeof *u->contrib);
    u->queried = calloc(n, sizeof *u->queried);
    if (!u->failed || !u->contrib || !u->queried) {
        free(u->failed);
        free(u->contrib);
        free(u->queried);
        free(u);
        return NULL;
    }
    c->ulfm = u;
    for (orphan_t **p = &orphans; *p;) {
        orphan_t *o = *p;
        if (((const pkt_ulfm_t *)(const void *)o->pkt)->ctx == c->context_id) {
            *p = o->next;
            deliver(c, o->src_world, o->pkt, o->len);
            free(o);
        } else {
            p = &o->next;
        }
    }
    return u;
}

static void slot_free(slot_t *s)
{
    free(s->body);
    s->body = NULL;
    s->valid = 0;
}

void tern_ulfm_comm_free(tern_comm_t *c)
{
    struct tern_ulfm *u = c->ulfm;
    if (!u)
        return;
    for (int i = 0; i < 2 * n_members(c); i++)
        slot_free(&u->contrib[i]);
    for (int i = 0; i < 4; i++)
        slot_free(&u->dec[i]);
    free(u->contrib);
    free(u->failed);
    free(u->queried);
    free(u);
    c->ulfm = NULL;
}

static int slot_set(slot_t *s, uint32_t seq, const void *body, size_t n)
{
    if (!s->body && !(s->body = malloc(n)))
        return 0;
    memcpy(s->body, body, n);
    s->seq = seq;
    s->valid = 1;
    return 1;
}

void tern_ulfm_record_decision(tern_comm_t *c, uint32_t seq, const unsigned char *body)
{
    struct tern_ulfm *u = c->ulfm;
    slot_t *d = &u->dec[seq & 3];
    if (d->valid && d->seq == seq)
        return;
    if (!slot_set(d, seq, body, u->body_bytes))
        return;
    for (int r = 0; r < n_members(c); r++)
        if (u->queried[r] == seq + 1) {
            u->queried[r] = 0;
            tern_ulfm_send(c, r, K_ANSWER, seq, d->body);
        }
}

static void fail_posted_on(tern_comm_t *c, uint32_t ctx, tern_status_t st);

static void revoke_local(tern_comm_t *c, int forward)
{
    if (c->revoked)
        return;
    c->revoked = 1;
    if (forward)
        for (int r = 0; r < n_members(c); r++)
            if (r != self_of(c))
                tern_ulfm_send(c, r, K_REVOKE, 0, NULL);
    fail_posted_on(c, c->context_id, TERN_ERR_REVOKED);
    fail_posted_on(c, c->context_id + 1, TERN_ERR_REVOKED);
    /* An intercommunicator's collectives run partly on its local group. */
    if (c->is_inter && c->local_comm)
        fail_posted_on(c->local_comm, c->local_comm->context_id + 1, TERN_ERR_REVOKED);
}

static void deliver(tern_comm_t *c, int src_world, const void *pkt, size_t len)
{
    const pkt_ulfm_t *h = pkt;
    int r = rank_of_world(c, src_world);
    if (r < 0)
        return;
    if (h->kind == K_REVOKE) {
        revoke_local(c, 1); /* passed on: every survivor hears it even if the first dies */
        return;
    }
    struct tern_ulfm *u = tern_ulfm_state(c);
    if (!u)
        return;
    const unsigned char *body = (const unsigned char *)pkt + sizeof *h;
    int has_body = len == sizeof *h + u->body_bytes;
    switch (h->kind) {
    case K_CONTRIB:
        if (has_body)
            (void)slot_set(&u->contrib[r * 2 + (h->seq & 1)], h->seq, body, u->body_bytes);
        break;
    case K_DECIDE:
    case K_ANSWER:
        if (has_body)
            tern_ulfm_record_decision(c, h->seq, body);
        break;
    case K_QUERY: {
        slot_t *d = &u->dec[h->seq & 3];
        if (d->valid && d->seq == h->seq)
            tern_ulfm_send(c, r, K_ANSWER, h->seq, d->body);
        else
            u->queried[r] = h->seq + 1;
        break;
    }
    default:
        break;
    }
}

typedef struct {
    uint32_t ctx;
    tern_comm_t *found;
} find_t;

static void find_ctx(tern_comm_t *c, void *arg)
{
    find_t *f = arg;
    if (!f->found && c->context_id == f->ctx)
        f->found = c;
}

void tern_ulfm_packet(int src_world, const void *pkt, size_t len)
{
    if (len < sizeof(pkt_ulfm_t))
        return;
    const pkt_ulfm_t *h = pkt;
    find_t f = {.ctx = h->ctx};
    tern_comm_each(find_ctx, &f);
    if (f.found) {
        deliver(f.found, src_world, pkt, len);
        return;
    }
    if (h->kind == K_REVOKE)
        return; /* a communicator freed here, or not made yet */
    orphan_t *o = malloc(sizeof *o + len);
    if (!o)
        return;
    o->src_world = src_world;
    o->len = len;
    memcpy(o->pkt, pkt, len);
    o->next = orphans;
    orphans = o;
}

/* ---- failing what waits ---------------------------------------------- */

static uint32_t fail_ctx;
static int fail_all_tags;

/* On the context; a member's failure fails the collectives' transfers only
 * (tags >= 0): the exchanges of communicator constructors (negative tags,
 * comm_exchange.h) over a group without the dead rank go on. */
static int posted_on_ctx(const tern_req_t *req)
{
    return req->context_id == fail_ctx && (fail_all_tags || req->tag >= 0);
}

static void fail_posted_on(tern_comm_t *c, uint32_t ctx, tern_status_t st)
{
    tern_req_t *req;
    (void)c;
    fail_ctx = ctx;
    fail_all_tags = st == TERN_ERR_REVOKED;
    while ((req = tern_match_take_posted_if(posted_on_ctx)) != NULL) {
        req->error = st;
        req->status_source = req->peer;
        req->status_tag = req->tag;
        req->status_bytes = 0;
        tern_req_complete(req);
    }
    /* Rendezvous and synchronous transfers under way on the context. */
    for (int p = 0; p < tern_rt.size; p++) {
        tern_peer_t *peer = &tern_rt.peers[p];
        for (tern_req_t *r = peer->inflight_head, *next; r; r = next) {
            next = r->next;
            if (r->context_id != ctx || (!fail_all_tags && r->tag < 0))
                continue;
            tern_p2p_inflight_remove(peer, r);
            r->error = st;
            if (r->kind == TERN_REQ_SEND)
                tern_p2p_send_complete(r);
            else
                tern_req_complete(r);
        }
    }
}

static void on_failure_comm(tern_comm_t *c, void *arg)
{
    int w = *(const int *)arg;
    if (rank_of_world(c, w) < 0)
        return;
    int before = c->n_failed;
    tern_ulfm_update_failed(c);
    if (c->n_failed == before)
        return;
    /* Every collective on it fails, on every survivor: those waiting for a
     * member that gave up as well as those waiting for the dead one. */
    fail_posted_on(c, c->context_id + 1, TERN_ERR_PEER);
    if (c->is_inter && c->local_comm)
        fail_posted_on(c->local_comm, c->local_comm->context_id + 1, TERN_ERR_PEER);
}

void tern_ulfm_on_failure(int peer_world)
{
    if (peer_world >= tern_rt.size)
        return;
    tern_comm_each(on_failure_comm, &peer_world);
}

tern_status_t tern_ulfm_revoked_error(const tern_comm_t *c)
{
    return tern_status_detail(TERN_ERR_REVOKED, "communicator 0x%x (%s) is revoked",
                              (unsigned)c->handle, c->name[0] ? c->name : "unnamed");
}

tern_status_t tern_ulfm_coll_error(tern_comm_t *c)
{
    if (c->revoked)
        return tern_ulfm_revoked_error(c);
    int r = c->ulfm && c->n_failed ? c->ulfm->failed[c->n_failed - 1] : -1;
    if (r < 0)
        return tern_status_detail(TERN_ERR_PEER, "a member of the communicator failed");
    if (c->is_inter)
        return tern_status_detail(TERN_ERR_PEER, "world rank %d, a member of the "
                                  "intercommunicator, failed: %s", world_of(c, r),
                                  tern_peer_failure(world_of(c, r)));
    return tern_status_detail(TERN_ERR_PEER,
                              "rank %d (world rank %d) of the communicator failed: %s", r,
                              world_of(c, r), tern_peer_failure(world_of(c, r)));
}

/* ---- ANY_SOURCE ------------------------------------------------------- */

static int unacked(tern_comm_t *c)
{
    if (!c->n_failed && !tern_rt.n_failed_peers)
        return 0;
    tern_ulfm_update_failed(c);
    return c->ulfm && c->n_failed > c->ulfm->n_acked;
}

static const tern_req_t *take_target;
static int is_target(const tern_req_t *req) { return req == take_target; }

tern_status_t tern_ulfm_wait_anysource(tern_req_t *req, int blocking)
{
    unsigned idle = 0;
    tern_comm_t *c = tern_comm_lookup(req->comm);
    while (!req->complete) {
        if (tern_progress() != 0 || req->complete)
            continue;
        if (c && req->in_posted && unacked(c)) {
            int r = c->ulfm->failed[c->n_failed - 1];
            if (!blocking)
                return tern_status_detail(TERN_ERR_PROC_FAILED_PENDING,
                                          "rank %d (world rank %d) failed and is not acknowledged "
                                          "(MPIX_Comm_failure_ack); the receive stays pending",
                                          r, world_of(c, r));
            take_target = req;
            if (tern_match_take_posted_if(is_target)) {
                req->error = TERN_ERR_PEER;
                req->status_source = MPI_ANY_SOURCE;
                req->status_tag = req->tag;
                req->status_bytes = 0;
                tern_req_complete(req);
                return tern_status_detail(TERN_ERR_PEER,
                                          "rank %d (world rank %d) failed and is not acknowledged "
                                          "(MPIX_Comm_failure_ack)",
                                          r, world_of(c, r));
            }
        }
        tern_progress_idle(&idle);
    }
    return TERN_OK;
}

int tern_ulfm_anysource_pending(tern_req_t *req)
{
    if (!tern_rt.n_failed_peers || req->complete || !req->in_posted)
        return 0;
    tern_comm_t *c = tern_comm_lookup(req->comm);
    return c && unacked(c);
}

/* ---- revocation, acknowledgement, queries ----------------------------- */

tern_status_t tern_ulfm_revoke(tern_comm_t *c)
{
    tern_peer_watch_all = 1;
    revoke_local(c, 1);
    return TERN_OK;
}

tern_status_t tern_ulfm_is_revoked(tern_comm_t *c, int *flag)
{
    tern_progress(); /* a revocation on its way is read */
    *flag = c->revoked;
    return TERN_OK;
}

static tern_status_t need_state(tern_comm_t *c)
{
    if (!tern_ulfm_state(c))
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the failure state");
    tern_ulfm_update_failed(c);
    return TERN_OK;
}

static tern_status_t group_of_failed(tern_comm_t *c, int n, MPI_Group *failedgrp)
{
    int *w = malloc((size_t)(n ? n : 1) * sizeof *w);
    if (!w)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the group");
    for (int i = 0; i < n; i++)
        w[i] = world_of(c, c->ulfm->failed[i]);
    tern_status_t st = tern_group_new(w, n, failedgrp);
    free(w);
    return st;
}

tern_status_t tern_ulfm_failure_ack(tern_comm_t *c)
{
    tern_status_t st = need_state(c);
    if (st == TERN_OK)
        c->ulfm->n_acked = c->n_failed;
    return st;
}

tern_status_t tern_ulfm_get_acked(tern_comm_t *c, MPI_Group *failedgrp)
{
    tern_status_t st = need_state(c);
    return st == TERN_OK ? group_of_failed(c, c->ulfm->n_acked, failedgrp) : st;
}

tern_status_t tern_ulfm_get_failed(tern_comm_t *c, MPI_Group *failedgrp)
{
    tern_progress();
    tern_status_t st = need_state(c);
    return st == TERN_OK ? group_of_failed(c, c->n_failed, failedgrp) : st;
}

tern_status_t tern_ulfm_ack_failed(tern_comm_t *c, int num_to_ack, int *num_acked)
{
    if (!num_acked)
        return tern_status_detail(TERN_ERR_ARG, "num_acked is NULL");
    tern_status_t st = need_state(c);
    if (st != TERN_OK)
        return st;
    int n = num_to_ack < c->n_failed ? num_to_ack : c->n_failed;
    if (n > c->ulfm->n_acked)
        c->ulfm->n_acked = n;
    *num_acked = c->ulfm->n_acked;
    return TERN_OK;
}

void tern_ulfm_finalize(void)
{
    while (outbox) {
        outbox_t *o = outbox;
        outbox = o->next;
        free(o);
    }
    while (orphans) {
        orphan_t *o = orphans;
        orphans = o->next;
        free(o);
    }
}
