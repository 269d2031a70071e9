/* Collectives through the ABI: a user reduction op (it sees the ABI's
 * datatype handle), MPI_IN_PLACE, a non-commutative op, Alltoallw's arrays
 * of datatypes, Bcast. */
#include "abi_test.h"

static MPI_Datatype seen_type;
static int calls;

/* Elementwise inout = in + 2 * inout (commutative enough for a check). */
static void add_twice(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    seen_type = *dt;
    calls++;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* 2x2 matrix product, non-commutative: inout = in * inout. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                    a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        for (int k = 0; k < 4; k++)
            b[k] = c[k];
    }
}

static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    CHECK(*dt == MPI_LONG_LONG, "large-count op sees type %p", (void *)*dt);
    for (MPI_Count i = 0; i < *len; i++)
        ((long long *)inout)[i] += ((long long *)in)[i];
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Op op, mop, cop;
    CHECK_OK(MPI_Op_create(add_twice, 1, &op));
    int v[3] = {rank, rank + 1, 1}, r[3];
    CHECK_OK(MPI_Allreduce(v, r, 3, MPI_INT, op, MPI_COMM_WORLD));
    int s = size * (size - 1) / 2;
    CHECK(r[0] == s && r[1] == s + size && r[2] == size, "allreduce %d %d %d", r[0], r[1], r[2]);
    CHECK(size == 1 || (calls > 0 && seen_type == MPI_INT), "op saw %p, %d calls",
          (void *)seen_type, calls);
    /* MPI_IN_PLACE is 1 in the ABI. */
    r[0] = rank;
    CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(r[0] == s, "in place %d", r[0]);

    /* Non-commutative: the product in rank order. */
    CHECK_OK(MPI_Op_create(matmul, 0, &mop));
    int m[4] = {1, rank, 0, 1}, p[4];
    MPI_Datatype mat; /* one element is a whole matrix: the op reads 4 ints */
    CHECK_OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    CHECK_OK(MPI_Type_commit(&mat));
    CHECK_OK(MPI_Reduce(m, p, 1, mat, mop, 0, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(p[0] == 1 && p[1] == s && p[2] == 0 && p[3] == 1, "product %d %d %d %d", p[0],
              p[1], p[2], p[3]);
    CHECK_OK(MPI_Op_create_c(sum_c, 1, &cop));
    long long big = rank + 1, bigsum = 0;
    CHECK_OK(MPI_Allreduce_c(&big, &bigsum, 1, MPI_LONG_LONG, cop, MPI_COMM_WORLD));
    CHECK(bigsum == (long long)size * (size + 1) / 2, "_c op: %lld", bigsum);
    CHECK_OK(MPI_Op_free(&op));
    CHECK_OK(MPI_Op_free(&mop));
    CHECK_OK(MPI_Op_free(&cop));
    CHECK(op == MPI_OP_NULL, "freed op");

    /* The layer's 64 op trampolines: the 65th live op is MPI_ERR_INTERN
     * (through the handler), a freed op's slot serves again. */
    MPI_Op many[65];
    int made = 0, err = MPI_SUCCESS, cls = -1;
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    while (made < 65 && (err = MPI_Op_create(add_twice, 1, &many[made])) == MPI_SUCCESS)
        made++;
    CHECK(made == 64 && err != MPI_SUCCESS, "%d ops made, then %d", made, err);
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_INTERN, "class %d", cls);
    CHECK_OK(MPI_Op_free(&many[10]));
    CHECK_OK(MPI_Op_create(add_twice, 1, &many[10]));
    r[0] = 1;
    CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, r, 1, MPI_INT, many[10], MPI_COMM_WORLD));
    CHECK(r[0] == size, "reused slot: %d", r[0]);
    for (int i = 0; i < made; i++)
        CHECK_OK(MPI_Op_free(&many[i]));

    /* Alltoallw: one int to each rank, types as an array of ABI handles. */
    int *sb = malloc(size * sizeof(int)), *rb = malloc(size * sizeof(int));
    int *cnts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    MPI_Datatype *types = malloc(size * sizeof(MPI_Datatype));
    for (int i = 0; i < size; i++) {
        sb[i] = rank * 100 + i;
        rb[i] = -1;
        cnts[i] = 1;
        displs[i] = i * (int)sizeof(int);
        types[i] = MPI_INT;
    }
    CHECK_OK(MPI_Alltoallw(sb, cnts, displs, types, rb, cnts, displs, types, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(rb[i] == i * 100 + rank, "alltoallw rb[%d] %d", i, rb[i]);

    /* Ialltoallw: libtern reads the type arrays until the request ends. */
    MPI_Request req;
    for (int i = 0; i < size; i++)
        rb[i] = -1, sb[i] = rank * 1000 + i;
    CHECK_OK(MPI_Ialltoallw(sb, cnts, displs, types, rb, cnts, displs, types, MPI_COMM_WORLD,
                            &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < size; i++)
        CHECK(rb[i] == i * 1000 + rank, "ialltoallw rb[%d] %d", i, rb[i]);

    int b = rank == 0 ? 42 : 0;
    CHECK_OK(MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(b == 42, "bcast %d", b);
    MPI_Type_free(&mat);
    free(sb), free(rb), free(cnts), free(displs), free(types);
    MPI_Finalize();
    if (rank == 0)
        printf("test abi_coll ok\n");
    return 0;
}
