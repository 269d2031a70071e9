/* tern-bench alltoall: latency of MPI_Alltoall; size is one block (one
 * rank to one rank). */
#include "coll_driver.h"

static void prepare(size_t size, void *sbuf, void *rbuf, const bench_opts *o)
{
    for (int d = 0; d < bench_size; d++) bench_fill((char *)sbuf + size * d, size, size, bench_rank, d, o);
    memset(rbuf, 0, size * bench_size);
}

static void run(size_t size, void *sbuf, void *rbuf)
{
    BENCH_CHECK(MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD));
}

static void check(size_t size, const void *sbuf, const void *rbuf)
{
    (void)sbuf;
    for (int r = 0; r < bench_size; r++)
        bench_check((const char *)rbuf + size * r, size, size, r, bench_rank, "exchanged block");
}

int main(int argc, char **argv)
{
    static const bench_coll coll = {
        .desc = {.name = "alltoall", .title = "All-to-All Latency Test", .min_size = 1, .max_size = 1 << 20,
                 .iters = 1000, .iters_large = 100, .warmup = 200, .warmup_large = 10, .min_ranks = 2},
        .prepare = prepare, .run = run, .check = check};
    return bench_coll_main(argc, argv, &coll);
}
