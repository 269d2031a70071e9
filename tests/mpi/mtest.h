/* Tiny helpers shared by the MPI test programs.
 *
 * Checks are non-fatal: a failed CHECK prints "rank R: [subtest] file:line:
 * ..." on stderr, counts an error and goes on. mtest_end() closes a named
 * sub-test: all ranks meet in MPI_Barrier, send their error counts to rank 0
 * (tag MTEST_TAG on MPI_COMM_WORLD) and rank 0 prints "test <name> ok" or
 * "test <name> FAILED". mtest_finalize() returns the exit status (1 when this
 * rank saw any error). FATAL() is for states where going on would hang: it
 * prints and calls MPI_Abort.
 *
 * A watchdog (SIGALRM, MTEST_TIMEOUT seconds, default 50) prints the sub-test
 * a rank was in when it hung and exits with status 3. */
#ifndef TERN_TESTS_MTEST_H
#define TERN_TESTS_MTEST_H

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* MPI_STATUS(ES)_IGNORE are small sentinel pointers; GCC at -O2 warns that
 * Waitall & co. would write statuses through them. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define MTEST_TAG 32767

static int mtest_rank = -1;
static int mtest_size = 0;
static int mtest_errors = 0;     /* errors since the program started */
static int mtest_sub_errors = 0; /* errors in the current sub-test */
static char mtest_subname[128] = "init";

static inline void mtest_alarm(int sig)
{
    char msg[256];
    int n = snprintf(msg, sizeof msg, "rank %d: TIMEOUT (watchdog) in sub-test '%s'\n", mtest_rank,
                     mtest_subname);
    (void)sig;
    if (n > 0)
        (void)!write(2, msg, (size_t)n);
    _exit(3);
}

static inline void mtest_watchdog(int seconds)
{
    signal(SIGALRM, mtest_alarm);
    alarm((unsigned)seconds);
}

static inline void mtest_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    char buf[1024];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "rank %d: [%s] %s:%d: %s\n", mtest_rank, mtest_subname, file, line, buf);
    fflush(stderr);
    mtest_errors++;
    mtest_sub_errors++;
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            mtest_fail(__FILE__, __LINE__, "check failed: " #cond ": " __VA_ARGS__);               \
    } while (0)

/* A check whose failure ends the job (MPI_Abort): for tests where what
 * follows a failed check would only cascade. */
#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            FATAL("check failed: " #cond ": " __VA_ARGS__);                                        \
    } while (0)

/* Integer equality with "expected X, got Y". */
#define CHECK_INT(got, expected, what)                                                             \
    do {                                                                                           \
        long long g_ = (long long)(got), e_ = (long long)(expected);                               \
        if (g_ != e_)                                                                              \
            mtest_fail(__FILE__, __LINE__, "%s: expected %lld, got %lld", (what), e_, g_);         \
    } while (0)

static inline const char *mtest_errstr(int code)
{
    static char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    s[0] = 0;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "(Error_string failed for %d)", code);
    return s;
}

/* An MPI call that must return MPI_SUCCESS. */
#define CHECK_RC(call)                                                                             \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS)                                                                    \
            mtest_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, rc_, mtest_errstr(rc_)); \
    } while (0)

/* An MPI call that must return an error of class `cls`. */
#define CHECK_CLASS(rc, cls, what)                                                                 \
    do {                                                                                           \
        int rc2_ = (rc), cl_ = -1;                                                                 \
        if (rc2_ == MPI_SUCCESS) {                                                                 \
            mtest_fail(__FILE__, __LINE__, "%s: expected error class %s (%d), got MPI_SUCCESS",   \
                       (what), #cls, (cls));                                                       \
        } else {                                                                                   \
            MPI_Error_class(rc2_, &cl_);                                                           \
            if (cl_ != (cls))                                                                      \
                mtest_fail(__FILE__, __LINE__,                                                     \
                           "%s: expected error class %s (%d), got code %d class %d (%s)", (what), \
                           #cls, (cls), rc2_, cl_, mtest_errstr(rc2_));                            \
        }                                                                                          \
    } while (0)

/* CHECK_CLASS, and the error's text (MPI_Error_string) is exactly text. */
#define CHECK_ERROR_TEXT(rc, cls, text, what)                                                      \
    do {                                                                                           \
        int rc3_ = (rc);                                                                           \
        CHECK_CLASS(rc3_, cls, what);                                                              \
        if (rc3_ != MPI_SUCCESS && strcmp(mtest_errstr(rc3_), (text)))                             \
            mtest_fail(__FILE__, __LINE__, "%s: error text \"%s\", expected \"%s\"", (what),      \
                       mtest_errstr(rc3_), (text));                                                \
    } while (0)

#define FATAL(...)                                                                                 \
    do {                                                                                           \
        mtest_fail(__FILE__, __LINE__, "FATAL: " __VA_ARGS__);                                     \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
        _exit(1);                                                                                  \
    } while (0)

static inline void mtest_begin(const char *name)
{
    snprintf(mtest_subname, sizeof mtest_subname, "%s", name);
    mtest_sub_errors = 0;
}

/* Collective over MPI_COMM_WORLD. */
static inline void mtest_end(void)
{
    int total = mtest_sub_errors;
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == 0) {
        for (int r = 1; r < mtest_size; r++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, r, MTEST_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += e;
        }
        if (total == 0)
            printf("test %s ok\n", mtest_subname);
        else
            printf("test %s FAILED (%d errors)\n", mtest_subname, total);
        fflush(stdout);
    } else {
        MPI_Send(&mtest_sub_errors, 1, MPI_INT, 0, MTEST_TAG, MPI_COMM_WORLD);
    }
    snprintf(mtest_subname, sizeof mtest_subname, "between sub-tests");
}

static inline void mtest_init_common(void)
{
    const char *t = getenv("MTEST_TIMEOUT");
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mtest_size);
    mtest_watchdog(t ? atoi(t) : 50);
}

static inline void mtest_init(int *argc, char ***argv)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init failed\n");
        exit(1);
    }
    mtest_init_common();
}

static inline int mtest_finalize(void)
{
    snprintf(mtest_subname, sizeof mtest_subname, "finalize");
    int rc = MPI_Finalize();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: MPI_Finalize returned %d\n", mtest_rank, rc);
        mtest_errors++;
    }
    return mtest_errors ? 1 : 0;
}

/* Partner for pair tests: 0<->1, 2<->3, ...; the last rank of an odd size
 * pairs with itself. */
static inline int mtest_partner(void)
{
    int p = mtest_rank ^ 1;
    return p < mtest_size ? p : mtest_rank;
}

static inline void mtest_sleep(double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static inline double mtest_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Deterministic byte pattern depending on a seed and the position. */
static inline unsigned char mtest_pat(uint32_t seed, size_t i)
{
    uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u + (uint32_t)(i >> 8);
    return (unsigned char)(x ^ (x >> 13) ^ (x >> 24));
}

static inline void mtest_fill(void *buf, size_t n, uint32_t seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = mtest_pat(seed, i);
}

/* Returns the index of the first wrong byte, or -1. */
static inline long long mtest_verify(const void *buf, size_t n, uint32_t seed)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != mtest_pat(seed, i))
            return (long long)i;
    return -1;
}

#define CHECK_PATTERN(buf, n, seed, what)                                                          \
    do {                                                                                           \
        long long bad_ = mtest_verify((buf), (n), (seed));                                         \
        if (bad_ >= 0)                                                                             \
            mtest_fail(__FILE__, __LINE__,                                                         \
                       "%s: data mismatch at byte %lld of %zu: expected 0x%02x, got 0x%02x",       \
                       (what), bad_, (size_t)(n), mtest_pat((seed), (size_t)bad_),                 \
                       ((const unsigned char *)(buf))[bad_]);                                      \
    } while (0)

/* A status as MPI defines it for a null or inactive request / PROC_NULL. */
static inline void mtest_check_empty_status(const MPI_Status *st, int source, const char *file, int line,
                                     const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_SOURCE != source || st->MPI_TAG != MPI_ANY_TAG || count != 0)
        mtest_fail(file, line, "%s: expected empty status (source %d, tag %d, count 0), got source %d tag %d count %d",
                   what, source, MPI_ANY_TAG, st->MPI_SOURCE, st->MPI_TAG, count);
}
#define CHECK_EMPTY_STATUS(st, what)                                                               \
    mtest_check_empty_status((st), MPI_ANY_SOURCE, __FILE__, __LINE__, (what))
#define CHECK_PROCNULL_STATUS(st, what)                                                            \
    mtest_check_empty_status((st), MPI_PROC_NULL, __FILE__, __LINE__, (what))

/* Source, tag and byte count of a status. */
static inline void mtest_check_status(const MPI_Status *st, int source, int tag, int bytes,
                               const char *file, int line, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (st->MPI_SOURCE != source || st->MPI_TAG != tag || count != bytes)
        mtest_fail(file, line, "%s: expected status source %d tag %d bytes %d, got source %d tag %d bytes %d",
                   what, source, tag, bytes, st->MPI_SOURCE, st->MPI_TAG, count);
}
#define CHECK_STATUS(st, src, tag, bytes, what)                                                    \
    mtest_check_status((st), (src), (tag), (bytes), __FILE__, __LINE__, (what))

#endif
