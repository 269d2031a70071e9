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
#include "core/comm/comm_create.h"
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

enum { K_REVOKE = 1, K_CONTRIB, K_DECIDE, K_QUERY, K_ANSWER };

typedef struct {
    uint32_t type; /* TERN_PKT_ULFM */
    uint32_t kind;
    uint32_t ctx;  /* the communicator's point-to-point context id */
    uint32_t seq;  /* the agreement's number on the communicator */
} pkt_ulfm_t;

/* What an agreement combines; (members + 7) / 8 bytes of failed members
 * (a bit per member) follow. The flags are ANDed per group: an
 * intercommunicator's members get the other group's AND (the ULFM
 * specification's MPIX_Comm_agree), an intracommunicator's flag[0]. */
typedef struct {
    uint32_t flag[2];
    tern_ctx_mask_t mask;
} body_t;

typedef struct {
    uint32_t seq;
    int valid;
    unsigned char *body;
} slot_t;

struct tern_ulfm {
    int *failed;       /* comm ranks, in the order they were found failed */
    int n_acked;       /* the first n_acked of failed[] are acknowledged */
    uint32_t seq;      /* agreements this process started on the communicator */
    size_t body_bytes;
    slot_t *contrib;   /* [rank * 2 + (seq & 1)]: contributions sent to us */
    slot_t dec[4];     /* [seq & 3]: decisions known here */
    uint32_t *queried; /* [rank]: seq + 1 of a QUERY waiting for our decision */
};

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

/* Members: an intracommunicator's are its ranks; an intercommunicator's
 * are both groups, the first (as MPI_Intercomm_merge orders two groups of
 * equal `high`) before the other, so that every member of either group
 * numbers them alike. The agreement, revocation and the failed lists run
 * over members. */
static int local_first(const tern_comm_t *c)
{
    return c->inter_first ? c->inter_first > 0
                          : tern_comm_local_world_rank(c, 0) < c->remote_world_ranks[0];
}

static int n_members(const tern_comm_t *c)
{
    return c->is_inter ? c->size + c->remote_size : c->size;
}

static int first_group_size(const tern_comm_t *c)
{
    return !c->is_inter ? c->size : local_first(c) ? c->size : c->remote_size;
}

/* 0 for the first group, 1 for the other (an intracommunicator: 0). */
static int group_of(const tern_comm_t *c, int m)
{
    return m >= first_group_size(c);
}

static int self_of(const tern_comm_t *c)
{
    return c->is_inter && !local_first(c) ? c->remote_size + c->rank : c->rank;
}

static int world_of(const tern_comm_t *c, int m)
{
    if (!c->is_inter)
        return tern_comm_local_world_rank(c, m);
    int lf = local_first(c), first = lf ? c->size : c->remote_size;
    if (m >= first)
        return lf ? c->remote_world_ranks[m - first] : tern_comm_local_world_rank(c, m - first);
    return lf ? tern_comm_local_world_rank(c, m) : c->remote_world_ranks[m];
}

static int member_failed(const tern_comm_t *c, int m)
{
    return tern_rt.peers[world_of(c, m)].failed != TERN_OK;
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

static struct tern_ulfm *state(tern_comm_t *c);

/* Appends the members found failed since the last look. */
static void update_failed(tern_comm_t *c)
{
    struct tern_ulfm *u = state(c);
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

static void send_msg(tern_comm_t *c, int r, uint32_t kind, uint32_t seq, const unsigned char *body)
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

static struct tern_ulfm *state(tern_comm_t *c)
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

static void record_decision(tern_comm_t *c, uint32_t seq, const unsigned char *body)
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
            send_msg(c, r, K_ANSWER, seq, d->body);
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
                send_msg(c, r, K_REVOKE, 0, NULL);
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
    struct tern_ulfm *u = state(c);
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
            record_decision(c, h->seq, body);
        break;
    case K_QUERY: {
        slot_t *d = &u->dec[h->seq & 3];
        if (d->valid && d->seq == h->seq)
            send_msg(c, r, K_ANSWER, h->seq, d->body);
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
    update_failed(c);
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
    update_failed(c);
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

/* ---- the agreement ---------------------------------------------------- */

static int lowest_alive(const tern_comm_t *c)
{
    for (int r = 0; r < n_members(c); r++)
        if (!member_failed(c, r))
            return r;
    return self_of(c);
}

static void set_bit(unsigned char *bits, int r) { bits[r / 8] |= (unsigned char)(1u << (r % 8)); }
static int get_bit(const unsigned char *bits, int r) { return bits[r / 8] >> (r % 8) & 1; }

static void add_known_failed(const tern_comm_t *c, unsigned char *body)
{
    unsigned char *bits = body + sizeof(body_t);
    for (int r = 0; r < n_members(c); r++)
        if (member_failed(c, r))
            set_bit(bits, r);
}

/* One agreement in flight: MPIX_Comm_agree or _iagree, shrink or ishrink,
 * MPI_Finalize's meeting. Every agreement is an operation of this kind,
 * advanced by a progress hook (agree_hook), so the nonblocking forms
 * progress in the background while the program computes or tests, and a
 * blocking one is the same operation waited for at the call. A
 * communicator's agreements run one after another in the order they were
 * called (the same on every member: they are collective), which keeps at
 * most the current and the next agreement's contributions in flight (the
 * two contribution slots per member). */
typedef enum { OP_AGREE, OP_SHRINK, OP_SYNC } op_kind_t;

typedef struct agree_op {
    struct agree_op *next;  /* every agreement not finished, in call order */
    tern_comm_t *c;         /* held until the end */
    op_kind_t kind;
    uint32_t seq;           /* the agreement's number on c */
    int started;            /* it is c's first and has contributed */
    int sent_to;            /* the coordinator our contribution went to, or -1 */
    int coordinating;
    int done;
    unsigned char *mine;    /* our contribution, then the decision */
    unsigned char *out;
    tern_ctx_mask_t reserved; /* shrink: our free context ids, reserved */
    int flag_in;
    int *flag_p;            /* agree: the user's flag, written at the end */
    MPI_Comm *newcomm_p;    /* shrink: the user's handle, written at the end */
    tern_req_t *req;        /* the nonblocking form's request, NULL for blocking */
    tern_status_t st;
    char why[200];          /* the words of st for the request */
} agree_op_t;

static agree_op_t *ops;
static int hook_registered, in_hook;

static int first_on_comm(const agree_op_t *op)
{
    for (const agree_op_t *o = ops; o != op; o = o->next)
        if (o->c == op->c)
            return 0;
    return 1;
}

/* The op becomes c's current agreement: it fills its contribution. */
static void op_start(agree_op_t *op)
{
    body_t *b = (body_t *)(void *)op->mine;
    op->started = 1;
    b->flag[0] = b->flag[1] = UINT32_MAX;
    if (op->kind == OP_AGREE)
        b->flag[group_of(op->c, self_of(op->c))] = (uint32_t)op->flag_in;
    if (op->kind == OP_SHRINK) {
        tern_ctx_contribute(&op->reserved, 0, TERN_CTX_SLOTS);
        b->mask = op->reserved;
    } else {
        memset(b->mask.free, 0xff, sizeof b->mask.free);
    }
}

/* Advances op as far as what has arrived allows; 1 when its decision is
 * known here. */
static int op_step(agree_op_t *op)
{
    tern_comm_t *c = op->c;
    struct tern_ulfm *u = c->ulfm;
    unsigned char *mine = op->mine;
    uint32_t seq = op->seq;
    if (!op->started)
        op_start(op);
    for (;;) {
        slot_t *d = &u->dec[seq & 3];
        if (d->valid && d->seq == seq)
            return 1;
        int c0 = lowest_alive(c);
        if (c0 == self_of(c)) {
            if (!op->coordinating) {
                op->coordinating = 1;
                /* Rank 0 is the first coordinator: nobody decided before. */
                for (int r = 0; r < n_members(c) && self_of(c) > 0; r++)
                    if (r != self_of(c))
                        send_msg(c, r, K_QUERY, seq, NULL);
            }
            int missing = 0;
            for (int r = 0; r < n_members(c) && !missing; r++) {
                const slot_t *s = &u->contrib[r * 2 + (seq & 1)];
                missing = r != self_of(c) && !member_failed(c, r) && !(s->valid && s->seq == seq);
            }
            if (missing)
                return 0;
            body_t *b = (body_t *)(void *)mine;
            add_known_failed(c, mine);
            for (int r = 0; r < n_members(c); r++) {
                const slot_t *s = &u->contrib[r * 2 + (seq & 1)];
                if (r == self_of(c) || !s->valid || s->seq != seq)
                    continue;
                const body_t *o = (const body_t *)(const void *)s->body;
                b->flag[0] &= o->flag[0];
                b->flag[1] &= o->flag[1];
                tern_ctx_mask_combine(&b->mask, &o->mask, sizeof b->mask);
                for (size_t i = sizeof(body_t); i < u->body_bytes; i++)
                    mine[i] |= s->body[i];
            }
            add_known_failed(c, mine);
            record_decision(c, seq, mine);
            continue;
        }
        if (c0 != op->sent_to) {
            add_known_failed(c, mine);
            send_msg(c, c0, K_CONTRIB, seq, mine);
            op->sent_to = c0;
        }
        return 0;
    }
}

/* The communicator of the members the decision does not hold failed, in
 * their old order, on context ids picked from the decision's mask: an
 * intracommunicator, or an intercommunicator of the survivors of both
 * groups (two ids, as MPI_Comm_dup takes). MPI_COMM_NULL where this
 * process is not among them. */
static tern_status_t make_shrunk(tern_comm_t *c, const unsigned char *out, MPI_Comm *newcomm)
{
    const unsigned char *bits = out + sizeof(body_t);
    int n = n_members(c), self = self_of(c), mine = group_of(c, self);
    int *ranks = malloc((size_t)n * sizeof *ranks);
    if (!ranks)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the survivors");
    /* Ours first (in ranks[0..ln)), then the other group's from the end. */
    int ln = 0, rn = 0, me = -1;
    for (int m = 0; m < n; m++) {
        if (get_bit(bits, m))
            continue;
        if (m == self)
            me = ln;
        if (group_of(c, m) == mine)
            ranks[ln++] = world_of(c, m);
        else
            ranks[n - 1 - rn++] = world_of(c, m);
    }
    for (int i = 0; i < rn / 2; i++) { /* the other group's in order */
        int t = ranks[n - 1 - i];
        ranks[n - 1 - i] = ranks[n - rn + i];
        ranks[n - rn + i] = t;
    }
    uint32_t ctx[2];
    tern_comm_t *nc = NULL;
    tern_status_t st = TERN_OK;
    if (c->is_inter && rn == 0)
        st = tern_status_detail(TERN_ERR_PEER, "every process of the intercommunicator's "
                                "remote group failed: no intercommunicator to make");
    if (st == TERN_OK)
        st = tern_ctx_pick(&((const body_t *)(const void *)out)->mask, c->is_inter ? 2 : 1, ctx);
    if (st == TERN_OK && me >= 0) {
        st = c->is_inter ? tern_comm_new_inter(c, ctx[0], ctx[1], me, ln, ranks, rn,
                                               ranks + n - rn, &nc)
                         : tern_comm_new(c, ctx[0], me, ln, ranks, &nc);
        if (st != TERN_OK) {
            tern_ctx_release(ctx[0]);
            if (c->is_inter)
                tern_ctx_release(ctx[1]);
        }
    }
    free(ranks);
    if (st == TERN_OK)
        *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    else if (st != TERN_ERR_PEER)
        st = tern_status_detail(st, "cannot make the shrunk communicator: %s",
                                tern_status_string(st));
    return st;
}

/* The decision is known: passes it on (as coordinator), makes the agreed
 * failures known here, and finishes the operation's own part. */
static void op_decided(agree_op_t *op)
{
    tern_comm_t *c = op->c;
    struct tern_ulfm *u = c->ulfm;
    uint32_t seq = op->seq;
    unsigned char *out = op->out;
    const slot_t *d = &u->dec[seq & 3];
    memcpy(out, d->body, u->body_bytes);
    if (op->coordinating)
        for (int r = 0; r < n_members(c); r++)
            if (r != self_of(c))
                send_msg(c, r, K_DECIDE, seq, d->body);
    for (int r = 0; r < n_members(c); r++)
        if (u->contrib[r * 2 + (seq & 1)].seq == seq)
            u->contrib[r * 2 + (seq & 1)].valid = 0;
    /* What the survivors agreed failed, this process knows failed. */
    const unsigned char *bits = out + sizeof(body_t);
    for (int r = 0; r < n_members(c); r++)
        if (get_bit(bits, r) && !member_failed(c, r))
            tern_peer_failed(world_of(c, r), TERN_ERR_PEER,
                             "agreed failed by the survivors (MPIX_Comm_agree, MPIX_Comm_shrink)");
    update_failed(c);

    tern_status_t st = TERN_OK;
    if (op->kind == OP_AGREE) {
        if (op->flag_p)
            *op->flag_p = (int)((const body_t *)(const void *)out)
                              ->flag[c->is_inter ? 1 - group_of(c, self_of(c)) : 0];
        /* Failures agreed on but not acknowledged here: PROC_FAILED. */
        for (int r = 0; r < n_members(c) && st == TERN_OK; r++) {
            if (!get_bit(bits, r))
                continue;
            int acked = 0;
            for (int i = 0; i < u->n_acked && !acked; i++)
                acked = u->failed[i] == r;
            if (!acked)
                st = tern_status_detail(TERN_ERR_PEER,
                                        "rank %d (world rank %d) failed and is not acknowledged "
                                        "(MPIX_Comm_failure_ack); the flag is the survivors' AND",
                                        r, world_of(c, r));
        }
    } else if (op->kind == OP_SHRINK) {
        tern_ctx_withdraw(&op->reserved);
        st = make_shrunk(c, out, op->newcomm_p);
    }
    op->st = st;
    if (st != TERN_OK) {
        const char *why = tern_status_take_detail(st);
        snprintf(op->why, sizeof op->why, "%s", why ? why : tern_status_string(st));
    }
}

static void op_free(agree_op_t *op)
{
    if (op->started && op->kind == OP_SHRINK && !op->done)
        tern_ctx_withdraw(&op->reserved);
    tern_comm_release(op->c);
    free(op->mine);
    free(op->out);
    free(op);
}

static void op_unlink(agree_op_t *op)
{
    for (agree_op_t **p = &ops; *p; p = &(*p)->next)
        if (*p == op) {
            *p = op->next;
            return;
        }
}

/* The request of a nonblocking agreement owns its op from completion on
 * (the words of its error live there). */
static void req_release_op(tern_req_t *req)
{
    op_free(req->ext);
    req->ext = NULL;
}

static int agree_hook(void)
{
    if (in_hook || !ops)
        return 0;
    in_hook = 1;
    int events = 0, waiting = 0;
    for (agree_op_t *op = ops, *next; op; op = next) {
        next = op->next;
        if (op->done || !first_on_comm(op))
            continue;
        if (!op_step(op)) {
            waiting = 1;
            continue;
        }
        op_decided(op);
        op->done = 1;
        op_unlink(op);
        events++;
        if (op->req) {
            op->req->error = op->st;
            op->req->error_text = op->st != TERN_OK ? op->why : NULL;
            op->req->ext = op;
            op->req->release_fn = req_release_op;
            tern_req_complete(op->req);
        }
        next = ops; /* the next agreement on the communicator may go on */
    }
    /* A program that tests an agreement's request (or computes between
     * tests) never idles in a wait: the coordinator's death must still be
     * seen in time (the watch keeps its own period). */
    if (waiting)
        tern_peer_watch();
    in_hook = 0;
    return events;
}

/* A new agreement on c, queued behind those c has in flight; with
 * nonblocking set it gets a request. */
static tern_status_t op_new(tern_comm_t *c, op_kind_t kind, int nonblocking, agree_op_t **op_p)
{
    if (!hook_registered) {
        tern_status_t st = tern_progress_register(agree_hook);
        if (st != TERN_OK)
            return tern_status_detail(st, "cannot register the agreement's progress hook");
        hook_registered = 1;
    }
    if (!state(c))
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the failure state");
    agree_op_t *op = calloc(1, sizeof *op);
    if (op) {
        op->mine = calloc(1, c->ulfm->body_bytes);
        op->out = calloc(1, c->ulfm->body_bytes);
        if (nonblocking)
            op->req = tern_req_alloc(TERN_REQ_GENERIC);
    }
    if (!op || !op->mine || !op->out || (nonblocking && !op->req)) {
        if (op) {
            free(op->mine);
            free(op->out);
            if (op->req)
                tern_req_release(op->req);
        }
        free(op);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the agreement");
    }
    tern_peer_watch_all = 1; /* a dead coordinator must be seen */
    tern_comm_retain(c);
    op->c = c;
    op->kind = kind;
    op->seq = c->ulfm->seq++;
    op->sent_to = -1;
    if (op->req) {
        op->req->comm = c->handle;
        op->req->status_source = MPI_ANY_SOURCE;
        op->req->status_tag = MPI_ANY_TAG;
    }
    agree_op_t **p = &ops;
    while (*p)
        p = &(*p)->next;
    *p = op;
    *op_p = op;
    return TERN_OK;
}

/* Runs a blocking agreement to its end; returns its status and frees it. */
static tern_status_t op_wait(agree_op_t *op)
{
    unsigned idle = 0;
    agree_hook(); /* an agreement that needs nobody else ends here */
    while (!op->done)
        if (tern_progress() == 0 && !op->done)
            tern_progress_idle(&idle);
    tern_status_t st = op->st;
    if (st != TERN_OK)
        st = tern_status_detail(st, "%s", op->why);
    op_free(op);
    return st;
}

tern_status_t tern_ulfm_agree(tern_comm_t *c, int *flag)
{
    tern_status_t st;
    if (!flag)
        return tern_status_detail(TERN_ERR_ARG, "flag is NULL");
    agree_op_t *op;
    if ((st = op_new(c, OP_AGREE, 0, &op)) != TERN_OK)
        return st;
    op->flag_in = *flag;
    op->flag_p = flag;
    return op_wait(op);
}

tern_status_t tern_ulfm_sync(tern_comm_t *c)
{
    agree_op_t *op;
    tern_status_t st = op_new(c, OP_SYNC, 0, &op);
    return st == TERN_OK ? op_wait(op) : st;
}

tern_status_t tern_ulfm_shrink(tern_comm_t *c, MPI_Comm *newcomm)
{
    tern_status_t st;
    agree_op_t *op;
    if ((st = op_new(c, OP_SHRINK, 0, &op)) != TERN_OK)
        return st;
    op->newcomm_p = newcomm;
    return op_wait(op);
}

/* The nonblocking forms: the request completes when the hook has finished
 * the agreement; the flag and the new communicator are written then (the
 * program keeps them valid until it completes, as for any nonblocking
 * operation's buffers). */
tern_status_t tern_ulfm_iagree(tern_comm_t *c, int *flag, tern_req_t **req_p)
{
    tern_status_t st;
    if (!flag)
        return tern_status_detail(TERN_ERR_ARG, "flag is NULL");
    agree_op_t *op;
    if ((st = op_new(c, OP_AGREE, 1, &op)) != TERN_OK)
        return st;
    op->flag_in = *flag;
    op->flag_p = flag;
    *req_p = op->req;
    agree_hook();
    return TERN_OK;
}

tern_status_t tern_ulfm_ishrink(tern_comm_t *c, MPI_Comm *newcomm, tern_req_t **req_p)
{
    tern_status_t st;
    agree_op_t *op;
    if ((st = op_new(c, OP_SHRINK, 1, &op)) != TERN_OK)
        return st;
    *newcomm = MPI_COMM_NULL;
    op->newcomm_p = newcomm;
    *req_p = op->req;
    agree_hook();
    return TERN_OK;
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
    if (!state(c))
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the failure state");
    update_failed(c);
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
