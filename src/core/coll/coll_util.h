/* Small helpers shared by the algorithm files. */
#ifndef TERN_CORE_COLL_UTIL_H
#define TERN_CORE_COLL_UTIL_H

#include "core/coll/coll.h"
#include <stddef.h>
#include <stdint.h>

/* The direct paths' error for a receive that got `got` bytes (SIZE_MAX:
 * more than it holds) where `want` were due, in the schedule's words
 * (coll_sched.c); coll_pair.c and coll_tree.c. */
tern_status_t tern_coll_size_mismatch(size_t got, size_t want, int peer);

static inline int coll_mod(int a, int p) { return ((a % p) + p) % p; }

/* Largest power of two <= p (p >= 1). */
static inline int coll_pof2_floor(int p)
{
    int k = 1;
    while (k * 2 <= p)
        k *= 2;
    return k;
}

/* Segment i of n elements split in p nearly equal parts (the first n % p
 * parts one longer): its first element and its length. */
static inline size_t coll_seg_off(size_t n, int p, int i)
{
    size_t q = n / (size_t)p, r = n % (size_t)p;
    return (size_t)i * q + ((size_t)i < r ? (size_t)i : r);
}
static inline size_t coll_seg_len(size_t n, int p, int i)
{
    return n / (size_t)p + ((size_t)i < n % (size_t)p ? 1 : 0);
}

static inline char *coll_at(const void *base, size_t off) { return (char *)(uintptr_t)base + off; }

#endif
