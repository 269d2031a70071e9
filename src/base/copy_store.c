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

void tern_copy_chosen(tern_store_choice_t *ch, void *dst, const void *src, size_t n,
                      size_t movsb_min)
{
#if defined(__SSE2__)
    int plain = ch->plain;
    if (n < TERN_STORE_SAMPLE_MIN) {
        if (plain)
            tern_copy_large(dst, src, n, movsb_min);
        else
            tern_copy_nt(dst, src, n);
        return;
    }
    if (!ch->cost[0] || !ch->cost[1])
        plain = ch->cost[1] != 0; /* each kind timed once first: streaming, then plain */
    else if ((++ch->copies & EXPLORE_MASK) == 0)
        plain = !plain;
    uint64_t t0 = __rdtsc();
    if (plain)
        tern_copy_large(dst, src, n, movsb_min);
    else
        tern_copy_nt(dst, src, n);
    /* A sample is capped at 4x the estimate, so a copy the thread was
     * descheduled in moves it little. */
    uint64_t c = (__rdtsc() - t0) * 1024 / n + 1;
    uint32_t *est = &ch->cost[!plain];
    if (*est && c > 4 * (uint64_t)*est)
        c = 4 * (uint64_t)*est;
    if (*est)
        c = (3 * (uint64_t)*est + c) / 4;
    *est = c > UINT32_MAX / 4 ? UINT32_MAX / 4 : (uint32_t)c;
    if (ch->cost[0] && ch->cost[1])
        ch->plain = ch->cost[0] < ch->cost[1];
#else
    (void)ch;
    tern_copy_large(dst, src, n, movsb_min);
#endif
}

uint32_t tern_store_choice_cost(const tern_store_choice_t *ch)
{
    return ch->cost[!ch->plain];
}
