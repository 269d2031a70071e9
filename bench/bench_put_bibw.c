/* tern-bench put_bibw: MPI_Put bidirectional bandwidth: both ranks put a window of -W puts per epoch (fence or pscw). */
#include "rma_driver.h"

int main(int argc, char **argv)
{
    static const bench_rma rma = {
        .desc = {.name = "put_bibw", .title = "Put Bi-directional Bandwidth Test", .min_size = 1, .max_size = 4 << 20,
                 .iters = 100, .iters_large = 20, .warmup = 10, .warmup_large = 2, .window = 64, .min_ranks = 2,
                 .rma = 1, .sync = BENCH_SYNC_PSCW, .syncs = BENCH_RMA_ACTIVE_SYNCS},
        .op = BENCH_RMA_PUT, .measure = BENCH_RMA_BIBW};
    return bench_rma_main(argc, argv, &rma);
}
