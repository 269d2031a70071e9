/* Checks for programs that may run without MPI_Init (sessions): like
 * ../mpi/mtest.h's CHECK and CHECK_CLASS, but the error counts meet over a
 * communicator the program names (stest_report), not MPI_COMM_WORLD. */
#ifndef TERN_TESTS_STEST_H
#define TERN_TESTS_STEST_H

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int stest_errors;
static const char *stest_where = "start";

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "[%s] %s:%d: check failed: %s: ", stest_where, __FILE__, __LINE__,    \
                    #cond);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            stest_errors++;                                                                        \
        }                                                                                          \
    } while (0)

#define CHECK_INT(got, want, what)                                                                 \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        CHECK(g_ == w_, "%s: expected %lld, got %lld", (what), w_, g_);                            \
    } while (0)

#define CHECK_RC(call)                                                                             \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(rc_ == MPI_SUCCESS, "returned %d (%s)", rc_, stest_errstr(rc_));                     \
    } while (0)

static inline const char *stest_errstr(int code)
{
    static char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    s[0] = 0;
    MPI_Error_string(code, s, &len);
    return s;
}

/* rc must be an error of class cls whose text contains part. */
#define CHECK_CLASS(rc, cls, part)                                                                 \
    do {                                                                                           \
        int rc2_ = (rc), cl_ = -1;                                                                 \
        MPI_Error_class(rc2_, &cl_);                                                               \
        CHECK(rc2_ != MPI_SUCCESS && cl_ == (cls) && strstr(stest_errstr(rc2_), (part)),          \
              "expected class %s and text with \"%s\", got code %d class %d (%s)", #cls, (part),  \
              rc2_, cl_, stest_errstr(rc2_));                                                      \
    } while (0)

static inline void stest_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "TIMEOUT (watchdog)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

static inline void stest_watchdog(void)
{
    signal(SIGALRM, stest_alarm);
    alarm(50);
}

/* Sums the error counts over comm; rank 0 of comm prints the verdict.
 * Returns the exit status. */
static inline int stest_report(MPI_Comm comm, const char *name)
{
    int total = 0, rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Allreduce(&stest_errors, &total, 1, MPI_INT, MPI_SUM, comm);
    if (rank == 0)
        printf("test %s %s\n", name, total ? "FAILED" : "ok");
    fflush(stdout);
    return total ? 1 : 0;
}

#endif
