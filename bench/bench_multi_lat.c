/* tern-bench multi_lat: every rank r of the first half ping-pongs with
 * rank r + n/2 at the same time; the average one-way latency is reported. */
#include "harness.h"

int main(int argc, char **argv)
{
    static const bench_desc desc = {
        .name = "multi_lat", .title = "Multi Latency Test", .min_size = 1, .max_size = 4 << 20,
        .iters = 10000, .iters_large = 1000, .warmup = 1000, .warmup_large = 100, .min_ranks = 2,
        .even_ranks = 1};
    bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    bench_table t = {.cols = {"Latency (us)"}, .keys = {"latency_us"}, .ncols = 1};
    char *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(o.max_size);
    const int pairs = bench_size / 2, first = bench_rank < pairs;
    const int peer = first ? bench_rank + pairs : bench_rank - pairs;
    bench_table_begin(&t, &desc, &o);
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        const int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        const int n = (int)size;
        bench_fill(sbuf, size, size, bench_rank, 0, &o);
        memset(rbuf, 0, size);
        BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = 0;
        for (int i = 0; i < warmup + iters; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            if (first) {
                BENCH_CHECK(MPI_Send(sbuf, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
                BENCH_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                BENCH_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                BENCH_CHECK(MPI_Send(sbuf, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
            }
        }
        double lat = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters), avg = 0;
        bench_check(rbuf, size, size, peer, 0, "ping-pong data");
        bench_stats_double(lat, NULL, &avg, NULL);
        bench_table_row(&t, size, &avg, iters);
    }
    free(sbuf);
    free(rbuf);
    return bench_finalize(&t);
}
