/* tern-bench reduce: latency of MPI_Reduce (MPI_INT, MPI_SUM) to rank 0. */
#include "coll_driver.h"

static void prepare(size_t size, void *sbuf, void *rbuf, const bench_opts *o)
{
    bench_coll_fill_ints(sbuf, size / sizeof(int), size, bench_rank, o);
    memset(rbuf, 0, size);
}

static void run(size_t size, void *sbuf, void *rbuf)
{
    BENCH_CHECK(MPI_Reduce(sbuf, rbuf, (int)(size / sizeof(int)), MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
}

static void check(size_t size, const void *sbuf, const void *rbuf)
{
    (void)sbuf;
    if (bench_rank == 0) bench_check_int(rbuf, size / sizeof(int), size, "reduced sum", bench_coll_sum, NULL);
}

int main(int argc, char **argv)
{
    static const bench_coll coll = {
        .desc = {.name = "reduce", .title = "Reduce Latency Test", .min_size = 4, .max_size = 1 << 20,
                 .iters = 1000, .iters_large = 100, .warmup = 200, .warmup_large = 10, .min_ranks = 2},
        .elem = sizeof(int), .send_blocks = 1, .recv_blocks = 1,
        .prepare = prepare, .run = run, .check = check};
    return bench_coll_main(argc, argv, &coll);
}
