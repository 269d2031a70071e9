/* tern-bench: the common loop of the threaded benchmarks (MPI_THREAD_MULTIPLE).
 *
 * Thread t of rank 0 pairs with thread t of rank 1 (other ranks wait), each
 * pair on a communicator of its own (MPI_Comm_dup of MPI_COMM_WORLD) or,
 * with --shared-comm, all pairs on one communicator with tag t; so the
 * figures show what one thread costs another inside the MPI library, in
 * the two ways applications split their threads' traffic. Every thread's
 * data carries its thread number, so a message matched to the wrong thread
 * fails validation. A size's row holds one column per thread count (-T,
 * default 1, 2 and 4). */
#ifndef TERN_BENCH_MT_DRIVER_H
#define TERN_BENCH_MT_DRIVER_H

#include "harness.h"

enum { BENCH_MT_LATENCY, BENCH_MT_RATE };

/* latency_mt: each pair ping-pongs; a column is the one-way latency,
 * averaged over the threads (as osu_latency_mt).
 * mr_mt: each pair streams windows of nonblocking sends, acknowledged per
 * window (as mbw_mr); a column is the messages per second of all threads
 * together, timed to the slowest thread. */
int bench_mt_main(int argc, char **argv, const bench_desc *desc, int kind);

#endif
