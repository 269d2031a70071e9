/* tern-bench get_bw: MPI_Get bandwidth: a window of -W gets per synchronisation. */
#include "rma_driver.h"

int main(int argc, char **argv)
{
    static const bench_rma rma = {
        .desc = {.name = "get_bw", .title = "Get Bandwidth Test", .min_size = 1, .max_size = 4 << 20,
                 .iters = 100, .iters_large = 20, .warmup = 10, .warmup_large = 2, .window = 64, .min_ranks = 2,
                 .rma = 1, .sync = BENCH_SYNC_FLUSH, .syncs = BENCH_RMA_ALL_SYNCS},
        .op = BENCH_RMA_GET, .measure = BENCH_RMA_BW};
    return bench_rma_main(argc, argv, &rma);
}
