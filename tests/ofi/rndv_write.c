/* Rendezvous by the sender's RDMA write (TERN_OFI_RNDV_WRITE,
 * core/pt2pt/rndv_write.h), run with the knob on and off: windows both
 * ways at once between every pair at sizes around the eager limits and
 * the 512 KB RDMA chunk; a truncated receive (MPI_ERR_TRUNCATE, and not a
 * byte written past its buffer); receives from MPI_ANY_SOURCE; a
 * non-contiguous receive, which keeps the stream. Every byte and count is
 * checked, and the counter tern_p2p_rndv_write says which path served:
 * with the knob on every contiguous receive from 64 KB + 129 bytes (a
 * rendezvous on both TCP providers), with it off none. With
 * TERN_OFI_RNDV_WRITE_MIN (bytes, or K / M) only the receives from that
 * size go by write, the smaller ones by the receiver's read: the sizes
 * 131072, 524288 and 524289 lie either side of 512K. */
#include "windows.h"

#include <stdlib.h>
#include <string.h>

#define WINDOW 4
#define TRUNC_SENT 300007
#define TRUNC_ROOM 200003
#define GUARD 4096

static const size_t sizes[] = {8193, 65665, 131072, 524288, 524289, 1048577, 3145733};

static size_t write_min; /* TERN_OFI_RNDV_WRITE_MIN */
static MPI_T_pvar_session sess;
static MPI_T_pvar_handle written;

static unsigned long long writes_now(void)
{
    unsigned long long v = 0;
    CHECK_RC(MPI_T_pvar_read(sess, written, &v));
    return v;
}

/* Windows of every size both ways between every pair at once. Returns
 * the receives that must go by write when the knob is on; *small counts
 * those that may (8193 bytes: a rendezvous on tcp;ofi_rxm only). */
static unsigned long long windows(unsigned char **sbuf, unsigned char **rbuf, MPI_Request *req,
                                  unsigned long long *small)
{
    unsigned long long big = 0, per = (unsigned long long)(mtest_size - 1) * WINDOW;
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++) {
        window_exchange(sbuf, rbuf, req, sizes[s], s, WINDOW);
        if (sizes[s] < write_min)
            continue; /* read, never written */
        if (sizes[s] >= 65665)
            big += per;
        else
            *small += per;
    }
    return big;
}

/* Rank 1 sends more than rank 0's receive holds: MPI_ERR_TRUNCATE, the
 * bytes that fit, and the guard behind the buffer untouched. */
static unsigned long long truncated(unsigned char *buf)
{
    if (mtest_rank == 1) {
        mtest_fill(buf, TRUNC_SENT, window_seed(1, 0, 50, 0));
        CHECK_RC(MPI_Send(buf, TRUNC_SENT, MPI_BYTE, 0, 77, MPI_COMM_WORLD));
        return 0;
    }
    if (mtest_rank != 0)
        return 0;
    memset(buf, 0xEE, TRUNC_ROOM + GUARD);
    MPI_Status st;
    int rc = MPI_Recv(buf, TRUNC_ROOM, MPI_BYTE, 1, 77, MPI_COMM_WORLD, &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "a receive shorter than the message");
    CHECK_PATTERN(buf, TRUNC_ROOM, window_seed(1, 0, 50, 0), "the truncated message's first bytes");
    for (size_t i = 0; i < GUARD; i++)
        CHECK(buf[TRUNC_ROOM + i] == 0xEE, "byte %zu past the truncated receive written", i);
    return TRUNC_ROOM >= write_min; /* the bytes moved decide */
}

/* Rank 0 takes one large message from every other rank by MPI_ANY_SOURCE. */
static unsigned long long any_source(unsigned char *buf)
{
    const size_t n = 1048583;
    if (mtest_rank != 0) {
        mtest_fill(buf, n, window_seed(mtest_rank, 0, 60, 0));
        CHECK_RC(MPI_Send(buf, (int)n, MPI_BYTE, 0, 78, MPI_COMM_WORLD));
        return 0;
    }
    int seen = 0;
    for (int i = 1; i < mtest_size; i++) {
        MPI_Status st;
        memset(buf, 0, n);
        CHECK_RC(MPI_Recv(buf, (int)n, MPI_BYTE, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &st));
        REQUIRE(st.MPI_SOURCE > 0 && st.MPI_SOURCE < mtest_size, "source %d", st.MPI_SOURCE);
        CHECK(!(seen & (1 << st.MPI_SOURCE)), "rank %d's message received twice", st.MPI_SOURCE);
        seen |= 1 << st.MPI_SOURCE;
        CHECK_PATTERN(buf, n, window_seed(st.MPI_SOURCE, 0, 60, 0), "a message from any source");
    }
    return n >= write_min ? (unsigned long long)(mtest_size - 1) : 0;
}

/* Rank 1 sends 256 KB contiguous; rank 0 receives it into every other
 * 8-byte block of its buffer (a vector): unpacked from the stream, the
 * gaps untouched, and not counted as written. */
static void noncontig(unsigned char *buf, unsigned char *wide)
{
    const int blocks = 32768, blen = 8;
    if (mtest_rank == 1) {
        mtest_fill(buf, (size_t)blocks * blen, window_seed(1, 0, 70, 0));
        CHECK_RC(MPI_Send(buf, blocks * blen, MPI_BYTE, 0, 79, MPI_COMM_WORLD));
        return;
    }
    if (mtest_rank != 0)
        return;
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(blocks, blen, 2 * blen, MPI_BYTE, &vec));
    CHECK_RC(MPI_Type_commit(&vec));
    memset(wide, 0xEE, (size_t)blocks * 2 * blen);
    mtest_fill(buf, (size_t)blocks * blen, window_seed(1, 0, 70, 0));
    CHECK_RC(MPI_Recv(wide, 1, vec, 1, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int b = 0; b < blocks; b++) {
        CHECK(memcmp(wide + (size_t)b * 2 * blen, buf + (size_t)b * blen, (size_t)blen) == 0,
              "block %d of the vector receive", b);
        for (int i = 0; i < blen; i++)
            CHECK(wide[(size_t)b * 2 * blen + (size_t)blen + (size_t)i] == 0xEE,
                  "gap after block %d written", b);
    }
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_watchdog(240);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *knob = getenv("TERN_OFI_RNDV_WRITE");
    int on = knob && strcmp(knob, "on") == 0;
    const char *min = getenv("TERN_OFI_RNDV_WRITE_MIN");
    if (min) {
        char *end;
        write_min = strtoull(min, &end, 10);
        write_min <<= *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : 0;
    }
    int provided, idx, count;
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK_RC(MPI_T_pvar_session_create(&sess));
    CHECK_RC(MPI_T_pvar_get_index("tern_p2p_rndv_write", MPI_T_PVAR_CLASS_COUNTER, &idx));
    CHECK_RC(MPI_T_pvar_handle_alloc(sess, idx, NULL, &written, &count));
    MPI_T_pvar_start(sess, written); /* continuous counters refuse: fine */

    window_bufs_t bufs = window_bufs_alloc(WINDOW, sizes[sizeof sizes / sizeof sizes[0] - 1]);

    unsigned long long before = writes_now(), want = 0, small = 0;
    mtest_begin("rndv_write_windows");
    want += windows(bufs.sbuf, bufs.rbuf, bufs.req, &small);
    mtest_end();
    mtest_begin("rndv_write_truncate");
    want += truncated(bufs.rbuf[0]);
    mtest_end();
    mtest_begin("rndv_write_any_source");
    want += any_source(bufs.rbuf[0]);
    mtest_end();
    mtest_begin("rndv_write_noncontig");
    noncontig(bufs.sbuf[0], bufs.rbuf[0]);
    mtest_end();
    mtest_begin("rndv_write_path");
    unsigned long long got = writes_now() - before;
    if (on)
        CHECK(got >= want && got <= want + small,
              "%llu receives by the sender's write, expected %llu-%llu", got, want, want + small);
    else
        CHECK(got == 0, "%llu receives by the sender's write with the knob off", got);
    mtest_end();

    window_bufs_free(&bufs);
    MPI_T_pvar_handle_free(sess, &written);
    MPI_T_pvar_session_free(&sess);
    MPI_T_finalize();
    return mtest_finalize();
}
