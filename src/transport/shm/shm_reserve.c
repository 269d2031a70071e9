/* A pair's pages reserved at its first message (TERN_SHM_RESERVE=pair;
 * shm_internal.h has the layout).
 *
 * Who: the sender, at its first message to a peer, reserves its ring to
 * that peer and the pair's bulk channel (posix_fallocate of their ranges of
 * the segment's file, which every rank keeps open), so that neither side
 * ever touches a page tmpfs has not allocated (a SIGBUS when /dev/shm is
 * full). Until then the sender's view of the ring is closed: window 0, so
 * tern_shm_ring_reserve returns NULL at no cost on the fast path, and shm.c
 * calls tern_shm_pair_open when it does.
 * How the receiver learns: the sender sets the pair's byte in the table
 * (release), then bumps the receiver's news line. The receiver's incoming
 * views point at a private empty cell until then; progress compares the
 * news line with what it saw last (one load of a line that changes once
 * per pair) and admits the pairs whose byte is set.
 * ENOSPC (/dev/shm filled since MPI_Init, which checked that all of it fit):
 * one error that names the peer and the free space, and the send fails
 * with TERN_ERR_NOMEM; the pair stays failed. */
#include "transport/shm/shm_internal.h"
#include "base/log.h"

#include <errno.h>
#include <string.h>

/* What an idle ring points at: the flag of message 1 never appears, and
 * a closed producer's `consumed` stays 0. Never written. */
static tern_shm_cell_t shm_idle_cell;
static _Atomic uint64_t shm_idle_count;

static void shm_ring_idle(tern_shm_ring_t *r)
{
    memset(r, 0, sizeof *r);
    r->cells = (char *)&shm_idle_cell;
    r->cell_size = sizeof shm_idle_cell;
    r->consumed = &shm_idle_count;
}

/* After the segment is attached: every pair reserved already (init), or
 * every view closed until its pair's first message (pair). */
void tern_shm_pairs_setup(tern_tl_t *tl)
{
    const shm_header_t *h = tl->seg.base;
    tl->news = &shm_idle_count;
    tl->news_seen = 0;
    if (h == NULL) /* alone on the node, or no segment: nothing to open */
        return;
    if (!h->lazy) {
        for (int i = 0; i < tl->local_size; i++)
            tl->out_state[i] = SHM_PAIR_OPEN;
        for (int i = 0; i < tl->nin; i++)
            tl->in[i].live = 1;
        return;
    }
    tl->news = tern_shm_news_line(tl->seg.base, tl->local_size, tl->my_local);
    for (int i = 0; i < tl->local_size; i++) {
        tl->out_state[i] = SHM_PAIR_CLOSED;
        shm_ring_idle(&tl->out[i]);
        shm_ring_idle(&tl->bulk_out[i]);
    }
    for (int i = 0; i < tl->nin; i++) {
        tl->in[i].live = 0;
        shm_ring_idle(&tl->in[i].ring);
        shm_ring_idle(&tl->in[i].bulk);
    }
}

/* Only this rank's own rings are prefaulted, not the bulk channel: a
 * pair's chunks are touched only if it moves large messages. */
void tern_shm_out_attach(tern_tl_t *tl, int li)
{
    const shm_header_t *h = tl->seg.base;
    char *ring = tern_shm_ring_mem(tl->seg.base, h, li, tl->my_local);
    if (tl->prefault)
        tern_shm_segment_prefault(ring, tern_shm_ring_bytes(h->cell_size, h->ring_cells));
    tern_shm_ring_attach(&tl->out[li], ring, h->cell_size, h->ring_cells);
    if (h->bulk_cells) {
        tern_shm_ring_attach(&tl->bulk_out[li], tern_shm_bulk_mem(tl->seg.base, h, li, tl->my_local),
                             h->bulk_cell_size, h->bulk_cells);
        tl->bulk_out[li].window = tl->bulk_window;
        tl->bulk_out[li].limit = tl->bulk_window;
    }
}

void tern_shm_in_attach(tern_tl_t *tl, shm_in_t *in, int li)
{
    const shm_header_t *h = tl->seg.base;
    char *ring = tern_shm_ring_mem(tl->seg.base, h, tl->my_local, li);
    if (tl->prefault)
        tern_shm_segment_prefault(ring, tern_shm_ring_bytes(h->cell_size, h->ring_cells));
    tern_shm_ring_attach(&in->ring, ring, h->cell_size, h->ring_cells);
    if (h->bulk_cells)
        tern_shm_ring_attach(&in->bulk, tern_shm_bulk_mem(tl->seg.base, h, tl->my_local, li),
                             h->bulk_cell_size, h->bulk_cells);
}

/* A pair's bulk ring is mapped page by page as its cells are first
 * written and read, so the first lap of large messages pays a fault per
 * page on both sides (a 128 KB stream ~4x its steady time in the VM's slow
 * mode). TERN_SHM_LARGE_PATH=measure timed the stream on that lap and
 * chose the slower get (docs/performance.md): map the whole ring at once
 * instead. The ring is in use by the peer: a populate keeps the contents. */
void tern_shm_bulk_warm(const tern_shm_ring_t *ring)
{
    uintptr_t start = (uintptr_t)ring->cells & ~(uintptr_t)(SHM_PAGE - 1);
    uintptr_t end = (uintptr_t)ring->cells + ring->cell_size * (size_t)(ring->mask + 1);
    tern_shm_segment_prefault((void *)start, (size_t)(end - start));
}

static tern_status_t shm_pair_failed(tern_tl_t *tl, int li, size_t bytes, int err)
{
    int world = tl->in[li < tl->my_local ? li : li - 1].src; /* in[] skips this rank */
    size_t avail, total;
    tern_shm_dir_space(&avail, &total);
    tern_error("shared memory: cannot reserve the %zu bytes of the queue to rank %d (local rank %d) in %s: "
               "%s (%zu bytes free of %zu; MPI_Init found room for every pair, something has taken it "
               "since). Make %s larger, or set TERN_SHM_RESERVE=init to reserve every pair at MPI_Init",
               bytes, world, li, SHM_DIR, strerror(err), avail, total, SHM_DIR);
    tl->out_state[li] = SHM_PAIR_FAILED;
    return tern_status_detail(TERN_ERR_NOMEM, "%s is full: no queue to rank %d (see above)", SHM_DIR, world);
}

/* The sender's first message to local rank li: reserve, open the views,
 * tell li. TERN_OK once open. */
tern_status_t tern_shm_pair_open(tern_tl_t *tl, int li)
{
    if (tl->out_state[li] == SHM_PAIR_OPEN)
        return TERN_OK;
    if (tl->out_state[li] == SHM_PAIR_FAILED)
        return TERN_ERR_NOMEM;
    const shm_header_t *h = tl->seg.base;
    char *ring = tern_shm_ring_mem(tl->seg.base, h, li, tl->my_local);
    size_t rb = tern_shm_ring_bytes(h->cell_size, h->ring_cells);
    int err = tern_shm_segment_reserve(&tl->seg, (size_t)(ring - (char *)tl->seg.base), rb);
    if (err != 0)
        return shm_pair_failed(tl, li, rb, err);
    if (h->bulk_cells) {
        char *bulk = tern_shm_bulk_mem(tl->seg.base, h, li, tl->my_local);
        size_t bb = tern_shm_ring_bytes(h->bulk_cell_size, h->bulk_cells);
        err = tern_shm_segment_reserve(&tl->seg, (size_t)(bulk - (char *)tl->seg.base), bb);
        if (err != 0)
            return shm_pair_failed(tl, li, rb + bb, err);
    }
    tern_shm_out_attach(tl, li);
    tl->out_state[li] = SHM_PAIR_OPEN;
    atomic_store_explicit(tern_shm_pair_ready(tl->seg.base, tl->local_size, li, tl->my_local), 1,
                          memory_order_release);
    atomic_fetch_add_explicit(tern_shm_news_line(tl->seg.base, tl->local_size, li), 1, memory_order_release);
    return TERN_OK;
}

/* The receiver: admit the pairs reserved since the last look. */
void tern_shm_admit(tern_tl_t *tl)
{
    tl->news_seen = atomic_load_explicit(tl->news, memory_order_acquire);
    for (int i = 0; i < tl->nin; i++) {
        shm_in_t *in = &tl->in[i];
        int src = tl->local_of[in->src];
        if (in->live || in->gone ||
            !atomic_load_explicit(tern_shm_pair_ready(tl->seg.base, tl->local_size, tl->my_local, src),
                                  memory_order_acquire))
            continue;
        tern_shm_in_attach(tl, in, src);
        in->live = 1;
    }
}
