/* tern-bench get_lat: MPI_Get latency: one get and its completion. */
#include "rma_driver.h"

int main(int argc, char **argv)
{
    static const bench_rma rma = {
        .desc = {.name = "get_lat", .title = "Get Latency Test", .min_size = 1, .max_size = 4 << 20,
                 .iters = 10000, .iters_large = 1000, .warmup = 1000, .warmup_large = 100, .min_ranks = 2,
                 .rma = 1, .sync = BENCH_SYNC_FLUSH, .syncs = BENCH_RMA_ALL_SYNCS},
        .op = BENCH_RMA_GET, .measure = BENCH_RMA_LATENCY};
    return bench_rma_main(argc, argv, &rma);
}
