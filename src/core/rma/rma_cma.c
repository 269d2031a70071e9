/* Puts and gets of MPI_Win_create windows through the vector get/put of
 * the transport that reaches each target rank (rma_cma.h). */
#include "core/rma/rma_cma.h"
#include "base/cma.h"
#include "base/config.h"
#include "base/log.h"
#include "core/coll/coll.h"
#include "core/runtime/runtime.h"
#include "base/pvars.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What each rank publishes at creation: the key and base of its window
 * memory and of its probe word with the transport of its node, the probe
 * word's value, and whether it registered them. */
enum { KEY_WORDS = 3, PUB_WIN_KEY = 0, PUB_BASE = 3, PUB_PROBE_KEY = 4, PUB_PROBE_ADDR = 7,
       PUB_PROBE_VALUE = 8, PUB_REGISTERED = 9, PUB_WORDS = 10 };

#define VECTOR_CAPS (TERN_TL_CAP_GETV | TERN_TL_CAP_PUTV | TERN_TL_CAP_RMA_SYNC)

/* Whether the transport of a peer does vector transfers complete at once. */
static int vector_peer(const tern_peer_t *p)
{
    return p->ops && p->ops->getv && p->ops->putv && (p->caps & VECTOR_CAPS) == VECTOR_CAPS;
}

/* The peer entry of another rank of this node (one transport serves them
 * all), or NULL when this rank is alone on it. */
static const tern_peer_t *node_peer(void)
{
    for (int i = 0; i < tern_rt.local_size; i++)
        if (tern_rt.local_ranks[i] != tern_rt.rank)
            return &tern_rt.peers[tern_rt.local_ranks[i]];
    return NULL;
}

void tern_rma_cma_close(tern_win_t *w)
{
    struct tern_rma_cma *c = w->cma;
    if (!c)
        return;
    if (c->reg_ops) {
        if (w->win_size > 0)
            c->reg_ops->mem_dereg(c->reg_tl, w->base, (size_t)w->win_size);
        c->reg_ops->mem_dereg(c->reg_tl, c->probe, sizeof *c->probe);
    }
    if (c->ok && c->ok[w->rank]) { /* registered with the self transport */
        const tern_peer_t *me = &tern_rt.peers[tern_win_world(w, w->rank)];
        me->ops->mem_dereg(me->tl, w->base, (size_t)w->win_size);
    }
    free(c->probe);
    free(c->rkey);
    free(c->base);
    free(c->ok);
    free(c);
    w->cma = NULL;
}

/* Registers this rank's window memory and probe word with the transport of
 * its node and fills what it publishes; nothing published when that
 * transport has no vector transfers or refuses. */
static void publish(struct tern_rma_cma *c, const tern_win_t *w, uint64_t *pub)
{
    const tern_peer_t *np = node_peer();
    pub[PUB_BASE] = (uint64_t)(uintptr_t)w->base;
    if (!np || !vector_peer(np))
        return;
    tern_rkey_t win_key = {{0}}, probe_key;
    *c->probe = atomic_load(tern_cma_probe_word());
    if (np->ops->mem_reg(np->tl, c->probe, sizeof *c->probe, &probe_key) != TERN_OK)
        return;
    if (w->win_size > 0 &&
        np->ops->mem_reg(np->tl, w->base, (size_t)w->win_size, &win_key) != TERN_OK) {
        np->ops->mem_dereg(np->tl, c->probe, sizeof *c->probe);
        return;
    }
    c->reg_ops = np->ops;
    c->reg_tl = np->tl;
    memcpy(&pub[PUB_WIN_KEY], win_key.words, sizeof win_key.words);
    memcpy(&pub[PUB_PROBE_KEY], probe_key.words, sizeof probe_key.words);
    pub[PUB_PROBE_ADDR] = (uint64_t)(uintptr_t)c->probe;
    pub[PUB_PROBE_VALUE] = *c->probe;
    pub[PUB_REGISTERED] = 1;
}

/* Reads window rank r's probe word through its transport: TERN_OK when the
 * value is the one it published (the key names the right process). */
static tern_status_t probe(const tern_win_t *w, int r, const uint64_t *pub)
{
    int wr = tern_win_world(w, r);
    const tern_peer_t *p = &tern_rt.peers[wr];
    tern_rkey_t key;
    memcpy(key.words, &pub[PUB_PROBE_KEY], sizeof key.words);
    uint64_t word = 0;
    struct iovec at = {.iov_base = (void *)(uintptr_t)pub[PUB_PROBE_ADDR], .iov_len = sizeof word};
    tern_status_t st = p->ops->getv(p->tl, wr, &word, sizeof word, &at, 1, &key, NULL);
    if (st != TERN_OK && st != TERN_ERR_NOT_SUPPORTED)
        (void)tern_status_take_detail(st); /* the warning below names the status */
    if (st == TERN_OK && word != pub[PUB_PROBE_VALUE])
        st = TERN_ERR_INTERNAL;
    return st;
}

/* Whether window rank r is reached with vector transfers: this rank
 * through the self transport, the others through the one that serves them,
 * where they registered and their probe word reads back. */
static int reach(struct tern_rma_cma *c, const tern_win_t *w, int r, const uint64_t *pub)
{
    const tern_peer_t *p = &tern_rt.peers[tern_win_world(w, r)];
    c->base[r] = pub[PUB_BASE];
    if (!vector_peer(p))
        return 0;
    if (r == w->rank)
        return p->ops->mem_reg(p->tl, w->base, (size_t)w->win_size, &c->rkey[r]) == TERN_OK;
    if (!pub[PUB_REGISTERED])
        return 0;
    memcpy(c->rkey[r].words, &pub[PUB_WIN_KEY], sizeof c->rkey[r].words);
    tern_status_t st = probe(w, r, pub);
    if (st != TERN_OK && !tern_knob_is_auto(TERN_KNOB_RMA_CMA))
        tern_warn("TERN_RMA_CMA=on but process_vm_readv of window rank %d failed (%s): its puts "
                  "and gets go by active messages", r, tern_status_string(st));
    return st == TERN_OK;
}

/* Whether a started transport was told to leave CMA off (its attribute
 * cma_declined; shm: TERN_SHM_CMA=off). */
static bool cma_declined(void)
{
    for (int i = 0; i < tern_rt.n_tls; i++) {
        tern_tl_attr_t a;
        tern_rt.tls[i].ops->query(tern_rt.tls[i].tl, TERN_TL_ANY_PEER, &a);
        if (a.cma_declined)
            return true;
    }
    return false;
}

tern_status_t tern_rma_cma_open(tern_win_t *w)
{
    const int n = w->size;
    /* auto follows the transports: CMA declined there keeps Yama's default
     * (docs/security.md). */
    const bool want = tern_knob_bool_or(TERN_KNOB_RMA_CMA, !cma_declined());
    uint64_t *all = malloc((size_t)n * PUB_WORDS * sizeof *all);
    struct tern_rma_cma *c = calloc(1, sizeof *c);
    if (c) {
        c->rkey = calloc((size_t)n, sizeof *c->rkey);
        c->base = calloc((size_t)n, sizeof *c->base);
        c->ok = calloc((size_t)n, 1);
        c->probe = malloc(sizeof *c->probe);
    }
    int have = all && c && c->rkey && c->base && c->ok && c->probe;
    tern_status_t st = have ? TERN_OK : TERN_ERR_NOMEM;
    uint64_t mine[PUB_WORDS] = {0};
    if (st == TERN_OK && want) {
        tern_cma_allow_peers(); /* before the peers' probes, which follow the allgather */
        publish(c, w, mine);
    }
    /* Out of memory here or not, the peers wait in the allgather: join it. */
    uint64_t dummy[PUB_WORDS];
    tern_status_t gst = tern_coll_allgather(w->comm, mine, sizeof mine, MPI_BYTE,
                                            all ? (void *)all : (void *)dummy,
                                            all ? sizeof mine : 0, MPI_BYTE, NULL, 0);
    if (st == TERN_OK)
        st = gst;
    int reached = 0;
    for (int r = 0; st == TERN_OK && want && r < n; r++) {
        c->ok[r] = (uint8_t)reach(c, w, r, &all[(size_t)r * PUB_WORDS]);
        reached += c->ok[r];
    }
    free(all);
    w->cma = c;
    if (st != TERN_OK || !reached)
        tern_rma_cma_close(w);
    return st;
}

/* The CMA path: done now, complete locally and at the target; a
 * contiguous origin or result is used where it lies. */
static tern_status_t cma_issue(tern_win_t *w, const tern_rma_call_t *c, rma_hdr_t *h,
                               const tern_dt_seg_t *segs)
{
    const char *data = NULL;
    char *owned = NULL, *out = NULL, *rowned = NULL;
    tern_status_t st = c->ships ? tern_rma_origin_data(c, h, 1, &data, &owned) : TERN_OK;
    if (st == TERN_OK && c->fetch)
        st = tern_rma_result_buf(c, h, &out, &rowned);
    if (st == TERN_OK)
        st = tern_rma_cma_apply(w, c->target, h, segs, h->nsegs, data, out);
    if (st == TERN_OK && c->fetch)
        st = tern_rma_unpack_result(c, h, rowned);
    free(owned);
    free(rowned);
    if (st == TERN_ERR_NOT_SUPPORTED) {
        /* The kernel refused (the target became non-dumpable): the
         * target's route is active messages from now on, this operation
         * included (an accumulate refused after it wrote is an error
         * instead, rma_cma_acc.c). */
        tern_rma_route_target(w, c->target);
        return tern_rma_path_am.issue(w, c, h, segs);
    }
    if (st != TERN_OK)
        return st;
    tern_pvar_add(TERN_PVAR_RMA_CMA, 1);
    return tern_rma_done_now(w, c->req_p);
}

const tern_rma_path_t tern_rma_path_cma = {.name = "CMA", .issue = cma_issue};

tern_status_t tern_rma_cma_copyv(tern_win_t *w, int target, int write, char *local, size_t total,
                                 const struct iovec *riov, size_t cnt)
{
    int wr = tern_win_world(w, target);
    const tern_peer_t *p = &tern_rt.peers[wr];
    const tern_rkey_t *key = &w->cma->rkey[target];
    return write ? p->ops->putv(p->tl, wr, local, total, riov, cnt, key, NULL)
                 : p->ops->getv(p->tl, wr, local, total, riov, cnt, key, NULL);
}

tern_status_t tern_rma_cma_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                                 const tern_dt_seg_t *segs, size_t nsegs, const char *data,
                                 char *out)
{
    if (hdr->type != RMA_PUT && hdr->type != RMA_GET)
        return tern_rma_cma_accumulate(w, target, hdr, segs, nsegs, data, out);
    const int write = hdr->type == RMA_PUT;
    char *local = write ? (char *)(uintptr_t)data : out;
    const uint64_t base = w->cma->base[target] + hdr->addr;
    struct iovec riov[64];
    const size_t cap = sizeof riov / sizeof riov[0] < TERN_TL_IOV_MAX ? sizeof riov / sizeof riov[0]
                                                                      : TERN_TL_IOV_MAX;
    tern_status_t st = TERN_OK;
    for (size_t i = 0; i < nsegs && st == TERN_OK;) {
        size_t cnt = 0, total = 0;
        for (; i < nsegs && cnt < cap; i++) {
            if (!segs[i].len)
                continue;
            riov[cnt].iov_base = (void *)(uintptr_t)(base + (uint64_t)segs[i].offset);
            riov[cnt++].iov_len = segs[i].len;
            total += segs[i].len;
        }
        if (cnt)
            st = tern_rma_cma_copyv(w, target, write, local, total, riov, cnt);
        local += total;
    }
    if (st == TERN_ERR_NOT_SUPPORTED) {
        /* The kernel changed its mind (the target became non-dumpable):
         * active messages from now on, this operation included. */
        tern_debug("CMA to window rank %d refused: active messages from now on", target);
        w->cma->ok[target] = 0;
    }
    return st;
}
