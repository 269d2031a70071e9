/* tern-bench mbw_mr: multiple bandwidth / message rate. Rank r of the first
 * half streams windows to rank r + n/2; the aggregate over all pairs is
 * reported, timed to the slowest sender. */
#include "harness.h"

int main(int argc, char **argv)
{
    static const bench_desc desc = {
        .name = "mbw_mr", .title = "Multiple Bandwidth / Message Rate Test", .min_size = 1,
        .max_size = 4 << 20, .iters = 100, .iters_large = 20, .warmup = 10, .warmup_large = 2, .window = 64,
        .min_ranks = 2, .even_ranks = 1};
    bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    bench_table t = {.cols = {"MB/s", "Messages/s"}, .keys = {"bw_mbs", "msg_rate"}, .ncols = 2};
    char *sbuf = bench_alloc(o.max_size), *rbuf = bench_alloc(o.max_size);
    MPI_Request *req = bench_alloc(sizeof(MPI_Request) * o.window);
    const int pairs = bench_size / 2, sender = bench_rank < pairs;
    const int peer = sender ? bench_rank + pairs : bench_rank - pairs;
    int ack = 0;
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
            if (sender) {
                for (int w = 0; w < o.window; w++)
                    BENCH_CHECK(MPI_Isend(sbuf, n, MPI_BYTE, peer, 300, MPI_COMM_WORLD, &req[w]));
                BENCH_CHECK(MPI_Waitall(o.window, req, MPI_STATUSES_IGNORE));
                BENCH_CHECK(MPI_Recv(&ack, 1, MPI_INT, peer, 301, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                for (int w = 0; w < o.window; w++)
                    BENCH_CHECK(MPI_Irecv(rbuf, n, MPI_BYTE, peer, 300, MPI_COMM_WORLD, &req[w]));
                BENCH_CHECK(MPI_Waitall(o.window, req, MPI_STATUSES_IGNORE));
                BENCH_CHECK(MPI_Send(&ack, 1, MPI_INT, peer, 301, MPI_COMM_WORLD));
            }
        }
        double elapsed = bench_max_double(sender ? MPI_Wtime() - t0 : 0.0);
        if (!sender) bench_check(rbuf, size, size, peer, 0, "streamed data");
        double rate = (double)pairs * iters * o.window / elapsed;
        double v[2] = {rate * size / 1e6, rate};
        bench_table_row(&t, size, v, iters);
    }
    free(sbuf);
    free(rbuf);
    free(req);
    return bench_finalize(&t);
}
