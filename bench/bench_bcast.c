/* tern-bench bcast: latency of MPI_Bcast from rank 0. */
#include "coll_driver.h"

static void prepare(size_t size, void *sbuf, void *rbuf, const bench_opts *o)
{
    (void)rbuf;
    if (bench_rank == 0) bench_fill(sbuf, size, size, 0, 0, o);
    else memset(sbuf, 0, size);
}

static void run(size_t size, void *sbuf, void *rbuf)
{
    (void)rbuf;
    BENCH_CHECK(MPI_Bcast(sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD));
}

static void check(size_t size, const void *sbuf, const void *rbuf)
{
    (void)rbuf;
    if (bench_rank != 0) bench_check(sbuf, size, size, 0, 0, "broadcast data");
}

int main(int argc, char **argv)
{
    static const bench_coll coll = {
        .desc = {.name = "bcast", .title = "Broadcast Latency Test", .min_size = 1, .max_size = 1 << 20,
                 .iters = 1000, .iters_large = 100, .warmup = 200, .warmup_large = 10, .min_ranks = 2},
        .send_blocks = 1, .recv_blocks = 1, .prepare = prepare, .run = run, .check = check};
    return bench_coll_main(argc, argv, &coll);
}
