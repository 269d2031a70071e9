/* tern-bench cas_lat: MPI_Compare_and_swap latency (one MPI_INT64_T; sizes do not apply). */
#include "rma_driver.h"

int main(int argc, char **argv)
{
    static const bench_rma rma = {
        .desc = {.name = "cas_lat", .title = "Compare_and_swap Latency Test", .min_size = 8, .max_size = 8,
                 .iters = 10000, .iters_large = 1000, .warmup = 1000, .warmup_large = 100, .min_ranks = 2,
                 .rma = 1, .sync = BENCH_SYNC_FLUSH, .syncs = BENCH_RMA_ALL_SYNCS},
        .op = BENCH_RMA_CAS, .measure = BENCH_RMA_LATENCY};
    return bench_rma_main(argc, argv, &rma);
}
