/* Unit test of a pair's memory (shm_reserve.c): tern_shm_bulk_warm maps
 * every page of a bulk ring's cells, and only those, and keeps what the
 * peer already wrote there. */
#include "transport/shm/shm_internal.h"
#include "base/test_check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* PMI: pmi_noop.c. */

/* Pages of [base, base + bytes) resident in the shared mapping. */
static size_t resident_pages(const char *base, size_t bytes)
{
    size_t pages = bytes / SHM_PAGE, n = 0;
    unsigned char *vec = malloc(pages);
    CHECK(vec != NULL && mincore((void *)base, bytes, vec) == 0);
    for (size_t i = 0; vec && i < pages; i++)
        n += vec[i] & 1;
    free(vec);
    return n;
}

/* A ring of `cells` bulk cells at `offset` bytes into a fresh shared
 * mapping (its pages not yet mapped), one cell already written. */
static void test_warm(size_t offset, size_t cell_size, unsigned cells)
{
    size_t ring = tern_shm_ring_bytes(cell_size, cells);
    size_t end = (offset + ring + SHM_PAGE - 1) / SHM_PAGE * SHM_PAGE;
    size_t map = end + 4 * SHM_PAGE; /* pages after the ring stay unmapped */
    char *mem = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED);
    if (mem == MAP_FAILED)
        return;
    tern_shm_ring_t r;
    tern_shm_ring_attach(&r, mem + offset, cell_size, cells);
    char *cell = (char *)tern_shm_cell_payload(tern_shm_ring_cell(&r, 1));
    memset(cell, 0x5a, 100);
    size_t touched = resident_pages(mem, map);
    CHECK(touched >= 1 && touched <= 2);

    tern_shm_bulk_warm(&r);

    size_t first = (size_t)(r.cells - mem) / SHM_PAGE * SHM_PAGE;
    CHECK(resident_pages(mem + first, end - first) == (end - first) / SHM_PAGE);
    CHECK(resident_pages(mem + end, map - end) == 0);
    for (int i = 0; i < 100; i++)
        CHECK(cell[i] == 0x5a);
    munmap(mem, map);
}

int main(void)
{
    test_warm(0, 65600, 4);                  /* the default chunk, page-aligned ring */
    test_warm(3 * SHM_PAGE + 192, 65600, 8); /* cells start mid-page */
    test_warm(0, 128, 2);                    /* a ring smaller than a page */
    return tern_check_result("shm_reserve_test");
}
