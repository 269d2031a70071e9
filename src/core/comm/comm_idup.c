/* MPI_Comm_idup(_with_info), nonblocking: the context-id agreement runs
 * as a state machine advanced by a progress hook, so a rank that calls
 * idup goes on at once while the others may still be busy elsewhere (in a
 * receive that waits for it, say). A round is a binomial reduce of the
 * members' contributions to rank 0 and a bcast back, on the parent's
 * collective context with the tag of the parent's collective sequence the
 * idup took (so idups and nonblocking collectives on one communicator
 * never match each other's messages). Each round contributes one window
 * of context ids (context_id.c); a round whose combined window has no
 * free id on every member retries with another window, then with all ids,
 * and fails (no id left) only when all ids were offered. On an
 * intercommunicator the tree spans the local group (over its local_comm,
 * with that communicator's sequence number), and the two groups' rank 0
 * swap their results over the intercommunicator before the bcast, as
 * Comm_dup does; the result needs two ids. At completion the
 * new communicator gets the parent's hints (or the given ones) and copies
 * of its attributes, and its handle is written to *newcomm. */
#include "core/comm/comm_new.h"
#include "core/comm/comm_create.h"
#include "core/comm/comm_p2p.h"
#include "core/info/info.h"
#include "core/pt2pt/progress.h"

#include <stdlib.h>
#include <string.h>

/* Windowed rounds before rounds offer every free id. */
enum { WINDOW_ROUNDS = 32 };

enum { PH_REDUCE, PH_FROM_PARENT, PH_LEADERS, PH_BCAST };

typedef struct idup {
    struct idup *next;
    tern_comm_t *parent;   /* held until the end */
    tern_comm_t *tree;     /* the reduce and bcast run on it: parent or its local_comm */
    int tree_tag;          /* tag there (tag for the leaders' swap) */
    tern_req_t *req;       /* the user's request */
    MPI_Comm *newcomm;
    MPI_Info info;         /* hints to give (owned copy), or MPI_INFO_NULL */
    int use_info;
    int tag;
    unsigned round;
    int phase;
    int parent_rank;       /* in the binomial tree rooted at rank 0; -1 at the root */
    int n_children;
    int children[32];      /* ranks of tree */
    tern_req_t *reqs[33];  /* transfers of the current phase */
    int n_reqs;
    tern_ctx_mask_t mine;  /* this round's contribution (reserved) */
    tern_ctx_mask_t acc;   /* contributions of my subtree, sent to the parent */
    tern_ctx_mask_t result;
    tern_ctx_mask_t theirs; /* the other group's, at an intercommunicator's leaders */
    tern_ctx_mask_t from_child[32];
} idup_t;

static idup_t *active;
static int hook_registered, in_hook;

/* Transfers on the tree (leaders = 0) or between the leaders. */
static tern_status_t post_recv(idup_t *d, void *buf, int peer, int leaders)
{
    tern_comm_t *p = leaders ? d->parent : d->tree;
    tern_status_t st = tern_comm_irecv(p, p->context_id + 1, buf, sizeof(tern_ctx_mask_t), peer,
                                       leaders ? d->tag : d->tree_tag, &d->reqs[d->n_reqs]);
    if (st == TERN_OK)
        d->n_reqs++;
    return st;
}

static tern_status_t post_send(idup_t *d, const void *buf, int peer, int leaders)
{
    tern_comm_t *p = leaders ? d->parent : d->tree;
    tern_status_t st = tern_comm_isend(p, p->context_id + 1, buf, sizeof(tern_ctx_mask_t), peer,
                                       leaders ? d->tag : d->tree_tag, TERN_SEND_STANDARD,
                                       &d->reqs[d->n_reqs]);
    if (st == TERN_OK)
        d->n_reqs++;
    return st;
}

/* 1 when every transfer of the phase is done; *st gets the first error. */
static int phase_done(idup_t *d, tern_status_t *st)
{
    for (int i = 0; i < d->n_reqs; i++)
        if (!d->reqs[i]->complete)
            return 0;
    *st = TERN_OK;
    for (int i = 0; i < d->n_reqs; i++) {
        if (*st == TERN_OK && d->reqs[i]->error != TERN_OK)
            *st = d->reqs[i]->error;
        else if (*st == TERN_OK && d->reqs[i]->kind == TERN_REQ_RECV &&
                 d->reqs[i]->status_bytes != sizeof(tern_ctx_mask_t))
            *st = TERN_ERR_INTERNAL; /* members disagree on the exchange: a bug */
        tern_req_release(d->reqs[i]);
    }
    d->n_reqs = 0;
    return 1;
}

static tern_status_t start_round(idup_t *d)
{
    if (d->round < WINDOW_ROUNDS)
        tern_ctx_contribute(&d->mine, tern_ctx_window(d->parent->context_id, d->tag, d->round),
                            TERN_CTX_WINDOW);
    else
        tern_ctx_contribute(&d->mine, 0, TERN_CTX_SLOTS);
    d->acc = d->mine;
    d->phase = PH_REDUCE;
    tern_status_t st = TERN_OK;
    for (int i = 0; i < d->n_children && st == TERN_OK; i++)
        st = post_recv(d, &d->from_child[i], d->children[i], 0);
    if (st != TERN_OK) {
        /* Out of requests: take back the receives already posted. */
        for (int i = 0; i < d->n_reqs; i++)
            if (!tern_p2p_cancel_recv(d->reqs[i]))
                tern_progress_wait(&d->reqs[i]->complete);
        tern_status_t ignored;
        (void)phase_done(d, &ignored);
        tern_ctx_withdraw(&d->mine);
    }
    return st;
}

static int mask_empty(const tern_ctx_mask_t *m)
{
    for (int i = 0; i < TERN_CTX_MASK_WORDS; i++)
        if (m->free[i])
            return 0;
    return 1;
}

/* The new communicator, its hints and attributes, on the agreed id. */
static tern_status_t make_comm(idup_t *d, const uint32_t *ids)
{
    tern_comm_t *p = d->parent, *nc = NULL;
    tern_status_t st = tern_comm_dup_on(p, ids, &nc);
    if (st != TERN_OK)
        return st;
    /* d->info (idup_with_info's hints, copied at the call) is freed by finish(). */
    if ((st = tern_comm_dup_contents(p, nc, d->use_info ? d->info : p->info)) != TERN_OK)
        return st;
    *d->newcomm = nc->handle;
    return TERN_OK;
}

/* The round's result is in d->result: pick, retry or fail. 1: finished. */
static int end_round(idup_t *d, tern_status_t *st)
{
    tern_ctx_withdraw(&d->mine);
    if (mask_empty(&d->result) && d->round < WINDOW_ROUNDS) {
        d->round++;
        *st = start_round(d);
        return *st != TERN_OK;
    }
    uint32_t ids[2];
    *st = tern_ctx_pick(&d->result, d->parent->is_inter ? 2 : 1, ids);
    if (*st == TERN_OK)
        *st = make_comm(d, ids);
    return 1;
}

/* Moves d on as far as it can; 1 when it finished (*st: how). */
static int advance(idup_t *d, tern_status_t *st)
{
    for (;;) {
        if (!phase_done(d, st))
            return 0;
        if (*st != TERN_OK) {
            tern_ctx_withdraw(&d->mine);
            return 1;
        }
        switch (d->phase) {
        case PH_REDUCE:
            for (int i = 0; i < d->n_children; i++)
                tern_ctx_mask_combine(&d->acc, &d->from_child[i], sizeof d->acc);
            if (d->parent_rank >= 0) {
                d->phase = PH_FROM_PARENT;
                *st = post_send(d, &d->acc, d->parent_rank, 0);
                if (*st == TERN_OK)
                    *st = post_recv(d, &d->result, d->parent_rank, 0);
                break;
            }
            d->result = d->acc;
            if (d->parent->is_inter) {
                /* Swap with the other group's rank 0. */
                d->phase = PH_LEADERS;
                *st = post_recv(d, &d->theirs, 0, 1);
                if (*st == TERN_OK)
                    *st = post_send(d, &d->acc, 0, 1);
                break;
            }
            /* fall through - the root has the result */
        case PH_LEADERS:
            if (d->phase == PH_LEADERS)
                tern_ctx_mask_combine(&d->result, &d->theirs, sizeof d->result);
            /* fall through - the result is known */
        case PH_FROM_PARENT:
            d->phase = PH_BCAST;
            for (int i = 0; i < d->n_children && *st == TERN_OK; i++)
                *st = post_send(d, &d->result, d->children[i], 0);
            break;
        case PH_BCAST:
            if (end_round(d, st))
                return 1;
            break;
        }
        if (*st != TERN_OK) {
            /* Let what was posted finish before reporting. */
            tern_status_t first = *st;
            while (!phase_done(d, st))
                tern_progress();
            *st = first;
            tern_ctx_withdraw(&d->mine);
            return 1;
        }
    }
}

static void finish(idup_t *d, tern_status_t st)
{
    tern_req_t *req = d->req;
    if (d->info != MPI_INFO_NULL)
        tern_info_free(d->info);
    tern_comm_release(d->parent);
    free(d);
    req->ext = NULL;
    req->error = st;
    tern_req_complete(req); /* may release req */
}

static void unlink_active(idup_t *d)
{
    for (idup_t **p = &active; *p; p = &(*p)->next)
        if (*p == d) {
            *p = d->next;
            return;
        }
}

static int hook(void)
{
    /* A user callback at completion (attribute copy) may wait in progress. */
    if (in_hook)
        return 0;
    in_hook = 1;
    int events = 0;
    for (idup_t *d = active, *next; d; d = next) {
        next = d->next;
        tern_status_t st;
        if (advance(d, &st)) {
            unlink_active(d);
            finish(d, st);
            events++;
            next = active; /* the list may have changed under a callback */
        }
    }
    in_hook = 0;
    return events;
}

tern_status_t tern_comm_new_idup(tern_comm_t *c, MPI_Info info, int use_info, MPI_Comm *newcomm,
                                 tern_req_t **req_p)
{
    if (!hook_registered) {
        tern_status_t st = tern_progress_register(hook);
        if (st != TERN_OK)
            return tern_status_detail(st, "cannot register the progress hook");
        hook_registered = 1;
    }
    idup_t *d = calloc(1, sizeof *d);
    tern_req_t *req = d ? tern_req_alloc(TERN_REQ_GENERIC) : NULL;
    if (!req) {
        free(d);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the request");
    }
    d->info = MPI_INFO_NULL;
    if (use_info && info != MPI_INFO_NULL) {
        tern_status_t st = tern_info_dup(info, &d->info);
        if (st != TERN_OK) {
            tern_req_release(req);
            free(d);
            return tern_status_detail(st, "cannot copy the info hints: %s",
                                      tern_status_string(st));
        }
    }
    d->use_info = use_info;
    tern_comm_retain(c);
    d->parent = c;
    d->req = req;
    d->newcomm = newcomm;
    /* Every member takes the next number of the same sequence (each
     * group's local_comm for its tree), so the tags agree. */
    d->tag = tern_comm_next_coll_tag(c, 0);
    d->tree = c->is_inter ? c->local_comm : c;
    d->tree_tag = c->is_inter ? tern_comm_next_coll_tag(d->tree, 0) : d->tag;
    d->parent_rank = -1;
    int me = d->tree->rank, n = d->tree->size;
    for (int mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            d->parent_rank = me - mask;
            break;
        }
        if (me + mask < n)
            d->children[d->n_children++] = me + mask;
    }
    req->comm = c->handle;
    req->ext = d;
    req->status_source = MPI_ANY_SOURCE;
    req->status_tag = MPI_ANY_TAG;
    *newcomm = MPI_COMM_NULL;
    *req_p = req;
    tern_status_t st = start_round(d);
    if (st == TERN_OK && !advance(d, &st)) {
        d->next = active;
        active = d;
        return TERN_OK;
    }
    /* Finished at once (one member) or failed while posting. */
    finish(d, st);
    return TERN_OK;
}
