/* MPI_Cancel of sends (MPICH's scancel, pscancel, scancel_unmatch): a send
 * its receiver has not matched is cancelled in every mode and size (eager
 * and rendezvous; standard, synchronous, buffered; persistent too):
 * Test_cancelled is true and the message is never received. Of two sends
 * with the same envelope, cancelling the second leaves the first. A send
 * already matched completes normally (Test_cancelled false, data there).
 * Every rank sends to its partner (itself at odd sizes' last rank). */
#include "../mpi/mtest.h"

#include <stdlib.h>
#include <string.h>

static int partner;
static const int sizes[] = {1, 100, 10000, 1 << 20};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

/* No message with this tag from the partner has arrived (after a barrier,
 * so a message sent before it would be here by now: sends to the partner
 * precede the barrier's own packets). */
static void check_nothing_left(int tag, const char *what)
{
    int flag = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 50 && flag; i++)
        CHECK_RC(MPI_Iprobe(partner, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK_INT(flag, 0, what);
    MPI_Barrier(MPI_COMM_WORLD); /* before anyone sends this tag again */
}

static int start_send(int mode, void *buf, int n, int tag, MPI_Request *r)
{
    switch (mode) {
    case 0: return MPI_Isend(buf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, r);
    case 1: return MPI_Issend(buf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, r);
    case 2: return MPI_Irsend(buf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, r);
    default: return MPI_Ibsend(buf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, r);
    }
}

static void test_cancel_unmatched(void)
{
    mtest_begin("cancel_unmatched_send");
    static const char *names[] = {"Isend", "Issend", "Irsend", "Ibsend"};
    int bsize = (1 << 20) + MPI_BSEND_OVERHEAD;
    char *bbuf = malloc((size_t)bsize);
    CHECK_RC(MPI_Buffer_attach(bbuf, bsize));
    for (int mode = 0; mode < 4; mode++)
        for (int s = 0; s < NSIZES; s++) {
            if (mode == 2)
                continue; /* a ready send needs a posted receive */
            int n = sizes[s], tag = 10 + 4 * s + mode, flag = -1;
            char *buf = malloc((size_t)n);
            memset(buf, 'a' + mode, (size_t)n);
            MPI_Request r;
            MPI_Status st;
            CHECK_RC(start_send(mode, buf, n, tag, &r));
            CHECK_RC(MPI_Cancel(&r));
            if (partner == mtest_rank) { /* to itself: decided by the time Cancel returns */
                int done = 0;
                CHECK_RC(MPI_Request_get_status(r, &done, MPI_STATUS_IGNORE));
                CHECK_INT(done, 1, "a send to itself complete when MPI_Cancel returns");
            }
            CHECK_RC(MPI_Wait(&r, &st));
            CHECK_RC(MPI_Test_cancelled(&st, &flag));
            if (flag != 1)
                mtest_fail(__FILE__, __LINE__, "%s of %d bytes to an unmatched receiver: "
                           "Test_cancelled %d, expected 1", names[mode], n, flag);
            check_nothing_left(tag, "a cancelled send's message arrived");
            free(buf);
        }
    void *b;
    int bs;
    CHECK_RC(MPI_Buffer_detach(&b, &bs)); /* returns: no buffered copy is left waiting */
    free(bbuf);
    mtest_end();
}

static void test_cancel_second_of_two(void)
{
    mtest_begin("cancel_second_of_two");
    int a = 10, b = 20, got = -1, flag = -1;
    MPI_Request r[2];
    MPI_Status st;
    CHECK_RC(MPI_Isend(&a, 1, MPI_INT, partner, 7, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Isend(&b, 1, MPI_INT, partner, 7, MPI_COMM_WORLD, &r[1]));
    CHECK_RC(MPI_Cancel(&r[1]));
    CHECK_RC(MPI_Wait(&r[1], &st));
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK_INT(flag, 1, "Test_cancelled of the second of two equal sends");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Recv(&got, 1, MPI_INT, partner, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_INT(got, 10, "the message left after cancelling the second send");
    CHECK_RC(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    check_nothing_left(7, "the cancelled second message arrived");
    mtest_end();
}

static void test_cancel_matched(void)
{
    mtest_begin("cancel_matched_send");
    for (int s = 0; s < NSIZES; s++)
        for (int sync = 0; sync < 2; sync++) {
            int n = sizes[s], tag = 40 + 2 * s + sync, flag = -1;
            char *out = malloc((size_t)n), *in = malloc((size_t)n);
            memset(out, 'x' + sync, (size_t)n);
            memset(in, 0, (size_t)n);
            MPI_Request rr, sr;
            MPI_Status st;
            CHECK_RC(MPI_Irecv(in, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &rr));
            MPI_Barrier(MPI_COMM_WORLD); /* the partner's receive is posted */
            CHECK_RC(sync ? MPI_Issend(out, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &sr)
                          : MPI_Isend(out, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &sr));
            CHECK_RC(MPI_Wait(&rr, MPI_STATUS_IGNORE)); /* ours matched: so did the partner's */
            CHECK_RC(MPI_Cancel(&sr));
            CHECK_RC(MPI_Wait(&sr, &st));
            CHECK_RC(MPI_Test_cancelled(&st, &flag));
            if (flag != 0)
                mtest_fail(__FILE__, __LINE__, "%s of %d bytes already received: "
                           "Test_cancelled %d, expected 0", sync ? "Issend" : "Isend", n, flag);
            CHECK(in[0] == 'x' + sync && in[n - 1] == 'x' + sync, "data of a matched send");
            free(out);
            free(in);
        }
    mtest_end();
}

static void test_cancel_persistent(void)
{
    mtest_begin("cancel_persistent_send");
    for (int s = 0; s < NSIZES; s++) {
        int n = sizes[s], tag = 60 + s;
        char *buf = malloc((size_t)n), *in = malloc((size_t)n);
        MPI_Request r;
        MPI_Status st;
        CHECK_RC(MPI_Send_init(buf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &r));
        for (int i = 0; i < 2; i++) {
            int flag = -1;
            CHECK_RC(MPI_Start(&r));
            CHECK_RC(MPI_Cancel(&r));
            CHECK_RC(MPI_Wait(&r, &st));
            CHECK_RC(MPI_Test_cancelled(&st, &flag));
            CHECK_INT(flag, 1, "Test_cancelled of a started persistent send");
        }
        check_nothing_left(tag, "a cancelled persistent send's message arrived");
        /* The same request then delivers normally. */
        memset(buf, 'p', (size_t)n);
        in[0] = 0;
        MPI_Request rr;
        int flag = -1;
        CHECK_RC(MPI_Irecv(in, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &rr));
        CHECK_RC(MPI_Start(&r));
        CHECK_RC(MPI_Wait(&r, &st));
        CHECK_RC(MPI_Test_cancelled(&st, &flag));
        CHECK_INT(flag, 0, "Test_cancelled of a persistent send not cancelled");
        CHECK_RC(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        CHECK_INT(in[0], 'p', "data of a persistent send after cancelled starts");
        CHECK_RC(MPI_Request_free(&r));
        free(buf);
        free(in);
    }
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    partner = mtest_partner();
    test_cancel_unmatched();
    test_cancel_second_of_two();
    test_cancel_matched();
    test_cancel_persistent();
    return mtest_finalize();
}
