/* Shared-memory SPSC ring: geometry and set-up. The fast path is inline in
 * shm_ring.h. */
#include "transport/shm/shm_ring.h"

size_t tern_shm_ring_bytes(size_t cell_size, unsigned cells)
{
    return TERN_SHM_RING_CONTROL + cell_size * (size_t)cells;
}

tern_status_t tern_shm_ring_check(size_t cell_size, unsigned cells)
{
    if (cell_size < TERN_SHM_CACHE_LINE || cell_size % TERN_SHM_CACHE_LINE != 0 ||
        cell_size - TERN_SHM_CELL_HDR > UINT32_MAX)
        return TERN_ERR_ARG;
    if (cells < 2 || (cells & (cells - 1)) != 0)
        return TERN_ERR_ARG;
    return TERN_OK;
}

void tern_shm_ring_format(void *mem, size_t cell_size, unsigned cells)
{
    atomic_store_explicit((_Atomic uint64_t *)mem, 0, memory_order_relaxed);
    memset((char *)mem + sizeof(uint64_t), 0, sizeof(uint64_t)); /* the news words */
    char *first = (char *)mem + TERN_SHM_RING_CONTROL;
    for (unsigned i = 0; i < cells; i++) {
        tern_shm_cell_t *cell = (tern_shm_cell_t *)(first + (size_t)i * cell_size);
        cell->len = 0;
        cell->reserved = 0;
        atomic_store_explicit(&cell->flag, 0, memory_order_relaxed);
    }
    atomic_thread_fence(memory_order_release);
}

void tern_shm_ring_attach(tern_shm_ring_t *ring, void *mem, size_t cell_size, unsigned cells)
{
    ring->cells = (char *)mem + TERN_SHM_RING_CONTROL;
    ring->cell_size = cell_size;
    ring->mask = (uint64_t)cells - 1;
    ring->index = 0;
    ring->consumed = (_Atomic uint64_t *)mem;
    ring->limit = cells;
    ring->window = cells;
    ring->freed = 0;
    ring->early = 0;
}

/* A cell freed while an older one is still held: mark it; when the oldest
 * is freed, count it and every marked cell after it. */
void tern_shm_ring_free_slow(tern_shm_ring_t *ring, tern_shm_cell_t *cell)
{
    if (cell != tern_shm_ring_cell(ring, ring->freed)) {
        cell->reserved = TERN_SHM_CELL_FREED_EARLY;
        ring->early++;
        return;
    }
    ring->freed++;
    while (ring->early) {
        tern_shm_cell_t *next = tern_shm_ring_cell(ring, ring->freed);
        /* Atomic: a later cell may be a bulk message's count of bytes
         * written, stored by the producer now (shm_ring.h). */
        if (__atomic_load_n(&next->reserved, __ATOMIC_RELAXED) != TERN_SHM_CELL_FREED_EARLY)
            break;
        next->reserved = 0;
        ring->early--;
        ring->freed++;
    }
    atomic_store_explicit(ring->consumed, ring->freed, memory_order_release);
}
