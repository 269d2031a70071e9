/* Logging. Errors are logged once, where they are decided.
 * TERN_LOG_LEVEL: 0 = errors only, 1 = warnings, 2 = info, 3 = debug. */
#ifndef TERN_BASE_LOG_H
#define TERN_BASE_LOG_H

#include <stdarg.h>

enum { TERN_LOG_ERROR = 0, TERN_LOG_WARN = 1, TERN_LOG_INFO = 2, TERN_LOG_DEBUG = 3 };

/* Prefix used on every line ("tern[rank 3]"); set once the rank is known. */
void tern_log_set_rank(int rank);
int tern_log_enabled(int level);
void tern_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warning printed whatever TERN_LOG_LEVEL says: for a job that runs, but
 * degraded by its environment (shm rings shrunk to fit /dev/shm), which the
 * user must hear about once. */
void tern_warn_always(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the message and aborts the process (internal invariant broken). */
_Noreturn void tern_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define tern_error(...) tern_log(TERN_LOG_ERROR, __VA_ARGS__)
#define tern_warn(...) tern_log(TERN_LOG_WARN, __VA_ARGS__)
#define tern_info(...) tern_log(TERN_LOG_INFO, __VA_ARGS__)
#define tern_debug(...)                                                        \
    do {                                                                       \
        if (tern_log_enabled(TERN_LOG_DEBUG))                                  \
            tern_log(TERN_LOG_DEBUG, __VA_ARGS__);                             \
    } while (0)

#endif
