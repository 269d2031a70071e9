/* Lock-free single-producer single-consumer queue of fixed-size cells in
 * shared memory: one ring per ordered pair (sender, receiver).
 *
 * Layout: a 128-byte control block (the consumer's count of freed cells
 * and, after it, 8 bytes its users may give the producer news in: the
 * line only the consumer writes), then `cells` cells of `cell_size` bytes each (a
 * multiple of 64, so every cell starts on a cache line). A cell is a 16-byte
 * header followed by the payload; a message of up to 48 bytes touches
 * exactly one cache line (an eager MPI message: a 16-byte match header and
 * up to 32 bytes of data).
 *
 *   flag  n + 1 when the cell holds message number n (n counts from 0 per
 *         ring and never repeats, so a stale value is never taken for a new
 *         one); 0 before the first lap.
 *   len   payload bytes.
 *
 * Protocol (no locks, no read-modify-write, no system call):
 *  - producer: if its cached view of `consumed` says the next cell may still
 *    be in use, reload `consumed` (one cache line, once per lap at most);
 *    write payload and len, then publish with ONE release store of n + 1.
 *  - consumer: acquire-load the flag of its next cell; if n + 1, the payload
 *    is readable; when done it bumps `consumed` in its own control line.
 * So a message costs one cache-line transfer of the cell (the consumer never
 * writes a cell, which would pull the line back and forth once more) plus a
 * rare one for `consumed`.
 *
 * tern_shm_ring_pop advances the consumer's counter before the caller looks
 * at the message, and the cell is freed separately (tern_shm_ring_free), so a
 * handler may re-enter the consumer (nested progress) and take the next
 * messages; cells may be freed out of order: an early free is marked in the
 * cell (the slow path) and `consumed` only ever moves over freed cells. */
#ifndef TERN_TRANSPORT_SHM_SHM_RING_H
#define TERN_TRANSPORT_SHM_SHM_RING_H

#include "base/status.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TERN_SHM_CACHE_LINE 64
#define TERN_SHM_CELL_HDR 16

typedef struct {
    _Atomic uint64_t flag;
    uint32_t len;
    uint32_t reserved;
} tern_shm_cell_t;

_Static_assert(sizeof(tern_shm_cell_t) == TERN_SHM_CELL_HDR, "cell header is 16 bytes");

/* TERN_SHM_CELL_SIZE=auto: 16 KB of eager data plus the cell and protocol
 * headers up to 8 ranks on a node, 8 KB above (rings grow with the square
 * of the node's ranks: 16 ranks take 64 MB of 8 KB cells). */
#define TERN_SHM_CELL_AUTO(local_size) ((local_size) <= 8 ? (size_t)16512 : (size_t)8320)

/* One side's private view of a ring. */
#define TERN_SHM_RING_CONTROL 128 /* control block before the cells */
#define TERN_SHM_CELL_FREED_EARLY 1u /* `reserved`: freed out of order */
/* `len`'s top bit (cells are at most 1 GB): a bulk cell that holds an
 * active message ordered with the ring's, and the ring's empty doorbell
 * cell that says where in the ring's order it falls (shm.c). */
#define TERN_SHM_LEN_ORDERED (1u << 31)

typedef struct {
    char *cells;       /* first cell, in shared memory */
    size_t cell_size;  /* bytes per cell, header included; multiple of 64 */
    uint64_t mask;     /* cells - 1 */
    uint64_t index;    /* next message number to write (producer) or read (consumer) */
    _Atomic uint64_t *consumed; /* shared: cells freed so far, in order */
    uint64_t limit;    /* producer: messages below this may be written */
    uint64_t window;   /* producer: messages in flight at most (<= cells) */
    uint64_t freed;    /* consumer: private copy of consumed */
    uint64_t early;    /* consumer: cells freed out of order, not yet counted */
} tern_shm_ring_t;

/* Bytes of shared memory one ring occupies. cell_size must be a multiple of
 * 64 and at least 64; cells a power of two. */
size_t tern_shm_ring_bytes(size_t cell_size, unsigned cells);
/* TERN_OK if the geometry is valid. */
tern_status_t tern_shm_ring_check(size_t cell_size, unsigned cells);
/* Marks every cell free (not needed on memory that starts zeroed). */
void tern_shm_ring_format(void *mem, size_t cell_size, unsigned cells);
/* Sets up one side's view of the ring at mem (either side). */
void tern_shm_ring_attach(tern_shm_ring_t *ring, void *mem, size_t cell_size, unsigned cells);

/* The consumer's 8 bytes of news for the producer (shm.c: what copying
 * out of the bulk channel costs the receiver, base/copy_store.h), in its
 * control line after `consumed`. */
static inline void *tern_shm_ring_news(const tern_shm_ring_t *ring)
{
    return (char *)ring->consumed + sizeof(uint64_t);
}

static inline size_t tern_shm_ring_payload_max(const tern_shm_ring_t *ring)
{
    return ring->cell_size - TERN_SHM_CELL_HDR;
}

static inline tern_shm_cell_t *tern_shm_ring_cell(const tern_shm_ring_t *ring, uint64_t n)
{
    return (tern_shm_cell_t *)(ring->cells + (size_t)(n & ring->mask) * ring->cell_size);
}

static inline void *tern_shm_cell_payload(tern_shm_cell_t *cell)
{
    return (char *)cell + TERN_SHM_CELL_HDR;
}

/* Producer: the payload area of the next cell, or NULL when the ring is
 * full. Follow with tern_shm_ring_commit. */
static inline void *tern_shm_ring_reserve(tern_shm_ring_t *ring)
{
    if (ring->index >= ring->limit) {
        /* Acquire: the consumer's reads of the cell happen before its free. */
        ring->limit = atomic_load_explicit(ring->consumed, memory_order_acquire) + ring->window;
        if (ring->index >= ring->limit)
            return NULL;
    }
    return tern_shm_cell_payload(tern_shm_ring_cell(ring, ring->index));
}

/* Producer: tern_shm_ring_reserve for n consecutive cells (n <= window),
 * the first's payload; a message over several cells (shm.c,
 * am_big_reserve) publishes only the first, and the consumer skips the
 * rest (their flags are never this lap's numbers). */
static inline void *tern_shm_ring_reserve_n(tern_shm_ring_t *ring, uint64_t n)
{
    if (ring->index + n > ring->limit) {
        ring->limit = atomic_load_explicit(ring->consumed, memory_order_acquire) + ring->window;
        if (ring->index + n > ring->limit)
            return NULL;
    }
    return tern_shm_cell_payload(tern_shm_ring_cell(ring, ring->index));
}

/* A bulk cell's message written in parts (shm.c, am_big_grow): the bytes
 * in place so far, in `reserved`, which the consumer uses only for cells
 * it has read (tern_shm_ring_free_slow; a count is never 1, the mark). */
static inline void tern_shm_cell_set_written(tern_shm_cell_t *cell, size_t written, memory_order order)
{
    __atomic_store_n(&cell->reserved, (uint32_t)written,
                     order == memory_order_release ? __ATOMIC_RELEASE : __ATOMIC_RELAXED);
}

static inline size_t tern_shm_cell_written(const tern_shm_cell_t *cell)
{
    return __atomic_load_n(&cell->reserved, __ATOMIC_ACQUIRE);
}

/* Producer: publishes the reserved cell holding len payload bytes. */
static inline void tern_shm_ring_commit(tern_shm_ring_t *ring, size_t len)
{
    tern_shm_cell_t *cell = tern_shm_ring_cell(ring, ring->index);
    cell->len = (uint32_t)len;
    ring->index++;
    atomic_store_explicit(&cell->flag, ring->index, memory_order_release);
}

/* An active message's two parts, one after the other at p. */
static inline void tern_shm_copy_message(char *p, const void *hdr, size_t hdr_len, const void *payload,
                                         size_t payload_len)
{
    if (hdr_len)
        memcpy(p, hdr, hdr_len);
    if (payload_len)
        memcpy(p + hdr_len, payload, payload_len);
}

/* Producer: copies hdr then payload into the next cell. TERN_ERR_AGAIN when
 * the ring is full; the caller guarantees hdr_len + payload_len fits. */
static inline tern_status_t tern_shm_ring_push(tern_shm_ring_t *ring, const void *hdr, size_t hdr_len,
                                               const void *payload, size_t payload_len)
{
    char *p = (char *)tern_shm_ring_reserve(ring);
    if (p == NULL)
        return TERN_ERR_AGAIN;
    tern_shm_copy_message(p, hdr, hdr_len, payload, payload_len);
    tern_shm_ring_commit(ring, hdr_len + payload_len);
    return TERN_OK;
}

/* Consumer: 1 if the next message has arrived (does not take it). */
static inline int tern_shm_ring_ready(const tern_shm_ring_t *ring)
{
    tern_shm_cell_t *cell = tern_shm_ring_cell(ring, ring->index);
    return atomic_load_explicit(&cell->flag, memory_order_relaxed) == ring->index + 1;
}

/* Consumer: the next message without taking it (NULL: none yet); *len_p
 * is its len word, flags included. */
static inline tern_shm_cell_t *tern_shm_ring_peek(const tern_shm_ring_t *ring, size_t *len_p)
{
    tern_shm_cell_t *cell = tern_shm_ring_cell(ring, ring->index);
    if (atomic_load_explicit(&cell->flag, memory_order_acquire) != ring->index + 1)
        return NULL;
    *len_p = cell->len;
    return cell;
}

/* Consumer: takes the next message, or returns NULL when there is none. The
 * message (*len_p bytes at the returned cell's payload) stays valid until
 * tern_shm_ring_free(cell). */
static inline tern_shm_cell_t *tern_shm_ring_pop(tern_shm_ring_t *ring, size_t *len_p)
{
    tern_shm_cell_t *cell = tern_shm_ring_peek(ring, len_p);
    if (cell != NULL)
        ring->index++;
    return cell;
}

/* Consumer: never takes another message (the producer failed): no
 * message number reaches the index it is moved to, so the ring looks empty
 * to pop and ready at no cost on the fast path. */
static inline void tern_shm_ring_park(tern_shm_ring_t *ring)
{
    ring->index = UINT64_MAX - 1;
}

/* Consumer: gives a popped cell back to the producer. */
void tern_shm_ring_free_slow(tern_shm_ring_t *ring, tern_shm_cell_t *cell);

/* Frees a popped cell. */
static inline void tern_shm_ring_free(tern_shm_ring_t *ring, tern_shm_cell_t *cell)
{
    if (__builtin_expect(ring->early == 0 && cell == tern_shm_ring_cell(ring, ring->freed), 1)) {
        ring->freed++;
        atomic_store_explicit(ring->consumed, ring->freed, memory_order_release);
        return;
    }
    tern_shm_ring_free_slow(ring, cell);
}

#endif
