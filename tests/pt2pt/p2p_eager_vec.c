/* Eager messages copied by the AVX2 loop into a queue cell taken while the
 * sender waited (TERN_P2P_EAGER_VEC_MIN / _MAX, core/pt2pt/p2p.c;
 * PKT_EAGER_VEC in p2p_pkt.h; transport/shm/shm_warm.h): after a send in
 * that range (1-8 KB by default) the sender's first idle poll zeroes the
 * next cell's payload lines once the receiver took the earlier messages,
 * and the next such send into that cell goes by the loop, which the
 * receiver then uses to copy out. Checked: ping-pongs at sizes either side
 * of both limits and of the loop's 128-byte turn, from buffers at odd
 * offsets; unexpected (probed) and ANY_SOURCE receives of a warm cell's
 * message; 8-byte messages (packed cells) and 4 KB ones interleaved in one
 * window; truncation; every byte and the byte after the message; and by
 * the counter tern_p2p_eager_vec_sent that the ping-pong took the path
 * (the test's ENV: 1-4 KB; a rerun 1 byte to 8193), that 16 KB never
 * does, and that none does with TERN_P2P_EAGER_VEC_MAX=0 (a rerun). Pairs
 * of ranks (0-1, 2-3). */
#include "../mpit/mpit_util.h"

#include <stdint.h>
#include <stdlib.h>

#define GUARD 64
#define ROUNDS 40

/* ROUNDS round trips of n bytes, each message a new pattern, sent from
 * sbuf + soff and received at rbuf + roff. */
static void pingpong(int peer, size_t n, size_t soff, size_t roff, char *sbuf, char *rbuf)
{
    int first = mtest_rank < peer;
    for (int i = 0; i < ROUNDS; i++)
        for (int leg = 0; leg < 2; leg++) {
            uint32_t seed = (uint32_t)(n * 7 + (size_t)i * 2 + (size_t)leg + soff);
            char what[96];
            snprintf(what, sizeof what, "%zu bytes, round %d, leg %d, offsets %zu/%zu", n, i, leg,
                     soff, roff);
            if (first == (leg == 0)) {
                mtest_fill(sbuf + soff, n, seed);
                CHECK_RC(MPI_Send(sbuf + soff, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD));
            } else {
                MPI_Status st;
                char *p = rbuf + roff;
                memset(p, 0xA5, n + GUARD);
                CHECK_RC(MPI_Recv(p, (int)(n + GUARD), MPI_BYTE, peer, 4, MPI_COMM_WORLD, &st));
                CHECK_STATUS(&st, peer, 4, (int)n, what);
                CHECK_PATTERN(p, n, seed, what);
                CHECK(p[n] == (char)0xA5, "%s: byte past the message overwritten", what);
            }
        }
}

/* A warm cell's 4 KB message arrives before its receive: probed, then
 * received (by MPI_ANY_SOURCE when asked). */
static void unexpected(int peer, int any_source, char *sbuf, char *rbuf)
{
    const size_t n = 4096;
    for (int i = 0; i < 8; i++) {
        pingpong(peer, n, 0, 0, sbuf, rbuf); /* leaves the next cell warm */
        uint32_t seed = (uint32_t)(1000 + i * 2 + any_source);
        if (mtest_rank < peer) {
            mtest_fill(sbuf, n, seed);
            CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD));
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            int src = any_source ? MPI_ANY_SOURCE : peer;
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_RC(MPI_Probe(src, 5, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, peer, 5, (int)n, "probed 4 KB");
            memset(rbuf, 0xA5, n + GUARD);
            CHECK_RC(MPI_Recv(rbuf, (int)(n + GUARD), MPI_BYTE, src, 5, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, peer, 5, (int)n, "unexpected 4 KB");
            CHECK_PATTERN(rbuf, n, seed, "unexpected 4 KB");
            CHECK(rbuf[n] == (char)0xA5, "unexpected 4 KB: byte past the message overwritten");
        }
    }
}

/* Windows of 4 KB and 8-byte messages alternated (the small ones packed
 * when they queue), received in order as ANY_SOURCE, each window after a
 * ping-pong that warmed the next cell. */
static void mixed(int peer, char *sbuf, char *rbuf)
{
    enum { WINDOW = 12, WINDOWS = 30, BIG = 4096 };
    MPI_Request r[WINDOW];
    for (int w = 0; w < WINDOWS; w++) {
        pingpong(peer, BIG, 0, 0, sbuf, rbuf);
        for (int i = 0; i < WINDOW; i++) {
            size_t n = i % 3 == 0 ? BIG : 8;
            char *p = (mtest_rank < peer ? sbuf : rbuf) + (size_t)i * (BIG + GUARD);
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
                size_t n = i % 3 == 0 ? (size_t)BIG : 8;
                snprintf(what, sizeof what, "message %d of window %d", i, w);
                CHECK_STATUS(&st[i], peer, 7, (int)n, what);
                CHECK_PATTERN(rbuf + (size_t)i * (BIG + GUARD), n, (uint32_t)(w * WINDOW + i), what);
            }
    }
}

/* A warm cell's 4 KB message into a posted 2000-byte receive:
 * MPI_ERR_TRUNCATE, the first 2000 bytes delivered, nothing past them. */
static void truncation(int peer, char *sbuf, char *rbuf)
{
    const size_t n = 4096, room = 2000;
    pingpong(peer, n, 0, 0, sbuf, rbuf);
    if (mtest_rank < peer) {
        mtest_fill(sbuf, n, 77);
        CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 6, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        memset(rbuf, 0xA5, room + GUARD);
        CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int rc = MPI_Recv(rbuf, (int)room, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &st);
        CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "4 KB into 2000 bytes");
        CHECK_PATTERN(rbuf, room, 77, "the truncated message's first 2000 bytes");
        CHECK(rbuf[room] == (char)0xA5, "a truncated receive wrote past its buffer");
        CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
}

/* 1 when this run should take the path: the loop is on (not
 * TERN_P2P_EAGER_VEC_MAX=0) and the CPU has AVX2. */
static int vec_expected(void)
{
    const char *max = getenv("TERN_P2P_EAGER_VEC_MAX");
    if (max != NULL && strcmp(max, "0") == 0)
        return 0;
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

int main(int argc, char **argv)
{
    int provided;
    mtest_init(&argc, &argv);
    RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle h = mpit_handle("tern_p2p_eager_vec_sent", MPI_T_PVAR_CLASS_COUNTER, -1, NULL, 1);
    int peer = mtest_partner();
    size_t bytes = 128 << 10; /* mixed(): 12 x (4 KB + 64) */
    char *sbuf = aligned_alloc(4096, bytes), *rbuf = aligned_alloc(4096, bytes);
    if (!sbuf || !rbuf)
        FATAL("no memory for the buffers");

    if (peer != mtest_rank) {
        /* Either side of 1 KB and 4 KB, a 128-byte turn and a tail. */
        static const size_t sizes[] = {8,    1023, 1024, 1025, 1151, 2048, 3000,
                                       4095, 4096, 4097, 6144, 8191, 8192, 8193};
        mtest_begin("ping-pong");
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            pingpong(peer, sizes[i], 0, 0, sbuf, rbuf);
        unsigned long long after = rd(h);
        if (vec_expected())
            CHECK(after > 0, "no 1-4 KB message of the ping-pongs went by the loop");
        else
            CHECK(after == 0, "%llu messages went by the loop, which is off", after);
        pingpong(peer, 16384, 0, 0, sbuf, rbuf);
        CHECK(rd(h) == after, "a 16 KB message went by the loop (%llu, was %llu)", rd(h), after);
        mtest_end();
        mtest_begin("odd offsets");
        pingpong(peer, 4096, 1, 17, sbuf, rbuf);
        pingpong(peer, 3000, 33, 3, sbuf, rbuf);
        mtest_end();
        mtest_begin("unexpected");
        unexpected(peer, 0, sbuf, rbuf);
        unexpected(peer, 1, sbuf, rbuf);
        mtest_end();
        mtest_begin("mixed with 8 bytes");
        mixed(peer, sbuf, rbuf);
        mtest_end();
        mtest_begin("truncation");
        truncation(peer, sbuf, rbuf);
        mtest_end();
    }

    free(sbuf);
    free(rbuf);
    RC(MPI_T_pvar_handle_free(sess, &h), MPI_SUCCESS);
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    RC(MPI_T_finalize(), MPI_SUCCESS);
    return mtest_finalize();
}
