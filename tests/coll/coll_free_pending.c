/* Objects freed while a nonblocking collective that uses them is pending:
 * MPI_Type_free, MPI_Op_free and MPI_Comm_free only mark them, so the
 * collective completes with them (MPICH coll/nonblocking2 frees a dup'ed
 * type before MPI_Wait). Rank 0 frees its objects before the others even
 * start their part (they wait for a token sent after the free), so the
 * steps that use them run after the free. */
#include "../mpi/mtest.h"

#define N 16

/* Sums pairs of ints (the type is freed by now: not asked). */
static void sum_ints(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len * 2; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Rank 0 tells the others it freed its objects. */
static void token_after_free(void)
{
    int token = 1;
    if (mtest_rank == 0) {
        for (int r = 1; r < mtest_size; r++)
            MPI_Send(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* Igather into a strided (non-contiguous) receive type freed at once. */
static void test_gather_type(void)
{
    mtest_begin("igather_freed_type");
    int p = mtest_size, r = mtest_rank;
    int send[N], *recv = malloc((size_t)p * N * 2 * sizeof *recv);
    for (int i = 0; i < N; i++)
        send[i] = r * 1000 + i;
    for (int i = 0; i < p * N * 2; i++)
        recv[i] = -1;
    MPI_Datatype vec, strided;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * N * sizeof(int)), &strided);
    MPI_Type_free(&vec);
    MPI_Type_commit(&strided);
    MPI_Request req = MPI_REQUEST_NULL;
    if (r == 0) {
        CHECK_RC(MPI_Igather(send, N, MPI_INT, recv, 1, strided, 0, MPI_COMM_WORLD, &req));
        CHECK_RC(MPI_Type_free(&strided));
        token_after_free();
    } else {
        token_after_free();
        CHECK_RC(MPI_Igather(send, N, MPI_INT, recv, 1, strided, 0, MPI_COMM_WORLD, &req));
        MPI_Type_free(&strided);
    }
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (r == 0)
        for (int q = 0; q < p; q++)
            for (int i = 0; i < N; i++) {
                CHECK_INT(recv[q * 2 * N + 2 * i], q * 1000 + i, "gathered element");
                CHECK_INT(recv[q * 2 * N + 2 * i + 1], -1, "gap left alone");
            }
    free(recv);
    mtest_end();
}

/* Ireduce and Iallreduce with a user op, a derived type and a
 * communicator all freed before the operation can complete. */
static void test_reduce_op_type_comm(void)
{
    mtest_begin("ireduce_freed_op_type_comm");
    int p = mtest_size, r = mtest_rank;
    int in[N], out[N], all[N];
    for (int i = 0; i < N; i++) {
        in[i] = r + i;
        out[i] = all[i] = -1;
    }
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op op;
    MPI_Op_create(sum_ints, 1, &op);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (r != 0)
        token_after_free();
    CHECK_RC(MPI_Ireduce(in, out, N / 2, pair, op, 0, c, &req[0]));
    CHECK_RC(MPI_Iallreduce(in, all, N / 2, pair, op, c, &req[1]));
    CHECK_RC(MPI_Op_free(&op));
    CHECK_RC(MPI_Type_free(&pair));
    CHECK_RC(MPI_Comm_free(&c));
    if (r == 0)
        token_after_free();
    CHECK_RC(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) {
        int want = p * (p - 1) / 2 + p * i;
        if (r == 0)
            CHECK_INT(out[i], want, "reduced element");
        CHECK_INT(all[i], want, "allreduced element");
    }
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    for (int round = 0; round < 3; round++) {
        test_gather_type();
        test_reduce_op_type_comm();
    }
    return mtest_finalize();
}
