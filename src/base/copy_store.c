/* Copies whose stores are chosen by timing (copy_store.h). */
#include "base/copy_store.h"
#include "base/copy_movsb.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#include <x86intrin.h>
#endif

/* Every 64th timed copy takes the other stores. */
#define EXPLORE_MASK 63u

void tern_copy_nt(void *dst, const void *src, size_t n)
{
#if defined(__SSE2__)
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}

uint64_t tern_store_clock(void)
{
#if defined(__SSE2__)
    return __rdtsc();
#else
    return 0;
#endif
}

int tern_store_choose(tern_store_choice_t *ch, size_t n)
{
#if defined(__SSE2__)
    int plain = ch->plain;
    if (n >= TERN_STORE_SAMPLE_MIN && !ch->fixed) {
        if (!ch->cost[0] || !ch->cost[1])
            plain = ch->cost[1] != 0; /* each kind timed once first: streaming, then plain */
        else if ((++ch->copies & EXPLORE_MASK) == 0)
            plain = !plain;
    }
    return plain ? TERN_STORES_PLAIN : TERN_STORES_STREAMED;
#else
    (void)ch, (void)n;
    return TERN_STORES_PLAIN;
#endif
}

void tern_copy_stores(int stores, void *dst, const void *src, size_t n, size_t movsb_min)
{
    if (stores == TERN_STORES_STREAMED)
        tern_copy_nt(dst, src, n);
    else
        tern_copy_large(dst, src, n, movsb_min);
}

/* One sample into an estimate: a faster copy is taken as it is (a copy
 * runs slower than it can, descheduled or disturbed, never faster; and
 * the kind not chosen is timed only every 64th copy, so a smoothed
 * estimate of it left high by a past state of the host stayed so for
 * hundreds of copies); a slower one moves it a quarter of the way,
 * capped at 4x, so a copy the thread was descheduled in moves it little. */
static uint32_t smoothed(uint32_t est, uint64_t cycles, size_t n)
{
    uint64_t c = cycles * 1024 / n + 1;
    if (est && c > 4 * (uint64_t)est)
        c = 4 * (uint64_t)est;
    if (est && c > est)
        c = (3 * (uint64_t)est + c) / 4;
    return c > UINT32_MAX / 4 ? UINT32_MAX / 4 : (uint32_t)c;
}

void tern_store_timed(tern_store_choice_t *ch, const tern_store_reader_t *reader, int stores,
                      size_t n, uint64_t cycles)
{
    if (n < TERN_STORE_SAMPLE_MIN || !cycles)
        return;
    int k = stores == TERN_STORES_STREAMED;
    ch->cost[k] = smoothed(ch->cost[k], cycles, n);
    if (ch->fixed || !ch->cost[0] || !ch->cost[1])
        return;
    uint64_t plain = ch->cost[0], nt = ch->cost[1];
    if (reader) {
        uint32_t r0 = atomic_load_explicit(&reader->cost[0], memory_order_relaxed),
                 r1 = atomic_load_explicit(&reader->cost[1], memory_order_relaxed);
        if (r0 && r1)
            plain += r0, nt += r1;
    }
    ch->plain = plain < nt;
}

void tern_store_read_timed(tern_store_reader_t *r, int stores, size_t n, uint64_t cycles)
{
    if (stores == TERN_STORES_UNTIMED || n < TERN_STORE_SAMPLE_MIN || !cycles)
        return;
    _Atomic uint32_t *est = &r->cost[stores == TERN_STORES_STREAMED];
    uint32_t old = atomic_load_explicit(est, memory_order_relaxed);
    atomic_store_explicit(est, smoothed(old, cycles, n), memory_order_relaxed);
}

int tern_copy_chosen(tern_store_choice_t *ch, const tern_store_reader_t *reader, void *dst,
                     const void *src, size_t n, size_t movsb_min)
{
    int stores = tern_store_choose(ch, n);
    if (n < TERN_STORE_SAMPLE_MIN) {
        tern_copy_stores(stores, dst, src, n, movsb_min);
        return stores;
    }
    uint64_t t0 = tern_store_clock();
    tern_copy_stores(stores, dst, src, n, movsb_min);
    tern_store_timed(ch, reader, stores, n, tern_store_clock() - t0);
    return stores;
}

uint32_t tern_store_choice_cost(const tern_store_choice_t *ch)
{
    return ch->cost[!ch->plain];
}
