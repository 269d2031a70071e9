/* Taking the next queue cell's lines for writing while the sender waits
 * (issue 29, docs/performance.md row `lat4s`). A 1-8 KB cell was read by
 * the receiving core at its last use, so a copy into it first takes every
 * line back from that core; in a ping-pong the sender then waits a whole
 * one-way time for the reply. After such a send, the first poll that
 * finds nothing stores a zero into each payload line of the ring's next
 * cell (when the receiver took all earlier messages; never its first
 * line, which holds the flag the receiver polls), so the next message of
 * that size is copied into lines only this core holds (base/copy_vec.h).
 * A free cell's bytes are nobody's: a pack cell's entry word of 0 reads
 * as no entry (shm_pack.h). One warm cell per process: the last such
 * send's ring. */
#ifndef TERN_TRANSPORT_SHM_SHM_WARM_H
#define TERN_TRANSPORT_SHM_SHM_WARM_H

#include "transport/shm/shm_ring.h"

#include <stdint.h>

typedef struct {
    tern_shm_ring_t *ring; /* the ring to warm at the next idle poll; NULL: none */
    size_t len;            /* payload bytes to take */
    tern_shm_ring_t *warm; /* the ring whose cell `index` was taken */
    uint64_t index;
} tern_shm_warm_t;

/* am_reserved_warm: 1 if ring's reserved cell was taken; asks for the
 * next one. */
static inline int tern_shm_warm_reserved(tern_shm_warm_t *w, tern_shm_ring_t *ring, size_t len)
{
    int warm = w->warm == ring && w->index == ring->index;
    w->warm = NULL;
    w->ring = ring;
    w->len = len;
    return warm;
}

/* At an idle poll with w->ring set: takes that ring's next cell if the
 * receiver has taken all but the last message (a reply may come; a
 * stream's sender, many messages ahead, would only slow its next copies:
 * -3% bw at 4 KB). The consumer's count is read here, off the send. */
static inline void tern_shm_warm_idle(tern_shm_warm_t *w)
{
    tern_shm_ring_t *ring = w->ring;
    w->ring = NULL;
    uint64_t consumed = atomic_load_explicit(ring->consumed, memory_order_acquire);
    if (ring->index > consumed + 1)
        return;
    ring->limit = consumed + ring->window;
    if (ring->index >= ring->limit) /* a one-cell window: still in use */
        return;
    char *cell = (char *)tern_shm_ring_cell(ring, ring->index);
    for (size_t o = TERN_SHM_CACHE_LINE; o < TERN_SHM_CELL_HDR + w->len; o += TERN_SHM_CACHE_LINE)
        *(volatile uint64_t *)(cell + o) = 0;
    w->warm = ring;
    w->index = ring->index;
}

#endif
