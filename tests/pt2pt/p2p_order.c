/* Message ordering (non-overtaking) and matching order:
 * - a stream of messages with the same (source, tag) mixing small (eager) and
 *   large (rendezvous) sizes arrives in order, with blocking and with
 *   nonblocking sends;
 * - with MPI_ANY_SOURCE from several senders, each sender's messages arrive
 *   in its order;
 * - unexpected messages with different tags received in reverse tag order;
 * - posted receives match in posting order (also mixing a specific source and
 *   MPI_ANY_SOURCE, or a specific tag and MPI_ANY_TAG). */
#include "../mpi/mtest.h"

static int partner, lo, hi;

static size_t stream_size(int i)
{
    static const size_t pattern[] = {8, 100000, 0, 1024, 9000, 64, 300000, 4096, 1, 70000};
    return pattern[i % 10];
}

/* lo sends NMSG messages with one tag to hi; the sequence number is in the
 * first 4 bytes (when there is room) and in the data pattern. */
static void stream(int nonblocking)
{
    enum { NMSG = 60 };
    if (partner == mtest_rank)
        return; /* large sends to self without a posted receive would be unsafe */
    if (mtest_rank == lo) {
        char *bufs[NMSG];
        MPI_Request reqs[NMSG];
        for (int i = 0; i < NMSG; i++) {
            size_t n = stream_size(i);
            bufs[i] = malloc(n + 1);
            mtest_fill(bufs[i], n, (uint32_t)i);
            if (nonblocking)
                CHECK_RC(MPI_Isend(bufs[i], (int)n, MPI_BYTE, hi, 3, MPI_COMM_WORLD, &reqs[i]));
            else
                CHECK_RC(MPI_Send(bufs[i], (int)n, MPI_BYTE, hi, 3, MPI_COMM_WORLD));
        }
        if (nonblocking)
            CHECK_RC(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NMSG; i++)
            free(bufs[i]);
    } else {
        char *buf = malloc(300000);
        if (nonblocking)
            mtest_sleep(0.2); /* let the sends pile up unexpected */
        for (int i = 0; i < NMSG; i++) {
            MPI_Status st;
            char what[64];
            snprintf(what, sizeof what, "stream message %d", i);
            CHECK_RC(MPI_Recv(buf, 300000, MPI_BYTE, lo, 3, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, lo, 3, (int)stream_size(i), what);
            CHECK_PATTERN(buf, stream_size(i), (uint32_t)i, what);
        }
        free(buf);
    }
}

static void test_stream(void)
{
    mtest_begin("order_stream_blocking");
    stream(0);
    mtest_end();
    mtest_begin("order_stream_nonblocking");
    stream(1);
    mtest_end();
}

/* All ranks but 0 send NMSG sequence-numbered messages to rank 0, which
 * receives them with ANY_SOURCE. */
static void test_any_source_order(void)
{
    mtest_begin("order_any_source");
    enum { NMSG = 300 };
    if (mtest_rank == 0) {
        int *next = calloc((size_t)mtest_size, sizeof(int));
        char *buf = malloc(20000);
        for (int k = 0; k < NMSG * (mtest_size - 1); k++) {
            MPI_Status st;
            CHECK_RC(MPI_Recv(buf, 20000, MPI_BYTE, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE;
            if (src <= 0 || src >= mtest_size) {
                CHECK(0, "bad source %d", src);
                continue;
            }
            int seq = -1, c = -1;
            memcpy(&seq, buf, sizeof seq);
            CHECK(seq == next[src], "from %d: expected sequence %d, got %d", src, next[src], seq);
            MPI_Get_count(&st, MPI_BYTE, &c);
            CHECK_INT(c, (next[src] % 7 == 3) ? 20000 : 4 + next[src] % 50, "message size");
            next[src] = seq + 1;
        }
        for (int r = 1; r < mtest_size; r++)
            CHECK_INT(next[r], NMSG, "messages received from a sender");
        free(next);
        free(buf);
    } else {
        char *buf = calloc(20000, 1);
        for (int i = 0; i < NMSG; i++) {
            memcpy(buf, &i, sizeof i);
            CHECK_RC(MPI_Send(buf, (i % 7 == 3) ? 20000 : 4 + i % 50, MPI_BYTE, 0, 4, MPI_COMM_WORLD));
        }
        free(buf);
    }
    mtest_end();
}

/* Unexpected messages with tags 0..N-1, received in reverse tag order. */
static void test_reverse_tags(void)
{
    mtest_begin("order_reverse_tags");
    enum { N = 40 };
    char *sb[N], *rb = malloc(200000);
    MPI_Request reqs[N];
    for (int t = 0; t < N; t++) {
        size_t n = (t % 5 == 2) ? 150000 : (size_t)(t * 10);
        sb[t] = malloc(n + 1);
        mtest_fill(sb[t], n, (uint32_t)(t + 1000 * mtest_rank));
        CHECK_RC(MPI_Isend(sb[t], (int)n, MPI_BYTE, partner, 100 + t, MPI_COMM_WORLD, &reqs[t]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = N - 1; t >= 0; t--) {
        size_t n = (t % 5 == 2) ? 150000 : (size_t)(t * 10);
        MPI_Status st;
        char what[64];
        snprintf(what, sizeof what, "tag %d (reverse order)", 100 + t);
        CHECK_RC(MPI_Recv(rb, 200000, MPI_BYTE, partner, 100 + t, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, partner, 100 + t, (int)n, what);
        CHECK_PATTERN(rb, n, (uint32_t)(t + 1000 * partner), what);
    }
    CHECK_RC(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE));
    for (int t = 0; t < N; t++)
        free(sb[t]);
    free(rb);
    mtest_end();
}

/* Posted receives for tags N-1..0, then the sends arrive in tag order. */
static void test_posted_reverse(void)
{
    mtest_begin("order_posted_reverse_tags");
    enum { N = 40 };
    int rb[N], sb[N];
    MPI_Request rr[N], sr[N];
    for (int t = N - 1; t >= 0; t--) {
        rb[t] = -1;
        CHECK_RC(MPI_Irecv(&rb[t], 1, MPI_INT, partner, 200 + t, MPI_COMM_WORLD, &rr[t]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < N; t++) {
        sb[t] = t * 3 + mtest_rank * 1000;
        CHECK_RC(MPI_Isend(&sb[t], 1, MPI_INT, partner, 200 + t, MPI_COMM_WORLD, &sr[t]));
    }
    CHECK_RC(MPI_Waitall(N, rr, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Waitall(N, sr, MPI_STATUSES_IGNORE));
    for (int t = 0; t < N; t++)
        CHECK_INT(rb[t], t * 3 + partner * 1000, "posted receive by tag");
    mtest_end();
}

/* The first posted matching receive wins. */
static void test_posted_order(void)
{
    mtest_begin("order_posted_matching");
    int a = -1, b = -1, c = -1, v[3];
    MPI_Request r[3], s[3];
    MPI_Status st[3];
    for (int round = 0; round < 4; round++) {
        a = b = c = -1;
        /* round 0: specific source, then ANY_SOURCE, then specific
         * round 1: ANY_SOURCE first
         * round 2: specific tag then ANY_TAG
         * round 3: ANY_TAG first */
        int src0 = round == 1 ? MPI_ANY_SOURCE : partner, src1 = round == 0 ? MPI_ANY_SOURCE : partner;
        int tag0 = round == 3 ? MPI_ANY_TAG : 5, tag1 = round == 2 ? MPI_ANY_TAG : 5;
        CHECK_RC(MPI_Irecv(&a, 1, MPI_INT, src0, tag0, MPI_COMM_WORLD, &r[0]));
        CHECK_RC(MPI_Irecv(&b, 1, MPI_INT, src1, tag1, MPI_COMM_WORLD, &r[1]));
        CHECK_RC(MPI_Irecv(&c, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &r[2]));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < 3; i++) {
            v[i] = 10 * round + i;
            CHECK_RC(MPI_Isend(&v[i], 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &s[i]));
        }
        CHECK_RC(MPI_Waitall(3, r, st));
        CHECK_RC(MPI_Waitall(3, s, MPI_STATUSES_IGNORE));
        char what[64];
        snprintf(what, sizeof what, "round %d: first posted receive", round);
        CHECK_INT(a, 10 * round + 0, what);
        snprintf(what, sizeof what, "round %d: second posted receive", round);
        CHECK_INT(b, 10 * round + 1, what);
        snprintf(what, sizeof what, "round %d: third posted receive", round);
        CHECK_INT(c, 10 * round + 2, what);
        for (int i = 0; i < 3; i++)
            CHECK_STATUS(&st[i], partner, 5, 4, "posted matching status");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    partner = mtest_partner();
    lo = mtest_rank < partner ? mtest_rank : partner;
    hi = mtest_rank < partner ? partner : mtest_rank;
    test_stream();
    test_any_source_order();
    test_reverse_tags();
    test_posted_reverse();
    test_posted_order();
    return mtest_finalize();
}
