/* Nonblocking point-to-point and the completion functions: Isend/Irecv/
 * Issend/Irsend/Ibsend; Wait, Waitall, Waitany, Waitsome, Test, Testall,
 * Testany, Testsome (with MPI_REQUEST_NULL entries and all-null arrays);
 * Request_free of an active send; Request_get_status (does not free); an
 * Issend that stays incomplete until the receive is posted. Pairs 0<->1,
 * 2<->3, ...; the last rank of an odd size pairs with itself. */
#include "../mpi/mtest.h"

static int partner;

static void test_basic(void)
{
    mtest_begin("isend_irecv");
    static const int sizes[] = {0, 1, 4096, 65536, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        char *sb = malloc((size_t)n + 1), *rb = malloc((size_t)n + 1);
        MPI_Request rr, sr;
        MPI_Status st;
        mtest_fill(sb, (size_t)n, (uint32_t)(mtest_rank + n));
        CHECK_RC(MPI_Irecv(rb, n, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &rr));
        CHECK_RC(MPI_Isend(sb, n, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &sr));
        CHECK_RC(MPI_Wait(&sr, &st));
        CHECK(sr == MPI_REQUEST_NULL, "Wait did not free the send request");
        CHECK_RC(MPI_Wait(&rr, &st));
        CHECK(rr == MPI_REQUEST_NULL, "Wait did not free the receive request");
        CHECK_STATUS(&st, partner, 1, n, "Irecv");
        CHECK_PATTERN(rb, (size_t)n, (uint32_t)(partner + n), "Irecv");
        free(sb);
        free(rb);
    }
    /* Null requests. */
    MPI_Request nr = MPI_REQUEST_NULL;
    MPI_Status st;
    int flag = 0;
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Wait(&nr, &st));
    CHECK_EMPTY_STATUS(&st, "Wait(MPI_REQUEST_NULL)");
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Test(&nr, &flag, &st));
    CHECK_INT(flag, 1, "Test(MPI_REQUEST_NULL) flag");
    CHECK_EMPTY_STATUS(&st, "Test(MPI_REQUEST_NULL)");
    /* Many outstanding requests. */
    enum { M = 500 };
    int *sv = malloc(M * sizeof(int)), *rv = malloc(M * sizeof(int));
    MPI_Request *reqs = malloc(2 * M * sizeof(MPI_Request));
    for (int i = 0; i < M; i++) {
        rv[i] = -1;
        CHECK_RC(MPI_Irecv(&rv[i], 1, MPI_INT, partner, 2, MPI_COMM_WORLD, &reqs[i]));
    }
    for (int i = 0; i < M; i++) {
        sv[i] = i * 11 + mtest_rank;
        CHECK_RC(MPI_Isend(&sv[i], 1, MPI_INT, partner, 2, MPI_COMM_WORLD, &reqs[M + i]));
    }
    CHECK_RC(MPI_Waitall(2 * M, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < M; i++)
        if (rv[i] != i * 11 + partner) {
            CHECK(0, "outstanding receive %d: expected %d, got %d", i, i * 11 + partner, rv[i]);
            break;
        }
    for (int i = 0; i < 2 * M; i++)
        if (reqs[i] != MPI_REQUEST_NULL) {
            CHECK(0, "Waitall left request %d non-null", i);
            break;
        }
    free(sv);
    free(rv);
    free(reqs);
    mtest_end();
}

static void test_waitall(void)
{
    mtest_begin("waitall");
    int sv[3] = {1, 2, 3}, rv[3] = {0, 0, 0};
    MPI_Request reqs[8];
    MPI_Status sts[8];
    for (int i = 0; i < 8; i++)
        reqs[i] = MPI_REQUEST_NULL;
    /* Real requests at 1, 3, 4, 6; nulls elsewhere. */
    CHECK_RC(MPI_Irecv(&rv[0], 1, MPI_INT, partner, 3, MPI_COMM_WORLD, &reqs[1]));
    CHECK_RC(MPI_Irecv(&rv[1], 1, MPI_INT, partner, 4, MPI_COMM_WORLD, &reqs[3]));
    CHECK_RC(MPI_Isend(&sv[0], 1, MPI_INT, partner, 4, MPI_COMM_WORLD, &reqs[4]));
    CHECK_RC(MPI_Isend(&sv[1], 1, MPI_INT, partner, 3, MPI_COMM_WORLD, &reqs[6]));
    memset(sts, 0x55, sizeof sts);
    CHECK_RC(MPI_Waitall(8, reqs, sts));
    for (int i = 0; i < 8; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d non-null", i);
    CHECK_INT(rv[0], 2, "receive tag 3");
    CHECK_INT(rv[1], 1, "receive tag 4");
    CHECK_STATUS(&sts[1], partner, 3, 4, "Waitall status 1");
    CHECK_STATUS(&sts[3], partner, 4, 4, "Waitall status 3");
    CHECK_EMPTY_STATUS(&sts[0], "Waitall status of a null request");
    CHECK_EMPTY_STATUS(&sts[7], "Waitall status of a null request");
    /* All null, and count 0. */
    CHECK_RC(MPI_Waitall(8, reqs, sts));
    CHECK_RC(MPI_Waitall(0, reqs, sts));
    int flag = 0;
    CHECK_RC(MPI_Testall(8, reqs, &flag, sts));
    CHECK_INT(flag, 1, "Testall on all-null requests");
    mtest_end();
}

static void test_waitany(void)
{
    mtest_begin("waitany");
    enum { N = 6 };
    int rv[N], sv[N];
    MPI_Request rr[N + 2], sr[N];
    MPI_Status st;
    int idx = -5, done[N + 2] = {0};
    rr[0] = MPI_REQUEST_NULL;
    rr[N + 1] = MPI_REQUEST_NULL;
    for (int i = 0; i < N; i++) {
        rv[i] = -1;
        CHECK_RC(MPI_Irecv(&rv[i], 1, MPI_INT, partner, 10 + i, MPI_COMM_WORLD, &rr[i + 1]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = N - 1; i >= 0; i--) { /* reverse order */
        sv[i] = 100 * i + mtest_rank;
        CHECK_RC(MPI_Isend(&sv[i], 1, MPI_INT, partner, 10 + i, MPI_COMM_WORLD, &sr[i]));
    }
    for (int k = 0; k < N; k++) {
        idx = -5;
        CHECK_RC(MPI_Waitany(N + 2, rr, &idx, &st));
        if (idx < 1 || idx > N) {
            CHECK(0, "Waitany index %d", idx);
            break;
        }
        CHECK(!done[idx], "Waitany returned index %d twice", idx);
        done[idx] = 1;
        CHECK(rr[idx] == MPI_REQUEST_NULL, "Waitany did not free request %d", idx);
        CHECK_STATUS(&st, partner, 10 + idx - 1, 4, "Waitany status");
        CHECK_INT(rv[idx - 1], 100 * (idx - 1) + partner, "Waitany data");
    }
    memset(&st, 0x55, sizeof st);
    idx = -5;
    CHECK_RC(MPI_Waitany(N + 2, rr, &idx, &st));
    CHECK_INT(idx, MPI_UNDEFINED, "Waitany on all-null requests: index");
    CHECK_EMPTY_STATUS(&st, "Waitany on all-null requests");
    idx = -5;
    CHECK_RC(MPI_Waitany(0, rr, &idx, &st));
    CHECK_INT(idx, MPI_UNDEFINED, "Waitany with count 0: index");
    int flag = 0;
    idx = -5;
    CHECK_RC(MPI_Testany(N + 2, rr, &idx, &flag, &st));
    CHECK_INT(flag, 1, "Testany on all-null requests: flag");
    CHECK_INT(idx, MPI_UNDEFINED, "Testany on all-null requests: index");
    CHECK_RC(MPI_Waitall(N, sr, MPI_STATUSES_IGNORE));
    mtest_end();
}

static void test_waitsome(void)
{
    mtest_begin("waitsome");
    enum { N = 8 };
    int rv[N], sv[N], idx[N + 1], outcount = -5, got = 0, done[N + 1] = {0};
    MPI_Request rr[N + 1], sr[N];
    MPI_Status sts[N + 1];
    rr[N] = MPI_REQUEST_NULL;
    for (int i = 0; i < N; i++) {
        rv[i] = -1;
        CHECK_RC(MPI_Irecv(&rv[i], 1, MPI_INT, partner, 20 + i, MPI_COMM_WORLD, &rr[i]));
    }
    for (int i = 0; i < N; i++) {
        sv[i] = i + 1000 * mtest_rank;
        CHECK_RC(MPI_Isend(&sv[i], 1, MPI_INT, partner, 20 + i, MPI_COMM_WORLD, &sr[i]));
    }
    while (got < N) {
        outcount = -5;
        CHECK_RC(MPI_Waitsome(N + 1, rr, &outcount, idx, sts));
        if (outcount < 1 || outcount > N - got) {
            CHECK(0, "Waitsome outcount %d with %d pending", outcount, N - got);
            break;
        }
        for (int k = 0; k < outcount; k++) {
            int i = idx[k];
            if (i < 0 || i >= N || done[i]) {
                CHECK(0, "Waitsome index %d bad or repeated", i);
                continue;
            }
            done[i] = 1;
            CHECK(rr[i] == MPI_REQUEST_NULL, "Waitsome did not free request %d", i);
            CHECK_STATUS(&sts[k], partner, 20 + i, 4, "Waitsome status");
            CHECK_INT(rv[i], i + 1000 * partner, "Waitsome data");
        }
        got += outcount;
    }
    outcount = -5;
    CHECK_RC(MPI_Waitsome(N + 1, rr, &outcount, idx, sts));
    CHECK_INT(outcount, MPI_UNDEFINED, "Waitsome on all-null requests: outcount");
    outcount = -5;
    CHECK_RC(MPI_Testsome(N + 1, rr, &outcount, idx, sts));
    CHECK_INT(outcount, MPI_UNDEFINED, "Testsome on all-null requests: outcount");
    CHECK_RC(MPI_Waitall(N, sr, MPI_STATUSES_IGNORE));
    mtest_end();
}

/* Test, Testall, Testany, Testsome on receives that cannot complete until the
 * partner is told to send. */
static void test_test_family(void)
{
    mtest_begin("test_family");
    enum { N = 4 };
    int rv[N], sv[N], flag = -1, idx = -5, outcount = -5, indices[N];
    MPI_Request rr[N], sr[N];
    MPI_Status st, sts[N];
    for (int i = 0; i < N; i++) {
        rv[i] = -1;
        CHECK_RC(MPI_Irecv(&rv[i], 1, MPI_INT, partner, 30 + i, MPI_COMM_WORLD, &rr[i]));
    }
    /* Nothing was sent yet: nothing may complete. */
    for (int k = 0; k < 100; k++) {
        flag = -1;
        CHECK_RC(MPI_Test(&rr[0], &flag, &st));
        if (flag != 0) {
            CHECK(0, "Test flag %d on a receive with no matching send", flag);
            break;
        }
        flag = -1;
        CHECK_RC(MPI_Testall(N, rr, &flag, sts));
        if (flag != 0) {
            CHECK(0, "Testall flag %d with no matching sends", flag);
            break;
        }
        flag = -1;
        idx = -5;
        CHECK_RC(MPI_Testany(N, rr, &idx, &flag, &st));
        if (flag != 0 || idx != MPI_UNDEFINED) {
            CHECK(0, "Testany flag %d index %d with no matching sends (expected 0, MPI_UNDEFINED)", flag, idx);
            break;
        }
        outcount = -5;
        CHECK_RC(MPI_Testsome(N, rr, &outcount, indices, sts));
        if (outcount != 0) {
            CHECK(0, "Testsome outcount %d with no matching sends", outcount);
            break;
        }
    }
    for (int i = 0; i < N; i++)
        CHECK(rr[i] != MPI_REQUEST_NULL, "incomplete request %d was freed by a Test call", i);
    /* Everyone checked; now send. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) {
        sv[i] = 7 * i + mtest_rank;
        CHECK_RC(MPI_Isend(&sv[i], 1, MPI_INT, partner, 30 + i, MPI_COMM_WORLD, &sr[i]));
    }
    /* Test on request 0 until done. */
    double t0 = mtest_now();
    do {
        flag = 0;
        CHECK_RC(MPI_Test(&rr[0], &flag, &st));
    } while (!flag && mtest_now() - t0 < 20);
    CHECK_INT(flag, 1, "Test never completed a matched receive");
    CHECK(rr[0] == MPI_REQUEST_NULL, "Test did not free the completed request");
    CHECK_STATUS(&st, partner, 30, 4, "Test status");
    CHECK_INT(rv[0], partner, "Test data");
    /* Testany until one completes. */
    do {
        flag = 0;
        CHECK_RC(MPI_Testany(N, rr, &idx, &flag, &st));
    } while (!flag && mtest_now() - t0 < 20);
    CHECK(flag && idx >= 1 && idx < N, "Testany flag %d index %d", flag, idx);
    if (flag && idx >= 1 && idx < N) {
        CHECK(rr[idx] == MPI_REQUEST_NULL, "Testany did not free request %d", idx);
        CHECK_STATUS(&st, partner, 30 + idx, 4, "Testany status");
    }
    /* Testall until all done. */
    do {
        flag = 0;
        CHECK_RC(MPI_Testall(N, rr, &flag, sts));
    } while (!flag && mtest_now() - t0 < 20);
    CHECK_INT(flag, 1, "Testall never completed");
    for (int i = 0; i < N; i++) {
        CHECK(rr[i] == MPI_REQUEST_NULL, "Testall did not free request %d", i);
        CHECK_INT(rv[i], 7 * i + partner, "data after Testall");
    }
    /* Testsome until all sends done. */
    int got = 0;
    while (got < N && mtest_now() - t0 < 20) {
        CHECK_RC(MPI_Testsome(N, sr, &outcount, indices, sts));
        if (outcount == MPI_UNDEFINED)
            break;
        got += outcount;
    }
    CHECK_INT(got, N, "sends completed by Testsome");
    mtest_end();
}

static void test_request_free(void)
{
    mtest_begin("request_free_send");
    int n = 100000;
    char *sb = malloc((size_t)n), *rb = malloc((size_t)n);
    MPI_Request sr, rr;
    MPI_Status st;
    mtest_fill(sb, (size_t)n, (uint32_t)(mtest_rank + 5));
    CHECK_RC(MPI_Irecv(rb, n, MPI_BYTE, partner, 40, MPI_COMM_WORLD, &rr));
    CHECK_RC(MPI_Isend(sb, n, MPI_BYTE, partner, 40, MPI_COMM_WORLD, &sr));
    CHECK_RC(MPI_Request_free(&sr));
    CHECK(sr == MPI_REQUEST_NULL, "Request_free did not null the handle");
    CHECK_RC(MPI_Wait(&rr, &st));
    CHECK_STATUS(&st, partner, 40, n, "message whose send request was freed");
    CHECK_PATTERN(rb, (size_t)n, (uint32_t)(partner + 5), "message whose send request was freed");
    /* The partner got my data; only then reuse the send buffer. */
    MPI_Barrier(MPI_COMM_WORLD);
    int small = 5;
    CHECK_RC(MPI_Isend(&small, 1, MPI_INT, partner, 41, MPI_COMM_WORLD, &sr));
    CHECK_RC(MPI_Request_free(&sr));
    int got = 0;
    CHECK_RC(MPI_Recv(&got, 1, MPI_INT, partner, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_INT(got, 5, "small message whose send request was freed");
    MPI_Barrier(MPI_COMM_WORLD);
    free(sb);
    free(rb);
    mtest_end();
}

static void test_get_status(void)
{
    mtest_begin("request_get_status");
    int v = mtest_rank + 77, r = -1, flag = -1;
    MPI_Request rr, sr;
    MPI_Status st, st2;
    CHECK_RC(MPI_Irecv(&r, 1, MPI_INT, partner, 50, MPI_COMM_WORLD, &rr));
    CHECK_RC(MPI_Request_get_status(rr, &flag, &st));
    CHECK_INT(flag, 0, "Request_get_status before the send");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Isend(&v, 1, MPI_INT, partner, 50, MPI_COMM_WORLD, &sr));
    double t0 = mtest_now();
    do {
        flag = 0;
        CHECK_RC(MPI_Request_get_status(rr, &flag, &st));
    } while (!flag && mtest_now() - t0 < 20);
    CHECK_INT(flag, 1, "Request_get_status never reported completion");
    CHECK(rr != MPI_REQUEST_NULL, "Request_get_status freed the request");
    CHECK_STATUS(&st, partner, 50, 4, "Request_get_status");
    /* Still valid: a second call and then Wait see the same. */
    flag = 0;
    CHECK_RC(MPI_Request_get_status(rr, &flag, &st2));
    CHECK_INT(flag, 1, "second Request_get_status");
    CHECK_RC(MPI_Wait(&rr, &st2));
    CHECK_STATUS(&st2, partner, 50, 4, "Wait after Request_get_status");
    CHECK_INT(r, partner + 77, "data");
    CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    MPI_Request nr = MPI_REQUEST_NULL;
    flag = 0;
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Request_get_status(nr, &flag, &st));
    CHECK_INT(flag, 1, "Request_get_status(MPI_REQUEST_NULL) flag");
    CHECK_EMPTY_STATUS(&st, "Request_get_status(MPI_REQUEST_NULL)");
    mtest_end();
}

static void test_issend(void)
{
    mtest_begin("issend");
    static const int sizes[] = {4, 100000};
    for (size_t k = 0; k < 2; k++) {
        int n = sizes[k], flag = 0;
        char *sb = malloc((size_t)n), *rb = malloc((size_t)n);
        MPI_Request sr;
        MPI_Status st;
        mtest_fill(sb, (size_t)n, (uint32_t)(n + mtest_rank));
        CHECK_RC(MPI_Issend(sb, n, MPI_BYTE, partner, 60, MPI_COMM_WORLD, &sr));
        double t0 = mtest_now();
        while (mtest_now() - t0 < 0.3) {
            CHECK_RC(MPI_Test(&sr, &flag, MPI_STATUS_IGNORE));
            if (flag) {
                CHECK(0, "Issend of %d bytes completed before the receive was posted", n);
                break;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(MPI_Recv(rb, n, MPI_BYTE, partner, 60, MPI_COMM_WORLD, &st));
        if (!flag)
            CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        CHECK_STATUS(&st, partner, 60, n, "Issend");
        CHECK_PATTERN(rb, (size_t)n, (uint32_t)(n + partner), "Issend");
        free(sb);
        free(rb);
    }
    mtest_end();
}

static void test_irsend_ibsend(void)
{
    mtest_begin("irsend_ibsend");
    int n = 50000;
    char *sb = malloc((size_t)n), *rb = malloc((size_t)n);
    MPI_Request sr, rr;
    MPI_Status st;
    mtest_fill(sb, (size_t)n, (uint32_t)(mtest_rank + 9));
    CHECK_RC(MPI_Irecv(rb, n, MPI_BYTE, partner, 70, MPI_COMM_WORLD, &rr));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Irsend(sb, n, MPI_BYTE, partner, 70, MPI_COMM_WORLD, &sr));
    CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Wait(&rr, &st));
    CHECK_STATUS(&st, partner, 70, n, "Irsend");
    CHECK_PATTERN(rb, (size_t)n, (uint32_t)(partner + 9), "Irsend");

    /* Ibsend: completes locally even though the partner has not posted. */
    int bsize = 10 * (1000 + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc((size_t)bsize);
    CHECK_RC(MPI_Buffer_attach(bbuf, bsize));
    MPI_Request br[10];
    for (int i = 0; i < 10; i++) {
        mtest_fill(sb, 1000, (uint32_t)(i + 100 * mtest_rank));
        CHECK_RC(MPI_Ibsend(sb, 1000, MPI_BYTE, partner, 71, MPI_COMM_WORLD, &br[i]));
        CHECK_RC(MPI_Wait(&br[i], MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 10; i++) {
        CHECK_RC(MPI_Recv(rb, 1000, MPI_BYTE, partner, 71, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, partner, 71, 1000, "Ibsend");
        CHECK_PATTERN(rb, 1000, (uint32_t)(i + 100 * partner), "Ibsend");
    }
    void *det;
    int dsize;
    CHECK_RC(MPI_Buffer_detach(&det, &dsize));
    CHECK(det == bbuf && dsize == bsize, "Buffer_detach gave %p/%d, attached %p/%d", det, dsize, (void *)bbuf, bsize);
    free(bbuf);
    free(sb);
    free(rb);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    partner = mtest_partner();
    test_basic();
    test_waitall();
    test_waitany();
    test_waitsome();
    test_test_family();
    test_request_free();
    test_get_status();
    test_issend();
    test_irsend_ibsend();
    return mtest_finalize();
}
