#include "base/log.h"
#include "base/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int log_rank = -1;
static int log_level = -1;

void tern_log_set_rank(int rank) { log_rank = rank; }

int tern_log_enabled(int level)
{
    if (log_level < 0)
        log_level = (int)tern_knob_count(TERN_KNOB_LOG_LEVEL);
    return level <= log_level;
}

static void log_vprint(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    int n;
    if (log_rank >= 0)
        n = snprintf(line, sizeof line, "tern[rank %d] %s: ", log_rank, kind);
    else
        n = snprintf(line, sizeof line, "tern %s: ", kind);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    /* One write per line so lines from several ranks do not interleave. */
    size_t len = strlen(line);
    if (len + 1 < sizeof line) {
        line[len++] = '\n';
        line[len] = 0;
    }
    fputs(line, stderr);
    fflush(stderr);
}

void tern_log(int level, const char *fmt, ...)
{
    static const char *const kinds[] = {"error", "warning", "info", "debug"};
    if (!tern_log_enabled(level))
        return;
    va_list ap;
    va_start(ap, fmt);
    log_vprint(kinds[level < 0 ? 0 : level > 3 ? 3 : level], fmt, ap);
    va_end(ap);
}

void tern_warn_always(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vprint("warning", fmt, ap);
    va_end(ap);
}

void tern_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vprint("fatal", fmt, ap);
    va_end(ap);
    abort();
}
