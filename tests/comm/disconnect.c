/* MPI_Comm_disconnect: it returns only when this process's operations on
 * the communicator are complete (a receive whose message comes later, a
 * large send whose receive is posted later, a request already freed, a
 * nonblocking collective), runs the delete callbacks, sets the handle to
 * MPI_COMM_NULL; intercommunicators too; MPI_COMM_WORLD is MPI_ERR_COMM. */
#include "../mpi/mtest.h"

enum { BIG = 1 << 20 };
static int deletes;

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void test_pending_p2p(void)
{
    mtest_begin("disconnect_waits_p2p");
    int peer = mtest_partner();
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int *big = malloc(BIG * sizeof(int)), *bigin = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        big[i] = i ^ mtest_rank;
    int x = -1, y = 100 + mtest_rank;
    MPI_Request r[3];
    if (peer != mtest_rank && mtest_rank % 2 == 0) {
        /* The partner sends late: the disconnect must wait for it. */
        MPI_Irecv(&x, 1, MPI_INT, peer, 1, c, &r[0]);
        MPI_Isend(big, BIG, MPI_INT, peer, 2, c, &r[1]);
        MPI_Isend(&y, 1, MPI_INT, peer, 3, c, &r[2]);
        MPI_Request_free(&r[2]);
        CHECK_RC(MPI_Comm_disconnect(&c));
        CHECK(c == MPI_COMM_NULL, "handle set to MPI_COMM_NULL");
        int flag = 0;
        MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "receive complete after disconnect");
        CHECK_INT(x, 100 + peer, "received value");
        flag = 0;
        MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "large send complete after disconnect");
    } else if (peer != mtest_rank) {
        mtest_sleep(0.2);
        MPI_Recv(&x, 1, MPI_INT, peer, 3, c, MPI_STATUS_IGNORE);
        CHECK_INT(x, 100 + peer, "value of the freed send");
        MPI_Send(&y, 1, MPI_INT, peer, 1, c);
        mtest_sleep(0.1);
        MPI_Recv(bigin, BIG, MPI_INT, peer, 2, c, MPI_STATUS_IGNORE);
        CHECK_INT(bigin[BIG - 1], (BIG - 1) ^ peer, "large message");
        CHECK_RC(MPI_Comm_disconnect(&c));
    } else {
        CHECK_RC(MPI_Comm_disconnect(&c));
    }
    free(big);
    free(bigin);
    mtest_end();
}

static void test_collective_and_attrs(void)
{
    mtest_begin("disconnect_collective_attrs");
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int kv;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kv, NULL);
    MPI_Comm_set_attr(c, kv, NULL);
    int v = mtest_rank + 1, sum = 0;
    MPI_Request r;
    /* Rank 0 enters late: the others' disconnect waits for the reduction. */
    if (mtest_rank == 0)
        mtest_sleep(0.1);
    MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c, &r);
    deletes = 0;
    CHECK_RC(MPI_Comm_disconnect(&c));
    CHECK_INT(deletes, 1, "delete callback ran");
    int flag = 0;
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "allreduce complete after disconnect");
    CHECK_INT(sum, mtest_size * (mtest_size + 1) / 2, "allreduce result");
    MPI_Comm_free_keyval(&kv);
    mtest_end();
}

static void test_intercomm_and_errors(void)
{
    mtest_begin("disconnect_intercomm_errors");
    if (mtest_size >= 2) {
        MPI_Comm half, inter;
        int color = mtest_rank % 2;
        MPI_Comm_split(MPI_COMM_WORLD, color, mtest_rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
        int x = -1;
        MPI_Request r = MPI_REQUEST_NULL;
        int rank;
        MPI_Comm_rank(half, &rank);
        if (rank == 0 && color == 0)
            MPI_Irecv(&x, 1, MPI_INT, 0, 5, inter, &r);
        if (rank == 0 && color == 1) {
            mtest_sleep(0.1);
            int y = 42;
            MPI_Send(&y, 1, MPI_INT, 0, 5, inter);
        }
        CHECK_RC(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL, "intercomm handle set to MPI_COMM_NULL");
        if (rank == 0 && color == 0) {
            int flag = 0;
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            CHECK(flag && x == 42, "intercomm receive complete: %d", x);
        }
        MPI_Comm_free(&half);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm w = MPI_COMM_WORLD, n = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_disconnect(&w), MPI_ERR_COMM, "MPI_COMM_WORLD");
    CHECK_CLASS(MPI_Comm_disconnect(&n), MPI_ERR_COMM, "MPI_COMM_NULL");
    CHECK_CLASS(MPI_Comm_disconnect(NULL), MPI_ERR_ARG, "NULL");
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    test_pending_p2p();
    test_collective_and_attrs();
    test_intercomm_and_errors();
    return mtest_finalize();
}
