/* Eager messages written in place behind the 48-byte aligned header
 * (TERN_P2P_EAGER_ALIGN_MIN, core/pt2pt/p2p.c; PKT_EAGER_ALIGNED in
 * p2p_pkt.h): from that size a standard contiguous send puts its data on a
 * cache line of the shm cell. Checked: sizes either side of the threshold
 * and of the queue's eager limit, posted and unexpected receives (probed
 * first: the probe's count), MPI_ANY_SOURCE, buffers at odd offsets, small
 * and aligned messages interleaved in order, truncation; every byte, and
 * the byte after the message. The test's ENV sets the threshold to 1024;
 * its reruns set 1 (every message with a byte) and 0 (never), and the
 * sender's string copy (TERN_P2P_EAGER_MOVSB_MAX) up to 1500 and off.
 * Pairs of ranks (0-1, 2-3). */
#include "../mpi/mtest.h"

/* The queue's eager limit: 16512-byte cells (the test's ENV) less the
 * 16-byte cell header and room for the largest match header (64). */
#define EAGER_LIMIT 16432
#define GUARD 64

/* 1279-2049: either side of the string copy's range (base/copy_movsb.h). */
static const size_t sizes[] = {0,    1,    32,   1023, 1024, 1025, 1279, 1280, 1281, 1537,
                               2047, 2048, 2049, 4096, 4103, 8192, 8320, EAGER_LIMIT - 1, EAGER_LIMIT, EAGER_LIMIT + 1};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* The lower rank sends each size to the other with MPI_Send from a buffer
 * at soff; the receive lands at roff, posted before the send (expected) or
 * after the message was probed (unexpected). */
static void one_way(int peer, int unexpected, int any_source, size_t soff, size_t roff, char *sbuf,
                    char *rbuf)
{
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        char what[128];
        uint32_t seed = (uint32_t)(n * 13 + (size_t)unexpected * 5 + (size_t)any_source + soff * 3 + roff);
        snprintf(what, sizeof what, "%s%s receive of %zu bytes (offsets %zu/%zu)",
                 unexpected ? "unexpected" : "posted", any_source ? " ANY_SOURCE" : "", n, soff, roff);
        if (mtest_rank < peer) {
            mtest_fill(sbuf + soff, n, seed);
            if (!unexpected)
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* the receive is posted */
            CHECK_RC(MPI_Send(sbuf + soff, (int)n, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
            if (unexpected)
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        } else {
            MPI_Request r = MPI_REQUEST_NULL;
            MPI_Status st;
            char *p = rbuf + roff;
            memset(p, 0xA5, n + GUARD);
            int src = any_source ? MPI_ANY_SOURCE : peer;
            if (!unexpected) {
                CHECK_RC(MPI_Irecv(p, (int)(n + GUARD), MPI_BYTE, src, 3, MPI_COMM_WORLD, &r));
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                CHECK_RC(MPI_Wait(&r, &st));
            } else {
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                CHECK_RC(MPI_Probe(src, 3, MPI_COMM_WORLD, &st));
                CHECK_STATUS(&st, peer, 3, (int)n, what);
                CHECK_RC(MPI_Recv(p, (int)(n + GUARD), MPI_BYTE, src, 3, MPI_COMM_WORLD, &st));
            }
            CHECK_STATUS(&st, peer, 3, (int)n, what);
            CHECK_PATTERN(p, n, seed, what);
            CHECK(p[n] == (char)0xA5, "%s: byte past the message overwritten", what);
        }
    }
}

/* Windows of 8-byte and 2 KB messages alternated with MPI_Isend, received
 * in order as ANY_SOURCE into receives posted ahead: the two header forms
 * interleave in one queue. */
static void alternating(int peer, char *sbuf, char *rbuf)
{
    enum { WINDOW = 16, WINDOWS = 100, BIG = 2048 };
    MPI_Request r[WINDOW];
    for (int w = 0; w < WINDOWS; w++) {
        for (int i = 0; i < WINDOW; i++) {
            size_t n = i % 2 ? BIG : 8;
            char *p = (mtest_rank < peer ? sbuf : rbuf) + (size_t)i * BIG;
            if (mtest_rank < peer) {
                mtest_fill(p, n, (uint32_t)(w * WINDOW + i));
                CHECK_RC(MPI_Isend(p, (int)n, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &r[i]));
            } else {
                CHECK_RC(MPI_Irecv(p, BIG, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &r[i]));
            }
        }
        MPI_Status st[WINDOW];
        CHECK_RC(MPI_Waitall(WINDOW, r, st));
        if (mtest_rank > peer)
            for (int i = 0; i < WINDOW; i++) {
                char what[64];
                size_t n = i % 2 ? (size_t)BIG : 8;
                snprintf(what, sizeof what, "message %d of window %d", i, w);
                CHECK_STATUS(&st[i], peer, 7, (int)n, what);
                CHECK_PATTERN(rbuf + (size_t)i * BIG, n, (uint32_t)(w * WINDOW + i), what);
            }
    }
}

/* 4 KB into a 2000-byte receive, posted and unexpected: MPI_ERR_TRUNCATE,
 * the first 2000 bytes delivered, nothing written past them. */
static void truncation(int peer, char *sbuf, char *rbuf)
{
    const size_t n = 4096, room = 2000;
    for (int unexpected = 0; unexpected < 2; unexpected++) {
        uint32_t seed = (uint32_t)(99 + unexpected);
        if (mtest_rank < peer) {
            mtest_fill(sbuf, n, seed);
            if (!unexpected)
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 6, MPI_COMM_WORLD));
            if (unexpected)
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            MPI_Request r;
            memset(rbuf, 0xA5, room + GUARD);
            CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
            int rc;
            if (!unexpected) {
                CHECK_RC(MPI_Irecv(rbuf, (int)room, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r));
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                rc = MPI_Wait(&r, &st);
                if (rc == MPI_ERR_IN_STATUS)
                    rc = st.MPI_ERROR;
            } else {
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                CHECK_RC(MPI_Probe(peer, 6, MPI_COMM_WORLD, &st));
                rc = MPI_Recv(rbuf, (int)room, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &st);
            }
            CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "4 KB into 2000 bytes");
            CHECK_PATTERN(rbuf, room, seed, "the truncated message's first 2000 bytes");
            CHECK(rbuf[room] == (char)0xA5, "a truncated receive wrote past its buffer");
            CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int peer = mtest_partner();
    size_t bytes = 64 << 10;
    char *sbuf = aligned_alloc(4096, bytes), *rbuf = aligned_alloc(4096, bytes);
    if (!sbuf || !rbuf)
        FATAL("no memory for the buffers");

    if (peer != mtest_rank) {
        mtest_begin("posted");
        one_way(peer, 0, 0, 0, 0, sbuf, rbuf);
        mtest_end();
        mtest_begin("unexpected");
        one_way(peer, 1, 0, 0, 0, sbuf, rbuf);
        mtest_end();
        mtest_begin("any source");
        one_way(peer, 0, 1, 0, 0, sbuf, rbuf);
        one_way(peer, 1, 1, 0, 0, sbuf, rbuf);
        mtest_end();
        mtest_begin("odd offsets");
        one_way(peer, 0, 0, 1, 17, sbuf, rbuf);
        one_way(peer, 1, 0, 33, 3, sbuf, rbuf);
        mtest_end();
        mtest_begin("alternating");
        alternating(peer, sbuf, rbuf);
        mtest_end();
        mtest_begin("truncation");
        truncation(peer, sbuf, rbuf);
        mtest_end();
    }

    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
