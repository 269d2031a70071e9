/* Unit test of the shared-memory ring in one process: order, full ring,
 * wrap-around, every message size, re-entrant consumption, out-of-order
 * frees; and the segment helpers (name, create, attach, unlink). */
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_node_segment.h"
#include "base/test_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* PMI: pmi_noop.c. */

static unsigned char pattern(uint64_t seq, size_t i)
{
    return (unsigned char)(seq * 131 + i * 7 + 1);
}

static void fill(unsigned char *buf, uint64_t seq, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(seq, i);
}

static int verify(const unsigned char *buf, uint64_t seq, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern(seq, i))
            return 0;
    return 1;
}

static void *new_ring(size_t cell_size, unsigned cells, tern_shm_ring_t *prod, tern_shm_ring_t *cons)
{
    /* cell_size is a multiple of 64, so the size is a multiple of the alignment. */
    void *mem = aligned_alloc(TERN_SHM_CACHE_LINE, tern_shm_ring_bytes(cell_size, cells));
    if (mem == NULL)
        abort();
    memset(mem, 0xa5, tern_shm_ring_bytes(cell_size, cells)); /* format must clear it */
    tern_shm_ring_format(mem, cell_size, cells);
    tern_shm_ring_attach(prod, mem, cell_size, cells);
    tern_shm_ring_attach(cons, mem, cell_size, cells);
    /* The consumer's news words: cleared, in its control line, the same
     * for both sides. */
    static const char zero[8];
    CHECK(tern_shm_ring_news(cons) == tern_shm_ring_news(prod));
    CHECK(tern_shm_ring_news(cons) == (char *)mem + 8);
    CHECK(memcmp(tern_shm_ring_news(cons), zero, 8) == 0);
    return mem;
}

static void test_geometry(void)
{
    CHECK(tern_shm_ring_check(8192, 32) == TERN_OK);
    CHECK(tern_shm_ring_check(64, 2) == TERN_OK);
    CHECK(tern_shm_ring_check(32, 32) == TERN_ERR_ARG);
    CHECK(tern_shm_ring_check(100, 32) == TERN_ERR_ARG);
    CHECK(tern_shm_ring_check(8192, 24) == TERN_ERR_ARG);
    CHECK(tern_shm_ring_check(8192, 1) == TERN_ERR_ARG);
    CHECK(tern_shm_ring_bytes(8192, 32) == TERN_SHM_RING_CONTROL + 8192 * 32);
    CHECK(sizeof(tern_shm_cell_t) == TERN_SHM_CELL_HDR);
}

static void test_order_full_wrap(size_t cell_size, unsigned cells)
{
    tern_shm_ring_t p, c;
    void *mem = new_ring(cell_size, cells, &p, &c);
    size_t max = tern_shm_ring_payload_max(&p);
    CHECK(max == cell_size - TERN_SHM_CELL_HDR);
    unsigned char *buf = malloc(max);
    uint64_t sent = 0, got = 0;
    size_t len;

    CHECK(tern_shm_ring_pop(&c, &len) == NULL);
    CHECK(!tern_shm_ring_ready(&c));
    /* Several laps: fill to full, check AGAIN, drain part, refill. */
    for (int lap = 0; lap < 10; lap++) {
        for (;;) {
            size_t l = (size_t)(sent * 37) % (max + 1);
            fill(buf, sent, l);
            tern_status_t st = tern_shm_ring_push(&p, &sent, sizeof sent < l ? sizeof sent : 0, buf,
                                                  sizeof sent < l ? l - sizeof sent : l);
            if (st == TERN_ERR_AGAIN)
                break;
            CHECK(st == TERN_OK);
            sent++;
        }
        CHECK(sent - got == cells);
        CHECK(tern_shm_ring_reserve(&p) == NULL);
        /* Drain a lap-dependent number (so the full point moves around). */
        unsigned take = lap % 2 ? cells : (unsigned)(lap % cells) + 1;
        for (unsigned k = 0; k < take; k++) {
            tern_shm_cell_t *cell = tern_shm_ring_pop(&c, &len);
            CHECK(cell != NULL);
            if (cell == NULL)
                break;
            size_t l = (size_t)(got * 37) % (max + 1);
            CHECK(len == l);
            const unsigned char *m = tern_shm_cell_payload(cell);
            if (l > sizeof got) {
                uint64_t seq;
                memcpy(&seq, m, sizeof seq);
                CHECK(seq == got);
                CHECK(verify(m + sizeof got, got, l - sizeof got));
            } else {
                CHECK(verify(m, got, l));
            }
            tern_shm_ring_free(&c, cell);
            got++;
        }
        /* After freeing, the producer has room again. */
        CHECK(tern_shm_ring_reserve(&p) != NULL);
    }
    /* Drain the rest. */
    tern_shm_cell_t *cell;
    while ((cell = tern_shm_ring_pop(&c, &len)) != NULL) {
        tern_shm_ring_free(&c, cell);
        got++;
    }
    CHECK(got == sent);
    CHECK(sent >= 5u * cells);
    free(buf);
    free(mem);
}

static void test_all_sizes(size_t cell_size, unsigned cells)
{
    tern_shm_ring_t p, c;
    void *mem = new_ring(cell_size, cells, &p, &c);
    size_t max = tern_shm_ring_payload_max(&p);
    unsigned char *buf = malloc(max + 1);
    size_t len;
    for (size_t l = 0; l <= max; l++) {
        fill(buf, l, l);
        /* Split between header and payload in varying ways. */
        size_t h = l % 41 < l ? l % 41 : l;
        CHECK(tern_shm_ring_push(&p, buf, h, buf + h, l - h) == TERN_OK);
        tern_shm_cell_t *cell = tern_shm_ring_pop(&c, &len);
        CHECK(cell != NULL && len == l);
        if (cell == NULL)
            break;
        CHECK(verify(tern_shm_cell_payload(cell), l, l));
        CHECK(((uintptr_t)cell & (TERN_SHM_CACHE_LINE - 1)) == 0);
        tern_shm_ring_free(&c, cell);
    }
    /* reserve/commit path. */
    void *slot = tern_shm_ring_reserve(&p);
    CHECK(slot != NULL);
    memset(slot, 0x3c, 8);
    tern_shm_ring_commit(&p, 8);
    tern_shm_cell_t *cell = tern_shm_ring_pop(&c, &len);
    CHECK(cell != NULL && len == 8 && ((unsigned char *)tern_shm_cell_payload(cell))[7] == 0x3c);
    if (cell)
        tern_shm_ring_free(&c, cell);
    free(buf);
    free(mem);
}

/* A consumer that pops the next message while still holding the previous one
 * (nested progress), freeing out of order. */
static void test_reentrant(void)
{
    tern_shm_ring_t p, c;
    void *mem = new_ring(128, 4, &p, &c);
    size_t len;
    for (uint64_t i = 0; i < 4; i++)
        CHECK(tern_shm_ring_push(&p, &i, sizeof i, NULL, 0) == TERN_OK);
    CHECK(tern_shm_ring_push(&p, &len, sizeof len, NULL, 0) == TERN_ERR_AGAIN);
    tern_shm_cell_t *a = tern_shm_ring_pop(&c, &len);
    tern_shm_cell_t *b = tern_shm_ring_pop(&c, &len);
    CHECK(a != NULL && b != NULL && a != b);
    uint64_t va, vb;
    memcpy(&va, tern_shm_cell_payload(a), 8);
    memcpy(&vb, tern_shm_cell_payload(b), 8);
    CHECK(va == 0 && vb == 1);
    tern_shm_ring_free(&c, b);
    /* Cell 0 still held: the producer's next cell is cell 0, so it is full. */
    CHECK(tern_shm_ring_push(&p, &va, sizeof va, NULL, 0) == TERN_ERR_AGAIN);
    tern_shm_ring_free(&c, a);
    uint64_t v4 = 4, v5 = 5;
    CHECK(tern_shm_ring_push(&p, &v4, 8, NULL, 0) == TERN_OK);
    CHECK(tern_shm_ring_push(&p, &v5, 8, NULL, 0) == TERN_OK);
    for (uint64_t want = 2; want < 6; want++) {
        tern_shm_cell_t *x = tern_shm_ring_pop(&c, &len);
        CHECK(x != NULL);
        if (!x)
            break;
        uint64_t v;
        memcpy(&v, tern_shm_cell_payload(x), 8);
        CHECK(v == want);
        tern_shm_ring_free(&c, x);
    }
    CHECK(tern_shm_ring_pop(&c, &len) == NULL);
    free(mem);
}

static void test_segment(void)
{
    char name[256];
    CHECK(tern_shm_segment_name(name, sizeof name, "kvs_12/3 x", 7) == TERN_OK);
    CHECK(strcmp(name, "/tern-kvs_12_3_x-shm-7") == 0);
    char longid[300];
    memset(longid, 'a', sizeof longid - 1);
    longid[sizeof longid - 1] = 0;
    CHECK(tern_shm_segment_name(name, sizeof name, longid, 0) == TERN_ERR_ARG);

    char jid[64];
    snprintf(jid, sizeof jid, "ringtest%d", (int)getpid());
    CHECK(tern_shm_segment_name(name, sizeof name, jid, 0) == TERN_OK);
    tern_shm_segment_t a, b;
    int err;
    CHECK(tern_shm_segment_create(&a, name, 1 << 20, &err) == TERN_OK);
    CHECK(a.base != NULL && a.size == 1 << 20);
    CHECK(((char *)a.base)[12345] == 0);
    ((char *)a.base)[4096] = 42;
    CHECK(tern_shm_segment_attach(&b, name, NULL) == TERN_OK);
    CHECK(b.size == 1 << 20 && ((char *)b.base)[4096] == 42);
    char path[300];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    CHECK(access(path, F_OK) == 0);
    tern_shm_segment_unlink(&a);
    CHECK(access(path, F_OK) != 0 && errno == ENOENT);
    /* Mappings outlive the name. */
    ((char *)b.base)[8191] = 7;
    CHECK(((char *)a.base)[8191] == 7);
    tern_shm_segment_detach(&b);
    tern_shm_segment_detach(&a);
    CHECK(a.base == NULL);
    tern_shm_segment_t c;
    CHECK(tern_shm_segment_attach(&c, name, NULL) == TERN_ERR_IO);
    /* With err_p: the missing name comes back as ENOENT (not logged). */
    err = 0;
    CHECK(tern_shm_segment_attach(&c, name, &err) == TERN_ERR_IO && err == ENOENT && !c.base);

    /* More than /dev/shm holds: refused at creation (every page reserved),
     * quietly, and nothing left behind. Only on a tmpfs with a size limit
     * (an unlimited one would try to allocate it). */
    struct statvfs sv;
    if (statvfs("/dev/shm", &sv) == 0 && sv.f_blocks > 0) {
        size_t huge = (size_t)sv.f_blocks * sv.f_frsize + ((size_t)1 << 30);
        CHECK(tern_shm_segment_create(&c, name, huge, &err) == TERN_ERR_NO_ROOM);
        CHECK(err == ENOSPC || err == EFBIG || err == ENOMEM);
        CHECK(c.base == NULL && access(path, F_OK) != 0);
    }
}

int main(void)
{
    test_geometry();
    test_order_full_wrap(8192, 32);
    test_order_full_wrap(64, 2);
    test_order_full_wrap(256, 8);
    test_all_sizes(8192, 32);
    test_all_sizes(64, 4);
    test_reentrant();
    test_segment();
    return tern_check_result("shm_ring_test");
}
