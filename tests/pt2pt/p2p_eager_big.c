/* Eager messages through the shm transport's large ordered messages
 * (TERN_P2P_EAGER_BIG_MAX, core/pt2pt/p2p.c eager_big_send): a message
 * above the queue's eager limit (16 KB + 48) up to 64 KB goes in one bulk cell
 * with a doorbell in the queue, no rendezvous. Checked: sizes either side
 * of both limits as expected and unexpected receives (the send completes
 * before any receive is posted), MPI_ANY_SOURCE, order with small messages
 * and rendezvous streams interleaved, a flood beyond the bulk channel's
 * window (the rest go by rendezvous), truncation; every byte, and the
 * counter tern_p2p_eager_big_sent for which sizes took the path. Above
 * TERN_P2P_EAGER_BIG_PART (the ENV: 20000 by default, 0 and 16 KB in the
 * reruns) the message is written in parts that the receiver copies out as
 * they land: sizes either side of one and two parts, truncation inside
 * the first part and past it, parts that land slowly (a sender's buffer
 * opened page by page), a non-contiguous receive, and the counter
 * tern_p2p_eager_parts_sent. Windows: a one-way window's later sends go
 * by rendezvous (the counter), exchanges both ways at once, posted and
 * unexpected. Above one bulk cell's data (65,568 bytes) a message runs on
 * into the next cells, always in parts: sizes either side of one and two
 * cells and of the limit (reruns with TERN_P2P_EAGER_BIG_MAX 256 KB),
 * truncation, slow parts and a vector receive past the first cell. A
 * message in parts has a 48-byte header that puts its data on a cache
 * line (65,536 data bytes in the first cell): sizes either side of one and
 * two such cells, and send and receive buffers at offsets 0-63 of a line,
 * messages in one part, two, and over two cells. The header is written
 * with the first part's commit: a ping-pong whose tag and size change every
 * message, received as ANY_TAG by a waiting receiver, round the bulk ring.
 * Pairs of ranks (0-1, 2-3). */
#include "../mpit/mpit_util.h"

#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The queue's eager limit: 16512-byte cells (the test's ENV) less the
 * 16-byte cell header and room for the largest match header (64). */
#define EAGER_LIMIT 16432
/* One 64 KB bulk cell's payload (65,584 bytes) less the match header, and
 * less the 48-byte header of a message in parts (its data on a line). */
#define CELL_DATA 65568
#define PARTS_CELL_DATA 65536
#define GUARD 64
#define FLOOD 48

/* TERN_P2P_EAGER_BIG_MAX, set by the test's ENV. */
static size_t big_limit;
static size_t sizes[24];
static size_t nsizes;

static void set_sizes(void)
{
    const char *s = getenv("TERN_P2P_EAGER_BIG_MAX");
    big_limit = s ? (size_t)strtoull(s, NULL, 10) : 131072;
    static const size_t fixed[] = {EAGER_LIMIT, EAGER_LIMIT + 1, 20000,         20001,
                                   32768,       39999,           40000,         40001,
                                   CELL_DATA,   CELL_DATA + 1,   2 * CELL_DATA + 16, 2 * CELL_DATA + 17,
                                   PARTS_CELL_DATA, PARTS_CELL_DATA + 1, PARTS_CELL_DATA + 65584,
                                   PARTS_CELL_DATA + 65585};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        sizes[nsizes++] = fixed[i];
    sizes[nsizes++] = big_limit - 1;
    sizes[nsizes++] = big_limit;
    sizes[nsizes++] = big_limit + 1;
    sizes[nsizes++] = 2 * big_limit;
}

/* Whether a message of n bytes goes eager through the bulk channel, and
 * whether in parts (part: TERN_P2P_EAGER_BIG_PART; past one cell always). */
static int goes_big(size_t n)
{
    return n > EAGER_LIMIT && n <= big_limit;
}

static int goes_in_parts(size_t n, size_t part)
{
    return goes_big(n) && ((part && n > part) || n > CELL_DATA);
}

/* TERN_P2P_EAGER_BIG_PART as the test runs it (0: one piece). */
static size_t part_size(void)
{
    const char *s = getenv("TERN_P2P_EAGER_BIG_PART");
    return s ? (size_t)strtoull(s, NULL, 10) : 16384;
}

/* Rank 0 sends each size to rank 1; posted (expected) or only after the
 * send completed (unexpected); any_source names the source as ANY. */
static void one_way(int peer, int unexpected, int any_source, char *sbuf, char *rbuf,
                    MPI_T_pvar_handle h, MPI_T_pvar_handle hparts)
{
    size_t part = part_size();
    for (size_t i = 0; i < nsizes; i++) {
        size_t n = sizes[i];
        char what[96];
        uint32_t seed = (uint32_t)(n * 7 + (size_t)unexpected * 3 + (size_t)any_source);
        snprintf(what, sizeof what, "%s%s receive of %zu bytes", unexpected ? "unexpected" : "posted",
                 any_source ? " ANY_SOURCE" : "", n);
        if (mtest_rank < peer) {
            unsigned long long before = rd(h), parts_before = rd(hparts);
            mtest_fill(sbuf, n, seed);
            MPI_Request r;
            /* The receive is posted; or the previous message was taken, so
             * the channel is idle (a window's later sends go by rendezvous). */
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_RC(MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &r));
            if (unexpected) {
                int done = 0;
                CHECK_RC(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
                CHECK(done || n > big_limit, "%s: an eager send not complete at once", what);
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* now the receiver posts */
            }
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
            unsigned long long took = rd(h) - before;
            CHECK_INT(took, goes_big(n), what);
            CHECK_INT(rd(hparts) - parts_before, goes_in_parts(n, part), what);
        } else {
            MPI_Request r = MPI_REQUEST_NULL;
            MPI_Status st;
            memset(rbuf, 0xA5, n + GUARD);
            int src = any_source ? MPI_ANY_SOURCE : peer;
            if (!unexpected) {
                CHECK_RC(MPI_Irecv(rbuf, (int)(n + GUARD), MPI_BYTE, src, 3, MPI_COMM_WORLD, &r));
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                CHECK_RC(MPI_Wait(&r, &st));
            } else {
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
                int flag = 0;
                /* The message is there before the receive (not for rendezvous: only its RTS). */
                while (!flag)
                    CHECK_RC(MPI_Iprobe(src, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                CHECK_RC(MPI_Recv(rbuf, (int)(n + GUARD), MPI_BYTE, src, 3, MPI_COMM_WORLD, &st));
            }
            CHECK_STATUS(&st, peer, 3, (int)n, what);
            CHECK_PATTERN(rbuf, n, seed, what);
            CHECK(rbuf[n] == (char)0xA5, "%s: byte past the message overwritten", what);
        }
    }
}

/* Windows (core/pt2pt/p2p.c, eager_big_send): EXCH_WINDOW sends in a row,
 * nothing received in between while the receiver sleeps: the first goes
 * eager, the later ones by rendezvous (at most one more if the receiver
 * took the first before its sleep); then both ranks exchange windows of
 * odd sizes at once, receives posted first, and again with the receives
 * posted only after the sends (unexpected). Every byte checked. */
#define EXCH_WINDOW 4
static void windows(int peer, char *sbuf, char *rbuf, MPI_T_pvar_handle h)
{
    static const size_t wsizes[EXCH_WINDOW] = {20001, 40000, 65535, 32769};
    size_t off[EXCH_WINDOW + 1] = {0};
    for (int i = 0; i < EXCH_WINDOW; i++)
        off[i + 1] = off[i] + wsizes[i] + GUARD;
    MPI_Request r[2 * EXCH_WINDOW];
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (mtest_rank < peer) {
        unsigned long long before = rd(h);
        for (int i = 0; i < EXCH_WINDOW; i++) {
            mtest_fill(sbuf + off[i], wsizes[i], (uint32_t)(900 + i));
            CHECK_RC(MPI_Isend(sbuf + off[i], (int)wsizes[i], MPI_BYTE, peer, 9, MPI_COMM_WORLD, &r[i]));
        }
        unsigned long long took = rd(h) - before;
        CHECK(took >= 1 && took <= 2, "one-way window of %d: %llu sent eager, expected 1 (or 2)", EXCH_WINDOW, took);
        CHECK_RC(MPI_Waitall(EXCH_WINDOW, r, MPI_STATUSES_IGNORE));
    } else {
        usleep(50000); /* the sender's window goes out meanwhile */
        for (int i = 0; i < EXCH_WINDOW; i++)
            CHECK_RC(MPI_Irecv(rbuf + off[i], (int)wsizes[i], MPI_BYTE, peer, 9, MPI_COMM_WORLD, &r[i]));
        CHECK_RC(MPI_Waitall(EXCH_WINDOW, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < EXCH_WINDOW; i++)
            CHECK_PATTERN(rbuf + off[i], wsizes[i], (uint32_t)(900 + i), "one-way window");
    }
    for (int unexpected = 0; unexpected < 2; unexpected++) {
        const char *what = unexpected ? "exchange, unexpected" : "exchange, posted";
        uint32_t me = (uint32_t)(mtest_rank < peer ? 0 : 1), other = 1 - me;
        memset(rbuf, 0xA5, off[EXCH_WINDOW]);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < EXCH_WINDOW && !unexpected; i++)
            CHECK_RC(MPI_Irecv(rbuf + off[i], (int)wsizes[i], MPI_BYTE, peer, 10, MPI_COMM_WORLD, &r[i]));
        for (int i = 0; i < EXCH_WINDOW; i++) {
            mtest_fill(sbuf + off[i], wsizes[i], 1000 + 10 * me + (uint32_t)i);
            CHECK_RC(MPI_Isend(sbuf + off[i], (int)wsizes[i], MPI_BYTE, peer, 10, MPI_COMM_WORLD,
                               &r[EXCH_WINDOW + i]));
        }
        for (int i = 0; i < EXCH_WINDOW && unexpected; i++)
            CHECK_RC(MPI_Irecv(rbuf + off[i], (int)wsizes[i], MPI_BYTE, peer, 10, MPI_COMM_WORLD, &r[i]));
        CHECK_RC(MPI_Waitall(2 * EXCH_WINDOW, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < EXCH_WINDOW; i++) {
            CHECK_PATTERN(rbuf + off[i], wsizes[i], 1000 + 10 * other + (uint32_t)i, what);
            CHECK(rbuf[off[i] + wsizes[i]] == (char)0xA5, "%s: byte past message %d overwritten", what, i);
        }
    }
}

/* Small, eager-big and rendezvous messages interleaved on one tag, sent
 * while the receiver is away, arrive in the order sent (the doorbell orders the bulk cell with the queue; a
 * stream's chunks share the bulk channel), received as ANY_SOURCE; then a
 * flood of 60 KB messages, more than the bulk channel holds, all before
 * the receiver posts one. */
static void order_and_flood(int peer, char *sbuf, char *rbuf)
{
    static const size_t mix[] = {8, 40000, 100, 65536, 131072, 196608, 20000, 8, 200000, 50000};
    const int nmix = (int)(sizeof mix / sizeof mix[0]), rounds = 6;
    /* The receiver first looks while the queue holds more than one
     * progress call takes (a marked bulk cell then sits ahead of its
     * doorbell's turn). */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (mtest_rank < peer) {
        MPI_Request r[6 * 10];
        size_t off = 0;
        for (int k = 0; k < rounds; k++)
            for (int i = 0; i < nmix; i++) {
                mtest_fill(sbuf + off, mix[i], (uint32_t)(k * 100 + i));
                CHECK_RC(MPI_Isend(sbuf + off, (int)mix[i], MPI_BYTE, peer, 4, MPI_COMM_WORLD,
                                   &r[k * nmix + i]));
                off += mix[i];
            }
        CHECK_RC(MPI_Waitall(rounds * nmix, r, MPI_STATUSES_IGNORE));
    } else {
        mtest_sleep(0.1);
        for (int k = 0; k < rounds; k++)
            for (int i = 0; i < nmix; i++) {
                char what[96];
                MPI_Status st;
                snprintf(what, sizeof what, "message %d of round %d (%zu bytes) in order", i, k, mix[i]);
                memset(rbuf, 0xA5, mix[i] + GUARD);
                CHECK_RC(MPI_Recv(rbuf, (int)(400000 + GUARD), MPI_BYTE, MPI_ANY_SOURCE,
                                  4, MPI_COMM_WORLD, &st));
                CHECK_STATUS(&st, peer, 4, (int)mix[i], what);
                CHECK_PATTERN(rbuf, mix[i], (uint32_t)(k * 100 + i), what);
            }
    }

    const size_t n = 60000;
    if (mtest_rank < peer) {
        MPI_Request r[FLOOD];
        for (int k = 0; k < FLOOD; k++) {
            mtest_fill(sbuf + (size_t)k * n, n, (uint32_t)(7000 + k));
            CHECK_RC(MPI_Isend(sbuf + (size_t)k * n, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &r[k]));
        }
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Waitall(FLOOD, r, MPI_STATUSES_IGNORE));
    } else {
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        for (int k = 0; k < FLOOD; k++) {
            char what[64];
            MPI_Status st;
            snprintf(what, sizeof what, "flood message %d", k);
            CHECK_RC(MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, peer, 5, (int)n, what);
            CHECK_PATTERN(rbuf, n, (uint32_t)(7000 + k), what);
        }
    }
}

/* Windows of 8-byte and 20 KB messages alternated, receives posted ahead
 * (matched on arrival): a bulk cell taken ahead of a queue message sent
 * before it would land in the wrong receive. */
static void alternating(int peer, char *sbuf, char *rbuf)
{
    enum { WINDOW = 16, WINDOWS = 200, BIG = 20000 };
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
        CHECK_RC(MPI_Waitall(WINDOW, r, MPI_STATUSES_IGNORE));
        if (mtest_rank > peer)
            for (int i = 0; i < WINDOW; i++) {
                char what[64];
                snprintf(what, sizeof what, "message %d of window %d", i, w);
                CHECK_PATTERN(rbuf + (size_t)i * BIG, i % 2 ? (size_t)BIG : 8, (uint32_t)(w * WINDOW + i),
                              what);
            }
    }
}

/* 40 KB into a 20 KB receive, 60 KB into 30,001 bytes (past the first
 * part) and into 1,000 (inside it), 150,000 into 70,001 (past the first
 * cell) and into 1,000: MPI_ERR_TRUNCATE, the receive's room delivered,
 * nothing past it. */
static void truncation(int peer, char *sbuf, char *rbuf)
{
    static const size_t cases[][2] = {{40000, 20000}, {60000, 30001}, {60000, 1000}, {150000, 70001}, {150000, 1000}};
    for (int c = 0; c < 5; c++) {
        size_t n = cases[c][0], room = cases[c][1];
        char what[64];
        snprintf(what, sizeof what, "%zu bytes into %zu", n, room);
        if (mtest_rank < peer) {
            mtest_fill(sbuf, n, 99);
            CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 6, MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            memset(rbuf, 0xA5, room + GUARD);
            CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
            int rc = MPI_Recv(rbuf, (int)room, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &st);
            CHECK_CLASS(rc, MPI_ERR_TRUNCATE, what);
            CHECK_PATTERN(rbuf, room, 99, what);
            CHECK(rbuf[room] == (char)0xA5, "%s: a truncated receive wrote past its buffer", what);
            CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        }
    }
}

/* Parts that land slowly: the sender's buffer is unreadable until a
 * SIGSEGV handler opens it a page at a time after 200 us, so the sender's
 * copy crawls while the posted receiver copies what has landed; a receiver
 * that read past the count of bytes written would deliver stale cell
 * bytes (it did, with the wait taken out). */
static long page_size;
static void open_page(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)ctx;
    struct timespec pause = {0, 200000};
    nanosleep(&pause, NULL);
    char *page = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(page_size - 1));
    mprotect(page, (size_t)page_size, PROT_READ);
}

static void slow_source(int peer, char *rbuf, size_t n)
{
    enum { COUNT = 8 };
    page_size = sysconf(_SC_PAGESIZE);
    size_t map = (n + (size_t)page_size - 1) & ~(size_t)(page_size - 1);
    struct sigaction sa = {0}, old;
    sa.sa_sigaction = open_page;
    sa.sa_flags = SA_SIGINFO;
    for (int k = 0; k < COUNT; k++) {
        char what[48];
        snprintf(what, sizeof what, "slow source message %d of %zu bytes", k, n);
        if (mtest_rank < peer) {
            char *src = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            CHECK(src != MAP_FAILED, "mmap");
            mtest_fill(src, n, (uint32_t)(1234 + k));
            CHECK(mprotect(src, map, PROT_NONE) == 0, "mprotect");
            CHECK(sigaction(SIGSEGV, &sa, &old) == 0, "sigaction");
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_RC(MPI_Send(src, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD));
            sigaction(SIGSEGV, &old, NULL);
            munmap(src, map);
        } else {
            MPI_Request r;
            MPI_Status st;
            memset(rbuf, 0xA5, n);
            CHECK_RC(MPI_Irecv(rbuf, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &r));
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_RC(MPI_Wait(&r, &st));
            CHECK_STATUS(&st, peer, 9, (int)n, what);
            CHECK_PATTERN(rbuf, n, (uint32_t)(1234 + k), what);
        }
    }
}

/* 4 x blocks bytes into a vector of 4-byte blocks 8 bytes apart, posted
 * first: a message in parts unpacked once whole. */
static void noncontig(int peer, char *sbuf, char *rbuf, int blocks)
{
    const int BLOCKS = blocks;
    const size_t n = 4 * (size_t)BLOCKS;
    if (mtest_rank < peer) {
        mtest_fill(sbuf, n, 42);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 8, MPI_COMM_WORLD));
    } else {
        MPI_Datatype vec;
        MPI_Request r;
        MPI_Status st;
        CHECK_RC(MPI_Type_vector(BLOCKS, 4, 8, MPI_BYTE, &vec));
        CHECK_RC(MPI_Type_commit(&vec));
        memset(rbuf, 0xA5, 2 * n);
        memset(sbuf, 0, n);
        CHECK_RC(MPI_Irecv(rbuf, 1, vec, peer, 8, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Wait(&r, &st));
        CHECK_STATUS(&st, peer, 8, (int)n, "vector receive");
        for (int b = 0; b < BLOCKS; b++) {
            memcpy(sbuf + 4 * b, rbuf + 8 * b, 4);
            CHECK(memcmp(rbuf + 8 * b + 4, "\xA5\xA5\xA5\xA5", 4) == 0, "vector receive: gap %d written", b);
        }
        CHECK_PATTERN(sbuf, n, 42, "vector receive");
        CHECK_RC(MPI_Type_free(&vec));
    }
}

/* Messages in parts between buffers at every kind of offset within a
 * cache line (the data sits on a line of the cell: EAGER_PARTS_HDR), sent
 * both ways: every byte, and nothing written around the message. Sizes
 * past the ENV's limit go by rendezvous, as any message may. */
static void offsets(int peer, char *sbuf, char *rbuf)
{
    static const size_t offs[] = {0, 1, 16, 32, 48, 63};
    static const size_t lens[] = {20000, 32768, 40001, PARTS_CELL_DATA + 1, 2 * PARTS_CELL_DATA + 1};
    for (size_t a = 0; a < sizeof offs / sizeof offs[0]; a++)
        for (size_t b = 0; b < sizeof offs / sizeof offs[0]; b++)
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
                size_t n = lens[l], so = offs[a], ro = offs[b];
                char what[96];
                uint32_t seed = (uint32_t)(n + so * 64 + ro);
                snprintf(what, sizeof what, "%zu bytes, send offset %zu, receive offset %zu", n, so, ro);
                mtest_fill(sbuf + so, n, seed);
                memset(rbuf, 0xA5, ro + n + GUARD);
                MPI_Status st;
                if (mtest_rank < peer) {
                    CHECK_RC(MPI_Send(sbuf + so, (int)n, MPI_BYTE, peer, 7, MPI_COMM_WORLD));
                    CHECK_RC(MPI_Recv(rbuf + ro, (int)(n + GUARD), MPI_BYTE, peer, 7, MPI_COMM_WORLD, &st));
                } else {
                    CHECK_RC(MPI_Recv(rbuf + ro, (int)(n + GUARD), MPI_BYTE, peer, 7, MPI_COMM_WORLD, &st));
                    CHECK_RC(MPI_Send(sbuf + so, (int)n, MPI_BYTE, peer, 7, MPI_COMM_WORLD));
                }
                CHECK_STATUS(&st, peer, 7, (int)n, what);
                CHECK_PATTERN(rbuf + ro, n, seed, what);
                CHECK(rbuf[ro + n] == (char)0xA5, "%s: byte past the message overwritten", what);
                CHECK(ro == 0 || rbuf[ro - 1] == (char)0xA5, "%s: byte before the message overwritten", what);
            }
}

/* A ping-pong of messages in parts whose tag and size change every time,
 * received as ANY_SOURCE and ANY_TAG by a receiver already waiting: the
 * header is written after the first part, next to the commit
 * (eager_big_send), so a reused bulk cell must never show the header of
 * its previous lap. Enough round trips to go round the bulk ring. */
static void changing_headers(int peer, char *sbuf, char *rbuf)
{
    static const size_t lens[] = {20001, 40000, PARTS_CELL_DATA, PARTS_CELL_DATA + 1, 100000, 131072};
    for (int i = 0; i < 96; i++) {
        size_t n = lens[i % (int)(sizeof lens / sizeof lens[0])];
        int tag = 100 + i;
        char what[96];
        uint32_t seed = (uint32_t)(n * 5 + (size_t)i);
        snprintf(what, sizeof what, "message %d of %zu bytes, tag %d", i, n, tag);
        MPI_Status st;
        memset(rbuf, 0xA5, n + GUARD);
        if ((mtest_rank < peer) == (i % 2 == 0)) {
            mtest_fill(sbuf, n, seed);
            CHECK_RC(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
        } else {
            CHECK_RC(MPI_Recv(rbuf, (int)(n + GUARD), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                              MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, peer, tag, (int)n, what);
            CHECK_PATTERN(rbuf, n, seed, what);
            CHECK(rbuf[n] == (char)0xA5, "%s: byte past the message overwritten", what);
        }
    }
}

int main(int argc, char **argv)
{
    int provided;
    mtest_init(&argc, &argv);
    RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle h = mpit_handle("tern_p2p_eager_big_sent", MPI_T_PVAR_CLASS_COUNTER, -1, NULL, 1);
    MPI_T_pvar_handle hparts = mpit_handle("tern_p2p_eager_parts_sent", MPI_T_PVAR_CLASS_COUNTER, -1, NULL, 1);
    int peer = mtest_partner();
    set_sizes();
    size_t bytes = (size_t)8 << 20; /* the mix: 6 rounds of 572,260 bytes */
    char *sbuf = malloc(bytes), *rbuf = malloc(bytes);
    if (!sbuf || !rbuf)
        FATAL("no memory for the buffers");

    if (peer != mtest_rank) {
        mtest_begin("posted");
        one_way(peer, 0, 0, sbuf, rbuf, h, hparts);
        mtest_end();
        mtest_begin("unexpected");
        one_way(peer, 1, 0, sbuf, rbuf, h, hparts);
        mtest_end();
        mtest_begin("any source");
        one_way(peer, 0, 1, sbuf, rbuf, h, hparts);
        one_way(peer, 1, 1, sbuf, rbuf, h, hparts);
        mtest_end();
        mtest_begin("order and flood");
        order_and_flood(peer, sbuf, rbuf);
        mtest_end();
        mtest_begin("windows");
        windows(peer, sbuf, rbuf, h);
        mtest_end();
        mtest_begin("alternating");
        alternating(peer, sbuf, rbuf);
        mtest_end();
        mtest_begin("truncation");
        truncation(peer, sbuf, rbuf);
        mtest_end();
        mtest_begin("slow source");
        slow_source(peer, rbuf, 60000);
        if (goes_big(150000)) /* a rendezvous read of protected pages fails */
            slow_source(peer, rbuf, 150000);
        mtest_end();
        mtest_begin("changing headers");
        changing_headers(peer, sbuf, rbuf);
        mtest_end();
        mtest_begin("buffer offsets");
        offsets(peer, sbuf, rbuf);
        mtest_end();
        mtest_begin("non-contiguous");
        noncontig(peer, sbuf, rbuf, 12000);
        noncontig(peer, sbuf, rbuf, 37500);
        mtest_end();
    }

    free(sbuf);
    free(rbuf);
    RC(MPI_T_pvar_handle_free(sess, &h), MPI_SUCCESS);
    RC(MPI_T_pvar_handle_free(sess, &hparts), MPI_SUCCESS);
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    RC(MPI_T_finalize(), MPI_SUCCESS);
    return mtest_finalize();
}
