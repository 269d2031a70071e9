/* tern-bench mr_mt: message rate with 1, 2 and 4 threads per rank
 * (mt_driver.h). */
#include "mt_driver.h"

int main(int argc, char **argv)
{
    static const bench_desc desc = {
        .name = "mr_mt", .title = "Multi-threaded Message Rate Test", .min_size = 1, .max_size = 16384,
        .iters = 100, .iters_large = 20, .warmup = 10, .warmup_large = 2, .window = 64, .min_ranks = 2,
        .threads = 1};
    return bench_mt_main(argc, argv, &desc, BENCH_MT_RATE);
}
