/* This rank's own estimate of what a copy costs now, against one CMA read:
 * the one signal behind choices that trade a second copy for a read that
 * pins pages (TERN_COLL_PAIR_GET=auto, TERN_SHM_EXCHANGE_PATH=auto). The
 * host of a VM moves between states, and neither rate follows the other:
 * in the usual one a 64 KB memcpy runs at 100-130 GB/s and the two-copy
 * paths win; in a memory-bound one (a neighbour saturating the memory
 * system) the copy runs at 15-30 GB/s and each copy saved pays
 * (docs/performance.md, row cma2); on some hosts the read itself runs at
 * a tenth of the copy (12 against 107 GB/s at 256 KB, row pays), so no
 * fixed copy rate tells when the read wins: its own rate does. */
#ifndef TERN_BASE_COPY_RATE_H
#define TERN_BASE_COPY_RATE_H

/* GB/s of this rank's memcpy of 64 KB, cache-warm, the best of three,
 * timed at the first call and again at most once a second (with the
 * read below: ~10-20 us each time); the figure of the last timing in
 * between. */
double tern_copy_rate_gbs(void);

/* GB/s of one CMA read (process_vm_readv) of 64 KB of this process's own
 * memory, timed with the copy: the pinning and the copy a read of a
 * peer's buffer pays. 0 when the kernel refuses CMA. */
double tern_cma_rate_gbs(void);

/* 1 when one CMA read per byte beats two copies per byte at copy_gbs GB/s
 * each (the two-copy paths' rate: a memcpy, or a stream's own timed
 * copies): the read takes under TERN_CMA_PAYS_PCT percent of the two
 * copies' time. Local to this rank; a choice that both ranks must share
 * agrees on it first (pair_get.c). */
int tern_single_copy_pays(double copy_gbs);

#endif
