/* Allreduce, reduce (roots 0 and p - 1) and reduce_scatter_block through
 * the default selection table at the vector sizes where its 2-rank paths
 * change (8 KB: allreduce from recursive doubling to shm; 64 KB; 128 KB,
 * the 2-rank region's slot: one shm step up to it, allreduce in two past
 * it, reduce binomial past it; 256 KB: reduce_scatter in steps of half a
 * slot per block), one element either side of each: int sums, double
 * sums, int max, byte xor (odd counts of 1-byte elements), a
 * non-commutative user op (affine maps, rank order), each also
 * MPI_IN_PLACE. Every element of every result is checked against one
 * computed locally. */
#include "../mpi/mtest.h"
#include "affine_op.h"

enum { T_INT_SUM, T_DOUBLE_SUM, T_INT_MAX, T_BYTE_XOR, T_AFFINE, N_TYPES };
static const char *const type_names[N_TYPES] = {"int sum", "double sum", "int max", "byte xor",
                                                "affine"};
static const size_t esz_of[N_TYPES] = {4, 8, 4, 1, 8};
static const size_t limits[] = {8192, 65536, 131072, 262144};

static MPI_Datatype affine_type;
static MPI_Op affine_op;

/* Rank q's element i, written at e. */
static void value(int t, int q, size_t i, void *e)
{
    switch (t) {
    case T_INT_SUM: *(int *)e = q * 7 + (int)(i % 1000) - 500; break;
    case T_DOUBLE_SUM: *(double *)e = (double)(q + 1) * (double)(i % 97) + 0.5; break;
    case T_INT_MAX: *(int *)e = (int)((i * 31 + (size_t)q * 17) % 1009); break;
    case T_BYTE_XOR: *(unsigned char *)e = (unsigned char)(i * 7 + (size_t)q * 13 + i / 251); break;
    default: *(affine_t *)e = affine_of(q, i);
    }
}

/* x_0 op ... op x_(p-1) for element i. */
static void expected(int t, int p, size_t i, void *e)
{
    value(t, p - 1, i, e);
    for (int q = p - 2; q >= 0; q--) {
        union {
            int i;
            double d;
            unsigned char c;
            affine_t a;
        } x;
        value(t, q, i, &x);
        switch (t) {
        case T_INT_SUM: *(int *)e += x.i; break;
        case T_DOUBLE_SUM: *(double *)e += x.d; break;
        case T_INT_MAX: *(int *)e = x.i > *(int *)e ? x.i : *(int *)e; break;
        case T_BYTE_XOR: *(unsigned char *)e ^= x.c; break;
        default: {
            int one = 1;
            compose(&x.a, e, &one, NULL);
        }
        }
    }
}

static MPI_Datatype dtype(int t)
{
    static const MPI_Datatype d[N_TYPES - 1] = {MPI_INT, MPI_DOUBLE, MPI_INT, MPI_UNSIGNED_CHAR};
    return t == T_AFFINE ? affine_type : d[t];
}

static MPI_Op op(int t)
{
    static const MPI_Op o[N_TYPES - 1] = {MPI_SUM, MPI_SUM, MPI_MAX, MPI_BXOR};
    return t == T_AFFINE ? affine_op : o[t];
}

/* Element i of buf (count elements from element `first` of the vector)
 * against the expected one. */
static void check(int t, int p, const char *buf, size_t count, size_t first, const char *what,
                  size_t total)
{
    size_t esz = esz_of[t];
    for (size_t i = 0; i < count; i++) {
        char want[8];
        expected(t, p, first + i, want);
        if (memcmp(buf + i * esz, want, esz) != 0) {
            CHECK(0, "%s, %s, %zu elements: element %zu wrong", what, type_names[t], total, first + i);
            return;
        }
    }
}

static void run_allreduce(int t, size_t n, int in_place, int p, int me)
{
    size_t esz = esz_of[t];
    char *s = malloc(n * esz + 1), *r = malloc(n * esz + 1);
    for (size_t i = 0; i < n; i++)
        value(t, me, i, (in_place ? r : s) + i * esz);
    CHECK_RC(MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, (int)n, dtype(t), op(t), MPI_COMM_WORLD));
    check(t, p, r, n, 0, in_place ? "allreduce in place" : "allreduce", n);
    free(s);
    free(r);
}

static void run_rsb(int t, size_t per, int in_place, int p, int me)
{
    size_t esz = esz_of[t], n = per * (size_t)p;
    char *s = malloc(n * esz + 1), *r = malloc((in_place ? n : per) * esz + 1);
    for (size_t i = 0; i < n; i++)
        value(t, me, i, (in_place ? r : s) + i * esz);
    CHECK_RC(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : s, r, (int)per, dtype(t), op(t),
                                      MPI_COMM_WORLD));
    check(t, p, r, per, per * (size_t)me, in_place ? "reduce_scatter_block in place" : "reduce_scatter_block", n);
    free(s);
    free(r);
}

static void run_reduce(int t, size_t n, int in_place, int root, int p, int me)
{
    size_t esz = esz_of[t];
    char *s = malloc(n * esz + 1), *r = malloc(n * esz + 1);
    int ip = in_place && me == root; /* only the root may pass MPI_IN_PLACE */
    for (size_t i = 0; i < n; i++)
        value(t, me, i, (ip ? r : s) + i * esz);
    CHECK_RC(MPI_Reduce(ip ? MPI_IN_PLACE : s, r, (int)n, dtype(t), op(t), root, MPI_COMM_WORLD));
    if (me == root)
        check(t, p, r, n, 0, ip ? "reduce in place" : "reduce", n);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p = mtest_size, me = mtest_rank;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &affine_type);
    MPI_Type_commit(&affine_type);
    MPI_Op_create(compose, 0, &affine_op);
    for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++)
        for (int t = 0; t < N_TYPES; t++)
            for (int d = -1; d <= 1; d++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    size_t n = limits[k] / esz_of[t] + (size_t)(long)d;
                    run_allreduce(t, n, in_place, p, me);
                    run_reduce(t, n, in_place, d < 0 ? 0 : p - 1, p, me);
                    run_rsb(t, n / (size_t)p, in_place, p, me);
                }
    MPI_Op_free(&affine_op);
    MPI_Type_free(&affine_type);
    return mtest_finalize();
}
