/* tern-bench latency: ping-pong between ranks 0 and 1 (others wait);
 * one-way latency = round trip / 2. */
#include "harness.h"

int main(int argc, char **argv)
{
    static const bench_desc desc = {
        .name = "latency", .title = "Latency Test", .min_size = 1, .max_size = 4 << 20,
        .iters = 10000, .iters_large = 1000, .warmup = 1000, .warmup_large = 100, .min_ranks = 2};
    bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    bench_table t = {.cols = {"Latency (us)"}, .keys = {"latency_us"}, .ncols = 1};
    char *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(o.max_size);
    const int peer = bench_rank == 0 ? 1 : 0, active = bench_rank < 2;
    bench_table_begin(&t, &desc, &o);
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        const int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        const int n = (int)size;
        bench_fill(sbuf, size, size, bench_rank, 0, &o);
        memset(rbuf, 0, size);
        BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = 0;
        for (int i = 0; active && i < warmup + iters; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            if (bench_rank == 0) {
                BENCH_CHECK(MPI_Send(sbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
                BENCH_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                BENCH_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                BENCH_CHECK(MPI_Send(sbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
            }
        }
        double elapsed = MPI_Wtime() - t0;
        if (active) bench_check(rbuf, size, size, peer, 0, "ping-pong data");
        double lat = elapsed * 1e6 / (2.0 * iters);
        bench_table_row(&t, size, &lat, iters);
    }
    free(sbuf);
    free(rbuf);
    return bench_finalize(&t);
}
