/* Puts and gets as transport RDMA writes and reads (rma_rdma.h). */
#include "core/rma/rma_rdma.h"
#include "base/config.h"
#include "base/log.h"
#include "core/datatype/datatype.h"
#include "core/rma/rma_track.h"
#include "core/runtime/runtime.h"
#include "base/pvars.h"

#include <stdlib.h>
#include <string.h>

/* Target layouts of more pieces than this go through active messages (one
 * message beats many small transfers). */
#define RDMA_MAX_PIECES TERN_RMA_TRACK_PIECES

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
 * NULL with *st TERN_OK when messages must serve it (the region is not
 * registered, or the range spans regions), NULL with an error when the
 * memory is not attached (TERN_ERR_RMA_RANGE) or the question failed. */
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
        if (*st == TERN_ERR_NOT_SUPPORTED) {
            *st = TERN_OK; /* not registered there: messages */
            return NULL;
        }
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

int tern_rma_rdma_reaches(const tern_win_t *w, int target)
{
    return w->rdma && w->rdma->reach && w->rdma->reach[target];
}

/* A Put or Get of a target RDMA reaches: one transfer per target piece,
 * from the origin where it lies when contiguous (packed otherwise), into
 * the result where it lies when contiguous (unpacked at completion
 * otherwise); the tracker (rma_track.h) counts it and ends it. */
static tern_status_t rdma_issue(tern_win_t *w, const tern_rma_call_t *c, rma_hdr_t *h,
                                const tern_dt_seg_t *segs)
{
    struct tern_rma_rdma *r = w->rdma;
    const int target = c->target, world = tern_win_world(w, target);
    /* Many pieces: one message beats many small transfers. A failed peer:
     * the messages answer with its error. */
    if (h->nsegs > RDMA_MAX_PIECES || tern_rt.peers[world].failed != TERN_OK)
        return tern_rma_path_am.issue(w, c, h, segs);
    const tern_rkey_t *rkey = &r->rkeys[target];
    tern_status_t st;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (size_t i = 0; i < h->nsegs; i++) {
            uint64_t a = h->addr + (uint64_t)segs[i].offset;
            if (a < lo)
                lo = a;
            if (a + segs[i].len > hi)
                hi = a + segs[i].len;
        }
        if (!(rkey = dynamic_key(w, target, lo, hi, &st)))
            return st != TERN_OK ? st : tern_rma_path_am.issue(w, c, h, segs);
    }
    if ((st = tern_rma_track_wait(w, target, 0, 0, h->bytes, 0)) != TERN_OK)
        return st;
    const int is_put = h->type == RMA_PUT;
    char *local, *owned;
    st = is_put ? tern_rma_origin_data(c, h, 1, (const char **)&local, &owned)
                : tern_rma_result_buf(c, h, &local, &owned);
    if (st != TERN_OK)
        return st;
    tern_rma_track_t *op = tern_rma_track_new(w, target, h->nsegs,
                                               is_put ? "RDMA write" : "RDMA read", c->req_p);
    if (!op) {
        free(owned);
        return TERN_ERR_NOMEM;
    }
    op->footprint = h->bytes;
    op->owned[0] = owned;
    if (!is_put && owned) {
        op->fetched = owned;
        op->fetched_bytes = h->bytes;
        op->result = c->result;
        op->rcount = c->rcount;
        op->rtype = c->rtype;
    }
    tern_rma_track_start(op);
    const uint64_t remote = r->bases[target] + h->addr;
    size_t at = 0;
    for (size_t i = 0; i < h->nsegs; i++) {
        tern_tl_comp_t *comp = tern_rma_track_piece(op, i);
        uint64_t to = remote + (uint64_t)segs[i].offset;
        st = is_put ? r->ops->put(r->tl, world, local + at, segs[i].len, to, rkey, comp)
                    : r->ops->get(r->tl, world, local + at, segs[i].len, to, rkey, comp);
        if (st != TERN_OK)
            tern_rma_track_drop(op, st); /* this piece is over, with the error */
        at += segs[i].len;
    }
    tern_rma_track_issued(op);
    tern_pvar_add(TERN_PVAR_RMA_RDMA, 1);
    return TERN_OK;
}

const tern_rma_path_t tern_rma_path_rdma = {.name = "RDMA", .issue = rdma_issue};
