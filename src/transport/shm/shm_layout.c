/* The shared-memory transport's segment (shm_internal.h has its layout):
 * offsets of the rings and the bulk channel, local rank 0's formatting and
 * geometry, the check and slot of every rank that maps it, and what
 * TERN_SHM_FALLBACK does when /dev/shm cannot hold it. */
#include "transport/shm/shm_internal.h"
#include "base/cma.h"
#include "base/config.h"
#include "base/log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* The start-up probe's line, after the slots. */
void *tern_shm_probe_line(void *base, int local_size)
{
    return (char *)base + SHM_HEADER_BYTES + (size_t)local_size * sizeof(shm_slot_t);
}

/* After the probe line: one news line per local rank, then the table of
 * reserved pairs, a byte per ordered pair (shm_reserve.c). */
static size_t shm_news_offset(int local_size)
{
    return SHM_HEADER_BYTES + (size_t)(local_size + 1) * sizeof(shm_slot_t);
}

_Atomic uint64_t *tern_shm_news_line(void *base, int local_size, int local)
{
    return (_Atomic uint64_t *)((char *)base + shm_news_offset(local_size) + (size_t)local * TERN_SHM_CACHE_LINE);
}

_Atomic unsigned char *tern_shm_pair_ready(void *base, int local_size, int dst, int src)
{
    size_t table = shm_news_offset(local_size) + (size_t)local_size * TERN_SHM_CACHE_LINE;
    return (_Atomic unsigned char *)base + table + (size_t)dst * (size_t)local_size + (size_t)src;
}

size_t tern_shm_rings_offset(int local_size)
{
    size_t end = shm_news_offset(local_size) + (size_t)local_size * TERN_SHM_CACHE_LINE +
                 (size_t)local_size * (size_t)local_size;
    return (end + SHM_PAGE - 1) / SHM_PAGE * SHM_PAGE;
}

static size_t shm_bulk_offset(int local_size, size_t cell_size, unsigned cells)
{
    size_t nrings = (size_t)local_size * (size_t)(local_size - 1);
    return tern_shm_rings_offset(local_size) + nrings * tern_shm_ring_bytes(cell_size, cells);
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

shm_slot_t *tern_shm_slot(void *base, int local)
{
    return (shm_slot_t *)((char *)base + SHM_HEADER_BYTES) + local;
}

static size_t shm_ring_index(const shm_header_t *h, int dst, int src)
{
    int L = (int)h->local_size;
    return (size_t)dst * (size_t)(L - 1) + (size_t)(src < dst ? src : src - 1);
}

void *tern_shm_ring_mem(void *base, const shm_header_t *h, int dst, int src)
{
    return (char *)base + h->rings_offset +
           shm_ring_index(h, dst, src) * tern_shm_ring_bytes(h->cell_size, h->ring_cells);
}

void *tern_shm_bulk_mem(void *base, const shm_header_t *h, int dst, int src)
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
    h->rings_offset = tern_shm_rings_offset(tl->local_size);
    h->cell_size = tl->want.cell_size;
    h->ring_cells = tl->want.cells;
    h->local_size = (uint32_t)tl->local_size;
    h->bulk_offset = shm_bulk_offset(tl->local_size, tl->want.cell_size, tl->want.cells);
    h->bulk_cell_size = tl->want.bulk_cells ? (uint32_t)tl->want.bulk_cell_size : 0;
    h->bulk_cells = tl->want.bulk_cells;
    h->lazy = (uint32_t)tern_knob_is(TERN_KNOB_SHM_RESERVE, "pair");
    atomic_thread_fence(memory_order_release);
    h->magic = SHM_MAGIC;
}

/* Every mapping rank, before the second fence: check the header, publish
 * this rank's slot. */
void tern_shm_attached(void *base, size_t size, void *arg)
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
    shm_slot_t *slot = tern_shm_slot(base, tl->my_local);
    slot->pid = (int64_t)getpid();
    const _Atomic uint64_t *probe = tern_cma_probe_word();
    slot->probe_addr = (uint64_t)(uintptr_t)probe;
    slot->probe_value = atomic_load(probe);
    slot->place = tl->place;
    atomic_store_explicit(&slot->attached, 1, memory_order_release);
}

/* TERN_SHM_RING_CELLS=auto. With more ranks than CPUs a receiver is often
 * descheduled; a sender of small messages (a rooted collective's root,
 * every rank of a gather) stops once its ring is full and waits for it to
 * run. A deeper ring lets it run that much further ahead, as Open MPI's
 * growing eager lists do; far deeper ones (1024 cells, 16 MB a ring) were
 * slower (docs/performance.md), so the memory stays bounded. */
static unsigned shm_auto_cells(int local_size, size_t cell_size, int oversubscribed)
{
    unsigned cells = oversubscribed ? SHM_RING_CELLS_OVER : SHM_RING_CELLS_DEFAULT;
    size_t nrings = (size_t)local_size * (size_t)(local_size - 1);
    while (cells > SHM_RING_CELLS_DEFAULT &&
           nrings * tern_shm_ring_bytes(cell_size, cells) > SHM_RING_OVER_BUDGET)
        cells /= 2;
    return cells;
}

/* Local rank 0: the geometry from the knobs. */
void tern_shm_choose_geometry(tern_tl_t *tl, int oversubscribed)
{
    /* The knob table holds the ranges (knobs.def): a power-of-two cell
     * count, a cell that carries the largest protocol header. Round the cell
     * up to whole cache lines. */
    size_t cs = tern_knob_size_or(TERN_KNOB_SHM_CELL_SIZE, TERN_SHM_CELL_AUTO(tl->local_size));
    tl->want.cell_size = (cs + TERN_SHM_CACHE_LINE - 1) / TERN_SHM_CACHE_LINE * TERN_SHM_CACHE_LINE;
    tl->want.cells = (unsigned)tern_knob_count_or(
        TERN_KNOB_SHM_RING_CELLS, shm_auto_cells(tl->local_size, tl->want.cell_size, oversubscribed));

    /* Bulk channel: chunk data plus a cache line for the cell and protocol
     * headers, so the data of a chunk starts on a cache line. */
    size_t bc = tern_knob_size(TERN_KNOB_SHM_BULK_CHUNK);
    if (bc > 0) {
        tl->want.bulk_cell_size =
            (bc + TERN_SHM_CACHE_LINE + TERN_SHM_CACHE_LINE - 1) / TERN_SHM_CACHE_LINE * TERN_SHM_CACHE_LINE;
        tl->want.bulk_cells = (unsigned)tern_knob_count_or(
            TERN_KNOB_SHM_BULK_CHUNKS, oversubscribed ? SHM_BULK_CHUNKS_OVER : SHM_BULK_CHUNKS_DEFAULT);
        /* Memory grows with the square of the local ranks: fewer chunks per
         * pair beyond SHM_BULK_BUDGET (only pairs that move large messages
         * ever touch their pages). */
        while (tl->want.bulk_cells > 2 &&
               shm_bulk_bytes(tl->local_size, tl->want.bulk_cell_size, tl->want.bulk_cells) > SHM_BULK_BUDGET)
            tl->want.bulk_cells /= 2;
    }
}

/* The smallest cell (TERN_SHM_CELL_SIZE's minimum, knobs.def says why). */
#define SHM_MIN_CELL 128

/* Free and total bytes of SHM_DIR (unknown: SIZE_MAX free, so that every
 * step is tried). */
void tern_shm_dir_space(size_t *avail_p, size_t *total_p)
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

/* Local rank 0: a segment of size bytes. TERN_SHM_RESERVE=init reserves
 * every page now; pair only the part before the rings (pairs reserve their
 * own at first use), once /dev/shm has room for all of it, so that a job
 * that starts is not short of space later unless something else takes it.
 * TERN_ERR_NO_ROOM (*err_p ENOSPC) when it has not. */
static tern_status_t shm_segment_make(tern_tl_t *tl, tern_shm_segment_t *seg, const char *name, size_t size,
                                      int *err_p)
{
    if (!tern_knob_is(TERN_KNOB_SHM_RESERVE, "pair"))
        return tern_shm_segment_create(seg, name, size, err_p);
    size_t avail, total;
    tern_shm_dir_space(&avail, &total);
    if (size > avail) {
        *err_p = ENOSPC;
        return TERN_ERR_NO_ROOM;
    }
    return tern_shm_segment_create_sparse(seg, name, size, tern_shm_rings_offset(tl->local_size), err_p);
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
    tern_shm_dir_space(&avail, &total);
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
            tern_status_t st = shm_segment_make(tl, seg, name, bytes, &err);
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
            tern_shm_dir_space(&avail, &total);
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
               "needs (%s; %s: %s)%s. Make %s larger (docker run --shm-size=...), lower "
               "TERN_SHM_BULK_CHUNKS, TERN_SHM_BULK_CHUNK (0: no bulk channel), TERN_SHM_RING_CELLS or "
               "TERN_SHM_CELL_SIZE, or set TERN_SHM_FALLBACK (now %s) to shrink or ofi",
               SHM_DIR, avail, total, need, tl->local_size, full,
               tern_knob_is(TERN_KNOB_SHM_RESERVE, "pair") ? "free space, TERN_SHM_RESERVE=pair" : "posix_fallocate",
               strerror(err), why, SHM_DIR, fallback);
    return tern_status_detail(TERN_ERR_NOMEM, "%s cannot hold the shared-memory segment (see above)", SHM_DIR);
}

/* Local rank 0 (segment set-up): reserve the segment, or fall back. */
tern_status_t tern_shm_create(tern_shm_segment_t *seg, const char *name, void *arg)
{
    tern_tl_t *tl = arg;
    size_t need = shm_geometry_bytes(tl->local_size, &tl->want);
    int err;
    tern_status_t st = shm_segment_make(tl, seg, name, need, &err);
    if (st == TERN_OK)
        shm_format(seg->base, seg->size, tl);
    else if (st == TERN_ERR_NO_ROOM)
        st = shm_fallback(tl, seg, name, need, err);
    return st;
}
