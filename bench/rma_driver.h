/* tern-bench: the common loop of the one-sided benchmarks (OSU's osu_put_*,
 * osu_get_*, osu_acc_latency, ... set).
 *
 * Ranks 0 and 1 share a window (other ranks wait). The window is made as
 * -w asks (MPI_Win_create, MPI_Win_allocate, MPI_Win_create_dynamic with
 * one attached region) and the access epochs are synchronised as -s asks:
 *   lock      rank 0: lock, operation(s), unlock, every iteration
 *   flush     rank 0: one lock; operation(s) and MPI_Win_flush per iteration
 *   lock_all  rank 0: one lock_all; operation(s) and MPI_Win_flush per iteration
 *   fence     both: fence-separated epochs
 *   pscw      post/start/complete/wait
 * With lock, flush and lock_all only rank 0 is an origin; with fence and
 * pscw the latency benchmarks ping-pong (rank 0's operation, then rank 1's;
 * latency = time / 2 per iteration), as OSU does.
 *
 * After each size the target checks its window (the bytes a put left, the
 * sum the accumulates made) and the origin what it fetched, once: a wrong
 * result exits 2 instead of posting a figure. */
#ifndef TERN_BENCH_RMA_DRIVER_H
#define TERN_BENCH_RMA_DRIVER_H

#include "harness.h"

enum { BENCH_RMA_PUT, BENCH_RMA_GET, BENCH_RMA_ACC, BENCH_RMA_GACC, BENCH_RMA_FOP, BENCH_RMA_CAS };
enum { BENCH_RMA_LATENCY, BENCH_RMA_BW, BENCH_RMA_BIBW };

typedef struct bench_rma {
    bench_desc desc;
    int op;      /* BENCH_RMA_PUT, ... */
    int measure; /* BENCH_RMA_LATENCY, ... */
} bench_rma;

int bench_rma_main(int argc, char **argv, const bench_rma *rma);

/* The synchronisations of the latency and bandwidth benchmarks, and of the
 * bidirectional one (both ranks are origins in one epoch). */
#define BENCH_RMA_ALL_SYNCS ((1u << BENCH_SYNC_COUNT) - 1)
#define BENCH_RMA_ACTIVE_SYNCS ((1u << BENCH_SYNC_FENCE) | (1u << BENCH_SYNC_PSCW))

#endif
