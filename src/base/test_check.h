/* CHECK for the unit tests beside the code: a failed check names its file,
 * line and condition and is counted; main returns tern_check_result(). One
 * header for all of them; the MPI programs have theirs in tests/mpi/mtest.h
 * (tests/session/stest.h for those that run without MPI_COMM_WORLD). */
#ifndef TERN_BASE_TEST_CHECK_H
#define TERN_BASE_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int tern_check_failures;

__attribute__((format(printf, 1, 2))) static inline void tern_check_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    tern_check_failures++;
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            tern_check_fail("%s:%d: check failed: %s", __FILE__, __LINE__, #cond);                 \
    } while (0)

/* CHECK with words saying what was checked (a printf format and its
 * arguments). */
__attribute__((format(printf, 4, 5))) static inline void
tern_check_fail_msg(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: check failed: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    tern_check_failures++;
}

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond))                                                                               \
            tern_check_fail_msg(__FILE__, __LINE__, #cond, __VA_ARGS__);                           \
    } while (0)

/* The exit status of a test: 0 when every check passed. */
static inline int tern_check_result(const char *test)
{
    if (tern_check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", test, tern_check_failures);
        return 1;
    }
    printf("%s: all checks passed\n", test);
    return 0;
}

#endif
