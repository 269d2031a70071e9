/* Unit tests of the choice of stores (src/base/copy_store.c) on made-up
 * times: each kind is timed once first (streaming, then plain), the
 * faster per byte is kept and the other taken every 64th copy; a
 * reader's costs, once it has both, are added to the writer's own (the
 * writer's times alone would choose the other kind here); a reader counts
 * only timed stores and copies from TERN_STORE_SAMPLE_MIN, smoothed and
 * capped at 4x; fixed stores are timed but never explored nor turned by
 * the costs; and the copies themselves move every byte, at odd offsets
 * and lengths, by both kinds. */
#include "base/copy_store.h"
#include "base/test_check.h"

#include <string.h>

#define KB(n) ((size_t)(n) << 10)

/* Times one copy of n bytes at cost cycles per KB. */
static void timed(tern_store_choice_t *ch, const tern_store_reader_t *r, int stores, size_t n,
                  uint64_t cost)
{
    tern_store_timed(ch, r, stores, n, cost * (n >> 10));
}

static void test_first_and_explore(void)
{
    tern_store_choice_t ch = {0};
    size_t n = KB(64);
    CHECK(tern_store_choose(&ch, n) == TERN_STORES_STREAMED);
    timed(&ch, NULL, TERN_STORES_STREAMED, n, 200);
    CHECK(tern_store_choose(&ch, n) == TERN_STORES_PLAIN);
    timed(&ch, NULL, TERN_STORES_PLAIN, n, 100);
    CHECK(ch.plain == 1);
    int other = 0;
    for (int i = 0; i < 128; i++) {
        int s = tern_store_choose(&ch, n);
        other += s == TERN_STORES_STREAMED;
    }
    CHECK(other == 2); /* every 64th */
    /* Short copies take the choice and are neither counted nor timed. */
    unsigned copies = ch.copies;
    CHECK(tern_store_choose(&ch, KB(4)) == TERN_STORES_PLAIN);
    CHECK(ch.copies == copies);
    timed(&ch, NULL, TERN_STORES_PLAIN, KB(8), 5000);
    CHECK(ch.cost[0] == 101);
}

static void test_reader_added(void)
{
    tern_store_reader_t r;
    atomic_store(&r.cost[0], 0);
    atomic_store(&r.cost[1], 0);
    tern_store_choice_t ch = {0};
    size_t n = KB(64);
    /* The writer's own: plain 130, streaming 110 cycles per KB. */
    timed(&ch, &r, TERN_STORES_STREAMED, n, 110);
    timed(&ch, &r, TERN_STORES_PLAIN, n, 130);
    CHECK(ch.plain == 0);
    /* A reader with one kind timed is not used yet. */
    tern_store_read_timed(&r, TERN_STORES_STREAMED, n, 250 * (n >> 10));
    timed(&ch, &r, TERN_STORES_PLAIN, n, 130);
    CHECK(ch.plain == 0);
    /* Both: 130 + 80 against 110 + 250. */
    tern_store_read_timed(&r, TERN_STORES_PLAIN, n, 80 * (n >> 10));
    timed(&ch, &r, TERN_STORES_PLAIN, n, 130);
    CHECK(ch.plain == 1);
    CHECK(tern_store_choose(&ch, n) == TERN_STORES_PLAIN);
    /* And back when the reader's plain reads grow (the cores moved apart). */
    for (int i = 0; i < 8; i++)
        tern_store_read_timed(&r, TERN_STORES_PLAIN, n, 900 * (n >> 10));
    timed(&ch, &r, TERN_STORES_PLAIN, n, 130);
    CHECK(ch.plain == 0);
}

/* Fixed stores (TERN_SHM_BULK_NT=off or on): the same kind every copy,
 * timed (the stream's rate), whatever the other kind would cost. */
static void test_fixed(void)
{
    tern_store_choice_t ch = {.plain = 1, .fixed = 1};
    size_t n = KB(64);
    int other = 0;
    for (int i = 0; i < 256; i++) {
        int s = tern_store_choose(&ch, n);
        other += s != TERN_STORES_PLAIN;
        timed(&ch, NULL, s, n, 300);
    }
    CHECK(other == 0);
    CHECK(ch.cost[0] == 301 && ch.cost[1] == 0);
    CHECK(tern_store_choice_cost(&ch) == 301);
    /* Streaming timed far cheaper (were it ever made) turns nothing. */
    timed(&ch, NULL, TERN_STORES_STREAMED, n, 10);
    CHECK(ch.plain == 1 && tern_store_choose(&ch, n) == TERN_STORES_PLAIN);
}

static void test_reader_samples(void)
{
    tern_store_reader_t r;
    atomic_store(&r.cost[0], 0);
    atomic_store(&r.cost[1], 0);
    tern_store_read_timed(&r, TERN_STORES_UNTIMED, KB(64), 64000);
    tern_store_read_timed(&r, TERN_STORES_PLAIN, KB(8), 64000);
    tern_store_read_timed(&r, TERN_STORES_PLAIN, KB(64), 0);
    CHECK(atomic_load(&r.cost[0]) == 0 && atomic_load(&r.cost[1]) == 0);
    tern_store_read_timed(&r, TERN_STORES_PLAIN, KB(64), 100 * 64);
    CHECK(atomic_load(&r.cost[0]) == 101);
    /* 10x the estimate counts as 4x: (3 * 101 + 404) / 4. */
    tern_store_read_timed(&r, TERN_STORES_PLAIN, KB(64), 1000 * 64);
    CHECK(atomic_load(&r.cost[0]) == 176);
    CHECK(atomic_load(&r.cost[1]) == 0);
}

static void test_copies(void)
{
    static unsigned char src[KB(80) + 64], dst[KB(80) + 64];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 13 + 5);
    static const size_t lens[] = {0, 1, 63, 64, 65, 4095, KB(16), KB(16) + 17, KB(80) - 3};
    for (int stores = TERN_STORES_UNTIMED; stores <= TERN_STORES_STREAMED; stores++)
        for (size_t off = 0; off < 3; off++)
            for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
                size_t n = lens[i];
                memset(dst, 0xee, sizeof dst);
                tern_copy_stores(stores, dst + off * 7, src + off, n, 2048);
                CHECK(memcmp(dst + off * 7, src + off, n) == 0);
                CHECK(dst[off * 7 + n] == 0xee && (off == 0 || dst[off * 7 - 1] == 0xee));
            }
    tern_store_choice_t ch = {0};
    tern_store_reader_t r;
    atomic_store(&r.cost[0], 0);
    atomic_store(&r.cost[1], 0);
    for (int k = 0; k < 4; k++) {
        memset(dst, 0, sizeof dst);
        int s = tern_copy_chosen(&ch, &r, dst + 3, src + 1, KB(80) - 5, SIZE_MAX);
        CHECK(s == TERN_STORES_PLAIN || s == TERN_STORES_STREAMED);
        CHECK(memcmp(dst + 3, src + 1, KB(80) - 5) == 0);
    }
}

int main(void)
{
#if defined(__SSE2__) /* elsewhere every copy is plain */
    test_first_and_explore();
#endif
    test_reader_added();
    test_fixed();
    test_reader_samples();
    test_copies();
    return tern_check_result("copy_store_test");
}
