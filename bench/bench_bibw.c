/* tern-bench bibw: ranks 0 and 1 both stream a window of nonblocking sends
 * to each other; bandwidth = bytes sent both ways / time. With
 * --distinct-buffers every message of the window has its own send and
 * receive buffer. */
#include "harness.h"

int main(int argc, char **argv)
{
    static const bench_desc desc = {
        .name = "bibw", .title = "Bi-Directional Bandwidth Test", .min_size = 1, .max_size = 4 << 20,
        .iters = 100, .iters_large = 20, .warmup = 10, .warmup_large = 2, .window = 64, .min_ranks = 2};
    bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    bench_table t = {.cols = {"Bandwidth (MB/s)"}, .keys = {"bibw_mbs"}, .ncols = 1};
    size_t stride;
    char *sbuf = bench_window_alloc(&o, &stride), *rbuf = bench_window_alloc(&o, &stride);
    const int nbuf = bench_window_buffers(&o);
    MPI_Request *req = bench_alloc(sizeof(MPI_Request) * 2 * o.window);
    const int peer = bench_rank == 0 ? 1 : 0;
    bench_table_begin(&t, &desc, &o);
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        const int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        const int n = (int)size;
        for (int b = 0; b < nbuf; b++) {
            bench_fill(sbuf + b * stride, size, size, bench_rank, 0, &o);
            memset(rbuf + b * stride, 0, size);
        }
        BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = 0;
        for (int i = 0; bench_rank < 2 && i < warmup + iters; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            for (int w = 0; w < o.window; w++)
                BENCH_CHECK(MPI_Irecv(rbuf + w * stride, n, MPI_BYTE, peer, 200, MPI_COMM_WORLD, &req[w]));
            for (int w = 0; w < o.window; w++)
                BENCH_CHECK(MPI_Isend(sbuf + w * stride, n, MPI_BYTE, peer, 200, MPI_COMM_WORLD, &req[o.window + w]));
            BENCH_CHECK(MPI_Waitall(2 * o.window, req, MPI_STATUSES_IGNORE));
        }
        double elapsed = MPI_Wtime() - t0;
        for (int b = 0; bench_rank < 2 && b < nbuf; b++)
            bench_check(rbuf + b * stride, size, size, peer, 0, "streamed data");
        double bw = 2.0 * size * iters * o.window / elapsed / 1e6;
        bench_table_row(&t, size, &bw, iters);
    }
    free(sbuf);
    free(rbuf);
    free(req);
    return bench_finalize(&t);
}
