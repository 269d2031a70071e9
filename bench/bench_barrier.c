/* tern-bench barrier: latency of MPI_Barrier. Validation: while rank 0
 * sleeps before entering, no other rank may leave the barrier. */
#include "coll_driver.h"

#include <time.h>

#define HOLD_MS 200

static void run(size_t size, void *sbuf, void *rbuf)
{
    (void)size, (void)sbuf, (void)rbuf;
    BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void check(size_t size, const void *sbuf, const void *rbuf)
{
    (void)size, (void)sbuf, (void)rbuf;
    BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    if (bench_rank == 0) {
        struct timespec ts = {0, HOLD_MS * 1000000L};
        while (nanosleep(&ts, &ts)) continue;
    }
    BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double held_ms = (MPI_Wtime() - t0) * 1e3;
    /* Half the hold leaves room for a rank that is descheduled on its way in. */
    if (bench_rank != 0 && held_ms < HOLD_MS / 2) {
        fprintf(stderr,
                "tern-bench barrier: rank %d: validation failed: left MPI_Barrier after %.1f ms while "
                "rank 0 held it for %d ms\n",
                bench_rank, held_ms, HOLD_MS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (bench_rank != 0) bench_validated();
}

int main(int argc, char **argv)
{
    static const bench_coll coll = {
        .desc = {.name = "barrier", .title = "Barrier Latency Test", .min_size = 0, .max_size = 0,
                 .iters = 10000, .iters_large = 10000, .warmup = 1000, .warmup_large = 1000, .min_ranks = 2},
        .send_blocks = 1, .recv_blocks = 1, .run = run, .check = check};
    return bench_coll_main(argc, argv, &coll);
}
