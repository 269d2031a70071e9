/* Messages past 2 GiB (and past 4 GiB: a size cut to 32 bits would show)
 * at 2 ranks, through the large-count forms: Send_c/Recv_c of more than
 * INT_MAX elements of MPI_BYTE, Isend_c/Irecv_c of more than INT_MAX bytes
 * of MPI_INT, Bcast_c and Reduce_c of more than 2 GiB. Memory is kept low
 * (this runs beside other jobs): a sender's buffer is one small block of
 * memory mapped again and again (a memfd, PERIOD bytes, mapped end to end),
 * so only receive buffers cost their size; data are checked against the
 * pattern, never against a copy. PERIOD does not divide 2^31 or 2^32, so
 * data landing 2 or 4 GiB off show. Peak: about 4.1 GB. */
#include "../mpi/mtest.h"

#include <errno.h>
#include <limits.h>
#include <sys/mman.h>

#define PERIOD (((size_t)64 << 20) + 4096)

static unsigned char pattern(size_t j) { return (unsigned char)((j * 2654435761u) >> 13); }

/* A read-only view of at least len bytes whose byte i is pattern(i % PERIOD). */
static void *pattern_view(size_t len, size_t *mapped)
{
    size_t copies = (len + PERIOD - 1) / PERIOD;
    int fd = memfd_create("tern-bigmsg", 0);
    if (fd < 0 || ftruncate(fd, (off_t)PERIOD) != 0)
        FATAL("memfd: %s", strerror(errno));
    unsigned char *base =
        mmap(NULL, copies * PERIOD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        FATAL("mmap: %s", strerror(errno));
    for (size_t c = 0; c < copies; c++)
        if (mmap(base + c * PERIOD, PERIOD, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                 0) == MAP_FAILED)
            FATAL("mmap copy %zu: %s", c, strerror(errno));
    close(fd);
    for (size_t j = 0; j < PERIOD; j++)
        base[j] = pattern(j);
    *mapped = copies * PERIOD;
    return base;
}

static unsigned char *real_buffer(size_t len)
{
    unsigned char *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        FATAL("mmap %zu bytes: %s", len, strerror(errno));
    return b;
}

/* Index of the first byte of b that is not pattern(i % PERIOD) ^ mask(i), or len. */
static size_t first_bad(const unsigned char *b, size_t len, int masked)
{
    size_t i = 0;
    while (i < len) {
        size_t n = len - i < PERIOD ? len - i : PERIOD;
        for (size_t j = 0; j < n; j++) {
            unsigned char want = pattern(j);
            if (masked)
                want ^= (unsigned char)((i + j) >> 20);
            if (b[i + j] != want)
                return i + j;
        }
        i += n;
    }
    return len;
}

/* count elements of dt, elements basic ones, bytes bytes. */
static void check_status(const MPI_Status *st, MPI_Datatype dt, MPI_Count count,
                         MPI_Count elements, MPI_Count bytes, const char *what)
{
    MPI_Count c = -1, e = -1;
    int ic = 0;
    CHECK_RC(MPI_Get_count_c(st, dt, &c));
    CHECK_INT(c, count, what);
    CHECK_RC(MPI_Get_elements_c(st, dt, &e));
    CHECK_INT(e, elements, what);
    CHECK_RC(MPI_Get_count_c(st, MPI_BYTE, &c));
    CHECK_INT(c, bytes, what);
    CHECK_RC(MPI_Get_count(st, MPI_BYTE, &ic));
    CHECK_INT(ic, MPI_UNDEFINED, what);
    CHECK_RC(MPI_Get_count(st, dt, &ic));
    CHECK_INT(ic, count > INT_MAX ? MPI_UNDEFINED : count, what);
}

static void expect_pattern(const unsigned char *b, size_t len, int masked, const char *what)
{
    size_t bad = first_bad(b, len, masked);
    CHECK(bad == len, "%s: byte %zu of %zu differs", what, bad, len);
}

/* The subtests to run: all, or those named in argv[1] (a comma list). */
static const char *only;
static int wanted(const char *name) { return !only || strstr(only, name) != NULL; }

int main(int argc, char **argv)
{
    only = argc > 1 ? argv[1] : NULL;
    mtest_init(&argc, &argv);
    if (!getenv("MTEST_TIMEOUT"))
        mtest_watchdog(280);
    if (mtest_size != 2)
        FATAL("run with 2 ranks");
    int me = mtest_rank;
    size_t mapped;
    MPI_Status st;

    /* 2^32 + 8195 bytes as MPI_BYTE: more than INT_MAX elements, more than 32 bits. */
    if (wanted("bigmsg_send_recv_c")) {
        mtest_begin("bigmsg_send_recv_c");
        MPI_Count n = ((MPI_Count)1 << 32) + 8195;
        if (me == 0) {
            void *src = pattern_view((size_t)n, &mapped);
            CHECK_RC(MPI_Send_c(src, n, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
            munmap(src, mapped);
        } else {
            unsigned char *dst = real_buffer((size_t)n + 4096);
            memset(dst + n, 0x5a, 4096);
            CHECK_RC(MPI_Recv_c(dst, n + 4096, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
            check_status(&st, MPI_BYTE, n, n, n, "Recv_c status");
            expect_pattern(dst, (size_t)n, 0, "Recv_c data");
            CHECK(dst[n] == 0x5a && dst[n + 4095] == 0x5a, "Recv_c wrote past the message");
            munmap(dst, (size_t)n + 4096);
        }
        mtest_end();
    }

    /* 2^29 + 1025 MPI_INTs: an int count, more than INT_MAX bytes. */
    if (wanted("bigmsg_isend_irecv_c")) {
        mtest_begin("bigmsg_isend_irecv_c");
        MPI_Count n = ((MPI_Count)1 << 29) + 1025, bytes = n * 4;
        MPI_Request r;
        if (me == 0) {
            void *src = pattern_view((size_t)bytes, &mapped);
            CHECK_RC(MPI_Isend_c(src, n, MPI_INT, 1, 6, MPI_COMM_WORLD, &r));
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
            munmap(src, mapped);
        } else {
            unsigned char *dst = real_buffer((size_t)bytes);
            CHECK_RC(MPI_Irecv_c(dst, n, MPI_INT, 0, 6, MPI_COMM_WORLD, &r));
            CHECK_RC(MPI_Wait(&r, &st));
            check_status(&st, MPI_INT, n, n, bytes, "Irecv_c status");
            expect_pattern(dst, (size_t)bytes, 0, "Irecv_c data");
            munmap(dst, (size_t)bytes);
        }
        mtest_end();
    }

    /* Bcast_c of 2^31 + 4099 bytes from rank 0. */
    if (wanted("bigmsg_bcast_c")) {
        mtest_begin("bigmsg_bcast_c");
        MPI_Count n = ((MPI_Count)1 << 31) + 4099;
        unsigned char *b = me == 0 ? pattern_view((size_t)n, &mapped) : real_buffer((size_t)n);
        CHECK_RC(MPI_Bcast_c(b, n, MPI_BYTE, 0, MPI_COMM_WORLD));
        if (me == 1)
            expect_pattern(b, (size_t)n, 0, "Bcast_c data");
        munmap(b, me == 0 ? mapped : (size_t)n);
        mtest_end();
    }

    /* Reduce_c (BXOR) of 2^31 + 4099 bytes in place at rank 0: its own
     * bytes are i >> 20, rank 1's the pattern. */
    if (wanted("bigmsg_reduce_c")) {
        mtest_begin("bigmsg_reduce_c");
        MPI_Count n = ((MPI_Count)1 << 31) + 4099;
        if (me == 0) {
            unsigned char *b = real_buffer((size_t)n);
            for (size_t i = 0; i < (size_t)n; i++)
                b[i] = (unsigned char)(i >> 20);
            CHECK_RC(MPI_Reduce_c(MPI_IN_PLACE, b, n, MPI_BYTE, MPI_BXOR, 0, MPI_COMM_WORLD));
            expect_pattern(b, (size_t)n, 1, "Reduce_c result");
            munmap(b, (size_t)n);
        } else {
            void *src = pattern_view((size_t)n, &mapped);
            CHECK_RC(MPI_Reduce_c(src, NULL, n, MPI_BYTE, MPI_BXOR, 0, MPI_COMM_WORLD));
            munmap(src, mapped);
        }
        mtest_end();
    }

    /* MPI_Sendrecv_replace (the int form: count 1 of a contiguous type of
     * 2^31 + 4096 bytes) receiving from rank 1 and sending nowhere: it used
     * to refuse more than INT_MAX bytes (its copy went as an int count of
     * MPI_BYTE). */
    if (wanted("bigmsg_sendrecv_replace")) {
        mtest_begin("bigmsg_sendrecv_replace");
        MPI_Count n = ((MPI_Count)1 << 31) + 4096;
        MPI_Datatype big;
        CHECK_RC(MPI_Type_contiguous_c(n, MPI_BYTE, &big));
        CHECK_RC(MPI_Type_commit(&big));
        if (me == 0) {
            unsigned char *b = real_buffer((size_t)n);
            CHECK_RC(MPI_Sendrecv_replace(b, 1, big, MPI_PROC_NULL, 7, 1, 7, MPI_COMM_WORLD, &st));
            check_status(&st, big, 1, n, n, "Sendrecv_replace status");
            expect_pattern(b, (size_t)n, 0, "Sendrecv_replace data");
            munmap(b, (size_t)n);
        } else {
            void *src = pattern_view((size_t)n, &mapped);
            CHECK_RC(MPI_Send(src, 1, big, 0, 7, MPI_COMM_WORLD));
            munmap(src, mapped);
        }
        MPI_Type_free(&big);
        mtest_end();
    }

    /* Non-contiguous: 2^19 + 3 blocks of 4 KB every 8 KB (2 GiB + 12 KB of
     * data over 4 GiB of extent), packed by the sender, received
     * contiguous: the pack offsets pass 2^31. */
    if (wanted("bigmsg_vector_c")) {
        mtest_begin("bigmsg_vector_c");
        MPI_Count blocks = ((MPI_Count)1 << 19) + 3, blk = 4096, n = blocks * blk;
        MPI_Datatype vec;
        CHECK_RC(MPI_Type_vector_c(blocks, blk, 2 * blk, MPI_BYTE, &vec));
        CHECK_RC(MPI_Type_commit(&vec));
        if (me == 0) {
            void *src = pattern_view((size_t)(2 * n), &mapped);
            CHECK_RC(MPI_Send_c(src, 1, vec, 1, 8, MPI_COMM_WORLD));
            munmap(src, mapped);
        } else {
            unsigned char *dst = real_buffer((size_t)n);
            CHECK_RC(MPI_Recv_c(dst, n, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &st));
            check_status(&st, MPI_BYTE, n, n, n, "vector Recv_c status");
            MPI_Count bad = -1;
            for (MPI_Count b = 0; b < blocks && bad < 0; b++) {
                size_t at = (size_t)(2 * b * blk) % PERIOD;
                for (MPI_Count k = 0; k < blk; k++)
                    if (dst[b * blk + k] != pattern((at + (size_t)k) % PERIOD)) {
                        bad = b * blk + k;
                        break;
                    }
            }
            CHECK(bad < 0, "vector data: byte %lld differs", (long long)bad);
            munmap(dst, (size_t)n);
        }
        MPI_Type_free(&vec);
        mtest_end();
    }
    return mtest_finalize();
}
