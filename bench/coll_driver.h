/* tern-bench: the common loop of the collective benchmarks.
 *
 * A collective benchmark describes itself, prepares its buffers for a size
 * (patterns in, cleared outputs), runs one operation, and checks the outputs
 * afterwards; the driver walks the sizes, times warm-up and timed iterations
 * and prints the average, minimum and maximum latency over ranks (as the OSU
 * collective benchmarks do). */
#ifndef TERN_BENCH_COLL_DRIVER_H
#define TERN_BENCH_COLL_DRIVER_H

#include "harness.h"

typedef struct bench_coll {
    bench_desc desc;
    size_t elem;                           /* sizes are multiples of this (4 for int reductions) */
    size_t send_blocks, recv_blocks;       /* buffer sizes in blocks of max_size; 0 = nranks */
    void (*prepare)(size_t size, void *sbuf, void *rbuf, const bench_opts *opts);
    void (*run)(size_t size, void *sbuf, void *rbuf);
    void (*check)(size_t size, const void *sbuf, const void *rbuf);
} bench_coll;

int bench_coll_main(int argc, char **argv, const bench_coll *coll);

/* Reduction input of rank `src`, element i (sums stay far from overflow). */
int bench_coll_input(size_t i, size_t size, int src);
/* Fills `count` ints with rank src's input (corrupting one if asked). */
void bench_coll_fill_ints(int *buf, size_t count, size_t size, int src, const bench_opts *opts);
/* Expected sum over all ranks of element i (arg: unused). */
int bench_coll_sum(size_t i, size_t size, void *arg);

#endif
