/* tern-bench latency_mt: ping-pong latency with 1, 2 and 4 threads per rank
 * (mt_driver.h). */
#include "mt_driver.h"

int main(int argc, char **argv)
{
    static const bench_desc desc = {
        .name = "latency_mt", .title = "Multi-threaded Latency Test", .min_size = 1, .max_size = 16384,
        .iters = 10000, .iters_large = 1000, .warmup = 1000, .warmup_large = 100, .min_ranks = 2,
        .threads = 1};
    return bench_mt_main(argc, argv, &desc, BENCH_MT_LATENCY);
}
