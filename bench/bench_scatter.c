/* tern-bench scatter: latency of MPI_Scatter from rank 0; size is each rank's block. */
#include "coll_driver.h"

static void prepare(size_t size, void *sbuf, void *rbuf, const bench_opts *o)
{
    memset(sbuf, 0, size * bench_size);
    for (int d = 0; bench_rank == 0 && d < bench_size; d++) bench_fill((char *)sbuf + size * d, size, size, 0, d, o);
    memset(rbuf, 0, size);
}

static void run(size_t size, void *sbuf, void *rbuf)
{
    BENCH_CHECK(MPI_Scatter(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD));
}

static void check(size_t size, const void *sbuf, const void *rbuf)
{
    (void)sbuf;
    bench_check(rbuf, size, size, 0, bench_rank, "scattered block");
}

int main(int argc, char **argv)
{
    static const bench_coll coll = {
        .desc = {.name = "scatter", .title = "Scatter Latency Test", .min_size = 1, .max_size = 1 << 20,
                 .iters = 1000, .iters_large = 100, .warmup = 200, .warmup_large = 10, .min_ranks = 2},
        .recv_blocks = 1, .prepare = prepare, .run = run, .check = check};
    return bench_coll_main(argc, argv, &coll);
}
