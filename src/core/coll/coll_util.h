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

/* Recursive halving's numbering (reduce_scatter_recursive_halving.c): with
 * m = p - (the largest power of two <= p), new rank nr is old rank
 * coll_halving_old_rank(nr, m) (an odd rank of a pair, or one past the
 * pairs) and holds the segments of ranks coll_halving_first_rank(nr, m) ..
 * coll_halving_first_rank(nr + 1, m) - 1. */
static inline int coll_halving_old_rank(int nr, int m) { return nr < m ? 2 * nr + 1 : nr + m; }

static inline int coll_halving_first_rank(int nr, int m) { return nr < m ? 2 * nr : nr + m; }

/* One halving step of new rank nr, which holds the segments of new ranks
 * [*lo, *hi): it keeps the half holding its own (then [*lo, *hi)) and gives
 * the other to peer; offsets and lengths in elements, off the prefix sums
 * of the counts. */
typedef struct {
    size_t keep_at, keep, give_at, give;
    int peer;
} coll_halving_step_t;

static inline coll_halving_step_t coll_halving_step(int nr, int mask, int m, const size_t *off,
                                                    int *lo, int *hi)
{
    int partner = nr ^ mask, mid = *lo + mask, low = nr < partner;
    int keep_lo = low ? *lo : mid, keep_hi = low ? mid : *hi;
    int give_lo = low ? mid : *lo, give_hi = low ? *hi : mid;
    coll_halving_step_t st;
    st.keep_at = off[coll_halving_first_rank(keep_lo, m)];
    st.keep = off[coll_halving_first_rank(keep_hi, m)] - st.keep_at;
    st.give_at = off[coll_halving_first_rank(give_lo, m)];
    st.give = off[coll_halving_first_rank(give_hi, m)] - st.give_at;
    st.peer = coll_halving_old_rank(partner, m);
    *lo = keep_lo;
    *hi = keep_hi;
    return st;
}

#endif
