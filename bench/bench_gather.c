/* tern-bench gather: latency of MPI_Gather to rank 0; size is each rank's block. */
#include "coll_driver.h"

static void prepare(size_t size, void *sbuf, void *rbuf, const bench_opts *o)
{
    bench_fill(sbuf, size, size, bench_rank, 0, o);
    memset(rbuf, 0, size * bench_size);
}

static void run(size_t size, void *sbuf, void *rbuf)
{
    BENCH_CHECK(MPI_Gather(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD));
}

static void check(size_t size, const void *sbuf, const void *rbuf)
{
    (void)sbuf;
    for (int r = 0; bench_rank == 0 && r < bench_size; r++)
        bench_check((const char *)rbuf + size * r, size, size, r, 0, "gathered block");
}

int main(int argc, char **argv)
{
    static const bench_coll coll = {
        .desc = {.name = "gather", .title = "Gather Latency Test", .min_size = 1, .max_size = 1 << 20,
                 .iters = 1000, .iters_large = 100, .warmup = 200, .warmup_large = 10, .min_ranks = 2},
        .send_blocks = 1, .prepare = prepare, .run = run, .check = check};
    return bench_coll_main(argc, argv, &coll);
}
