/* A copy of 8 to 64 bytes by loads and stores of 8 or 16 bytes, no call:
 * the size of a few elements, which collectives of 2 ranks move within a
 * rank and direct puts and gets move to and from a window. glibc's memcpy
 * takes about 15 instructions more, with the call through the PLT
 * (docs/performance.md row putinline). */
#ifndef TERN_BASE_COPY_SMALL_H
#define TERN_BASE_COPY_SMALL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether tern_copy_small takes n bytes. */
static inline int tern_copy_small_fits(size_t n)
{
    return n - 8 <= 56;
}

typedef struct {
    uint64_t w[2];
} tern_copy_16_t;

/* n from 8 to 64: words that may overlap each other (and the other
 * buffer: all are loaded before any is stored). */
static inline void tern_copy_small(void *dst, const void *src, size_t n)
{
    const char *s = src;
    char *d = dst;
    if (n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n <= 32) {
        tern_copy_16_t a, b;
        memcpy(&a, s, 16);
        memcpy(&b, s + n - 16, 16);
        memcpy(d, &a, 16);
        memcpy(d + n - 16, &b, 16);
    } else {
        tern_copy_16_t a, b, c, e;
        memcpy(&a, s, 16);
        memcpy(&b, s + 16, 16);
        memcpy(&c, s + n - 32, 16);
        memcpy(&e, s + n - 16, 16);
        memcpy(d, &a, 16);
        memcpy(d + 16, &b, 16);
        memcpy(d + n - 32, &c, 16);
        memcpy(d + n - 16, &e, 16);
    }
}

#endif
