#include "core/runtime/mem.h"

#include <stdint.h>
#include <stdlib.h>

/* Live blocks: an open-addressing set of addresses (linear probing, at
 * most half full, deletions by backward shift), so Free_mem is O(1). */
static void **set;
static size_t cap, live;

static size_t slot_of(const void *p)
{
    uintptr_t h = (uintptr_t)p >> 6;
    h *= 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 16) & (cap - 1);
}

static void insert(void *p)
{
    size_t i = slot_of(p);
    while (set[i])
        i = (i + 1) & (cap - 1);
    set[i] = p;
}

static tern_status_t grow(void)
{
    void **old = set;
    size_t old_cap = cap;
    size_t ncap = cap ? cap * 2 : 64;
    void **n = calloc(ncap, sizeof *n);
    if (!n)
        return TERN_ERR_NOMEM;
    set = n;
    cap = ncap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            insert(old[i]);
    free(old);
    return TERN_OK;
}

tern_status_t tern_mem_alloc(size_t size, size_t align, void **base_p)
{
    if ((live + 1) * 2 > cap && grow() != TERN_OK)
        return tern_status_detail(TERN_ERR_NOMEM, "no memory to record a new block");
    if (align < TERN_MEM_MIN_ALIGN)
        align = TERN_MEM_MIN_ALIGN;
    void *p = NULL;
    if (posix_memalign(&p, align, size ? size : 1) != 0)
        return tern_status_detail(TERN_ERR_NOMEM, "cannot allocate %zu bytes (alignment %zu)",
                                  size, align);
    insert(p);
    live++;
    *base_p = p;
    return TERN_OK;
}

tern_status_t tern_mem_free(void *base)
{
    if (!base)
        return TERN_OK;
    size_t i = cap ? slot_of(base) : 0;
    while (cap && set[i] && set[i] != base)
        i = (i + 1) & (cap - 1);
    if (!cap || set[i] != base)
        return tern_status_detail(TERN_ERR_BASE,
                                  "base %p is not memory allocated by MPI_Alloc_mem (or was "
                                  "freed already)", base);
    free(base);
    live--;
    /* Backward-shift deletion keeps every probe chain unbroken. */
    size_t j = i;
    for (;;) {
        set[i] = NULL;
        for (;;) {
            j = (j + 1) & (cap - 1);
            if (!set[j])
                return TERN_OK;
            size_t home = slot_of(set[j]);
            /* set[j] may move to i when its home is not in (i, j]. */
            if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
                break;
        }
        set[i] = set[j];
        i = j;
    }
}

size_t tern_mem_live(void)
{
    return live;
}
