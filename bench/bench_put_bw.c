/* tern-bench put_bw: MPI_Put bandwidth: a window of -W puts per synchronisation; bytes put / time. */
#include "rma_driver.h"

int main(int argc, char **argv)
{
    static const bench_rma rma = {
        .desc = {.name = "put_bw", .title = "Put Bandwidth Test", .min_size = 1, .max_size = 4 << 20,
                 .iters = 100, .iters_large = 20, .warmup = 10, .warmup_large = 2, .window = 64, .min_ranks = 2,
                 .rma = 1, .sync = BENCH_SYNC_FLUSH, .syncs = BENCH_RMA_ALL_SYNCS},
        .op = BENCH_RMA_PUT, .measure = BENCH_RMA_BW};
    return bench_rma_main(argc, argv, &rma);
}
