/* The copy of a 1-8 KB eager message into a shm queue cell whose lines
 * this core took for writing while it waited (shm_warm.h), and out of it
 * on the receiving core: an AVX2 loop of 32-byte loads and stores, 128
 * bytes a turn. glibc's memcpy runs `rep movsb` from 2112 bytes on this
 * CPU; between two cores that loop moved 4 KB a quarter faster one way in
 * both VM modes, but only with the cell taken beforehand (into lines the
 * receiver still holds it is 1.6x slower in the slow mode) and only with
 * the same loop on both sides (one side alone was 5-10% slower than
 * memcpy on both): docs/performance.md row `lat4s`. */
#ifndef TERN_BASE_COPY_VEC_H
#define TERN_BASE_COPY_VEC_H

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* 1 when this CPU runs the loop (AVX2). */
static inline int tern_copy_vec_supported(void)
{
    return __builtin_cpu_supports("avx2");
}

__attribute__((target("avx2"))) static inline void tern_copy_vec(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));
        _mm256_storeu_si256((__m256i *)(d + i), a);
        _mm256_storeu_si256((__m256i *)(d + i + 32), b);
        _mm256_storeu_si256((__m256i *)(d + i + 64), c);
        _mm256_storeu_si256((__m256i *)(d + i + 96), e);
    }
    if (i < n)
        memcpy(d + i, s + i, n - i);
}
#else
static inline int tern_copy_vec_supported(void)
{
    return 0;
}

static inline void tern_copy_vec(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif

#endif
