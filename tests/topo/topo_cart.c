/* MPI_Dims_create and Cartesian topologies: balanced grids (MPI-4.1's
 * examples, fixed dimensions, the cases greedy factoring gets wrong) and
 * their errors (MPI_ERR_DIMS, MPI_ERR_ARG); MPI_Cart_create with ranks
 * left out, MPI_Topo_test, MPI_Cartdim_get, MPI_Cart_get/coords/rank (with
 * periodic wrap), MPI_Cart_shift at open and periodic edges, MPI_Cart_sub,
 * MPI_Cart_map, zero-dimensional grids; MPI_Comm_dup keeps the topology
 * and MPI_Comm_split drops it; MPI_ERR_TOPOLOGY on communicators without
 * one. */
#include "../mpi/mtest.h"

static void dims(void)
{
    mtest_begin("Dims_create");
    struct {
        int n, nd, in[4], out[4];
    } cases[] = {
        {6, 2, {0, 0}, {3, 2}},          {7, 2, {0, 0}, {7, 1}},
        {6, 3, {0, 3, 0}, {2, 3, 1}},    {72, 2, {0, 0}, {9, 8}},
        {5040, 3, {0, 0, 0}, {21, 16, 15}}, {1, 3, {0, 0, 0}, {1, 1, 1}},
        {16, 4, {0, 0, 0, 0}, {2, 2, 2, 2}}, {12, 2, {4, 0}, {4, 3}},
        {8, 1, {0}, {8}},                 {1000000000, 3, {0, 0, 0}, {1000, 1000, 1000}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int d[4];
        memcpy(d, cases[k].in, sizeof d);
        CHECK_RC(MPI_Dims_create(cases[k].n, cases[k].nd, d));
        for (int i = 0; i < cases[k].nd; i++)
            CHECK(d[i] == cases[k].out[i], "Dims_create(%d, %d): dims[%d]=%d, want %d",
                  cases[k].n, cases[k].nd, i, d[i], cases[k].out[i]);
    }
    /* The world size in 2-D and 3-D: product and non-increasing order. */
    for (int nd = 2; nd <= 3; nd++) {
        int d[3] = {0, 0, 0}, prod = 1;
        CHECK_RC(MPI_Dims_create(mtest_size, nd, d));
        for (int i = 0; i < nd; i++) {
            prod *= d[i];
            CHECK(i == 0 || d[i] <= d[i - 1], "dims not non-increasing");
        }
        CHECK_INT(prod, mtest_size, "product of dims");
    }
    CHECK_RC(MPI_Dims_create(1, 0, NULL));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int d[2] = {0, 0}, bad[2] = {-1, 0}, fixed[2] = {4, 0};
    CHECK_CLASS(MPI_Dims_create(0, 2, d), MPI_ERR_ARG, "nnodes 0");
    CHECK_CLASS(MPI_Dims_create(4, -1, d), MPI_ERR_DIMS, "ndims -1");
    CHECK_CLASS(MPI_Dims_create(4, 2, bad), MPI_ERR_DIMS, "negative dims entry");
    CHECK_CLASS(MPI_Dims_create(6, 2, fixed), MPI_ERR_DIMS, "6 not a multiple of 4");
    CHECK_CLASS(MPI_Dims_create(2, 0, NULL), MPI_ERR_DIMS, "ndims 0 with nnodes 2");
    CHECK_CLASS(MPI_Dims_create(4, 2, NULL), MPI_ERR_ARG, "dims NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

static void cart(void)
{
    int p = mtest_size, me = mtest_rank;
    mtest_begin("Cart_create, queries, shift");
    /* A 2-D grid of the largest even size <= p: odd p leaves one rank out. */
    int rows = p >= 2 ? p / 2 : 1, cols = p >= 2 ? 2 : 1, n = rows * cols;
    int dims[2] = {rows, cols}, periods[2] = {1, 0};
    MPI_Comm c;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c));
    if (me >= n) {
        CHECK(c == MPI_COMM_NULL, "rank %d outside the %d-point grid got a communicator", me, n);
    } else {
        int kind, nd, r, sz, gd[2], gp[2], gc[2], co[2];
        CHECK_RC(MPI_Topo_test(c, &kind));
        CHECK_INT(kind, MPI_CART, "Topo_test");
        CHECK_RC(MPI_Comm_size(c, &sz));
        CHECK_INT(sz, n, "grid size");
        CHECK_RC(MPI_Comm_rank(c, &r));
        CHECK_INT(r, me, "rank (no reordering)");
        CHECK_RC(MPI_Cartdim_get(c, &nd));
        CHECK_INT(nd, 2, "Cartdim_get");
        CHECK_RC(MPI_Cart_get(c, 2, gd, gp, gc));
        CHECK(gd[0] == rows && gd[1] == cols && gp[0] == 1 && gp[1] == 0, "Cart_get dims/periods");
        CHECK(gc[0] == r / cols && gc[1] == r % cols, "Cart_get coords (%d,%d)", gc[0], gc[1]);
        for (int q = 0; q < n; q++) {
            int back;
            CHECK_RC(MPI_Cart_coords(c, q, 2, co));
            CHECK(co[0] == q / cols && co[1] == q % cols, "Cart_coords of %d", q);
            CHECK_RC(MPI_Cart_rank(c, co, &back));
            CHECK_INT(back, q, "Cart_rank(Cart_coords)");
        }
        /* Periodic dimension 0 wraps; open dimension 1 does not. */
        co[0] = gc[0] - rows;
        co[1] = gc[1];
        CHECK_RC(MPI_Cart_rank(c, co, &r));
        CHECK_INT(r, me, "Cart_rank wraps a periodic coordinate");
        int src, dst;
        CHECK_RC(MPI_Cart_shift(c, 0, 1, &src, &dst));
        CHECK_INT(src, ((gc[0] - 1 + rows) % rows) * cols + gc[1], "shift dim 0 source");
        CHECK_INT(dst, ((gc[0] + 1) % rows) * cols + gc[1], "shift dim 0 dest");
        CHECK_RC(MPI_Cart_shift(c, 1, 1, &src, &dst));
        CHECK_INT(src, gc[1] == 0 ? MPI_PROC_NULL : me - 1, "shift dim 1 source (open)");
        CHECK_INT(dst, gc[1] == cols - 1 ? MPI_PROC_NULL : me + 1, "shift dim 1 dest (open)");
        CHECK_RC(MPI_Cart_shift(c, 0, -3 * rows, &src, &dst));
        CHECK(src == me && dst == me, "shift by a multiple of a periodic size");
        /* Errors on a Cartesian communicator. */
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        co[0] = 0;
        co[1] = cols;
        CHECK_CLASS(MPI_Cart_rank(c, co, &r), MPI_ERR_ARG, "coordinate past an open edge");
        CHECK_CLASS(MPI_Cart_coords(c, n, 2, co), MPI_ERR_RANK, "Cart_coords rank out of range");
        CHECK_CLASS(MPI_Cart_coords(c, 0, 1, co), MPI_ERR_ARG, "Cart_coords maxdims too small");
        CHECK_CLASS(MPI_Cart_get(c, 1, gd, gp, gc), MPI_ERR_ARG, "Cart_get maxdims too small");
        CHECK_CLASS(MPI_Cart_shift(c, 2, 1, &src, &dst), MPI_ERR_ARG, "shift direction 2");
        CHECK_CLASS(MPI_Graphdims_get(c, &src, &dst), MPI_ERR_TOPOLOGY, "Graphdims_get on a cart");
        /* Comm_dup copies the topology; split does not. */
        MPI_Comm dup, split;
        CHECK_RC(MPI_Comm_dup(c, &dup));
        CHECK_RC(MPI_Topo_test(dup, &kind));
        CHECK_INT(kind, MPI_CART, "Topo_test of a dup");
        CHECK_RC(MPI_Cart_get(dup, 2, gd, gp, co));
        CHECK(co[0] == gc[0] && co[1] == gc[1], "dup's coords");
        CHECK_RC(MPI_Comm_free(&c)); /* the dup's copy outlives it */
        CHECK_RC(MPI_Cart_shift(dup, 0, 1, &src, &dst));
        CHECK_RC(MPI_Comm_split(dup, 0, 0, &split));
        CHECK_RC(MPI_Topo_test(split, &kind));
        CHECK_INT(kind, MPI_UNDEFINED, "Topo_test of a split");
        /* Cart_sub: the rows (keep dimension 1) and the columns. */
        MPI_Comm sub;
        int keep_cols[2] = {0, 1}, keep_rows[2] = {1, 0};
        CHECK_RC(MPI_Cart_sub(dup, keep_cols, &sub));
        CHECK_RC(MPI_Comm_size(sub, &sz));
        CHECK_INT(sz, cols, "Cart_sub row size");
        CHECK_RC(MPI_Cart_get(sub, 1, gd, gp, co));
        CHECK(gd[0] == cols && gp[0] == 0 && co[0] == gc[1], "Cart_sub row topology");
        MPI_Comm_free(&sub);
        CHECK_RC(MPI_Cart_sub(dup, keep_rows, &sub));
        CHECK_RC(MPI_Comm_rank(sub, &r));
        CHECK_INT(r, gc[0], "Cart_sub column rank");
        CHECK_RC(MPI_Cart_get(sub, 1, gd, gp, co));
        CHECK(gd[0] == rows && gp[0] == 1, "Cart_sub column topology");
        MPI_Comm_free(&sub);
        MPI_Comm_free(&split);
        MPI_Comm_free(&dup);
    }
    mtest_end();
}

static void map_and_errors(void)
{
    int p = mtest_size, me = mtest_rank;
    mtest_begin("Cart_map, zero dimensions, errors");
    int dims[1] = {p > 1 ? p - 1 : 1}, periods[1] = {0}, newrank;
    CHECK_RC(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &newrank));
    CHECK_INT(newrank, me < dims[0] ? me : MPI_UNDEFINED, "Cart_map");
    MPI_Comm z;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &z));
    if (me == 0) {
        int nd, sz;
        CHECK(z != MPI_COMM_NULL, "0-D grid on rank 0");
        CHECK_RC(MPI_Cartdim_get(z, &nd));
        CHECK_INT(nd, 0, "0-D Cartdim_get");
        CHECK_RC(MPI_Comm_size(z, &sz));
        CHECK_INT(sz, 1, "0-D size");
        MPI_Comm_free(&z);
    } else {
        CHECK(z == MPI_COMM_NULL, "0-D grid beyond rank 0");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int big[1] = {p + 1}, zero[2] = {p, 0}, ndims;
    MPI_Comm c;
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, big, periods, 0, &c), MPI_ERR_ARG,
                "grid larger than the communicator");
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, zero, 0, &c), MPI_ERR_DIMS,
                "zero dimension");
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, -1, big, periods, 0, &c), MPI_ERR_DIMS,
                "ndims -1");
    CHECK_CLASS(MPI_Cart_map(MPI_COMM_WORLD, 1, big, periods, &newrank), MPI_ERR_ARG,
                "Cart_map grid too large");
    char text[MPI_MAX_ERROR_STRING];
    snprintf(text, sizeof text,
             "MPI_Cartdim_get: communicator 0x%x has no topology, not a Cartesian one",
             (unsigned)MPI_COMM_WORLD);
    CHECK_ERROR_TEXT(MPI_Cartdim_get(MPI_COMM_WORLD, &ndims), MPI_ERR_TOPOLOGY, text,
                     "Cartdim_get without a topology");
    CHECK_CLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &ndims, &newrank), MPI_ERR_TOPOLOGY,
                "Cart_shift without a topology");
    int remain[1] = {1};
    CHECK_CLASS(MPI_Cart_sub(MPI_COMM_WORLD, remain, &c), MPI_ERR_TOPOLOGY,
                "Cart_sub without a topology");
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, NULL), MPI_ERR_ARG,
                "comm_cart NULL");
    int kind;
    CHECK_RC(MPI_Topo_test(MPI_COMM_WORLD, &kind));
    CHECK_INT(kind, MPI_UNDEFINED, "Topo_test of MPI_COMM_WORLD");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    dims();
    cart();
    map_and_errors();
    return mtest_finalize();
}
