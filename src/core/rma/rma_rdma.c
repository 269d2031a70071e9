/* Puts and gets as transport RDMA writes and reads (rma_rdma.h). */
#include "core/rma/rma_rdma.h"
#include "base/config.h"
#include "base/log.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

/* Target layouts of more pieces than this go through active messages (one
 * message beats many small transfers). */
#define RDMA_MAX_PIECES 16
/* Operations in flight per window before an origin waits (as rma_am.c). */
#define RDMA_MAX_INFLIGHT 512
#define RDMA_MAX_INFLIGHT_BYTES (64u << 20)

struct tern_rma_rdma {
    const tern_tl_ops_t *ops;   /* the network transport */
    tern_tl_t *tl;
    void *reg_base;             /* our registration, NULL when none */
    size_t reg_len;
    uint64_t *bases;            /* per rank: its window memory's address */
    tern_rkey_t *rkeys;
    uint8_t *reach;             /* per rank: 1 when RDMA serves it */
    struct rdma_key *keys;      /* dynamic: regions' keys learnt since the last sync */
};

/* A target's attached region, as its answer to RMA_KEYQ told. */
struct rdma_key {
    struct rdma_key *next;
    int target;
    uint64_t base, size;
    tern_rkey_t rkey;
};

typedef struct rdma_op rdma_op_t;
typedef struct {
    tern_tl_comp_t comp;        /* first: the callback gets this */
    rdma_op_t *op;
} rdma_piece_t;

/* One Put or Get: a transfer per target piece. */
struct rdma_op {
    rdma_op_t *next, *prev;     /* in flight (failed peers are looked for) */
    tern_win_t *win;
    int target;
    int left;                   /* pieces not yet back */
    tern_status_t st;
    char *buf;                  /* packed data: the put's source, the get's landing */
    size_t bytes;
    void *result;               /* get: where it goes, in the user's layout */
    MPI_Count rcount;
    MPI_Datatype rtype;
    tern_req_t *user_req;
    rdma_piece_t pieces[RDMA_MAX_PIECES];
};

static rdma_op_t *in_flight;
/* Operations whose peer failed with transfers still with the transport:
 * kept (never freed, still reachable) since the provider may yet touch
 * their buffers. */
static rdma_op_t *abandoned;
static int hook_registered;

/* The transport that reaches peers over the network: one that serves a
 * peer and does one-sided transfers, other than shared memory and self. */
static int find_net(const tern_tl_ops_t **ops, tern_tl_t **tl)
{
    for (int i = 0; i < tern_rt.n_poll; i++) {
        const tern_tl_ops_t *o = tern_rt.poll[i].ops;
        if (o == &tern_tl_shm_ops || o == &tern_tl_self_ops || !o->mem_reg || !o->put ||
            !o->get)
            continue;
        tern_tl_attr_t a;
        o->query(tern_rt.poll[i].tl, TERN_TL_ANY_PEER, &a);
        if ((a.caps & (TERN_TL_CAP_GET | TERN_TL_CAP_PUT)) !=
            (TERN_TL_CAP_GET | TERN_TL_CAP_PUT))
            continue;
        *ops = o;
        *tl = tern_rt.poll[i].tl;
        return 1;
    }
    return 0;
}

tern_status_t tern_rma_rdma_local(tern_win_t *w, uint64_t *rec)
{
    memset(rec, 0, TERN_RMA_RDMA_WORDS * sizeof *rec);
    if (tern_knob_is(TERN_KNOB_RMA_RDMA, "off") || w->direct)
        return TERN_OK;
    const tern_tl_ops_t *ops;
    tern_tl_t *tl;
    if (!find_net(&ops, &tl))
        return TERN_OK; /* nobody reached over the network: nothing to register */
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* Registered at attach; here only "ask me for keys". */
        if (!(w->rdma = calloc(1, sizeof *w->rdma)))
            return TERN_ERR_NOMEM;
        w->rdma->ops = ops;
        w->rdma->tl = tl;
        rec[0] = 1;
        return TERN_OK;
    }
    if (!w->base || w->win_size <= 0 ||
        (w->flavor != MPI_WIN_FLAVOR_CREATE && w->flavor != MPI_WIN_FLAVOR_ALLOCATE))
        return TERN_OK;
    tern_rkey_t key;
    tern_status_t st = ops->mem_reg(tl, w->base, (size_t)w->win_size, &key);
    if (st != TERN_OK) {
        if (tern_knob_is(TERN_KNOB_RMA_RDMA, "on"))
            return tern_status_detail(st, "TERN_RMA_RDMA=on: registering the window's %lld "
                                      "bytes at %p with %s failed", (long long)w->win_size,
                                      w->base, ops->name);
        return TERN_OK;
    }
    struct tern_rma_rdma *r = calloc(1, sizeof *r);
    if (!r) {
        ops->mem_dereg(tl, w->base, (size_t)w->win_size);
        return TERN_ERR_NOMEM;
    }
    r->ops = ops;
    r->tl = tl;
    r->reg_base = w->base;
    r->reg_len = (size_t)w->win_size;
    w->rdma = r;
    rec[0] = 1;
    rec[1] = (uint64_t)(uintptr_t)w->base;
    memcpy(&rec[2], key.words, sizeof key.words);
    return TERN_OK;
}

tern_status_t tern_rma_rdma_remote(tern_win_t *w, const int64_t *all, size_t stride)
{
    int any = 0;
    for (int t = 0; t < w->size; t++)
        any |= all[(size_t)t * stride] != 0;
    if (!any)
        return TERN_OK;
    struct tern_rma_rdma *r = w->rdma;
    if (!r) {
        /* Others registered; we may still reach them as an origin. */
        const tern_tl_ops_t *ops;
        tern_tl_t *tl;
        if (tern_knob_is(TERN_KNOB_RMA_RDMA, "off") || w->direct || !find_net(&ops, &tl))
            return TERN_OK;
        if (!(r = calloc(1, sizeof *r)))
            return TERN_ERR_NOMEM;
        r->ops = ops;
        r->tl = tl;
        w->rdma = r;
    }
    size_t n = (size_t)w->size;
    int n_reach = 0;
    r->bases = calloc(n, sizeof *r->bases);
    r->rkeys = calloc(n, sizeof *r->rkeys);
    r->reach = calloc(n, 1);
    if (!r->bases || !r->rkeys || !r->reach)
        return TERN_ERR_NOMEM;
    for (int t = 0; t < w->size; t++) {
        const uint64_t *rec = (const uint64_t *)&all[(size_t)t * stride];
        int world = tern_win_world(w, t);
        if (!rec[0] || tern_rt.peers[world].tl != r->tl)
            continue;
        r->reach[t] = 1;
        r->bases[t] = rec[1];
        memcpy(r->rkeys[t].words, &rec[2], sizeof r->rkeys[t].words);
        n_reach++;
    }
    tern_log(TERN_LOG_DEBUG, "rma: window of %d ranks: puts and gets to %d of them by RDMA "
             "over %s", w->size, n_reach, r->ops->name);
    return TERN_OK;
}

void tern_rma_rdma_close(tern_win_t *w)
{
    struct tern_rma_rdma *r = w->rdma;
    if (!r)
        return;
    if (r->reg_base)
        r->ops->mem_dereg(r->tl, r->reg_base, r->reg_len);
    for (tern_win_region_t *g = w->regions; g; g = g->next)
        tern_rma_rdma_detach(w, g);
    tern_rma_rdma_forget(w);
    free(r->bases);
    free(r->rkeys);
    free(r->reach);
    free(r);
    w->rdma = NULL;
}

/* ------------------------------------------------------------------------ */
/* Dynamic windows. */

tern_status_t tern_rma_rdma_attach(tern_win_t *w, tern_win_region_t *g)
{
    struct tern_rma_rdma *r = w->rdma;
    if (!r || !g->size)
        return TERN_OK;
    tern_status_t st = r->ops->mem_reg(r->tl, (void *)g->base, g->size, &g->rkey);
    if (st == TERN_OK)
        g->registered = 1;
    else if (tern_knob_is(TERN_KNOB_RMA_RDMA, "on"))
        return tern_status_detail(st, "TERN_RMA_RDMA=on: registering the %zu bytes at %p "
                                  "with %s failed", g->size, (void *)g->base, r->ops->name);
    return TERN_OK; /* origins asking for its key are told to use messages */
}

void tern_rma_rdma_detach(tern_win_t *w, tern_win_region_t *g)
{
    if (w->rdma && g->registered)
        w->rdma->ops->mem_dereg(w->rdma->tl, (void *)g->base, g->size);
    g->registered = 0;
}

tern_status_t tern_rma_rdma_region_key(tern_win_t *w, uint64_t addr, void *out)
{
    for (const tern_win_region_t *g = w->regions; g; g = g->next) {
        if (addr < g->base || addr >= g->base + g->size)
            continue;
        if (!g->registered)
            return TERN_ERR_NOT_SUPPORTED;
        uint64_t words[5] = {g->base, g->size};
        memcpy(&words[2], g->rkey.words, sizeof g->rkey.words);
        memcpy(out, words, sizeof words);
        return TERN_OK;
    }
    return TERN_ERR_RMA_RANGE;
}

void tern_rma_rdma_forget(tern_win_t *w)
{
    if (!w->rdma)
        return;
    while (w->rdma->keys) {
        struct rdma_key *k = w->rdma->keys;
        w->rdma->keys = k->next;
        free(k);
    }
}

/* The key of target's region holding [lo, hi) (asked for when not known);
 * NULL when messages must serve it: *st says why (TERN_ERR_RMA_RANGE: not
 * attached memory). */
static const tern_rkey_t *dynamic_key(tern_win_t *w, int target, uint64_t lo, uint64_t hi,
                                      tern_status_t *st)
{
    struct tern_rma_rdma *r = w->rdma;
    struct rdma_key *k;
    for (k = r->keys; k; k = k->next)
        if (k->target == target && lo >= k->base && lo < k->base + k->size)
            break;
    if (!k) {
        uint64_t words[5];
        rma_hdr_t h = {.type = RMA_KEYQ, .addr = lo};
        *st = tern_rma_am_issue(w, target, &h, NULL, NULL, sizeof words, words,
                                (MPI_Count)sizeof words, MPI_BYTE, NULL);
        if (*st == TERN_OK)
            *st = tern_rma_am_wait_target(w, target);
        if (*st != TERN_OK) {
            if (*st == TERN_ERR_RMA_RANGE)
                *st = tern_status_detail(TERN_ERR_RMA_RANGE, "address 0x%llx is not in "
                                         "memory attached at target rank %d",
                                         (unsigned long long)lo, target);
            return NULL;
        }
        if (!(k = calloc(1, sizeof *k))) {
            *st = TERN_ERR_NOMEM;
            return NULL;
        }
        k->target = target;
        k->base = words[0];
        k->size = words[1];
        memcpy(k->rkey.words, &words[2], sizeof k->rkey.words);
        k->next = r->keys;
        r->keys = k;
        tern_log(TERN_LOG_DEBUG, "rma: RDMA key of target rank %d's %llu bytes at 0x%llx",
                 target, (unsigned long long)k->size, (unsigned long long)k->base);
    }
    *st = TERN_OK;
    return hi <= k->base + k->size ? &k->rkey : NULL; /* spans regions: messages */
}

/* ------------------------------------------------------------------------ */

/* abandoned: its peer failed with transfers still with the transport,
 * which may yet read or write the bounce buffer (a failed peer's transfers
 * end with no callback): the buffer is left to it, not freed. */
static void op_done(rdma_op_t *op, int abandoned_op)
{
    tern_win_t *w = op->win;
    tern_rt.peers[tern_win_world(w, op->target)].rma_inflight--;
    if (op->prev)
        op->prev->next = op->next;
    else
        in_flight = op->next;
    if (op->next)
        op->next->prev = op->prev;
    tern_win_op_ended(w, op->target, op->bytes, op->st, op->buf, op->bytes, op->result,
                      op->rcount, op->rtype, op->user_req);
    if (abandoned_op) {
        op->next = abandoned;
        abandoned = op;
        return;
    }
    free(op->buf);
    free(op);
}

/* One piece (or the issuing itself) is over. */
static void op_drop(rdma_op_t *op, tern_status_t status)
{
    if (status != TERN_OK && op->st == TERN_OK)
        op->st = tern_status_detail(status, "an RDMA %s to target rank %d failed",
                                    op->result ? "read" : "write", op->target);
    if (--op->left == 0)
        op_done(op, 0);
}

static void piece_done(tern_tl_comp_t *comp, tern_status_t status)
{
    op_drop(((rdma_piece_t *)comp)->op, status);
}

/* A failed peer's transfers end with no callback (transport.h): their
 * operations end here with the peer's error, so no wait hangs on them. */
static int fail_hook(void)
{
    if (!tern_rt.n_failed_peers)
        return 0;
    int n = 0;
    for (rdma_op_t *op = in_flight, *next; op; op = next) {
        next = op->next;
        int world = tern_win_world(op->win, op->target);
        tern_status_t f = tern_rt.peers[world].failed;
        if (f == TERN_OK)
            continue;
        if (op->st == TERN_OK)
            op->st = tern_status_detail(f, "target rank %d of the window (world rank %d) "
                                        "failed before its RDMA %s completed: %s", op->target,
                                        world, op->result ? "read" : "write",
                                        tern_peer_failure(world));
        op_done(op, 1);
        n++;
    }
    return n;
}

static void wait_room(tern_win_t *w, size_t bytes)
{
    unsigned idle = 0;
    while (w->n_pending >= RDMA_MAX_INFLIGHT ||
           (w->inflight_bytes + bytes > RDMA_MAX_INFLIGHT_BYTES && w->n_pending))
        if (!tern_progress())
            tern_progress_idle(&idle);
}

tern_status_t tern_rma_rdma_issue(tern_win_t *w, int target, const rma_hdr_t *hdr,
                                  const tern_dt_seg_t *segs, void **data, void *result,
                                  MPI_Count rcount, MPI_Datatype rtype, tern_req_t **req_p)
{
    struct tern_rma_rdma *r = w->rdma;
    int is_put = hdr->type == RMA_PUT;
    if (!r || !r->reach || !r->reach[target] || (!is_put && hdr->type != RMA_GET) ||
        hdr->nsegs > RDMA_MAX_PIECES || !hdr->bytes)
        return TERN_ERR_NOT_SUPPORTED;
    const tern_rkey_t *rkey = &r->rkeys[target];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (size_t i = 0; i < hdr->nsegs; i++) {
            uint64_t a = hdr->addr + (uint64_t)segs[i].offset;
            if (a < lo)
                lo = a;
            if (a + segs[i].len > hi)
                hi = a + segs[i].len;
        }
        tern_status_t st;
        if (!(rkey = dynamic_key(w, target, lo, hi, &st)))
            return st == TERN_ERR_NOT_SUPPORTED || st == TERN_OK ? TERN_ERR_NOT_SUPPORTED : st;
    }
    if (tern_rt.peers[tern_win_world(w, target)].failed != TERN_OK)
        return TERN_ERR_NOT_SUPPORTED; /* messages answer with the peer's error */
    if (!hook_registered) {
        tern_status_t st = tern_progress_register(fail_hook);
        if (st != TERN_OK)
            return st;
        hook_registered = 1;
    }
    wait_room(w, hdr->bytes);
    rdma_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return TERN_ERR_NOMEM;
    op->win = w;
    op->target = target;
    op->bytes = hdr->bytes;
    if (is_put) {
        op->buf = *data;
        *data = NULL;
    } else if (!(op->buf = malloc(hdr->bytes))) {
        free(op);
        return TERN_ERR_NOMEM;
    }
    if (req_p) {
        if (!(op->user_req = tern_req_alloc(TERN_REQ_GENERIC))) {
            free(op->buf);
            free(op);
            return TERN_ERR_NOMEM;
        }
        op->user_req->comm = w->comm->handle;
        *req_p = op->user_req;
    }
    if (!is_put) {
        op->result = result;
        op->rcount = rcount;
        op->rtype = rtype;
        tern_datatype_retain(rtype);
    }
    w->pending[target]++;
    w->n_pending++;
    w->inflight_bytes += op->bytes;
    tern_rt.peers[tern_win_world(w, target)].rma_inflight++;
    if ((op->next = in_flight))
        in_flight->prev = op;
    in_flight = op;
    /* Counted before issuing: a transfer may complete inside the call. */
    op->left = (int)hdr->nsegs + 1;
    int world = tern_win_world(w, target);
    uint64_t remote = r->bases[target] + hdr->addr;
    size_t at = 0;
    for (size_t i = 0; i < hdr->nsegs; i++) {
        rdma_piece_t *p = &op->pieces[i];
        p->comp.cb = piece_done;
        p->op = op;
        uint64_t to = remote + (uint64_t)segs[i].offset;
        tern_status_t st =
            is_put ? r->ops->put(r->tl, world, op->buf + at, segs[i].len, to, rkey, &p->comp)
                   : r->ops->get(r->tl, world, op->buf + at, segs[i].len, to, rkey, &p->comp);
        if (st != TERN_OK)
            op_drop(op, st); /* this piece is over, with the error */
        at += segs[i].len;
    }
    op_drop(op, TERN_OK); /* the issuing's own count */
    return TERN_OK;
}
