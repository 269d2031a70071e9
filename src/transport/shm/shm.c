/* Shared-memory transport: active messages through one SPSC ring of cells
 * per ordered pair of ranks on a node (shm_ring.h), in one POSIX segment per
 * node (shm_node_segment.h); get/put with Cross Memory Attach (base/cma.h).
 * This file: start-up, active messages, progress and dead peers; the
 * segment's layout and fallback are in shm_layout.c, get and put in
 * shm_rma.c, what they share in shm_internal.h.
 *
 * Progress polls the flag of the next cell of every incoming ring (one cache
 * line each), drains up to one ring's worth of messages from each, and frees
 * each cell after the handler returns. The consumer index moves before the
 * handler runs, so a handler may send (to anyone, the sender included) and
 * may even re-enter progress; a nested call then delivers the following
 * messages before the outer handler returns.
 *
 * A dead peer: while a rank waits, watch_peers checks every
 * TERN_PEER_CHECK_MS that the process of each local peer it waits for
 * still exists (kill(pid, 0): one system call per peer, never on the fast
 * path; a
 * process that died is found once its parent has reaped it, at once under
 * mpiexec). Once the core gives up on a peer (disconnect) its incoming
 * rings are parked: what it wrote before dying is never delivered. */
#include "transport/shm/shm_internal.h"
#include "base/cma.h"
#include "base/config.h"
#include "base/copy_store.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/pvars.h"
#include "pmi/pmi_profile.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void shm_free(tern_tl_t *tl)
{
    tern_shm_segment_detach(&tl->seg);
    free(tl->in);
    free(tl->out);
    free(tl->bulk_out);
    free(tl->pack_out);
    free(tl->local_of_storage);
    free(tl->peer_rma_min);
    free(tl->peer_get_min);
    free(tl->out_state);
    free(tl);
}

/* Whether TERN_SHM_LARGE_PATH compares the ranks' hwloc places (every
 * choice but the forced ones). */
static int path_by_place(void)
{
    return tern_knob_is(TERN_KNOB_SHM_LARGE_PATH, "auto") ||
           tern_knob_is(TERN_KNOB_SHM_LARGE_PATH, "probe") ||
           tern_knob_is(TERN_KNOB_SHM_LARGE_PATH, "measure");
}

/* Per peer, which copy serves large messages (shm_path.h): the rendezvous
 * threshold stays rma_min (the pipeline below it) or drops to where CMA
 * wins. */
static void shm_choose_paths(tern_tl_t *tl, const tern_tl_params_t *params)
{
    size_t single = tern_knob_size_or(TERN_KNOB_SHM_CMA_MIN, 32L << 10);
    int all_far = tern_knob_is(TERN_KNOB_SHM_LARGE_PATH, "cma");
    int measure = tern_knob_is(TERN_KNOB_SHM_LARGE_PATH, "measure");
    int by_place = path_by_place();
    if (tern_knob_is(TERN_KNOB_SHM_LARGE_PATH, "probe") && tl->seg.base != NULL &&
        params->local_size > 1) {
        double rtt = 0;
        int far = -1;
        /* Every local rank takes part (ranks 2.. wait for the verdict);
         * with more ranks than cores a round trip measures the scheduler. */
        if (!params->oversubscribed)
            far = tern_shm_probe_far(tern_shm_probe_line(tl->seg.base, params->local_size), tl->my_local,
                                     (double)tern_knob_count(TERN_KNOB_SHM_PROBE_FAR_NS), &rtt);
        tern_debug("shm transport: start-up probe: cache-line round trip %.0f ns between local ranks 0 "
                   "and 1: %s",
                   rtt, far > 0 ? "far apart" : far == 0 ? "near" : "not measured");
        all_far = all_far || far > 0;
    }
    for (int i = 0; i < params->local_size; i++) {
        tl->peer_rma_min[i] = tl->rma_min;
        if (i == tl->my_local || tl->seg.base == NULL)
            continue;
        const shm_slot_t *ps = tern_shm_slot(tl->seg.base, i);
        int far = all_far || (by_place && tern_shm_places_far(&tl->place, &ps->place));
        if (far && single < tl->rma_min)
            tl->peer_rma_min[i] = single;
        /* Near by what hwloc knows: the messages tell the rest. */
        if (!far && measure && tl->bulk_max && single < tl->rma_min)
            tl->peer_get_min[i] = single;
        /* The measured range starts at peer_get_min (TERN_SHM_CMA_MIN's
         * value, or its default). */
        char measured[48];
        snprintf(measured, sizeof measured, "measured from %zu bytes, CMA", tl->peer_get_min[i]);
        tern_debug("shm transport: large messages to local rank %d: %s from %zu bytes "
                   "(TERN_SHM_LARGE_PATH=%s; places %d/%d/%d and %d/%d/%d)",
                   i, far ? "single copy (CMA)" : tl->peer_get_min[i] ? measured : "pipeline, CMA",
                   tl->peer_rma_min[i], tern_knob_str(TERN_KNOB_SHM_LARGE_PATH), tl->place.package,
                   tl->place.numa, tl->place.l3, ps->place.package, ps->place.numa, ps->place.l3);
    }
}

static tern_status_t shm_init(const tern_tl_params_t *params, tern_tl_t **tl_p)
{
    tern_status_t st = TERN_OK;
    tern_tl_t *tl = calloc(1, sizeof *tl);
    if (tl != NULL) {
        tl->rank = params->rank;
        tl->size = params->size;
        tl->local_size = params->local_size;
        tl->my_local = params->local_rank;
        tl->am_handler = params->am_handler;
        tl->am_ctx = params->am_ctx;
        tl->peer_failed = params->peer_failed;
        tl->prefetch_max = tern_knob_size(TERN_KNOB_SHM_PREFETCH_MAX);
        tl->pid = getpid(); /* not per message: a system call every rendezvous */
        tl->local_of_storage = malloc((size_t)params->size * sizeof(int));
        tl->out = calloc((size_t)params->local_size, sizeof *tl->out);
        tl->bulk_out = calloc((size_t)params->local_size, sizeof *tl->bulk_out);
        tl->in = calloc((size_t)params->local_size, sizeof *tl->in);
        tl->peer_rma_min = calloc((size_t)params->local_size, sizeof *tl->peer_rma_min);
        tl->peer_get_min = calloc((size_t)params->local_size, sizeof *tl->peer_get_min);
        tl->out_state = calloc((size_t)params->local_size, sizeof *tl->out_state);
        tl->pack_out = calloc((size_t)params->local_size, sizeof *tl->pack_out);
        if (tl->local_of_storage == NULL || tl->out == NULL || tl->bulk_out == NULL || tl->in == NULL ||
            tl->peer_rma_min == NULL || tl->peer_get_min == NULL || tl->out_state == NULL ||
            tl->pack_out == NULL)
            st = TERN_ERR_NOMEM;
        tl->place = (tern_shm_place_t){-1, -1, -1};
        if (params->local_size > 1 && path_by_place())
            tern_shm_place_self(&tl->place); /* published in its slot */
    } else {
        st = TERN_ERR_NOMEM;
    }
    if (st == TERN_OK) {
        for (int r = 0; r < params->size; r++)
            tl->local_of_storage[r] = -1;
        for (int i = 0; i < params->local_size; i++)
            tl->local_of_storage[params->local_ranks[i]] = i;
        tl->local_of = tl->local_of_storage;
        if (params->local_size > 1 && params->local_rank == 0)
            tern_shm_choose_geometry(tl, params->oversubscribed);
    }
    if (st != TERN_OK)
        tern_error("shm transport: %s before set-up", tern_status_string(st));

    /* Collective from here on, even after an error: every rank fences twice. */
    bool cma_allowed = tern_knob_bool_or(TERN_KNOB_SHM_CMA, true);
    if (cma_allowed && params->local_size > 1)
        tern_cma_allow_peers(); /* before the peers' probe below */
    tern_shm_segment_t seg;
    tern_status_t sst = tern_shm_segment_setup(params, st == TERN_OK ? tern_shm_create : NULL,
                                               st == TERN_OK ? tern_shm_attached : NULL, tl, &seg);
    tern_init_profile_mark("shm segment, fences");
    if (st != TERN_OK) {
        tern_shm_segment_detach(&seg);
        if (tl != NULL)
            shm_free(tl);
        return st;
    }
    tl->seg = seg;
    st = sst != TERN_OK ? sst : tl->attach_status;
    if (st != TERN_OK)
        goto err;

    if (tl->seg.base != NULL) {
        const shm_header_t *h = tl->seg.base;
        /* Every local rank must have attached, or none may use the segment. */
        for (int i = 0; i < params->local_size; i++) {
            if (!atomic_load_explicit(&tern_shm_slot(tl->seg.base, i)->attached, memory_order_acquire)) {
                tern_error("shm transport: local rank %d (world rank %d) could not attach %s", i,
                           params->local_ranks[i], tl->seg.name);
                st = TERN_ERR_PEER;
                goto err;
            }
        }
        /* Up to 8 MB per rank (16 ranks with the default rings): measured at
         * 32 ranks, prefaulting 16 MB in each rank made MPI_Init 180 ms
         * instead of 49 ms (first messages pay the faults instead). With
         * TERN_SHM_RESERVE=pair a pair's rings are mapped when reserved
         * (shm_reserve.c). */
        tl->prefault = 2 * (size_t)(params->local_size - 1) * tern_shm_ring_bytes(h->cell_size, h->ring_cells) <=
                       SHM_PREFAULT_MAX;
        /* At most a quarter of the bulk chunks in flight: the chunk the
         * sender fills next was read by the receiver three quarters of a
         * ring (1.5 MB) ago, long enough to have left the receiver's L2, so
         * writing it does not pull lines back from the other core (a full
         * window ran at a third of the speed, docs/performance.md). */
        tl->bulk_window = h->bulk_cells >= 4 ? h->bulk_cells / 4 : 1;
        for (int i = 0; i < params->local_size; i++) {
            if (i == tl->my_local)
                continue;
            shm_in_t *in = &tl->in[tl->nin++];
            in->src = params->local_ranks[i];
            tl->pack_out[i].heard = &in->ring.index;
            /* TERN_SHM_RESERVE=pair: at the pair's first message. */
            if (!h->lazy) {
                tern_shm_out_attach(tl, i);
                tern_shm_in_attach(tl, in, i);
            }
        }
        /* TERN_SHM_RESERVE=pair: every view closed until its pair's first
         * message. */
        tern_shm_pairs_setup(tl);
        tl->bulk_max = h->bulk_cells ? h->bulk_cell_size - TERN_SHM_CELL_HDR : 0;
        tl->am_max = h->cell_size - TERN_SHM_CELL_HDR;
        tl->batch = h->ring_cells;
        /* A pack cell holds its first entry and END: 128-byte cells and up. */
        size_t pack_max = tern_knob_size(TERN_KNOB_SHM_PACK_MAX);
        tl->pack_lim = pack_max && h->cell_size >= 2 * TERN_SHM_CACHE_LINE ? pack_max + 1 : 0;

        if (cma_allowed) {
            int peer = (tl->my_local + 1) % params->local_size;
            const shm_slot_t *ps = tern_shm_slot(tl->seg.base, peer);
            tern_status_t pst = tern_cma_probe((pid_t)ps->pid, ps->probe_addr, ps->probe_value);
            tl->cma = pst == TERN_OK;
            if (pst != TERN_OK) {
                if (!tern_knob_is_auto(TERN_KNOB_SHM_CMA))
                    tern_warn("TERN_SHM_CMA=on but process_vm_readv of local rank %d failed (%s); large "
                              "messages go through the queue",
                              peer, tern_status_string(pst));
                else
                    tern_info("CMA unavailable (%s); large messages go through the queue",
                              tern_status_string(pst));
            }
        }
    } else {
        /* Alone on the node, or no segment (TERN_SHM_FALLBACK=ofi): reaches
         * no one (nin 0). */
        tl->am_max = tl->want.cell_size > TERN_SHM_CELL_HDR ? tl->want.cell_size - TERN_SHM_CELL_HDR : 0;
        tl->batch = 1;
        tern_shm_pairs_setup(tl);
    }
    /* The bulk channel is a pipeline of two running processes; when ranks
     * outnumber cores one of them is often descheduled and the pipeline
     * stalls, while CMA copies the whole message in one system call. */
    tl->rma_min = tern_knob_size_or(TERN_KNOB_SHM_CMA_MIN,
                                    tl->bulk_max && !params->oversubscribed ? 32L << 20 : 32L << 10);
    shm_choose_paths(tl, params);
    tern_debug("shm transport: %d local ranks, segment %s of %zu bytes, %u cells per ring, am_max %zu, "
               "bulk_max %zu in %u chunks per pair, CMA %s",
               tl->local_size, tl->seg.name, tl->seg.size, tl->batch, tl->am_max, tl->bulk_max,
               tl->seg.base != NULL ? ((const shm_header_t *)tl->seg.base)->bulk_cells : 0u,
               tl->cma ? "on" : "off");
    *tl_p = tl;
    return TERN_OK;

err:
    shm_free(tl);
    return st;
}

static void shm_finalize(tern_tl_t *tl)
{
    if (tl != NULL)
        shm_free(tl);
}

static int shm_reachable(tern_tl_t *tl, int peer)
{
    return peer >= 0 && peer < tl->size && peer != tl->rank && tl->local_of[peer] >= 0 && tl->nin > 0;
}

static tern_status_t shm_connect(tern_tl_t *tl, int peer)
{
    return shm_reachable(tl, peer) ? TERN_OK : TERN_ERR_ARG;
}

static void shm_disconnect(tern_tl_t *tl, int peer)
{
    for (int i = 0; i < tl->nin; i++)
        if (tl->in[i].src == peer && !tl->in[i].gone) {
            tl->in[i].gone = 1;
            tern_shm_ring_park(&tl->in[i].ring);
            tl->in[i].pack.cell = NULL;
            if (tl->bulk_max)
                tern_shm_ring_park(&tl->in[i].bulk);
        }
}

static void *shm_am_reserve(tern_tl_t *tl, int peer, size_t len);
static void shm_am_commit(tern_tl_t *tl, int peer, size_t len);

/* am_send of a message that is packed (shm_pack.h). */
static tern_status_t shm_pack_send(tern_tl_t *tl, int peer, int li, const void *hdr, size_t hdr_len,
                                   const void *payload, size_t payload_len)
{
    if (tl->out_state[li] != SHM_PAIR_OPEN) {
        tern_status_t st = tern_shm_pair_open(tl, li); /* the first message to peer */
        if (st != TERN_OK)
            return st;
    }
    char *p = shm_am_reserve(tl, peer, hdr_len + payload_len);
    if (p == NULL)
        return TERN_ERR_AGAIN;
    tern_shm_copy_message(p, hdr, hdr_len, payload, payload_len);
    shm_am_commit(tl, peer, hdr_len + payload_len);
    return TERN_OK;
}

static tern_status_t shm_am_send(tern_tl_t *tl, int peer, const void *hdr, size_t hdr_len, const void *payload,
                                 size_t payload_len)
{
    if ((unsigned)peer >= (unsigned)tl->size || hdr_len + payload_len > tl->am_max)
        return TERN_ERR_ARG;
    int li = tl->local_of[peer];
    if (li < 0 || li == tl->my_local)
        return TERN_ERR_ARG;
    if (hdr_len + payload_len < tl->pack_lim)
        return shm_pack_send(tl, peer, li, hdr, hdr_len, payload, payload_len);
    if (__builtin_expect(tl->pack_out[li].cell != NULL, 0))
        tern_shm_pack_close(&tl->pack_out[li]);
    tern_status_t st = tern_shm_ring_push(&tl->out[li], hdr, hdr_len, payload, payload_len);
    if (__builtin_expect(st == TERN_ERR_AGAIN, 0) && tl->out_state[li] != SHM_PAIR_OPEN) {
        st = tern_shm_pair_open(tl, li); /* the first message to peer */
        if (st == TERN_OK)
            st = tern_shm_ring_push(&tl->out[li], hdr, hdr_len, payload, payload_len);
    }
    return st;
}

/* A bulk ring's first cell, written or read here (message number 0):
 * map the ring whole first (tern_shm_bulk_warm says why). A parked ring's
 * number is never 0 again. */
static inline void shm_bulk_warm_first(const tern_shm_ring_t *ring)
{
    if (__builtin_expect(ring->index == 0, 0))
        tern_shm_bulk_warm(ring);
}

/* Bulk cells a large ordered message of len bytes spans (shm_am_big_reserve). */
static inline uint64_t shm_big_cells(const tern_shm_ring_t *ring, size_t len)
{
    size_t cap = tern_shm_ring_payload_max(ring);
    return len <= cap ? 1 : (len + cap - 1) / cap;
}

/* A doorbell (a marked empty cell, just popped) stands for the bulk
 * channel's next marked cell, an active message ordered with the ring's
 * (shm_am_big_commit), and the unmarked cells after it that the message
 * runs on into. A bulk chunk committed before it goes first, with the
 * doorbell put back, so a handler that re-enters progress finds it in
 * place; the message's cells are taken before its handler runs and freed
 * in order after. Off the fast path. */
static __attribute__((noinline, cold)) void shm_doorbell(tern_tl_t *tl, shm_in_t *in, tern_shm_cell_t *bell)
{
    size_t blen;
    tern_shm_cell_t *big = tern_shm_ring_peek(&in->bulk, &blen);
    if (big == NULL) { /* committed before the doorbell: never */
        in->ring.index--;
        return;
    }
    shm_bulk_warm_first(&in->bulk);
    if (!(blen & TERN_SHM_LEN_ORDERED)) {
        in->bulk.index++;
        in->ring.index--;
        tl->am_handler(tl->am_ctx, in->src, tern_shm_cell_payload(big), blen);
        tern_shm_ring_free(&in->bulk, big);
        return;
    }
    size_t len = blen & ~(size_t)TERN_SHM_LEN_ORDERED;
    uint64_t first = in->bulk.index, cells = shm_big_cells(&in->bulk, len);
    in->bulk.index += cells;
    tl->am_handler(tl->am_ctx, in->src, tern_shm_cell_payload(big), len);
    for (uint64_t i = 0; i < cells; i++)
        tern_shm_ring_free(&in->bulk, tern_shm_ring_cell(&in->bulk, first + i));
    tern_shm_ring_free(&in->ring, bell);
}

/* Asks for the lines of a cell's first n payload bytes at once (the first
 * line, with the flag, is here already): the handler's copy then finds
 * them arriving together instead of fetching each from the other core in
 * turn. From 1 KB: below it the copy is a few lines. */
#define SHM_PREFETCH_FROM 1024
static inline void shm_prefetch(const tern_shm_cell_t *cell, size_t n)
{
    for (size_t o = TERN_SHM_CACHE_LINE; o < TERN_SHM_CELL_HDR + n; o += TERN_SHM_CACHE_LINE)
        __builtin_prefetch((const char *)cell + o, 0, 3);
}

static int shm_drain_pack(tern_tl_t *tl, shm_in_t *in, unsigned max);

/* Delivers up to max messages of one incoming ring to the handler; a pack
 * cell's entries from shm_drain_pack. Always inline: with the call from
 * shm_drain_pack gcc made it a function, ~20 instructions more a poll. */
static inline __attribute__((always_inline)) int shm_drain(tern_tl_t *tl, shm_in_t *in, unsigned max)
{
    if (__builtin_expect(in->pack.cell != NULL, 0))
        return tern_shm_pack_ready(&in->pack) ? shm_drain_pack(tl, in, max) : 0;
    int events = 0;
    for (; max > 0; max--) {
        size_t len;
        tern_shm_cell_t *cell = tern_shm_ring_pop(&in->ring, &len);
        if (cell == NULL)
            break;
        if (__builtin_expect(len & (TERN_SHM_LEN_ORDERED | TERN_SHM_LEN_PACKED), 0)) {
            if (len & TERN_SHM_LEN_PACKED) {
                in->pack = (tern_shm_pack_in_t){cell, TERN_SHM_PACK_FIRST,
                                                    tern_shm_pack_tag(in->ring.index)};
                return events + shm_drain_pack(tl, in, max);
            }
            shm_doorbell(tl, in, cell);
        } else {
            if (len >= SHM_PREFETCH_FROM)
                shm_prefetch(cell, len < tl->prefetch_max ? len : tl->prefetch_max);
            tl->am_handler(tl->am_ctx, in->src, tern_shm_cell_payload(cell), len);
            tern_shm_ring_free(&in->ring, cell);
        }
        events++;
    }
    return events;
}

/* The entries of the pack cell in->pack, then (at its END) the ring's
 * next cells; up to max messages. */
static __attribute__((noinline)) int shm_drain_pack(tern_tl_t *tl, shm_in_t *in, unsigned max)
{
    int events = 0;
    for (; max > 0; max--) {
        _Alignas(16) char msg[TERN_SHM_PACK_LIMIT];
        size_t len;
        int took = tern_shm_pack_take(&in->pack, msg, &len);
        if (took == 0)
            break;
        if (took < 0) { /* END: back to the ring */
            tern_shm_ring_free(&in->ring, in->pack.cell);
            in->pack.cell = NULL;
            return events + shm_drain(tl, in, max);
        }
        tl->am_handler(tl->am_ctx, in->src, msg, len);
        events++;
    }
    return events;
}

/* Delivers up to max bulk chunks of one peer; stops at a marked one, which
 * waits for its doorbell in the ring. */
static inline int shm_drain_bulk(tern_tl_t *tl, shm_in_t *in, unsigned max)
{
    int events = 0;
    for (; max > 0; max--) {
        size_t len;
        tern_shm_cell_t *cell = tern_shm_ring_peek(&in->bulk, &len);
        if (cell == NULL || (len & TERN_SHM_LEN_ORDERED))
            break;
        shm_bulk_warm_first(&in->bulk);
        in->bulk.index++;
        tl->am_handler(tl->am_ctx, in->src, tern_shm_cell_payload(cell), len);
        tern_shm_ring_free(&in->bulk, cell);
        events++;
    }
    return events;
}

/* After a send in the TERN_P2P_EAGER_VEC range (shm_warm.h): a poll that
 * found nothing takes the next cell. Out of line: the poll pays one test
 * of warm.ring. */
static __attribute__((noinline, cold)) void shm_warm_if_idle(tern_tl_t *tl, int events)
{
    if (events == 0)
        tern_shm_warm_idle(&tl->warm);
}

static int shm_progress(tern_tl_t *tl)
{
    int events = 0;
    /* A sender reserved a pair to this rank (shm_reserve.c). */
    if (__builtin_expect(atomic_load_explicit(tl->news, memory_order_relaxed) != tl->news_seen, 0))
        tern_shm_admit(tl);
    shm_in_t *in = tl->in;
    for (int i = 0, n = tl->nin; i < n; i++) {
        events += shm_drain(tl, &in[i], tl->batch);
        /* Bulk chunks: one per peer per call, so a long stream never starves
         * the small-message rings. */
        if (tl->bulk_max)
            events += shm_drain_bulk(tl, &in[i], 1);
    }
    if (__builtin_expect(tl->warm.ring != NULL, 0))
        shm_warm_if_idle(tl, events);
    return events;
}

/* Delivers everything a dead peer wrote before it died (it may have sent
 * its last messages and exited normally after MPI_Finalize just after our
 * last poll). */
static void shm_drain_dead(tern_tl_t *tl, int peer)
{
    tern_shm_admit(tl); /* it may have opened the pair just before */
    for (int i = 0; i < tl->nin; i++)
        if (tl->in[i].src == peer) {
            while (shm_drain(tl, &tl->in[i], tl->batch) +
                       (tl->bulk_max ? shm_drain_bulk(tl, &tl->in[i], 1) : 0) >
                   0)
                ;
        }
}

static void shm_watch_peers(tern_tl_t *tl, const int *peers, int n_peers)
{
    for (int i = 0; i < n_peers; i++) {
        pid_t pid = (pid_t)tern_shm_slot(tl->seg.base, tl->local_of[peers[i]])->pid;
        if (tern_pid_gone(pid)) {
            shm_drain_dead(tl, peers[i]);
            char why[96];
            snprintf(why, sizeof why, "shm: its process %d (on this node) is gone", (int)pid);
            tl->peer_failed(peers[i], TERN_ERR_PEER, why); /* parks its rings */
        }
    }
}

/* A full ring, or a pair not yet reserved (its views are closed): open it
 * at the first message, then try again. NULL: full, or it failed (am_send
 * says how). */
static __attribute__((noinline, cold)) void *shm_reserve_first(tern_tl_t *tl, int li, tern_shm_ring_t *ring)
{
    if (tl->out_state[li] == SHM_PAIR_OPEN || tern_shm_pair_open(tl, li) != TERN_OK)
        return NULL;
    return tern_shm_ring_reserve(ring);
}

/* A new pack cell to local rank li (the open one is full, or none is
 * open); NULL when the ring is full. */
static __attribute__((noinline)) void *shm_pack_reserve_cell(tern_tl_t *tl, int li, size_t len)
{
    tern_shm_ring_t *ring = &tl->out[li];
    void *p = tern_shm_ring_reserve(ring);
    if (p == NULL && (p = shm_reserve_first(tl, li, ring)) == NULL)
        return NULL;
    return tern_shm_pack_open(&tl->pack_out[li], ring, p, len);
}

/* A message below pack_lim bytes goes into the open pack cell when
 * nothing came from the peer since the last send to it (the messages
 * queue: a stream, a window, a rooted collective's); a ping-pong's go by
 * the ring, where packing cost 5-7% of the fast mode's 8 B latency in
 * two of four A/B batches (docs/performance.md). Any other closes the pack cell first, so the
 * ring keeps the pair's order (shm_pack.h). */
static void *shm_am_reserve(tern_tl_t *tl, int peer, size_t len)
{
    int li = tl->local_of[peer];
    tern_shm_pack_out_t *pk = &tl->pack_out[li];
    uint64_t heard = *pk->heard;
    if (len < tl->pack_lim && heard == pk->seen) {
        void *e = tern_shm_pack_append(pk, tl->out[li].cell_size, len);
        return __builtin_expect(e != NULL, 1) ? e : shm_pack_reserve_cell(tl, li, len);
    }
    pk->seen = heard;
    if (__builtin_expect(pk->cell != NULL, 0))
        tern_shm_pack_close(pk);
    void *p = tern_shm_ring_reserve(&tl->out[li]);
    return __builtin_expect(p != NULL, 1) ? p : shm_reserve_first(tl, li, &tl->out[li]);
}

static void shm_am_commit(tern_tl_t *tl, int peer, size_t len)
{
    int li = tl->local_of[peer];
    if (tl->pack_out[li].pend != NULL) {
        tern_shm_pack_commit(&tl->pack_out[li], &tl->out[li], len);
        tern_pvar_add(TERN_PVAR_SHM_PACKED, 1);
        return;
    }
    tern_shm_ring_commit(&tl->out[li], len);
}

static int shm_am_reserved_warm(tern_tl_t *tl, int peer, size_t len)
{
    int li = tl->local_of[peer];
    if (tl->pack_out[li].pend != NULL) /* a pack entry, not a cell */
        return 0;
    return tern_shm_warm_reserved(&tl->warm, &tl->out[li], len);
}

static void *shm_bulk_reserve(tern_tl_t *tl, int peer, size_t len)
{
    (void)len; /* room for bulk_max */
    int li = tl->local_of[peer];
    void *p = tern_shm_ring_reserve(&tl->bulk_out[li]);
    if (__builtin_expect(p == NULL, 0))
        p = shm_reserve_first(tl, li, &tl->bulk_out[li]);
    if (p != NULL)
        shm_bulk_warm_first(&tl->bulk_out[li]);
    return p;
}

static void shm_bulk_commit(tern_tl_t *tl, int peer, size_t len)
{
    tern_shm_ring_commit(&tl->bulk_out[tl->local_of[peer]], len);
}

/* An active message of up to a bulk window of cells in order with the
 * ring's: its bytes in the next bulk cells (the first marked, the message
 * running on into the payloads of the next ones: shm_am_big_at), then a
 * marked empty doorbell in the ring where an am_send would have gone
 * (shm_drain delivers the one at the other). Every cell is reserved
 * before any is published. */
static void *shm_am_big_reserve(tern_tl_t *tl, int peer, size_t len)
{
    int li = tl->local_of[peer];
    if (__builtin_expect(tl->pack_out[li].cell != NULL, 0))
        tern_shm_pack_close(&tl->pack_out[li]);
    if (tern_shm_ring_reserve(&tl->out[li]) == NULL && shm_reserve_first(tl, li, &tl->out[li]) == NULL)
        return NULL;
    shm_bulk_warm_first(&tl->bulk_out[li]);
    return tern_shm_ring_reserve_n(&tl->bulk_out[li], shm_big_cells(&tl->bulk_out[li], len));
}

static void shm_am_big_commit(tern_tl_t *tl, int peer, size_t len, size_t written)
{
    int li = tl->local_of[peer];
    tern_shm_ring_t *bulk = &tl->bulk_out[li];
    /* Before the flag's release: a later lap's reader never sees the
     * count of the cell's previous message. */
    tern_shm_cell_set_written(tern_shm_ring_cell(bulk, bulk->index), written, memory_order_relaxed);
    tern_shm_ring_commit(bulk, len | TERN_SHM_LEN_ORDERED);
    bulk->index += shm_big_cells(bulk, len) - 1; /* unpublished: the reader skips them */
    tern_shm_ring_commit(&tl->out[li], TERN_SHM_LEN_ORDERED);
}

/* The cell of a payload the ring handed out. */
static inline tern_shm_cell_t *shm_cell_of(const void *payload)
{
    return (tern_shm_cell_t *)((char *)payload - TERN_SHM_CELL_HDR);
}

/* Byte off of a large message at payload (the first cell's, ours or the
 * peer's) and the bytes from there to its cell's end: the message fills
 * each cell's payload and runs on into the next cell of the ring. */
static void *shm_am_big_at(tern_tl_t *tl, int peer, const void *payload, size_t off, size_t *room)
{
    int li = tl->local_of[peer];
    const tern_shm_ring_t *ring = &tl->bulk_out[li];
    const char *cell = (const char *)payload - TERN_SHM_CELL_HDR;
    if (ring->cells == NULL || cell < ring->cells || cell >= ring->cells + (ring->mask + 1) * ring->cell_size)
        ring = &tl->in[li < tl->my_local ? li : li - 1].bulk; /* in[] skips this rank */
    size_t cap = tern_shm_ring_payload_max(ring);
    uint64_t first = (uint64_t)(cell - ring->cells) / ring->cell_size;
    *room = cap - off % cap;
    return (char *)tern_shm_cell_payload(tern_shm_ring_cell(ring, first + off / cap)) + off % cap;
}

/* Every bulk cell of ours read and freed: one load of the consumer's count
 * (its line is written by the peer: asked only of a window's later sends). */
static int shm_am_big_idle(tern_tl_t *tl, int peer)
{
    tern_shm_ring_t *bulk = &tl->bulk_out[tl->local_of[peer]];
    return atomic_load_explicit(bulk->consumed, memory_order_relaxed) == bulk->index;
}

static void shm_am_big_grow(tern_tl_t *tl, void *payload, size_t written)
{
    (void)tl;
    tern_shm_cell_set_written(shm_cell_of(payload), written, memory_order_release);
}

/* The sender writes the parts straight after its commit, so this waits
 * a copy's time; it yields now and then for a descheduled sender (more
 * ranks than cores) and checks, rarely, that the sender lives. */
#define SHM_WAIT_YIELD_SPINS 4096ul
#define SHM_WAIT_CHECK_SPINS (1ul << 20)
static size_t shm_am_big_wait(tern_tl_t *tl, int peer, const void *pkt, size_t need)
{
    const tern_shm_cell_t *cell = shm_cell_of(pkt);
    size_t have;
    for (unsigned long spins = 1; (have = tern_shm_cell_written(cell)) < need; spins++) {
        if (spins % SHM_WAIT_YIELD_SPINS == 0)
            sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
        if (spins % SHM_WAIT_CHECK_SPINS == 0 &&
            tern_pid_gone((pid_t)tern_shm_slot(tl->seg.base, tl->local_of[peer])->pid))
            return 0;
    }
    return have;
}

static struct tern_store_reader *shm_bulk_reader(tern_tl_t *tl, int peer, int incoming)
{
    int li = tl->local_of[peer];
    return tern_shm_ring_news(incoming ? &tl->in[li < tl->my_local ? li : li - 1].bulk
                                       : &tl->bulk_out[li]);
}

/* TERN_SHM_BULK_NT_MIN as the attribute bulk_nt_min, where 0 means
 * never: the knob's 0 (every message) is 1. */
static size_t shm_bulk_nt_min(void)
{
    size_t min = tern_knob_size(TERN_KNOB_SHM_BULK_NT_MIN);
    return min ? min : 1;
}

/* TERN_SHM_BULK_NT as the attribute bulk_nt_fixed: off and on fix the
 * stores (still timed: the exchange's path goes by the stream's rate,
 * core/pt2pt/rndv_path.c), auto leaves them to the timing. */
static int shm_bulk_nt_fixed(void)
{
    if (tern_knob_is(TERN_KNOB_SHM_BULK_NT, "off"))
        return TERN_STORES_PLAIN;
    return tern_knob_is(TERN_KNOB_SHM_BULK_NT, "on") ? TERN_STORES_STREAMED : 0;
}

/* The thresholds differ by peer (shm_choose_paths: the topology of the
 * two ranks); the rest is the node's. */
static void shm_query(tern_tl_t *tl, int peer, tern_tl_attr_t *attr_p)
{
    int i = peer >= 0 && peer < tl->size ? tl->local_of[peer] : -1;
    /* The vector ops are CMA whatever TERN_SHM_CMA says of messages: their
     * user (MPI_Win_create windows) has its own knob and probe. */
    *attr_p = (tern_tl_attr_t){
        .caps = (tl->cma ? (TERN_TL_CAP_GET | TERN_TL_CAP_PUT) : 0) | TERN_TL_CAP_GETV |
                TERN_TL_CAP_PUTV | TERN_TL_CAP_RMA_SYNC,
        .am_max = tl->am_max,
        .rma_min = i >= 0 ? tl->peer_rma_min[i] : tl->rma_min,
        .get_min = i >= 0 ? tl->peer_get_min[i] : 0,
        .bulk_max = tl->bulk_max,
        .am_big_max = tl->bulk_max * tl->bulk_window,
        .bulk_nt_min = shm_bulk_nt_min(),
        .bulk_nt_fixed = shm_bulk_nt_fixed(),
        .get_measure_min = tern_knob_size(TERN_KNOB_SHM_MEASURE_MIN),
        .get_measure_ms = (unsigned)tern_knob_count(TERN_KNOB_SHM_MEASURE_MS),
        .get_mid = tern_knob_is(TERN_KNOB_SHM_MID_PATH, "get"),
        .get_exchange = tern_knob_is(TERN_KNOB_SHM_EXCHANGE_PATH, "get")    ? 1
                        : tern_knob_is(TERN_KNOB_SHM_EXCHANGE_PATH, "auto") ? 2
                                                                             : 0,
        .coop_split = (unsigned)tern_knob_count(TERN_KNOB_SHM_COOP_SPLIT),
        .cma_declined = !tern_knob_bool_or(TERN_KNOB_SHM_CMA, true),
    };
}

const tern_tl_ops_t tern_tl_shm_ops = {
    .name = "shm",
    .reach = TERN_TL_REACH_JOB,
    .polls_memory = 1,
    .init = shm_init,
    .finalize = shm_finalize,
    .reachable = shm_reachable,
    .connect = shm_connect,
    .disconnect = shm_disconnect,
    .query = shm_query,
    .am_send = shm_am_send,
    .progress = shm_progress,
    .mem_reg = tern_shm_mem_reg,
    .mem_dereg = tern_shm_mem_dereg,
    .get = tern_shm_get,
    .put = tern_shm_put,
    .getv = tern_shm_getv,
    .putv = tern_shm_putv,
    .am_reserve = shm_am_reserve,
    .am_commit = shm_am_commit,
    .am_reserved_warm = shm_am_reserved_warm,
    .bulk_reserve = shm_bulk_reserve,
    .bulk_commit = shm_bulk_commit,
    .am_big_reserve = shm_am_big_reserve,
    .am_big_commit = shm_am_big_commit,
    .am_big_grow = shm_am_big_grow,
    .am_big_wait = shm_am_big_wait,
    .am_big_idle = shm_am_big_idle,
    .am_big_at = shm_am_big_at,
    .bulk_reader = shm_bulk_reader,
    .watch_peers = shm_watch_peers,
};
