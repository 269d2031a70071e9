/* tern-bench halo: the halo exchange of a stencil code on a process grid
 * (MPI_Dims_create, MPI_Cart_create with reorder; periodic in the
 * dimensions of 3 ranks or more: in one of 1 or 2 a rank's two neighbours
 * are one process, whose messages MPI matched in an order left undefined
 * before MPI-4.1, and MPICH 4.0 mixes them up): every rank exchanges one
 * message of the given size with each of its (up to) 2 x dims neighbours,
 * written four ways (columns): Isend/Irecv + Waitall along
 * MPI_Cart_shift, and MPI_Neighbor_alltoall, _alltoallv and _alltoallw.
 * Each way's received halos are checked once per size. Time: average over
 * ranks of one exchange. */
#include "harness.h"

#define WAYS 4

static MPI_Comm grid;
static int nnb; /* neighbours: 2 per dimension, (-, +) in each */
static int nbr[6], nbr_world[6]; /* grid ranks, and world ranks for the check */
static int counts[6], displs[6];
static MPI_Aint bdispls[6];
static MPI_Datatype types[6];

static void setup(int ndims)
{
    int dims[3] = {0, 0, 0}, periods[3];
    BENCH_CHECK(MPI_Dims_create(bench_size, ndims, dims));
    for (int d = 0; d < ndims; d++) periods[d] = dims[d] >= 3;
    BENCH_CHECK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 1, &grid));
    nnb = 2 * ndims;
    for (int d = 0; d < ndims; d++)
        BENCH_CHECK(MPI_Cart_shift(grid, d, 1, &nbr[2 * d], &nbr[2 * d + 1]));
    MPI_Group g, wg;
    BENCH_CHECK(MPI_Comm_group(grid, &g));
    BENCH_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    BENCH_CHECK(MPI_Group_translate_ranks(g, nnb, nbr, wg, nbr_world)); /* PROC_NULL stays */
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
}

/* Block k goes to neighbour k; the block from neighbour k lands in k. A
 * message to the + neighbour of dimension d arrives on its - side. */
static void exchange(int way, size_t size, char *sbuf, char *rbuf)
{
    int n = (int)size;
    MPI_Request req[12];
    switch (way) {
    case 0:
        for (int k = 0; k < nnb; k++)
            BENCH_CHECK(MPI_Irecv(rbuf + (size_t)k * size, n, MPI_BYTE, nbr[k], k, grid, &req[k]));
        for (int k = 0; k < nnb; k++)
            BENCH_CHECK(MPI_Isend(sbuf + (size_t)k * size, n, MPI_BYTE, nbr[k], k ^ 1, grid,
                                  &req[nnb + k]));
        BENCH_CHECK(MPI_Waitall(2 * nnb, req, MPI_STATUSES_IGNORE));
        break;
    case 1:
        BENCH_CHECK(MPI_Neighbor_alltoall(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, grid));
        break;
    case 2:
        BENCH_CHECK(MPI_Neighbor_alltoallv(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs,
                                           MPI_BYTE, grid));
        break;
    default:
        BENCH_CHECK(MPI_Neighbor_alltoallw(sbuf, counts, bdispls, types, rbuf, counts, bdispls,
                                           types, grid));
        break;
    }
}

int main(int argc, char **argv)
{
    static const bench_desc desc = {
        .name = "halo", .title = "Halo Exchange", .min_size = 1, .max_size = 1 << 20, .iters = 1000,
        .iters_large = 100, .warmup = 100, .warmup_large = 10, .dims = 2, .min_ranks = 1};
    bench_opts o;
    bench_init(&argc, &argv, &desc, &o);
    setup(o.dims);
    bench_table t = {.cols = {"Isend/Irecv (us)", "alltoall (us)", "alltoallv (us)", "alltoallw (us)"},
                     .keys = {"isend_irecv_us", "alltoall_us", "alltoallv_us", "alltoallw_us"},
                     .ncols = WAYS,
                     .with_iters = 1};
    char *sbuf = bench_alloc(o.max_size * (size_t)nnb), *rbuf = bench_alloc(o.max_size * (size_t)nnb);
    for (int k = 0; k < nnb; k++) types[k] = MPI_BYTE;
    bench_table_begin(&t, &desc, &o);
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        const int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        for (int k = 0; k < nnb; k++) {
            counts[k] = (int)size;
            displs[k] = k * (int)size;
            bdispls[k] = (MPI_Aint)k * (MPI_Aint)size;
            bench_fill(sbuf + (size_t)k * size, size, size, bench_rank, k, &o);
        }
        double v[WAYS];
        for (int way = 0; way < WAYS; way++) {
            memset(rbuf, 0, size * (size_t)nnb);
            exchange(way, size, sbuf, rbuf);
            /* Block k came from neighbour k, which sent its block k ^ 1. */
            for (int k = 0; k < nnb; k++)
                if (nbr[k] != MPI_PROC_NULL)
                    bench_check(rbuf + (size_t)k * size, size, size, nbr_world[k], k ^ 1, t.cols[way]);
            BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            for (int i = 0; i < warmup; i++) exchange(way, size, sbuf, rbuf);
            BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) exchange(way, size, sbuf, rbuf);
            double lat = (MPI_Wtime() - t0) * 1e6 / iters, lo, hi;
            bench_stats_double(lat, &lo, &v[way], &hi);
        }
        bench_validated();
        bench_table_row(&t, size, v, iters);
    }
    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&grid);
    return bench_finalize(&t);
}
