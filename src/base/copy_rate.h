/* This rank's own estimate of how fast one core copies memory now: the one
 * signal behind choices that trade a second copy for a fixed cost (a CMA
 * read pins pages: several us), TERN_COLL_PAIR_GET=auto. The host of a VM
 * flips between states: in the usual one a 256 KB memcpy runs from cache
 * at 60-130 GB/s and the two-copy shared-memory paths win; in a
 * memory-bound one (a neighbour saturating the memory system) the same
 * copy runs at 15-30 GB/s and each copy saved pays (docs/performance.md,
 * row cma2). */
#ifndef TERN_BASE_COPY_RATE_H
#define TERN_BASE_COPY_RATE_H

/* GB/s of this rank's memcpy of 256 KB, cache-warm, the best of three,
 * timed at the first call and again at most once a second (~10-40 us
 * each time); the figure of the last timing in between. */
double tern_copy_rate_gbs(void);

/* 1 when copies are slow now: tern_copy_rate_gbs() below
 * TERN_COPY_SLOW_GBS. Local to this rank; a choice that both ranks must
 * share agrees on it first (pair_get.c). */
int tern_copies_slow(void);

#endif
