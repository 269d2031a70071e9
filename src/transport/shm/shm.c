/* Shared-memory transport: active messages through one SPSC ring of cells
 * per ordered pair of ranks on a node (shm_ring.h), in one POSIX segment per
 * node (shm_node_segment.h); get/put with Cross Memory Attach (base/cma.h).
 *
 * Segment layout (local rank 0 writes the header; the others take the
 * geometry from it, so only local rank 0's knobs matter):
 *   [0, 4096)       header, then one 64-byte slot per local rank (pid, CMA
 *                   probe word address and value, attached flag, hwloc
 *                   place), then the line of the start-up probe
 *                   (shm_path.h)
 *   rings_offset    L * (L - 1) rings; receiver d's ring from sender s is
 *                   number d * (L - 1) + (s < d ? s : s - 1), so a receiver's
 *                   incoming rings are contiguous. No ring to oneself: the
 *                   self transport serves that, and reachable() says no.
 *   bulk_offset     L * (L - 1) bulk rings, numbered the same way: the same
 *                   SPSC ring with large cells (64 KB), the bulk channel that
 *                   carries rendezvous data. A large message is copied in
 *                   through it by the sender while the receiver copies out
 *                   the previous chunk, both in cache: about 2.5x the speed
 *                   of CMA's process_vm_readv for messages that fit in the
 *                   last-level cache (docs/performance.md). Larger messages
 *                   still use CMA (TERN_SHM_CMA_MIN).
 * Local rank 0 reserves every page of the segment when it creates it
 * (posix_fallocate), so a /dev/shm too small fails MPI_Init (or shrinks the
 * rings, TERN_SHM_FALLBACK) instead of a SIGBUS at some later first touch.
 * Mapping the pages is still lazy: every rank prefaults its own incoming
 * and outgoing rings (up to 8 MB), never other pairs' rings nor the bulk
 * channel (a pair's chunks are touched only when it moves large messages):
 * before, every rank populated the whole segment, 264 MB each at 32 ranks.
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
#include "base/cma.h"
#include "base/config.h"
#include "base/log.h"
#include "base/proc.h"
#include "pmi/pmi_profile.h"
#include "transport/shm/shm_path.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_node_segment.h"
#include "transport/transport.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define SHM_MAGIC 0x7465726e73686d31ull /* "ternshm1" */
#define SHM_HEADER_BYTES 64
#define SHM_PAGE 4096
#define SHM_PREFAULT_MAX ((size_t)8 << 20)
#define SHM_BULK_BUDGET ((size_t)128 << 20)

typedef struct {
    uint64_t magic;
    uint64_t size;
    uint64_t rings_offset;
    uint64_t cell_size;
    uint32_t ring_cells;
    uint32_t local_size;
    uint64_t bulk_offset;
    uint32_t bulk_cell_size; /* 0: no bulk channel */
    uint32_t bulk_cells;
} shm_header_t;

/* What local rank 0 asks of the segment: cells per ring and their size,
 * bulk chunks per pair and their size (bulk_cells 0: no bulk channel). */
typedef struct {
    size_t cell_size;
    unsigned cells;
    size_t bulk_cell_size;
    unsigned bulk_cells;
} shm_geometry_t;

typedef struct {
    int64_t pid;
    uint64_t probe_addr;
    uint64_t probe_value;
    _Atomic uint32_t attached;
    tern_shm_place_t place;
    char pad[36 - sizeof(tern_shm_place_t)];
} shm_slot_t;

_Static_assert(sizeof(shm_header_t) <= SHM_HEADER_BYTES, "header fits its line");
_Static_assert(sizeof(shm_slot_t) == 64, "one slot per cache line");

typedef struct {
    tern_shm_ring_t ring;
    int src;  /* world rank of the sender */
    int gone; /* the core gave up on src: rings parked */
    tern_shm_ring_t bulk;
} shm_in_t;

struct tern_tl {
    /* Hot fields first. */
    shm_in_t *in;             /* local_size - 1 incoming rings */
    int nin;
    int my_local;
    const int *local_of;      /* world rank -> local index or -1 */
    tern_shm_ring_t *out;     /* by local index; out[my_local] unused */
    tern_shm_ring_t *bulk_out; /* by local index, like out */
    size_t bulk_max;          /* payload bytes per bulk cell; 0: no channel */
    tern_am_handler_fn am_handler;
    void *am_ctx;
    size_t am_max;
    unsigned batch;           /* messages taken from one ring per progress */
    int cma;                  /* 1 while get/put are usable */
    size_t rma_min;
    size_t *peer_rma_min;     /* by local index: rma_min, or less where single copy wins */
    size_t *peer_get_min;     /* by local index: where the receiver measures (0: no) */
    tern_shm_place_t place;   /* this rank's (shm_path.h) */

    int rank, size, local_size;
    tern_peer_failed_fn peer_failed;
    int *local_of_storage;
    tern_shm_segment_t seg;
    uint64_t probe_word;
    shm_geometry_t want;      /* local rank 0: the geometry it formats */
    tern_status_t attach_status;
};

/* The start-up probe's line, after the slots. */
static void *shm_probe_line(void *base, int local_size)
{
    return (char *)base + SHM_HEADER_BYTES + (size_t)local_size * sizeof(shm_slot_t);
}

static size_t shm_rings_offset(int local_size)
{
    size_t slots_end = SHM_HEADER_BYTES + (size_t)(local_size + 1) * sizeof(shm_slot_t);
    return (slots_end + SHM_PAGE - 1) / SHM_PAGE * SHM_PAGE;
}

static size_t shm_bulk_offset(int local_size, size_t cell_size, unsigned cells)
{
    size_t nrings = (size_t)local_size * (size_t)(local_size - 1);
    return shm_rings_offset(local_size) + nrings * tern_shm_ring_bytes(cell_size, cells);
}

static size_t shm_bulk_bytes(int local_size, size_t bulk_cell_size, unsigned bulk_cells)
{
    size_t nrings = (size_t)local_size * (size_t)(local_size - 1);
    return bulk_cells ? nrings * tern_shm_ring_bytes(bulk_cell_size, bulk_cells) : 0;
}

static size_t shm_segment_bytes(int local_size, size_t cell_size, unsigned cells, size_t bulk_cell_size,
                                unsigned bulk_cells)
{
    return shm_bulk_offset(local_size, cell_size, cells) + shm_bulk_bytes(local_size, bulk_cell_size, bulk_cells);
}

static size_t shm_geometry_bytes(int local_size, const shm_geometry_t *g)
{
    return shm_segment_bytes(local_size, g->cell_size, g->cells, g->bulk_cell_size, g->bulk_cells);
}

static shm_slot_t *shm_slot(void *base, int local)
{
    return (shm_slot_t *)((char *)base + SHM_HEADER_BYTES) + local;
}

static size_t shm_ring_index(const shm_header_t *h, int dst, int src)
{
    int L = (int)h->local_size;
    return (size_t)dst * (size_t)(L - 1) + (size_t)(src < dst ? src : src - 1);
}

static void *shm_ring_mem(void *base, const shm_header_t *h, int dst, int src)
{
    return (char *)base + h->rings_offset +
           shm_ring_index(h, dst, src) * tern_shm_ring_bytes(h->cell_size, h->ring_cells);
}

static void *shm_bulk_mem(void *base, const shm_header_t *h, int dst, int src)
{
    return (char *)base + h->bulk_offset +
           shm_ring_index(h, dst, src) * tern_shm_ring_bytes(h->bulk_cell_size, h->bulk_cells);
}

/* Local rank 0, before the first fence: the memory is zero-filled, so every
 * cell is already free; only the header needs writing. */
static void shm_format(void *base, size_t size, void *arg)
{
    tern_tl_t *tl = arg;
    shm_header_t *h = base;
    h->size = size;
    h->rings_offset = shm_rings_offset(tl->local_size);
    h->cell_size = tl->want.cell_size;
    h->ring_cells = tl->want.cells;
    h->local_size = (uint32_t)tl->local_size;
    h->bulk_offset = shm_bulk_offset(tl->local_size, tl->want.cell_size, tl->want.cells);
    h->bulk_cell_size = tl->want.bulk_cells ? (uint32_t)tl->want.bulk_cell_size : 0;
    h->bulk_cells = tl->want.bulk_cells;
    atomic_thread_fence(memory_order_release);
    h->magic = SHM_MAGIC;
}

/* Maps the pages of one ring now, so that the first messages take no page
 * faults (without changing its contents: safe while the peer uses it). */
static void shm_prefault(void *base, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    if (madvise(base, bytes, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    /* Older kernels: a read fault maps each tmpfs page too. */
    for (size_t off = 0; off < bytes; off += SHM_PAGE)
        (void)*(volatile const char *)((const char *)base + off);
}

/* Every mapping rank, before the second fence: check the header, publish
 * this rank's slot. */
static void shm_attached(void *base, size_t size, void *arg)
{
    tern_tl_t *tl = arg;
    const shm_header_t *h = base;
    if (h->magic != SHM_MAGIC || h->local_size != (uint32_t)tl->local_size || h->size != size ||
        tern_shm_ring_check(h->cell_size, h->ring_cells) != TERN_OK ||
        (h->bulk_cells && tern_shm_ring_check(h->bulk_cell_size, h->bulk_cells) != TERN_OK) ||
        shm_segment_bytes(tl->local_size, h->cell_size, h->ring_cells, h->bulk_cell_size, h->bulk_cells) > size) {
        tern_error("shared-memory segment %s has an unexpected header", tl->seg.name);
        tl->attach_status = TERN_ERR_INTERNAL;
        return;
    }
    shm_slot_t *slot = shm_slot(base, tl->my_local);
    slot->pid = (int64_t)getpid();
    slot->probe_addr = (uint64_t)(uintptr_t)&tl->probe_word;
    slot->probe_value = tl->probe_word;
    slot->place = tl->place;
    atomic_store_explicit(&slot->attached, 1, memory_order_release);
}

/* Local rank 0: the geometry from the knobs. */
static void shm_choose_geometry(tern_tl_t *tl)
{
    /* The knob table holds the ranges (knobs.def): a power-of-two cell
     * count, a cell that carries the largest protocol header. Round the cell
     * up to whole cache lines. */
    size_t cs = tern_knob_size(TERN_KNOB_SHM_CELL_SIZE);
    tl->want.cell_size = (cs + TERN_SHM_CACHE_LINE - 1) / TERN_SHM_CACHE_LINE * TERN_SHM_CACHE_LINE;
    tl->want.cells = (unsigned)tern_knob_count(TERN_KNOB_SHM_RING_CELLS);

    /* Bulk channel: chunk data plus a cache line for the cell and protocol
     * headers, so the data of a chunk starts on a cache line. */
    size_t bc = tern_knob_size(TERN_KNOB_SHM_BULK_CHUNK);
    if (bc > 0) {
        tl->want.bulk_cell_size =
            (bc + TERN_SHM_CACHE_LINE + TERN_SHM_CACHE_LINE - 1) / TERN_SHM_CACHE_LINE * TERN_SHM_CACHE_LINE;
        tl->want.bulk_cells = (unsigned)tern_knob_count(TERN_KNOB_SHM_BULK_CHUNKS);
        /* Memory grows with the square of the local ranks: fewer chunks per
         * pair beyond SHM_BULK_BUDGET (only pairs that move large messages
         * ever touch their pages). */
        while (tl->want.bulk_cells > 2 &&
               shm_bulk_bytes(tl->local_size, tl->want.bulk_cell_size, tl->want.bulk_cells) > SHM_BULK_BUDGET)
            tl->want.bulk_cells /= 2;
    }
}

/* The directory behind shm_open (glibc maps names there). */
#define SHM_DIR "/dev/shm"
/* The smallest cell (TERN_SHM_CELL_SIZE's minimum, knobs.def says why). */
#define SHM_MIN_CELL 128

/* Free and total bytes of SHM_DIR (unknown: SIZE_MAX free, so that every
 * step is tried). */
static void shm_dir_space(size_t *avail_p, size_t *total_p)
{
    struct statvfs sv;
    *avail_p = SIZE_MAX;
    *total_p = 0;
    if (statvfs(SHM_DIR, &sv) == 0) {
        *avail_p = (size_t)sv.f_bavail * sv.f_frsize;
        *total_p = (size_t)sv.f_blocks * sv.f_frsize;
    }
}

/* One step down (TERN_SHM_FALLBACK=shrink): halve the bulk chunks down to
 * 2, then drop the bulk channel, then halve the ring cells down to 2, then
 * halve the cell size down to SHM_MIN_CELL. 0 at the minimum. */
static int shm_shrink_step(shm_geometry_t *g)
{
    if (g->bulk_cells > 2) {
        g->bulk_cells /= 2;
    } else if (g->bulk_cells > 0) {
        g->bulk_cells = 0;
    } else if (g->cells > 2) {
        g->cells /= 2;
    } else if (g->cell_size > SHM_MIN_CELL) {
        size_t half = (g->cell_size / 2 + TERN_SHM_CACHE_LINE - 1) / TERN_SHM_CACHE_LINE * TERN_SHM_CACHE_LINE;
        g->cell_size = half > SHM_MIN_CELL ? half : SHM_MIN_CELL;
    } else {
        return 0;
    }
    return 1;
}

static void shm_geometry_text(const shm_geometry_t *g, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%u cells of %zu bytes per ring, ", g->cells, g->cell_size);
    if (n < 0 || (size_t)n >= len)
        return;
    if (g->bulk_cells)
        snprintf(buf + n, len - (size_t)n, "bulk channel %u chunks of %zu bytes", g->bulk_cells,
                 g->bulk_cell_size);
    else
        snprintf(buf + n, len - (size_t)n, "no bulk channel");
}

static int shm_ofi_allowed(void)
{
#ifdef TERN_HAVE_OFI
    return tern_knob_lists(TERN_KNOB_TRANSPORTS, "ofi");
#else
    return 0;
#endif
}

/* Local rank 0, when SHM_DIR cannot hold the segment of the knobs' geometry
 * (need bytes; err from posix_fallocate): what TERN_SHM_FALLBACK says.
 * Speaks once for the node; the other ranks learn the outcome through PMI. */
static tern_status_t shm_fallback(tern_tl_t *tl, tern_shm_segment_t *seg, const char *name, size_t need, int err)
{
    size_t avail, total;
    shm_dir_space(&avail, &total);
    char full[128];
    shm_geometry_text(&tl->want, full, sizeof full);
    const char *fallback = tern_knob_str(TERN_KNOB_SHM_FALLBACK);
    char why[160] = "";

    if (tern_knob_is(TERN_KNOB_SHM_FALLBACK, "shrink")) {
        shm_geometry_t g = tl->want;
        size_t bytes = need;
        while (shm_shrink_step(&g)) {
            bytes = shm_geometry_bytes(tl->local_size, &g);
            if (bytes > avail)
                continue; /* cannot fit: no need to try */
            tern_status_t st = tern_shm_segment_create(seg, name, bytes, &err);
            if (st == TERN_OK) {
                char small[128];
                shm_geometry_text(&g, small, sizeof small);
                tern_warn_always("shared memory: %s has %zu bytes free (of %zu), less than the %zu bytes the "
                                 "segment of %d ranks needs (%s): shrunk to %s, %zu bytes "
                                 "(TERN_SHM_FALLBACK=shrink; fail would stop, ofi would use the network)",
                                 SHM_DIR, avail, total, need, tl->local_size, full, small, bytes);
                tl->want = g;
                shm_format(seg->base, seg->size, tl);
                return TERN_OK;
            }
            if (st != TERN_ERR_NO_ROOM)
                return st;
            shm_dir_space(&avail, &total);
        }
        snprintf(why, sizeof why, "; even the smallest rings (2 cells of %d bytes, no bulk channel) need %zu",
                 SHM_MIN_CELL, bytes);
    } else if (tern_knob_is(TERN_KNOB_SHM_FALLBACK, "ofi")) {
        if (shm_ofi_allowed()) {
            tern_warn_always("shared memory: %s has %zu bytes free (of %zu), less than the %zu bytes the "
                             "segment of %d ranks needs (%s): the ranks of this node talk through the "
                             "network transport (ofi) instead (TERN_SHM_FALLBACK=ofi)",
                             SHM_DIR, avail, total, need, tl->local_size, full);
            return TERN_OK; /* seg->base NULL: no segment */
        }
        snprintf(why, sizeof why, "; TERN_SHM_FALLBACK=ofi, but the ofi transport is %s",
                 tern_knob_lists(TERN_KNOB_TRANSPORTS, "ofi") ? "not built in" : "not in TERN_TRANSPORTS");
    }
    tern_error("shared memory: %s has %zu bytes free (of %zu), less than the %zu bytes the segment of %d ranks "
               "needs (%s; posix_fallocate: %s)%s. Make %s larger (docker run --shm-size=...), lower "
               "TERN_SHM_BULK_CHUNKS, TERN_SHM_BULK_CHUNK (0: no bulk channel), TERN_SHM_RING_CELLS or "
               "TERN_SHM_CELL_SIZE, or set TERN_SHM_FALLBACK (now %s) to shrink or ofi",
               SHM_DIR, avail, total, need, tl->local_size, full, strerror(err), why, SHM_DIR, fallback);
    return tern_status_detail(TERN_ERR_NOMEM, "%s cannot hold the shared-memory segment (see above)", SHM_DIR);
}

/* Local rank 0 (segment set-up): reserve the segment, or fall back. */
static tern_status_t shm_create(tern_shm_segment_t *seg, const char *name, void *arg)
{
    tern_tl_t *tl = arg;
    size_t need = shm_geometry_bytes(tl->local_size, &tl->want);
    int err;
    tern_status_t st = tern_shm_segment_create(seg, name, need, &err);
    if (st == TERN_OK)
        shm_format(seg->base, seg->size, tl);
    else if (st == TERN_ERR_NO_ROOM)
        st = shm_fallback(tl, seg, name, need, err);
    return st;
}

static void shm_free(tern_tl_t *tl)
{
    tern_shm_segment_detach(&tl->seg);
    free(tl->in);
    free(tl->out);
    free(tl->bulk_out);
    free(tl->local_of_storage);
    free(tl->peer_rma_min);
    free(tl->peer_get_min);
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
            far = tern_shm_probe_far(shm_probe_line(tl->seg.base, params->local_size), tl->my_local,
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
        const shm_slot_t *ps = shm_slot(tl->seg.base, i);
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
        tl->probe_word = 0x5ca1ab1e00000000ull ^ (uint64_t)getpid();
        tl->local_of_storage = malloc((size_t)params->size * sizeof(int));
        tl->out = calloc((size_t)params->local_size, sizeof *tl->out);
        tl->bulk_out = calloc((size_t)params->local_size, sizeof *tl->bulk_out);
        tl->in = calloc((size_t)params->local_size, sizeof *tl->in);
        tl->peer_rma_min = calloc((size_t)params->local_size, sizeof *tl->peer_rma_min);
        tl->peer_get_min = calloc((size_t)params->local_size, sizeof *tl->peer_get_min);
        if (tl->local_of_storage == NULL || tl->out == NULL || tl->bulk_out == NULL || tl->in == NULL ||
            tl->peer_rma_min == NULL || tl->peer_get_min == NULL)
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
            shm_choose_geometry(tl);
    }
    if (st != TERN_OK)
        tern_error("shm transport: %s before set-up", tern_status_string(st));

    /* Collective from here on, even after an error: every rank fences twice. */
    bool cma_allowed = tern_knob_bool_or(TERN_KNOB_SHM_CMA, true);
    if (cma_allowed && params->local_size > 1)
        tern_cma_allow_peers(); /* before the peers' probe below */
    tern_shm_segment_t seg;
    tern_status_t sst = tern_shm_segment_setup(params, st == TERN_OK ? shm_create : NULL,
                                               st == TERN_OK ? shm_attached : NULL, tl, &seg);
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
            if (!atomic_load_explicit(&shm_slot(tl->seg.base, i)->attached, memory_order_acquire)) {
                tern_error("shm transport: local rank %d (world rank %d) could not attach %s", i,
                           params->local_ranks[i], tl->seg.name);
                st = TERN_ERR_PEER;
                goto err;
            }
        }
        /* Up to 8 MB per rank (16 ranks with the default rings): measured at
         * 32 ranks, prefaulting 16 MB in each rank made MPI_Init 180 ms
         * instead of 49 ms (first messages pay the faults instead). */
        int prefault = 2 * (size_t)(params->local_size - 1) * tern_shm_ring_bytes(h->cell_size, h->ring_cells) <=
                       SHM_PREFAULT_MAX;
        for (int i = 0; i < params->local_size; i++) {
            if (i == tl->my_local)
                continue;
            tern_shm_ring_attach(&tl->out[i], shm_ring_mem(tl->seg.base, h, i, tl->my_local), h->cell_size,
                                 h->ring_cells);
            shm_in_t *in = &tl->in[tl->nin++];
            tern_shm_ring_attach(&in->ring, shm_ring_mem(tl->seg.base, h, tl->my_local, i), h->cell_size,
                                 h->ring_cells);
            in->src = params->local_ranks[i];
            /* Only this rank's own rings, and not the bulk channel: a pair's
             * chunks are touched only if it moves large messages. */
            if (prefault) {
                size_t rb = tern_shm_ring_bytes(h->cell_size, h->ring_cells);
                shm_prefault(shm_ring_mem(tl->seg.base, h, i, tl->my_local), rb);
                shm_prefault(shm_ring_mem(tl->seg.base, h, tl->my_local, i), rb);
            }
            if (h->bulk_cells) {
                tern_shm_ring_attach(&tl->bulk_out[i], shm_bulk_mem(tl->seg.base, h, i, tl->my_local),
                                     h->bulk_cell_size, h->bulk_cells);
                /* At most a quarter of the chunks in flight: the chunk the
                 * sender fills next was read by the receiver three quarters
                 * of a ring (1.5 MB) ago, long enough to have left the
                 * receiver's L2, so writing it does not pull lines back from
                 * the other core (a full window ran at a third of the
                 * speed, docs/performance.md). */
                tl->bulk_out[i].window = h->bulk_cells >= 4 ? h->bulk_cells / 4 : 1;
                tl->bulk_out[i].limit = tl->bulk_out[i].window;
                tern_shm_ring_attach(&in->bulk, shm_bulk_mem(tl->seg.base, h, tl->my_local, i), h->bulk_cell_size,
                                     h->bulk_cells);
            }
        }
        tl->bulk_max = h->bulk_cells ? h->bulk_cell_size - TERN_SHM_CELL_HDR : 0;
        tl->am_max = h->cell_size - TERN_SHM_CELL_HDR;
        tl->batch = h->ring_cells;

        if (cma_allowed) {
            int peer = (tl->my_local + 1) % params->local_size;
            const shm_slot_t *ps = shm_slot(tl->seg.base, peer);
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
    }
    /* The bulk channel is a pipeline of two running processes; when ranks
     * outnumber cores one of them is often descheduled and the pipeline
     * stalls, while CMA copies the whole message in one system call. */
    tl->rma_min = tern_knob_size_or(TERN_KNOB_SHM_CMA_MIN,
                                    tl->bulk_max && !params->oversubscribed ? 32L << 20 : 32L << 10);
    shm_choose_paths(tl, params);
    tern_debug("shm transport: %d local ranks, segment %s of %zu bytes, %u cells per ring, am_max %zu, "
               "bulk_max %zu, CMA %s",
               tl->local_size, tl->seg.name, tl->seg.size, tl->batch, tl->am_max, tl->bulk_max,
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
            if (tl->bulk_max)
                tern_shm_ring_park(&tl->in[i].bulk);
        }
}

static tern_status_t shm_am_send(tern_tl_t *tl, int peer, const void *hdr, size_t hdr_len, const void *payload,
                                 size_t payload_len)
{
    if ((unsigned)peer >= (unsigned)tl->size || hdr_len + payload_len > tl->am_max)
        return TERN_ERR_ARG;
    int li = tl->local_of[peer];
    if (li < 0 || li == tl->my_local)
        return TERN_ERR_ARG;
    return tern_shm_ring_push(&tl->out[li], hdr, hdr_len, payload, payload_len);
}

/* Delivers up to max messages of one incoming ring to the handler. */
static inline int shm_drain(tern_tl_t *tl, tern_shm_ring_t *ring, int src, unsigned max)
{
    int events = 0;
    for (; max > 0; max--) {
        size_t len;
        tern_shm_cell_t *cell = tern_shm_ring_pop(ring, &len);
        if (cell == NULL)
            break;
        tl->am_handler(tl->am_ctx, src, tern_shm_cell_payload(cell), len);
        tern_shm_ring_free(ring, cell);
        events++;
    }
    return events;
}

static int shm_progress(tern_tl_t *tl)
{
    int events = 0;
    shm_in_t *in = tl->in;
    for (int i = 0, n = tl->nin; i < n; i++) {
        events += shm_drain(tl, &in[i].ring, in[i].src, tl->batch);
        /* Bulk chunks: one per peer per call, so a long stream never starves
         * the small-message rings. */
        if (tl->bulk_max)
            events += shm_drain(tl, &in[i].bulk, in[i].src, 1);
    }
    return events;
}

/* Delivers everything a dead peer wrote before it died (it may have sent
 * its last messages and exited normally after MPI_Finalize just after our
 * last poll). */
static void shm_drain_dead(tern_tl_t *tl, int peer)
{
    for (int i = 0; i < tl->nin; i++)
        if (tl->in[i].src == peer) {
            while (shm_drain(tl, &tl->in[i].ring, peer, tl->batch) +
                       (tl->bulk_max ? shm_drain(tl, &tl->in[i].bulk, peer, 1) : 0) >
                   0)
                ;
        }
}

static void shm_watch_peers(tern_tl_t *tl, const int *peers, int n_peers)
{
    for (int i = 0; i < n_peers; i++) {
        pid_t pid = (pid_t)shm_slot(tl->seg.base, tl->local_of[peers[i]])->pid;
        if (tern_pid_gone(pid)) {
            shm_drain_dead(tl, peers[i]);
            char why[96];
            snprintf(why, sizeof why, "shm: its process %d (on this node) is gone", (int)pid);
            tl->peer_failed(peers[i], TERN_ERR_PEER, why); /* parks its rings */
        }
    }
}

static void *shm_am_reserve(tern_tl_t *tl, int peer)
{
    return tern_shm_ring_reserve(&tl->out[tl->local_of[peer]]);
}

static void shm_am_commit(tern_tl_t *tl, int peer, size_t len)
{
    tern_shm_ring_commit(&tl->out[tl->local_of[peer]], len);
}

static void *shm_bulk_reserve(tern_tl_t *tl, int peer)
{
    return tern_shm_ring_reserve(&tl->bulk_out[tl->local_of[peer]]);
}

static void shm_bulk_commit(tern_tl_t *tl, int peer, size_t len)
{
    tern_shm_ring_commit(&tl->bulk_out[tl->local_of[peer]], len);
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
    };
}

static tern_status_t shm_mem_reg(tern_tl_t *tl, void *buf, size_t len, tern_rkey_t *rkey_p)
{
    (void)tl;
    rkey_p->words[0] = (uint64_t)getpid();
    rkey_p->words[1] = (uint64_t)(uintptr_t)buf;
    rkey_p->words[2] = (uint64_t)len;
    return TERN_OK;
}

static void shm_mem_dereg(tern_tl_t *tl, void *buf, size_t len)
{
    (void)tl;
    (void)buf;
    (void)len;
}

static tern_status_t shm_rma_done(tern_tl_t *tl, tern_status_t st, tern_tl_comp_t *comp)
{
    if (st == TERN_OK) {
        if (comp != NULL && comp->cb != NULL)
            comp->cb(comp, TERN_OK);
    } else if (st == TERN_ERR_NOT_SUPPORTED && tl->cma) {
        tern_info("CMA denied by the kernel; falling back to copying through the queue");
        tl->cma = 0;
    }
    return st;
}

/* Completion is reported through comp before returning TERN_OK; on any
 * error the callback is not called. */
static tern_status_t shm_get(tern_tl_t *tl, int peer, void *local, size_t len, uint64_t remote_addr,
                             const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    (void)peer;
    if (!tl->cma)
        return TERN_ERR_NOT_SUPPORTED;
    return shm_rma_done(tl, tern_cma_read((pid_t)rkey->words[0], local, remote_addr, len), comp);
}

static tern_status_t shm_put(tern_tl_t *tl, int peer, const void *local, size_t len, uint64_t remote_addr,
                             const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    (void)peer;
    if (!tl->cma)
        return TERN_ERR_NOT_SUPPORTED;
    return shm_rma_done(tl, tern_cma_write((pid_t)rkey->words[0], local, remote_addr, len), comp);
}

/* CMA into the process named by the key; complete at once. Unlike get and
 * put, a refusal leaves the messages' use of CMA alone. */
static tern_status_t shm_rma_vector(int write, void *local, size_t len, const struct iovec *remote,
                                    size_t n_remote, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    tern_status_t st = tern_cma_copyv((pid_t)rkey->words[0], write, local, remote, n_remote, len);
    if (st == TERN_OK && comp != NULL)
        comp->cb(comp, TERN_OK);
    return st;
}

static tern_status_t shm_getv(tern_tl_t *tl, int peer, void *local, size_t len,
                              const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                              tern_tl_comp_t *comp)
{
    (void)tl, (void)peer;
    return shm_rma_vector(0, local, len, remote, n_remote, rkey, comp);
}

static tern_status_t shm_putv(tern_tl_t *tl, int peer, const void *local, size_t len,
                              const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                              tern_tl_comp_t *comp)
{
    (void)tl, (void)peer;
    return shm_rma_vector(1, (void *)(uintptr_t)local, len, remote, n_remote, rkey, comp);
}

const tern_tl_ops_t tern_tl_shm_ops = {
    .name = "shm",
    .reach = TERN_TL_REACH_JOB,
    .init = shm_init,
    .finalize = shm_finalize,
    .reachable = shm_reachable,
    .connect = shm_connect,
    .disconnect = shm_disconnect,
    .query = shm_query,
    .am_send = shm_am_send,
    .progress = shm_progress,
    .mem_reg = shm_mem_reg,
    .mem_dereg = shm_mem_dereg,
    .get = shm_get,
    .put = shm_put,
    .getv = shm_getv,
    .putv = shm_putv,
    .am_reserve = shm_am_reserve,
    .am_commit = shm_am_commit,
    .bulk_reserve = shm_bulk_reserve,
    .bulk_commit = shm_bulk_commit,
    .watch_peers = shm_watch_peers,
};
