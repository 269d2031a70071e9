/* Blocking send modes and special arguments: Ssend (synchronous: does not
 * return before the receive is posted), Rsend, Bsend with Buffer_attach/
 * detach, Sendrecv, Sendrecv_replace around a ring, MPI_PROC_NULL,
 * MPI_ANY_SOURCE/MPI_ANY_TAG, Get_count/Get_elements (MPI_UNDEFINED),
 * Status_set_elements/Status_set_cancelled, messages to self on WORLD and on
 * MPI_COMM_SELF (and that the two do not match each other). */
#include "../mpi/mtest.h"

static int partner, lo, hi;

static void test_ssend(void)
{
    mtest_begin("ssend");
    static const int sizes[] = {0, 4, 1000, 100000, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        char *buf = malloc((size_t)n + 1);
        MPI_Status st;
        if (partner == mtest_rank) {
            MPI_Request r;
            mtest_fill(buf, (size_t)n, (uint32_t)n);
            char *rb = malloc((size_t)n + 1);
            CHECK_RC(MPI_Irecv(rb, n, MPI_BYTE, mtest_rank, 5, MPI_COMM_WORLD, &r));
            CHECK_RC(MPI_Ssend(buf, n, MPI_BYTE, mtest_rank, 5, MPI_COMM_WORLD));
            CHECK_RC(MPI_Wait(&r, &st));
            CHECK_STATUS(&st, mtest_rank, 5, n, "Ssend to self");
            CHECK_PATTERN(rb, (size_t)n, (uint32_t)n, "Ssend to self");
            free(rb);
        } else if (mtest_rank == lo) {
            mtest_fill(buf, (size_t)n, (uint32_t)n);
            CHECK_RC(MPI_Ssend(buf, n, MPI_BYTE, hi, 5, MPI_COMM_WORLD));
        } else {
            CHECK_RC(MPI_Recv(buf, n, MPI_BYTE, lo, 5, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, lo, 5, n, "Ssend");
            CHECK_PATTERN(buf, (size_t)n, (uint32_t)n, "Ssend");
        }
        free(buf);
    }
    /* Synchronous: the sender is held until the receiver posts, 0.3 s
     * later; the receiver reports when it posted (same host, same monotonic
     * clock), so a loaded machine that delays the sender cannot fake a pass
     * or a failure. */
    static const int sync_sizes[] = {4, 200000}; /* eager and rendezvous */
    for (int k = 0; k < 2; k++) {
        int n = sync_sizes[k];
        char *buf = calloc((size_t)n, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        if (partner != mtest_rank && mtest_rank == lo) {
            CHECK_RC(MPI_Ssend(buf, n, MPI_BYTE, hi, 6, MPI_COMM_WORLD));
            double t_done = mtest_now(), t_posted;
            CHECK_RC(MPI_Recv(&t_posted, 1, MPI_DOUBLE, hi, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(t_done >= t_posted, "Ssend of %d bytes returned %.6f s before the receiver posted its receive", n,
                  t_posted - t_done);
        } else if (partner != mtest_rank) {
            mtest_sleep(0.3);
            double t_posted = mtest_now();
            CHECK_RC(MPI_Recv(buf, n, MPI_BYTE, lo, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Send(&t_posted, 1, MPI_DOUBLE, lo, 7, MPI_COMM_WORLD));
        }
        free(buf);
    }
    mtest_end();
}

static void test_rsend(void)
{
    mtest_begin("rsend");
    static const int sizes[] = {0, 8, 5000, 300000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        char *sb = malloc((size_t)n + 1), *rb = malloc((size_t)n + 1);
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Status st;
        mtest_fill(sb, (size_t)n, (uint32_t)(n + mtest_rank));
        /* Everyone posts its receive from the partner, then the barrier
         * guarantees the receive is posted before the Rsend. */
        CHECK_RC(MPI_Irecv(rb, n, MPI_BYTE, partner, 7, MPI_COMM_WORLD, &r));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(MPI_Rsend(sb, n, MPI_BYTE, partner, 7, MPI_COMM_WORLD));
        CHECK_RC(MPI_Wait(&r, &st));
        CHECK_STATUS(&st, partner, 7, n, "Rsend");
        CHECK_PATTERN(rb, (size_t)n, (uint32_t)(n + partner), "Rsend");
        free(sb);
        free(rb);
    }
    mtest_end();
}

static void test_bsend(void)
{
    mtest_begin("bsend");
    enum { NMSG = 200, SMALL = 64, BIG = 100000 };
    int bsize = NMSG * (SMALL + MPI_BSEND_OVERHEAD) + BIG + MPI_BSEND_OVERHEAD;
    char *bbuf = malloc((size_t)bsize);
    CHECK_RC(MPI_Buffer_attach(bbuf, bsize));
    char msg[SMALL];
    char *big = malloc(BIG);
    /* Many small Bsends (and one big one) before the partner posts anything:
     * all of them complete locally. Then the partner receives in order. */
    for (int i = 0; i < NMSG; i++) {
        mtest_fill(msg, SMALL, (uint32_t)(i * 3 + mtest_rank));
        CHECK_RC(MPI_Bsend(msg, SMALL, MPI_BYTE, partner, 8, MPI_COMM_WORLD));
        mtest_fill(msg, SMALL, 0); /* the buffer is ours again */
    }
    mtest_fill(big, BIG, (uint32_t)(999 + mtest_rank));
    CHECK_RC(MPI_Bsend(big, BIG, MPI_BYTE, partner, 9, MPI_COMM_WORLD));
    memset(big, 0, BIG);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NMSG; i++) {
        MPI_Status st;
        memset(msg, 0, SMALL);
        CHECK_RC(MPI_Recv(msg, SMALL, MPI_BYTE, partner, 8, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, partner, 8, SMALL, "Bsend small");
        CHECK_PATTERN(msg, SMALL, (uint32_t)(i * 3 + partner), "Bsend small (in order)");
    }
    MPI_Status st;
    CHECK_RC(MPI_Recv(big, BIG, MPI_BYTE, partner, 9, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, partner, 9, BIG, "Bsend big");
    CHECK_PATTERN(big, BIG, (uint32_t)(999 + partner), "Bsend big");
    void *det = NULL;
    int dsize = -1;
    CHECK_RC(MPI_Buffer_detach(&det, &dsize));
    CHECK(det == bbuf, "Buffer_detach returned %p, attached %p", det, (void *)bbuf);
    CHECK_INT(dsize, bsize, "Buffer_detach size");

    /* The buffer can be re-attached and reused many times over (space is
     * reclaimed as messages leave). */
    int small_bsize = 4 * (SMALL + MPI_BSEND_OVERHEAD);
    CHECK_RC(MPI_Buffer_attach(bbuf, small_bsize));
    for (int i = 0; i < 300; i++) {
        mtest_fill(msg, SMALL, (uint32_t)i);
        CHECK_RC(MPI_Bsend(msg, SMALL, MPI_BYTE, partner, 10, MPI_COMM_WORLD));
        CHECK_RC(MPI_Recv(msg, SMALL, MPI_BYTE, partner, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_PATTERN(msg, SMALL, (uint32_t)i, "Bsend through a small reused buffer");
    }
    det = NULL;
    CHECK_RC(MPI_Buffer_detach(&det, &dsize));
    CHECK(det == bbuf, "second Buffer_detach returned %p", det);
    CHECK_INT(dsize, small_bsize, "second Buffer_detach size");
    free(big);
    free(bbuf);
    mtest_end();
}

static void test_sendrecv(void)
{
    mtest_begin("sendrecv");
    int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    static const int sizes[] = {0, 1, 4096, 70000, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        char *sb = malloc((size_t)n + 1), *rb = malloc((size_t)n + 16);
        MPI_Status st;
        mtest_fill(sb, (size_t)n, (uint32_t)(mtest_rank * 17 + n));
        CHECK_RC(MPI_Sendrecv(sb, n, MPI_BYTE, right, 11, rb, n + 16, MPI_BYTE, left, 11, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, left, 11, n, "Sendrecv ring");
        CHECK_PATTERN(rb, (size_t)n, (uint32_t)(left * 17 + n), "Sendrecv ring");
        /* With ANY_SOURCE/ANY_TAG on the receive side. */
        CHECK_RC(MPI_Sendrecv(sb, n, MPI_BYTE, right, 12 + mtest_rank, rb, n + 16, MPI_BYTE, MPI_ANY_SOURCE,
                              MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, left, 12 + left, n, "Sendrecv ring with ANY_SOURCE/ANY_TAG");
        CHECK_PATTERN(rb, (size_t)n, (uint32_t)(left * 17 + n), "Sendrecv ring with ANY_SOURCE/ANY_TAG");
        free(sb);
        free(rb);
    }
    /* PROC_NULL on one side. */
    int x = 42, y = -1;
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK_PROCNULL_STATUS(&st, "Sendrecv with PROC_NULL both sides");
    CHECK_INT(y, -1, "receive buffer after a receive from PROC_NULL");
    mtest_end();
}

static void test_sendrecv_replace(void)
{
    mtest_begin("sendrecv_replace");
    int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    static const int counts[] = {1, 1000, 300000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int n = counts[k];
        int *buf = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            buf[i] = mtest_rank * 7 + i;
        /* Shift right `size` times: the data comes back home; after each
         * step it is the data of the rank `step` places to the left. */
        for (int step = 1; step <= mtest_size; step++) {
            MPI_Status st;
            CHECK_RC(MPI_Sendrecv_replace(buf, n, MPI_INT, right, 13, left, 13, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, left, 13, n * 4, "Sendrecv_replace");
            int origin = (mtest_rank - step % mtest_size + mtest_size) % mtest_size;
            for (int i = 0; i < n; i++)
                if (buf[i] != origin * 7 + i) {
                    CHECK(0, "count %d step %d element %d: expected %d, got %d", n, step, i, origin * 7 + i, buf[i]);
                    break;
                }
        }
        free(buf);
    }
    mtest_end();
}

static void test_proc_null(void)
{
    mtest_begin("proc_null");
    int x[4] = {1, 2, 3, 4};
    MPI_Status st;
    MPI_Request r;
    CHECK_RC(MPI_Send(x, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    CHECK_RC(MPI_Ssend(x, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    CHECK_RC(MPI_Rsend(x, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    CHECK_RC(MPI_Bsend(x, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Recv(x, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    CHECK_PROCNULL_STATUS(&st, "Recv from PROC_NULL");
    CHECK(x[0] == 1 && x[3] == 4, "Recv from PROC_NULL changed the buffer");
    int c = -1;
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK_INT(c, 0, "Get_count(MPI_INT) after Recv from PROC_NULL");
    int flag = 1;
    MPI_Test_cancelled(&st, &flag);
    CHECK_INT(flag, 0, "Test_cancelled after Recv from PROC_NULL");
    CHECK_RC(MPI_Isend(x, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "request not freed");
    CHECK_RC(MPI_Irecv(x, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    memset(&st, 0x55, sizeof st);
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK_PROCNULL_STATUS(&st, "Irecv from PROC_NULL + Wait");
    mtest_end();
}

static void test_any_source_tag(void)
{
    mtest_begin("any_source_tag");
    /* Every rank but 0 sends rank*3 ints with tag rank+10 to rank 0. */
    if (mtest_rank == 0) {
        char *seen = calloc((size_t)mtest_size, 1);
        int buf[3 * 64];
        for (int i = 1; i < mtest_size; i++) {
            MPI_Status st;
            CHECK_RC(MPI_Recv(buf, 3 * 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE, c = -1;
            CHECK(src > 0 && src < mtest_size, "status source %d", src);
            if (src <= 0 || src >= mtest_size)
                continue;
            CHECK(!seen[src], "message from %d received twice", src);
            seen[src] = 1;
            CHECK_INT(st.MPI_TAG, src + 10, "status tag");
            MPI_Get_count(&st, MPI_INT, &c);
            CHECK_INT(c, src * 3, "Get_count with ANY_SOURCE");
            for (int j = 0; j < c && j < 3 * 64; j++)
                if (buf[j] != src * 1000 + j) {
                    CHECK(0, "from %d element %d: expected %d got %d", src, j, src * 1000 + j, buf[j]);
                    break;
                }
        }
        free(seen);
    } else if (mtest_rank < 64) {
        int buf[3 * 64];
        for (int j = 0; j < mtest_rank * 3; j++)
            buf[j] = mtest_rank * 1000 + j;
        CHECK_RC(MPI_Send(buf, mtest_rank * 3, MPI_INT, 0, mtest_rank + 10, MPI_COMM_WORLD));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* keep the next messages out of rank 0's ANY/ANY receives */
    /* ANY_TAG with a specific source, and specific tag with ANY_SOURCE. */
    int v = mtest_rank, w = -1;
    MPI_Request r;
    MPI_Status st;
    CHECK_RC(MPI_Isend(&v, 1, MPI_INT, partner, 77, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Recv(&w, 1, MPI_INT, partner, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_STATUS(&st, partner, 77, 4, "specific source, ANY_TAG");
    CHECK_INT(w, partner, "data with ANY_TAG");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Isend(&v, 1, MPI_INT, partner, 78, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_STATUS(&st, partner, 78, 4, "ANY_SOURCE, specific tag");
    mtest_end();
}

static void test_counts(void)
{
    mtest_begin("get_count_elements");
    char b[64], rb[64];
    MPI_Status st;
    MPI_Request r;
    int c;
    MPI_Count cx;
    memset(b, 1, sizeof b);
    /* 10 bytes: not a whole number of ints. */
    CHECK_RC(MPI_Isend(b, 10, MPI_BYTE, mtest_rank, 14, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Recv(rb, 64, MPI_BYTE, mtest_rank, 14, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    c = -1;
    CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &c));
    CHECK_INT(c, 10, "Get_count(MPI_BYTE) of 10 bytes");
    c = -1;
    CHECK_RC(MPI_Get_count(&st, MPI_SHORT, &c));
    CHECK_INT(c, 5, "Get_count(MPI_SHORT) of 10 bytes");
    c = -1;
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &c));
    CHECK_INT(c, MPI_UNDEFINED, "Get_count(MPI_INT) of 10 bytes");
    c = -1;
    CHECK_RC(MPI_Get_elements(&st, MPI_INT, &c));
    CHECK_INT(c, MPI_UNDEFINED, "Get_elements(MPI_INT) of 10 bytes");
    c = -1;
    CHECK_RC(MPI_Get_elements(&st, MPI_CHAR, &c));
    CHECK_INT(c, 10, "Get_elements(MPI_CHAR) of 10 bytes");
    cx = -1;
    CHECK_RC(MPI_Get_elements_x(&st, MPI_BYTE, &cx));
    CHECK_INT(cx, 10, "Get_elements_x(MPI_BYTE) of 10 bytes");
    /* 16 bytes as doubles. */
    CHECK_RC(MPI_Isend(b, 16, MPI_BYTE, mtest_rank, 15, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Recv(rb, 64, MPI_BYTE, mtest_rank, 15, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    c = -1;
    CHECK_RC(MPI_Get_count(&st, MPI_DOUBLE, &c));
    CHECK_INT(c, 2, "Get_count(MPI_DOUBLE) of 16 bytes");
    c = -1;
    CHECK_RC(MPI_Get_elements(&st, MPI_2INT, &c));
    CHECK_INT(c, 4, "Get_elements(MPI_2INT) of 16 bytes");
    c = -1;
    CHECK_RC(MPI_Get_count(&st, MPI_2INT, &c));
    CHECK_INT(c, 2, "Get_count(MPI_2INT) of 16 bytes");
    /* Status_set_elements / Status_set_cancelled. */
    MPI_Status s2;
    memset(&s2, 0, sizeof s2);
    CHECK_RC(MPI_Status_set_elements(&s2, MPI_INT, 7));
    c = -1;
    MPI_Get_count(&s2, MPI_INT, &c);
    CHECK_INT(c, 7, "Get_count after Status_set_elements(MPI_INT, 7)");
    c = -1;
    MPI_Get_count(&s2, MPI_BYTE, &c);
    CHECK_INT(c, 28, "Get_count(MPI_BYTE) after Status_set_elements(MPI_INT, 7)");
    int flag = -1;
    CHECK_RC(MPI_Test_cancelled(&s2, &flag));
    CHECK_INT(flag, 0, "Test_cancelled on a fresh status");
    CHECK_RC(MPI_Status_set_cancelled(&s2, 1));
    CHECK_RC(MPI_Test_cancelled(&s2, &flag));
    CHECK_INT(flag, 1, "Test_cancelled after Status_set_cancelled(1)");
    c = -1;
    MPI_Get_count(&s2, MPI_INT, &c);
    CHECK_INT(c, 7, "Status_set_cancelled changed the count");
    CHECK_RC(MPI_Status_set_cancelled(&s2, 0));
    CHECK_RC(MPI_Test_cancelled(&s2, &flag));
    CHECK_INT(flag, 0, "Test_cancelled after Status_set_cancelled(0)");
    mtest_end();
}

static void test_self(void)
{
    mtest_begin("self");
    static const int sizes[] = {0, 1, 100, 8192, 100000, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        char *sb = malloc((size_t)n + 1), *rb = malloc((size_t)n + 1);
        MPI_Request r;
        MPI_Status st;
        /* Isend to own rank on WORLD, then Recv. */
        mtest_fill(sb, (size_t)n, (uint32_t)(n ^ 0x55));
        CHECK_RC(MPI_Isend(sb, n, MPI_BYTE, mtest_rank, 16, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Recv(rb, n, MPI_BYTE, mtest_rank, 16, MPI_COMM_WORLD, &st));
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_STATUS(&st, mtest_rank, 16, n, "Isend to self on WORLD");
        CHECK_PATTERN(rb, (size_t)n, (uint32_t)(n ^ 0x55), "Isend to self on WORLD");
        /* On COMM_SELF: rank 0. */
        mtest_fill(sb, (size_t)n, (uint32_t)(n ^ 0x66));
        CHECK_RC(MPI_Isend(sb, n, MPI_BYTE, 0, 17, MPI_COMM_SELF, &r));
        CHECK_RC(MPI_Recv(rb, n, MPI_BYTE, MPI_ANY_SOURCE, 17, MPI_COMM_SELF, &st));
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_STATUS(&st, 0, 17, n, "Isend on COMM_SELF");
        CHECK_PATTERN(rb, (size_t)n, (uint32_t)(n ^ 0x66), "Isend on COMM_SELF");
        /* Sendrecv on COMM_SELF. */
        mtest_fill(sb, (size_t)n, (uint32_t)(n ^ 0x77));
        CHECK_RC(MPI_Sendrecv(sb, n, MPI_BYTE, 0, 18, rb, n, MPI_BYTE, 0, 18, MPI_COMM_SELF, &st));
        CHECK_STATUS(&st, 0, 18, n, "Sendrecv on COMM_SELF");
        CHECK_PATTERN(rb, (size_t)n, (uint32_t)(n ^ 0x77), "Sendrecv on COMM_SELF");
        free(sb);
        free(rb);
    }
    /* A message on SELF does not match a receive on WORLD, and vice versa. */
    int a = 111, b = 222, x = 0, y = 0;
    MPI_Request r[2];
    MPI_Status st;
    CHECK_RC(MPI_Isend(&a, 1, MPI_INT, 0, 19, MPI_COMM_SELF, &r[0]));
    CHECK_RC(MPI_Isend(&b, 1, MPI_INT, mtest_rank, 19, MPI_COMM_WORLD, &r[1]));
    CHECK_RC(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK_INT(y, 222, "receive on WORLD (a SELF message was sent first)");
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st));
    CHECK_INT(x, 111, "receive on SELF");
    CHECK_STATUS(&st, 0, 19, 4, "receive on SELF");
    CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    partner = mtest_partner();
    lo = mtest_rank < partner ? mtest_rank : partner;
    hi = mtest_rank < partner ? partner : mtest_rank;
    test_ssend();
    test_rsend();
    test_bsend();
    test_sendrecv();
    test_sendrecv_replace();
    test_proc_null();
    test_any_source_tag();
    test_counts();
    test_self();
    return mtest_finalize();
}
