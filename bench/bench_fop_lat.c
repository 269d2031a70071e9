/* tern-bench fop_lat: MPI_Fetch_and_op latency (one MPI_INT64_T, MPI_SUM; sizes do not apply). */
#include "rma_driver.h"

int main(int argc, char **argv)
{
    static const bench_rma rma = {
        .desc = {.name = "fop_lat", .title = "Fetch_and_op Latency Test", .min_size = 8, .max_size = 8,
                 .iters = 10000, .iters_large = 1000, .warmup = 1000, .warmup_large = 100, .min_ranks = 2,
                 .rma = 1, .sync = BENCH_SYNC_FLUSH, .syncs = BENCH_RMA_ALL_SYNCS},
        .op = BENCH_RMA_FOP, .measure = BENCH_RMA_LATENCY};
    return bench_rma_main(argc, argv, &rma);
}
