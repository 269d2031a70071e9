/* Probe, Iprobe, Mprobe/Improbe with Mrecv/Imrecv, probing MPI_PROC_NULL
 * (MPI_MESSAGE_NO_PROC), Get_count on a probe status. A matched message
 * (Mprobe) is no longer visible to later receives or probes. Pairs 0<->1,
 * ...; the last rank of an odd size pairs with itself. */
#include "../mpi/mtest.h"

static int partner;

static void test_probe(void)
{
    mtest_begin("probe");
    int flag = -1;
    MPI_Status st;
    /* Nothing has been sent with tag 1. */
    CHECK_RC(MPI_Iprobe(partner, 1, MPI_COMM_WORLD, &flag, &st));
    CHECK_INT(flag, 0, "Iprobe flag with nothing sent");
    CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &st));
    CHECK_INT(flag, 0, "Iprobe(ANY_SOURCE) flag with nothing sent");
    MPI_Barrier(MPI_COMM_WORLD);

    static const int counts[] = {0, 37, 300000};
    for (size_t k = 0; k < 3; k++) {
        int n = counts[k];
        int *sb = malloc(sizeof(int) * (size_t)n + 1), *rb = malloc(sizeof(int) * (size_t)n + 1);
        MPI_Request sr;
        for (int i = 0; i < n; i++)
            sb[i] = i ^ mtest_rank;
        CHECK_RC(MPI_Isend(sb, n, MPI_INT, partner, 2, MPI_COMM_WORLD, &sr));
        CHECK_RC(MPI_Probe(partner, 2, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, partner, 2, n * 4, "Probe(partner, 2)");
        int c = -1;
        MPI_Get_count(&st, MPI_INT, &c);
        CHECK_INT(c, n, "Get_count(MPI_INT) on a Probe status");
        /* Probe does not consume: a second probe (wildcards) sees it again. */
        CHECK_RC(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, partner, 2, n * 4, "Probe(ANY_SOURCE, ANY_TAG)");
        flag = 0;
        CHECK_RC(MPI_Iprobe(partner, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK_INT(flag, 1, "Iprobe of a probed message");
        CHECK_STATUS(&st, partner, 2, n * 4, "Iprobe");
        CHECK_RC(MPI_Recv(rb, n, MPI_INT, partner, 2, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, partner, 2, n * 4, "Recv after Probe");
        for (int i = 0; i < n; i++)
            if (rb[i] != (i ^ partner)) {
                CHECK(0, "element %d: expected %d got %d", i, i ^ partner, rb[i]);
                break;
            }
        CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        free(sb);
        free(rb);
    }
    /* Iprobe in a loop until a message arrives. */
    MPI_Barrier(MPI_COMM_WORLD);
    int v = 9 + mtest_rank, w = 0;
    MPI_Request sr;
    CHECK_RC(MPI_Isend(&v, 1, MPI_INT, partner, 3, MPI_COMM_WORLD, &sr));
    double t0 = mtest_now();
    do {
        flag = 0;
        CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, &st));
    } while (!flag && mtest_now() - t0 < 20);
    CHECK_INT(flag, 1, "Iprobe never saw the message");
    CHECK_STATUS(&st, partner, 3, 4, "Iprobe loop");
    CHECK_RC(MPI_Recv(&w, 1, MPI_INT, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_INT(w, 9 + partner, "data after Iprobe");
    CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    /* Nothing left. */
    flag = -1;
    CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK_INT(flag, 0, "Iprobe after everything was received");
    mtest_end();
}

static void test_mprobe(void)
{
    mtest_begin("mprobe");
    static const int sizes[] = {0, 16, 200000};
    for (size_t k = 0; k < 3; k++) {
        int n = sizes[k];
        char *a = malloc((size_t)n + 1), *b = malloc((size_t)n + 1), *ra = malloc((size_t)n + 1),
             *rb = malloc((size_t)n + 1);
        MPI_Request sr[2];
        MPI_Status st;
        MPI_Message msg = MPI_MESSAGE_NULL;
        mtest_fill(a, (size_t)n, (uint32_t)(1 + 10 * mtest_rank));
        mtest_fill(b, (size_t)n, (uint32_t)(2 + 10 * mtest_rank));
        /* Two messages, same tag: A then B. */
        CHECK_RC(MPI_Isend(a, n, MPI_BYTE, partner, 7, MPI_COMM_WORLD, &sr[0]));
        CHECK_RC(MPI_Isend(b, n, MPI_BYTE, partner, 7, MPI_COMM_WORLD, &sr[1]));
        CHECK_RC(MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "Mprobe message handle 0x%x", (unsigned)msg);
        CHECK_STATUS(&st, partner, 7, n, "Mprobe");
        /* A is matched: a wildcard receive now gets B. */
        CHECK_RC(MPI_Recv(rb, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, partner, 7, n, "Recv after Mprobe");
        CHECK_PATTERN(rb, (size_t)n, (uint32_t)(2 + 10 * partner), "Recv after Mprobe gets the second message");
        CHECK_RC(MPI_Mrecv(ra, n, MPI_BYTE, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NULL, "Mrecv did not set the message to MPI_MESSAGE_NULL");
        CHECK_STATUS(&st, partner, 7, n, "Mrecv");
        CHECK_PATTERN(ra, (size_t)n, (uint32_t)(1 + 10 * partner), "Mrecv gets the probed message");
        CHECK_RC(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));

        /* Improbe + Imrecv; the matched message is not visible to Iprobe. */
        CHECK_RC(MPI_Isend(a, n, MPI_BYTE, partner, 8, MPI_COMM_WORLD, &sr[0]));
        int flag = 0;
        double t0 = mtest_now();
        do {
            CHECK_RC(MPI_Improbe(partner, 8, MPI_COMM_WORLD, &flag, &msg, &st));
        } while (!flag && mtest_now() - t0 < 20);
        CHECK_INT(flag, 1, "Improbe never matched");
        CHECK_STATUS(&st, partner, 8, n, "Improbe");
        int flag2 = -1;
        CHECK_RC(MPI_Iprobe(partner, 8, MPI_COMM_WORLD, &flag2, MPI_STATUS_IGNORE));
        CHECK_INT(flag2, 0, "Iprobe sees a message already matched by Improbe");
        MPI_Message msg2 = MPI_MESSAGE_NULL;
        flag2 = -1;
        CHECK_RC(MPI_Improbe(partner, 8, MPI_COMM_WORLD, &flag2, &msg2, MPI_STATUS_IGNORE));
        CHECK_INT(flag2, 0, "a second Improbe matched the same message");
        MPI_Request rr;
        memset(ra, 0, (size_t)n + 1);
        CHECK_RC(MPI_Imrecv(ra, n, MPI_BYTE, &msg, &rr));
        CHECK(msg == MPI_MESSAGE_NULL, "Imrecv did not set the message to MPI_MESSAGE_NULL");
        CHECK_RC(MPI_Wait(&rr, &st));
        CHECK_STATUS(&st, partner, 8, n, "Imrecv");
        CHECK_PATTERN(ra, (size_t)n, (uint32_t)(1 + 10 * partner), "Imrecv");
        CHECK_RC(MPI_Wait(&sr[0], MPI_STATUS_IGNORE));
        free(a);
        free(b);
        free(ra);
        free(rb);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    mtest_end();
}

static void test_proc_null(void)
{
    mtest_begin("probe_proc_null");
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    int flag = 0, buf = 3;
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK_PROCNULL_STATUS(&st, "Probe(PROC_NULL)");
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK_INT(flag, 1, "Iprobe(PROC_NULL) flag");
    CHECK_PROCNULL_STATUS(&st, "Iprobe(PROC_NULL)");
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) message 0x%x, expected MPI_MESSAGE_NO_PROC", (unsigned)msg);
    CHECK_PROCNULL_STATUS(&st, "Mprobe(PROC_NULL)");
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Mrecv(&buf, 1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) left message 0x%x", (unsigned)msg);
    CHECK_PROCNULL_STATUS(&st, "Mrecv(MPI_MESSAGE_NO_PROC)");
    CHECK_INT(buf, 3, "buffer after Mrecv(MPI_MESSAGE_NO_PROC)");
    flag = 0;
    msg = MPI_MESSAGE_NULL;
    CHECK_RC(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK_INT(flag, 1, "Improbe(PROC_NULL) flag");
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL) message 0x%x", (unsigned)msg);
    MPI_Request r;
    CHECK_RC(MPI_Imrecv(&buf, 1, MPI_INT, &msg, &r));
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK_PROCNULL_STATUS(&st, "Imrecv(MPI_MESSAGE_NO_PROC) + Wait");
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    partner = mtest_partner();
    test_probe();
    test_mprobe();
    test_proc_null();
    return mtest_finalize();
}
