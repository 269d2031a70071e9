/* The copy of a mid-size eager message into a shm queue cell: the x86-64
 * string instruction (`rep movsb`, FSRM/ERMS) from 1280 bytes up to a
 * limit (TERN_P2P_EAGER_MOVSB_MAX, at most 2048), memcpy elsewhere.
 * glibc's memcpy takes its vector loop below 2112 bytes on this CPU
 * (x86_rep_movsb_threshold), and into lines the receiver's core holds
 * the string copy writes 2 KB a quarter faster in both VM modes (model
 * and ping-pong, docs/performance.md row `mid4k`); above 2 KB the string
 * copy is the one glibc uses already, and in pieces it lost in the slow
 * mode. */
#ifndef TERN_BASE_COPY_MOVSB_H
#define TERN_BASE_COPY_MOVSB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Below this the vector loop was as fast or faster (1 KB: 5% in the
 * fast mode). */
#define TERN_COPY_MOVSB_MIN 1280

/* The string copy for lo <= n <= hi, memcpy elsewhere. */
static inline void tern_copy_movsb_between(void *dst, const void *src, size_t n, size_t lo,
                                           size_t hi)
{
#if defined(__x86_64__)
    if (n >= lo && n <= hi) {
        __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
        return;
    }
#else
    (void)lo, (void)hi;
#endif
    memcpy(dst, src, n);
}

static inline void tern_copy_to_cell(void *dst, const void *src, size_t n, size_t movsb_max)
{
    tern_copy_movsb_between(dst, src, n, TERN_COPY_MOVSB_MIN, movsb_max);
}

/* A large copy by the string instruction from min bytes (memcpy below):
 * glibc 2.36 takes it only up to the L2 size on AMD and a vector loop
 * above, which moved 1-4 MB 20-25% slower on this EPYC VM (direct puts
 * and gets, docs/performance.md row put8). */
static inline void tern_copy_large(void *dst, const void *src, size_t n, size_t min)
{
    tern_copy_movsb_between(dst, src, n, min, SIZE_MAX);
}

#endif
