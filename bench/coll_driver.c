/* tern-bench: collective benchmark loop (see coll_driver.h). */
#include "coll_driver.h"

int bench_coll_input(size_t i, size_t size, int src)
{
    return (int)((i * 3 + size + (size_t)src * 7) % 1000);
}

void bench_coll_fill_ints(int *buf, size_t count, size_t size, int src, const bench_opts *opts)
{
    for (size_t i = 0; i < count; i++) buf[i] = bench_coll_input(i, size, src);
    if (opts->corrupt && count > 0) buf[count / 2] += 1;
}

int bench_coll_sum(size_t i, size_t size, void *arg)
{
    (void)arg;
    int s = 0;
    for (int r = 0; r < bench_size; r++) s += bench_coll_input(i, size, r);
    return s;
}

int bench_coll_main(int argc, char **argv, const bench_coll *c)
{
    bench_opts o;
    bench_init(&argc, &argv, &c->desc, &o);
    if (c->elem > 1 && o.min_size < c->elem) o.min_size = c->elem;
    if (c->desc.max_size == 0) o.min_size = o.max_size = 0; /* no message: sizes do not apply */
    bench_table t = {.cols = {"Avg Latency (us)", "Min Latency (us)", "Max Latency (us)"},
                     .keys = {"latency_us", "min_latency_us", "max_latency_us"},
                     .ncols = 3,
                     .with_iters = 1};
    size_t sblocks = c->send_blocks ? c->send_blocks : (size_t)bench_size;
    size_t rblocks = c->recv_blocks ? c->recv_blocks : (size_t)bench_size;
    size_t block = o.max_size ? o.max_size : 1;
    void *sbuf = bench_alloc(block * sblocks), *rbuf = bench_alloc(block * rblocks);
    bench_table_begin(&t, &c->desc, &o);
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        if (c->elem > 1 && size % c->elem) continue;
        const int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        if (c->prepare) c->prepare(size, sbuf, rbuf, &o);
        BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < warmup; i++) c->run(size, sbuf, rbuf);
        BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) c->run(size, sbuf, rbuf);
        double lat = (MPI_Wtime() - t0) * 1e6 / iters;
        if (c->check) c->check(size, sbuf, rbuf);
        double v[3] = {0, 0, 0};
        bench_stats_double(lat, &v[1], &v[0], &v[2]);
        bench_table_row(&t, size, v, iters);
    }
    free(sbuf);
    free(rbuf);
    return bench_finalize(&t);
}
