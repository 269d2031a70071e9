/* tern-bench reduce_scatter: latency of MPI_Reduce_scatter (MPI_INT,
 * MPI_SUM); size is each rank's whole input, split as evenly as possible. */
#include "coll_driver.h"

static int *counts;

/* First element of rank r's part of `count` elements. */
static size_t part_start(size_t count, int r)
{
    size_t q = count / bench_size, rem = count % bench_size;
    return q * r + ((size_t)r < rem ? (size_t)r : rem);
}

static void prepare(size_t size, void *sbuf, void *rbuf, const bench_opts *o)
{
    size_t count = size / sizeof(int);
    if (!counts) counts = bench_alloc(sizeof(int) * bench_size);
    for (int r = 0; r < bench_size; r++) counts[r] = (int)(part_start(count, r + 1) - part_start(count, r));
    bench_coll_fill_ints(sbuf, count, size, bench_rank, o);
    memset(rbuf, 0, size);
}

static void run(size_t size, void *sbuf, void *rbuf)
{
    (void)size;
    BENCH_CHECK(MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}

static int expect_part(size_t i, size_t size, void *arg)
{
    return bench_coll_sum(i + *(size_t *)arg, size, NULL);
}

static void check(size_t size, const void *sbuf, const void *rbuf)
{
    (void)sbuf;
    size_t start = part_start(size / sizeof(int), bench_rank);
    bench_check_int(rbuf, (size_t)counts[bench_rank], size, "reduced part", expect_part, &start);
}

int main(int argc, char **argv)
{
    static const bench_coll coll = {
        .desc = {.name = "reduce_scatter", .title = "Reduce_scatter Latency Test", .min_size = 4,
                 .max_size = 1 << 20, .iters = 1000, .iters_large = 100, .warmup = 200, .warmup_large = 10,
                 .min_ranks = 2},
        .elem = sizeof(int), .send_blocks = 1, .recv_blocks = 1,
        .prepare = prepare, .run = run, .check = check};
    return bench_coll_main(argc, argv, &coll);
}
