/* MPI_Cancel of receives: a posted receive that never matches is cancelled
 * (Test_cancelled true, and a later message with its tag goes to a later
 * receive); a receive that already completed is not (Test_cancelled false,
 * data intact); a started persistent receive is cancelled and can be freed. */
#include "../mpi/mtest.h"

static int partner;

static void test_cancel_posted(void)
{
    mtest_begin("cancel_posted_recv");
    int buf = -1, flag = -1;
    MPI_Request r;
    MPI_Status st;
    /* Specific source and tag, never sent. */
    CHECK_RC(MPI_Irecv(&buf, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Cancel(&r));
    CHECK(r != MPI_REQUEST_NULL, "Cancel freed the request");
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "Wait did not free the cancelled request");
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK_INT(flag, 1, "Test_cancelled after cancelling an unmatched receive");
    CHECK_INT(buf, -1, "buffer of a cancelled receive");
    /* ANY_SOURCE, completed with Test in a loop. */
    CHECK_RC(MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Cancel(&r));
    int done = 0;
    double t0 = mtest_now();
    while (!done && mtest_now() - t0 < 20)
        CHECK_RC(MPI_Test(&r, &done, &st));
    CHECK_INT(done, 1, "Test never completed a cancelled receive");
    flag = -1;
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK_INT(flag, 1, "Test_cancelled (ANY_SOURCE receive)");
    /* The cancelled receives do not take messages sent afterwards. */
    MPI_Barrier(MPI_COMM_WORLD);
    int v[2] = {mtest_rank + 100, mtest_rank + 200}, w[2] = {0, 0};
    MPI_Request sr[2];
    CHECK_RC(MPI_Isend(&v[0], 1, MPI_INT, partner, 1, MPI_COMM_WORLD, &sr[0]));
    CHECK_RC(MPI_Isend(&v[1], 1, MPI_INT, partner, 2, MPI_COMM_WORLD, &sr[1]));
    CHECK_RC(MPI_Recv(&w[0], 1, MPI_INT, partner, 1, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Recv(&w[1], 1, MPI_INT, partner, 2, MPI_COMM_WORLD, &st));
    CHECK_INT(w[0], partner + 100, "message with the tag of a cancelled receive");
    CHECK_INT(w[1], partner + 200, "message with the tag of a cancelled ANY_SOURCE receive");
    CHECK_INT(buf, -1, "a cancelled receive's buffer was written");
    CHECK_RC(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
    /* A large receive (rendezvous-sized buffer) too. */
    char *big = malloc(1 << 20);
    CHECK_RC(MPI_Irecv(big, 1 << 20, MPI_BYTE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Cancel(&r));
    CHECK_RC(MPI_Wait(&r, &st));
    flag = -1;
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK_INT(flag, 1, "Test_cancelled (1 MB receive)");
    free(big);
    mtest_end();
}

static void test_cancel_completed(void)
{
    mtest_begin("cancel_completed_recv");
    int v = mtest_rank + 5, w = -1, flag = 0;
    MPI_Request r, sr;
    MPI_Status st;
    CHECK_RC(MPI_Irecv(&w, 1, MPI_INT, partner, 4, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Isend(&v, 1, MPI_INT, partner, 4, MPI_COMM_WORLD, &sr));
    /* Wait for completion without freeing the request. */
    double t0 = mtest_now();
    while (!flag && mtest_now() - t0 < 20)
        CHECK_RC(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
    CHECK_INT(flag, 1, "receive never completed");
    CHECK_RC(MPI_Cancel(&r));
    CHECK_RC(MPI_Wait(&r, &st));
    flag = -1;
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK_INT(flag, 0, "Test_cancelled after cancelling a completed receive");
    CHECK_STATUS(&st, partner, 4, 4, "completed receive that was cancelled too late");
    CHECK_INT(w, partner + 5, "data of a completed receive that was cancelled too late");
    CHECK_RC(MPI_Wait(&sr, &st));
    /* A normal completed receive's status says "not cancelled". */
    CHECK_RC(MPI_Sendrecv(&v, 1, MPI_INT, partner, 5, &w, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &st));
    flag = -1;
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK_INT(flag, 0, "Test_cancelled on an ordinary receive");
    mtest_end();
}

static void test_cancel_persistent(void)
{
    mtest_begin("cancel_persistent_recv");
    int buf = -1, flag = -1;
    MPI_Request r;
    MPI_Status st;
    CHECK_RC(MPI_Recv_init(&buf, 1, MPI_INT, partner, 6, MPI_COMM_WORLD, &r));
    for (int i = 0; i < 3; i++) {
        CHECK_RC(MPI_Start(&r));
        CHECK_RC(MPI_Cancel(&r));
        CHECK_RC(MPI_Wait(&r, &st));
        CHECK(r != MPI_REQUEST_NULL, "Wait freed a persistent request");
        flag = -1;
        CHECK_RC(MPI_Test_cancelled(&st, &flag));
        CHECK_INT(flag, 1, "Test_cancelled of a cancelled persistent receive");
    }
    /* Still usable for a real message afterwards. */
    MPI_Barrier(MPI_COMM_WORLD);
    int v = 31 + mtest_rank;
    MPI_Request sr;
    CHECK_RC(MPI_Start(&r));
    CHECK_RC(MPI_Isend(&v, 1, MPI_INT, partner, 6, MPI_COMM_WORLD, &sr));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK_STATUS(&st, partner, 6, 4, "persistent receive after cancels");
    CHECK_INT(buf, 31 + partner, "persistent receive data after cancels");
    CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free did not null the handle");
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    partner = mtest_partner();
    test_cancel_posted();
    test_cancel_completed();
    test_cancel_persistent();
    return mtest_finalize();
}
