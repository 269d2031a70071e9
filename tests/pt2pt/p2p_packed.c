/* Messages of 0-16 bytes, which the shm transport packs two to a cache line
 * in one queue cell when they queue (TERN_SHM_PACK_MAX, shm_pack.h: sent
 * with nothing back from the peer since the last one, as in each stream
 * here), mixed with larger ones that take their own cells, the bulk channel or a
 * rendezvous:
 * - every size 0-16 B arrives with its data;
 * - one (source, tag) stream alternating packed and unpacked sizes arrives
 *   in order, posted and unexpected, blocking and nonblocking;
 * - MPI_ANY_SOURCE / MPI_ANY_TAG receives of packed messages from every
 *   sender keep each sender's order, with the right status;
 * - Probe, Iprobe, Mprobe/Mrecv and Improbe/Imrecv of packed messages;
 * - a cancelled unmatched packed send is never received;
 * - thousands in flight unexpected (pack cells fill, the ring fills and
 *   the sender waits), received in order;
 * - which messages pack, by the MPI_T counter tern_shm_packed: a one-way
 *   stream of 8 B sends all but its first, a ping-pong at most its first
 *   send (each later one follows the peer's message); none with
 *   TERN_SHM_PACK_MAX=0 or without the shm transport.
 * Pairs 0<->1, 2<->3 ...; rank 0 prints "test <name> ok" per sub-test. */
#include "../mpit/mpit_util.h"

#include <stdlib.h>
#include <string.h>

static int partner, lo, hi;

/* Packed (<= 16 B of data) and unpacked sizes, alternating irregularly. */
static size_t mixed_size(int i)
{
    static const size_t pattern[] = {8, 0, 17, 8, 8, 1, 4096, 16, 3, 100000, 8, 2, 40, 5, 70000, 8};
    return pattern[i % 16];
}

/* Message i's data: its number in the first bytes, the pattern after. */
static void fill(unsigned char *buf, size_t n, int i)
{
    mtest_fill(buf, n, (uint32_t)i * 7919u + 1);
}

/* Every size 0-16 B one after another (a stream: packed), from lo to hi
 * and back. */
static void sizes_0_16(void)
{
    mtest_begin("sizes 0-16");
    if (partner != mtest_rank) {
        for (int dir = 0; dir < 2; dir++) {
            int sender = dir ? hi : lo, receiver = dir ? lo : hi;
            for (int n = 0; n <= 16; n++) {
                unsigned char s[16], r[32];
                if (mtest_rank == sender) {
                    fill(s, (size_t)n, n);
                    CHECK_RC(MPI_Send(s, n, MPI_BYTE, receiver, n, MPI_COMM_WORLD));
                    continue;
                }
                MPI_Status st;
                memset(r, 0xee, sizeof r);
                CHECK_RC(MPI_Recv(r, 32, MPI_BYTE, sender, n, MPI_COMM_WORLD, &st));
                int count;
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK_INT(count, n, "received count");
                CHECK_INT(mtest_verify(r, (size_t)n, (uint32_t)n * 7919u + 1), -1, "data");
                CHECK_INT(r[n], 0xee, "byte after the message");
            }
        }
    }
    mtest_end();
}

/* NMSG messages of mixed sizes from lo to hi with one tag, in order. */
static void mixed_stream(int nonblocking, int unexpected)
{
    enum { NMSG = 96 };
    if (partner == mtest_rank)
        return;
    if (mtest_rank == lo) {
        unsigned char *bufs[NMSG];
        MPI_Request reqs[NMSG];
        for (int i = 0; i < NMSG; i++) {
            size_t n = mixed_size(i);
            bufs[i] = malloc(n + 1);
            fill(bufs[i], n, i);
            if (nonblocking)
                CHECK_RC(MPI_Isend(bufs[i], (int)n, MPI_BYTE, hi, 5, MPI_COMM_WORLD, &reqs[i]));
            else
                CHECK_RC(MPI_Send(bufs[i], (int)n, MPI_BYTE, hi, 5, MPI_COMM_WORLD));
        }
        if (nonblocking)
            CHECK_RC(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NMSG; i++)
            free(bufs[i]);
    } else {
        unsigned char *buf = malloc(100000);
        if (unexpected)
            mtest_sleep(0.2);
        for (int i = 0; i < NMSG; i++) {
            MPI_Status st;
            size_t n = mixed_size(i);
            CHECK_RC(MPI_Recv(buf, 100000, MPI_BYTE, lo, 5, MPI_COMM_WORLD, &st));
            int count;
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == (int)n, "message %d: %d bytes, expected %zu (out of order)", i, count, n);
            CHECK(mtest_verify(buf, n, (uint32_t)i * 7919u + 1) == -1, "message %d: data", i);
        }
        free(buf);
    }
}

/* Every rank but 0 sends NPER packed messages with tags i % 3; rank 0
 * takes them with ANY_SOURCE and ANY_TAG. */
static void any_source_tag(void)
{
    enum { NPER = 200 };
    mtest_begin("any source any tag");
    if (mtest_rank == 0) {
        int *next = calloc((size_t)mtest_size, sizeof *next);
        for (int k = 0; k < NPER * (mtest_size - 1); k++) {
            int v[2];
            MPI_Status st;
            CHECK_RC(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int s = st.MPI_SOURCE;
            REQUIRE(s > 0 && s < mtest_size, "source %d", s);
            CHECK(v[0] == s && v[1] == next[s], "from %d: got (%d, %d), expected (%d, %d)", s, v[0], v[1], s,
                  next[s]);
            CHECK_INT(st.MPI_TAG, next[s] % 3, "tag");
            next[s]++;
        }
        free(next);
    } else {
        for (int i = 0; i < NPER; i++) {
            int v[2] = {mtest_rank, i};
            CHECK_RC(MPI_Send(v, 2, MPI_INT, 0, i % 3, MPI_COMM_WORLD));
        }
    }
    mtest_end();
}

/* lo sends 8-byte messages; hi probes each with another call. */
static void probes(void)
{
    mtest_begin("probe iprobe mprobe of packed messages");
    if (partner != mtest_rank) {
        enum { N = 4 };
        if (mtest_rank == lo) {
            for (int i = 0; i < N; i++) {
                long long v = 1000 + i;
                CHECK_RC(MPI_Send(&v, 1, MPI_LONG_LONG, hi, 20 + i, MPI_COMM_WORLD));
            }
        } else {
            MPI_Status st;
            long long v = 0;
            int flag = 0, count;
            CHECK_RC(MPI_Probe(lo, 20, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK_INT(count, 8, "Probe count");
            CHECK_RC(MPI_Recv(&v, 1, MPI_LONG_LONG, lo, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT(v, 1000, "after Probe");
            while (!flag)
                CHECK_RC(MPI_Iprobe(lo, 21, MPI_COMM_WORLD, &flag, &st));
            CHECK_INT(st.MPI_TAG, 21, "Iprobe tag");
            CHECK_RC(MPI_Recv(&v, 1, MPI_LONG_LONG, lo, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT(v, 1001, "after Iprobe");
            MPI_Message msg;
            CHECK_RC(MPI_Mprobe(lo, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
            CHECK_INT(st.MPI_TAG, 22, "Mprobe tag");
            CHECK_RC(MPI_Mrecv(&v, 1, MPI_LONG_LONG, &msg, MPI_STATUS_IGNORE));
            CHECK_INT(v, 1002, "Mrecv");
            flag = 0;
            while (!flag)
                CHECK_RC(MPI_Improbe(lo, 23, MPI_COMM_WORLD, &flag, &msg, &st));
            MPI_Request r;
            CHECK_RC(MPI_Imrecv(&v, 1, MPI_LONG_LONG, &msg, &r));
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK_INT(v, 1003, "Imrecv");
        }
    }
    mtest_end();
}

/* A packed send not yet received, cancelled; the next one with the same
 * envelope arrives. */
static void cancel(void)
{
    mtest_begin("cancel a packed send");
    if (partner != mtest_rank) {
        if (mtest_rank == lo) {
            int a = 11, b = 22, cancelled = 0;
            MPI_Request r;
            MPI_Status st;
            CHECK_RC(MPI_Isend(&a, 1, MPI_INT, hi, 30, MPI_COMM_WORLD, &r));
            CHECK_RC(MPI_Cancel(&r));
            CHECK_RC(MPI_Wait(&r, &st));
            CHECK_RC(MPI_Test_cancelled(&st, &cancelled));
            CHECK_INT(cancelled, 1, "Test_cancelled");
            CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, hi, 31, MPI_COMM_WORLD));
            CHECK_RC(MPI_Send(&b, 1, MPI_INT, hi, 30, MPI_COMM_WORLD));
        } else {
            int v = 0;
            /* The cancelled message waits unexpected until then. */
            CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, lo, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Recv(&v, 1, MPI_INT, lo, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT(v, 22, "the message after the cancelled one");
        }
    }
    mtest_end();
}

/* NFLOOD 8-byte messages unexpected, then as many posted. */
static void flood(void)
{
    enum { NFLOOD = 5000 };
    mtest_begin("thousands in flight");
    if (partner != mtest_rank) {
        for (int round = 0; round < 2; round++) {
            if (mtest_rank == lo) {
                MPI_Request *r = malloc(NFLOOD * sizeof *r);
                long long *v = malloc(NFLOOD * sizeof *v);
                if (round == 1)
                    CHECK_RC(MPI_Recv(NULL, 0, MPI_BYTE, hi, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                for (int i = 0; i < NFLOOD; i++) {
                    v[i] = (long long)i * 3 + round;
                    CHECK_RC(MPI_Isend(&v[i], 1, MPI_LONG_LONG, hi, 40, MPI_COMM_WORLD, &r[i]));
                }
                CHECK_RC(MPI_Waitall(NFLOOD, r, MPI_STATUSES_IGNORE));
                free(r);
                free(v);
            } else {
                long long *v = malloc(NFLOOD * sizeof *v);
                MPI_Request *r = malloc(NFLOOD * sizeof *r);
                if (round == 0)
                    mtest_sleep(0.3);
                for (int i = 0; i < NFLOOD; i++)
                    CHECK_RC(MPI_Irecv(&v[i], 1, MPI_LONG_LONG, lo, 40, MPI_COMM_WORLD, &r[i]));
                if (round == 1)
                    CHECK_RC(MPI_Send(NULL, 0, MPI_BYTE, lo, 41, MPI_COMM_WORLD));
                CHECK_RC(MPI_Waitall(NFLOOD, r, MPI_STATUSES_IGNORE));
                int bad = 0;
                for (int i = 0; i < NFLOOD; i++)
                    bad += v[i] != (long long)i * 3 + round;
                CHECK_INT(bad, 0, "messages out of order or wrong");
                free(v);
                free(r);
            }
        }
    }
    mtest_end();
}

/* A stream of N 8 B sends from lo to hi, then N round trips: how many
 * messages each rank packed in either part. */
static void which_pack(void)
{
    enum { N = 300 };
    mtest_begin("a stream packs, a ping-pong does not");
    int provided;
    RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle h = mpit_handle("tern_shm_packed", MPI_T_PVAR_CLASS_COUNTER, -1, NULL, 1);
    /* Packing off, or no shm transport (the ofi_ runs of this test). */
    const char *knob = getenv("TERN_SHM_PACK_MAX"), *tls = getenv("TERN_TRANSPORTS");
    int off = (knob != NULL && strtol(knob, NULL, 0) == 0) || (tls != NULL && strstr(tls, "shm") == NULL);
    if (partner != mtest_rank) {
        double v = 0;
        int sender = mtest_rank == lo;
        unsigned long long t0 = rd(h);
        for (int i = 0; i < N; i++) {
            if (sender)
                CHECK_RC(MPI_Send(&v, 1, MPI_DOUBLE, hi, 5, MPI_COMM_WORLD));
            else
                CHECK_RC(MPI_Recv(&v, 1, MPI_DOUBLE, lo, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        unsigned long long stream = rd(h) - t0;
        t0 = rd(h);
        for (int i = 0; i < N; i++) {
            if (sender) {
                CHECK_RC(MPI_Send(&v, 1, MPI_DOUBLE, hi, 6, MPI_COMM_WORLD));
                CHECK_RC(MPI_Recv(&v, 1, MPI_DOUBLE, hi, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                CHECK_RC(MPI_Recv(&v, 1, MPI_DOUBLE, lo, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK_RC(MPI_Send(&v, 1, MPI_DOUBLE, lo, 6, MPI_COMM_WORLD));
            }
        }
        unsigned long long pingpong = rd(h) - t0;
        if (off) {
            CHECK(stream == 0 && pingpong == 0, "packing off yet %llu + %llu packed", stream, pingpong);
        } else {
            if (sender)
                CHECK(stream >= N - 1, "a stream of %d packed %llu", N, stream);
            else
                CHECK(stream == 0, "the stream's receiver packed %llu", stream);
            CHECK(pingpong <= 1, "%d round trips packed %llu", N, pingpong);
        }
    }
    RC(MPI_T_pvar_handle_free(sess, &h), MPI_SUCCESS);
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    RC(MPI_T_finalize(), MPI_SUCCESS);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    partner = mtest_partner();
    lo = mtest_rank < partner ? mtest_rank : partner;
    hi = mtest_rank < partner ? partner : mtest_rank;
    sizes_0_16();
    mtest_begin("mixed stream posted");
    mixed_stream(0, 0);
    mtest_end();
    mtest_begin("mixed stream unexpected nonblocking");
    mixed_stream(1, 1);
    mtest_end();
    mtest_begin("mixed stream unexpected blocking");
    mixed_stream(0, 1);
    mtest_end();
    any_source_tag();
    probes();
    cancel();
    flood();
    which_pack();
    return mtest_finalize();
}
