/* The rendezvous path of mid-size messages between two ranks of a node
 * (core/pt2pt/rndv_path.c): sizes around the eager limit (16 KB), the
 * smallest get (32 KB) and TERN_SHM_MEASURE_MIN (128 KB), each as a
 * ping-pong and as an exchange (both sends under way), every byte checked.
 * Below 128 KB the path is not timed but set by TERN_SHM_MID_PATH: under
 * stream (the default) the receiver reads none of these messages by get,
 * under get it reads every rendezvous by get (messages up to 64 KB go
 * eager through a bulk cell: the test's TERN_P2P_EAGER_BIG_MAX); the MPI_T
 * counters tern_p2p_rndv_get and tern_p2p_rndv_stream say which. From
 * 128 KB an exchange takes TERN_SHM_EXCHANGE_PATH: under get the first of
 * the two receivers to match (its own send still under way) reads by get,
 * under stream (this test's base run) it streams; windows of exchanges
 * run under each, every byte checked. Under auto with TERN_CMA_PAYS_PCT
 * so high that the read always pays, 1.2 s of windows take both paths
 * (get, and the stream's probes every 0.5 s), every byte checked. Run at
 * 2 ranks on at least 2 cores (oversubscribed ranks read by CMA from 32 KB
 * whatever the knob). */
#include "../mpit/mpit_util.h"

static const size_t mid_sizes[] = {16383, 16384, 16385, 32767, 32768, 32769,
                                   65535, 65536, 65537, 131071};
static const size_t measured_sizes[] = {131072, 131073, 262144};
#define NMID (sizeof mid_sizes / sizeof mid_sizes[0])
#define NMEASURED (sizeof measured_sizes / sizeof measured_sizes[0])
#define GUARD 64

/* The peer sends n bytes, this rank checks them and sends its own back
 * (rank 0 first). */
static void ping_pong(int peer, size_t n, char *sbuf, char *rbuf)
{
    char what[96];
    uint32_t mine = (uint32_t)(n * 3 + (size_t)mtest_rank), theirs = (uint32_t)(n * 3 + (size_t)peer);
    mtest_fill(sbuf, n, mine);
    memset(rbuf, 0xA5, n + GUARD);
    snprintf(what, sizeof what, "ping-pong of %zu bytes", n);
    for (int turn = 0; turn < 2; turn++) {
        if (turn == mtest_rank)
            CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
        else
            CHECK_RC(MPI_Recv(rbuf, (int)(n + GUARD), MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
    }
    CHECK_PATTERN(rbuf, n, theirs, what);
    CHECK(rbuf[n] == (char)0xA5, "%s: byte past the message overwritten", what);
}

/* Both ranks send n bytes at once, the send posted before the receive. */
static void exchange(int peer, size_t n, char *sbuf, char *rbuf)
{
    char what[96];
    uint32_t mine = (uint32_t)(n * 5 + (size_t)mtest_rank), theirs = (uint32_t)(n * 5 + (size_t)peer);
    MPI_Request sreq;
    mtest_fill(sbuf, n, mine);
    memset(rbuf, 0xA5, n + GUARD);
    snprintf(what, sizeof what, "exchange of %zu bytes", n);
    CHECK_RC(MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &sreq));
    CHECK_RC(MPI_Recv(rbuf, (int)(n + GUARD), MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    CHECK_PATTERN(rbuf, n, theirs, what);
    CHECK(rbuf[n] == (char)0xA5, "%s: byte past the message overwritten", what);
}

#define NX 16
#define XSIZE 262144
#define XWIN 8

/* Windows of XWIN messages each way, of sizes around 256 KB, all posted
 * at once: the exchange's tail (one side done first) included. */
static void exchange_windows(int peer)
{
    char *s = malloc(XWIN * (size_t)(XSIZE + 1)), *r = malloc(XWIN * (size_t)(XSIZE + 1));
    if (!s || !r)
        FATAL("no memory for the windows");
    for (int round = 0; round < 6; round++) {
        MPI_Request req[2 * XWIN];
        size_t n = (size_t)XSIZE - 1 + (size_t)(round % 3);
        for (int i = 0; i < XWIN; i++) {
            mtest_fill(s + (size_t)i * n, n, (uint32_t)(round * 97 + i * 7 + mtest_rank));
            CHECK_RC(MPI_Irecv(r + (size_t)i * n, (int)n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req[i]));
        }
        for (int i = 0; i < XWIN; i++)
            CHECK_RC(MPI_Isend(s + (size_t)i * n, (int)n, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                               &req[XWIN + i]));
        CHECK_RC(MPI_Waitall(2 * XWIN, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < XWIN; i++)
            CHECK_PATTERN(r + (size_t)i * n, n, (uint32_t)(round * 97 + i * 7 + peer),
                          "exchange window");
    }
    free(s);
    free(r);
}

/* Exchange windows for at least the given seconds (rank 0's clock, told each round):
 * under TERN_SHM_EXCHANGE_PATH=auto longer than its probe period, so a
 * rank that reads by get streams a probe again. */
static void exchange_windows_for(int peer, double seconds)
{
    double t0 = MPI_Wtime();
    for (int more = 1; more;) {
        exchange_windows(peer);
        more = MPI_Wtime() - t0 < seconds;
        CHECK_RC(MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    int provided;
    mtest_init(&argc, &argv);
    RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle gets = mpit_handle("tern_p2p_rndv_get", MPI_T_PVAR_CLASS_COUNTER, -1, NULL, 1);
    MPI_T_pvar_handle streams =
        mpit_handle("tern_p2p_rndv_stream", MPI_T_PVAR_CLASS_COUNTER, -1, NULL, 1);
    const char *knob = getenv("TERN_SHM_MID_PATH");
    int by_get = knob && strcmp(knob, "get") == 0;
    int peer = mtest_partner();
    char *sbuf = malloc(262144 + GUARD), *rbuf = malloc(262144 + GUARD);
    if (!sbuf || !rbuf)
        FATAL("no memory for the buffers");

    mtest_begin("mid-size path");
    unsigned long long get0 = rd(gets), stream0 = rd(streams);
    unsigned long long rndv = 0; /* rendezvous this rank received */
    for (size_t i = 0; i < NMID; i++) {
        ping_pong(peer, mid_sizes[i], sbuf, rbuf);
        exchange(peer, mid_sizes[i], sbuf, rbuf);
        /* 64 KB and below go eager (TERN_P2P_EAGER_BIG_MAX), but the
         * exchange's may go by rendezvous (a send after a send, the
         * channel busy: p2p.c, eager_big_send): a floor. */
        rndv += mid_sizes[i] > 65536 ? 2 : 0;
    }
    unsigned long long got = rd(gets) - get0, streamed = rd(streams) - stream0;
    /* Oversubscribed (fewer cores than ranks) every rendezvous from 32 KB
     * is read by CMA whatever the knob. */
    if (mtest_size == 2 && peer != mtest_rank && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
        if (by_get) {
            CHECK(got >= rndv,
                  "TERN_SHM_MID_PATH=get: %llu of at least %llu rendezvous from 64 KB read by get", got, rndv);
        } else {
            CHECK(got == 0, "TERN_SHM_MID_PATH=stream: %llu rendezvous below 128 KB read by get", got);
            CHECK(streamed >= rndv, "TERN_SHM_MID_PATH=stream: %llu of %llu rendezvous streamed",
                  streamed, rndv);
        }
    }
    mtest_end();

    mtest_begin("measured sizes");
    for (int round = 0; round < 8; round++)
        for (size_t i = 0; i < NMEASURED; i++) {
            ping_pong(peer, measured_sizes[i], sbuf, rbuf);
            exchange(peer, measured_sizes[i], sbuf, rbuf);
        }
    mtest_end();

    mtest_begin("exchange path");
    const char *xknob = getenv("TERN_SHM_EXCHANGE_PATH");
    int x_get = xknob && strcmp(xknob, "get") == 0, x_stream = xknob && strcmp(xknob, "stream") == 0;
    get0 = rd(gets), stream0 = rd(streams);
    for (int round = 0; round < NX; round++)
        exchange(peer, XSIZE, sbuf, rbuf);
    unsigned long long mine[2] = {rd(gets) - get0, rd(streams) - stream0}, both[2];
    CHECK_RC(MPI_Allreduce(mine, both, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (mtest_size == 2 && peer != mtest_rank && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
        if (x_get)
            CHECK(both[0] >= NX, "TERN_SHM_EXCHANGE_PATH=get: %llu of %d exchanges read by get",
                  both[0], NX);
        if (x_stream)
            CHECK(both[1] >= NX, "TERN_SHM_EXCHANGE_PATH=stream: %llu of %d exchanges streamed",
                  both[1], NX);
    }
    exchange_windows(peer);
    mtest_end();

    /* auto with the read paying always: the exchanges stream until a
     * rank's rate is known, go by get from then on, and stream the
     * periodic probes; every byte checked. */
    if (getenv("TERN_CMA_PAYS_PCT") && xknob && strcmp(xknob, "auto") == 0) {
        mtest_begin("exchange path auto, both ways");
        get0 = rd(gets), stream0 = rd(streams);
        exchange_windows_for(peer, 1.2);
        mine[0] = rd(gets) - get0, mine[1] = rd(streams) - stream0;
        CHECK_RC(MPI_Allreduce(mine, both, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
        if (mtest_size == 2 && peer != mtest_rank && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
            CHECK(both[0] > 0, "TERN_SHM_EXCHANGE_PATH=auto: none of the exchanges read by get");
            CHECK(both[1] > 0, "TERN_SHM_EXCHANGE_PATH=auto: no exchange streamed (probes)");
        }
        mtest_end();
    }

    free(sbuf);
    free(rbuf);
    RC(MPI_T_pvar_handle_free(sess, &gets), MPI_SUCCESS);
    RC(MPI_T_pvar_handle_free(sess, &streams), MPI_SUCCESS);
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    RC(MPI_T_finalize(), MPI_SUCCESS);
    return mtest_finalize();
}
