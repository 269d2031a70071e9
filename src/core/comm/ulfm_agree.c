/* ULFM's agreements (docs/design.md, "Failure handling under ULFM"):
 * MPIX_Comm_agree, _iagree, _shrink, _ishrink and MPI_Finalize's meeting in
 * fault-tolerant mode, each an operation a progress hook advances from the
 * messages ulfm.c receives (the protocol: ulfm.c's opening comment). */
#include "core/comm/ulfm.h"
#include "core/comm/comm_create.h"
#include "core/comm/ulfm_int.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                        tern_ulfm_send(c, r, K_QUERY, seq, NULL);
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
            tern_ulfm_record_decision(c, seq, mine);
            continue;
        }
        if (c0 != op->sent_to) {
            add_known_failed(c, mine);
            tern_ulfm_send(c, c0, K_CONTRIB, seq, mine);
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
                tern_ulfm_send(c, r, K_DECIDE, seq, d->body);
    for (int r = 0; r < n_members(c); r++)
        if (u->contrib[r * 2 + (seq & 1)].seq == seq)
            u->contrib[r * 2 + (seq & 1)].valid = 0;
    /* What the survivors agreed failed, this process knows failed. */
    const unsigned char *bits = out + sizeof(body_t);
    for (int r = 0; r < n_members(c); r++)
        if (get_bit(bits, r) && !member_failed(c, r))
            tern_peer_failed(world_of(c, r), TERN_ERR_PEER,
                             "agreed failed by the survivors (MPIX_Comm_agree, MPIX_Comm_shrink)");
    tern_ulfm_update_failed(c);

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
    if (!tern_ulfm_state(c))
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
    agree_op_t *op = NULL; /* set by op_new on success; some compilers cannot see it */
    if ((st = op_new(c, OP_AGREE, 0, &op)) != TERN_OK)
        return st;
    op->flag_in = *flag;
    op->flag_p = flag;
    return op_wait(op);
}

tern_status_t tern_ulfm_sync(tern_comm_t *c)
{
    agree_op_t *op = NULL; /* set by op_new on success; some compilers cannot see it */
    tern_status_t st = op_new(c, OP_SYNC, 0, &op);
    return st == TERN_OK ? op_wait(op) : st;
}

tern_status_t tern_ulfm_shrink(tern_comm_t *c, MPI_Comm *newcomm)
{
    tern_status_t st;
    agree_op_t *op = NULL; /* set by op_new on success; some compilers cannot see it */
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
    agree_op_t *op = NULL; /* set by op_new on success; some compilers cannot see it */
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
    agree_op_t *op = NULL; /* set by op_new on success; some compilers cannot see it */
    if ((st = op_new(c, OP_SHRINK, 1, &op)) != TERN_OK)
        return st;
    *newcomm = MPI_COMM_NULL;
    op->newcomm_p = newcomm;
    *req_p = op->req;
    agree_hook();
    return TERN_OK;
}
