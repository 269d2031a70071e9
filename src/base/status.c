#include "base/status.h"

#include <stdarg.h>
#include <stdio.h>

const char *tern_status_string(tern_status_t st)
{
    static const char *const desc[] = {
#define TERN_STATUS_DESC(name, d) d,
        TERN_STATUS_MAP(TERN_STATUS_DESC)
#undef TERN_STATUS_DESC
    };
    if ((unsigned)st >= TERN_STATUS_COUNT)
        return "unknown status";
    return desc[st];
}

static _Thread_local struct {
    tern_status_t st;
    char text[480];
} detail;

tern_status_t tern_status_detail(tern_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail.text, sizeof detail.text, fmt, ap);
    va_end(ap);
    detail.st = st;
    return st;
}

static _Thread_local int callback_code;

tern_status_t tern_status_callback(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail.text, sizeof detail.text, fmt, ap);
    va_end(ap);
    detail.st = TERN_ERR_CALLBACK;
    callback_code = code;
    return TERN_ERR_CALLBACK;
}

int tern_status_take_callback_code(void)
{
    int code = callback_code;
    callback_code = 0;
    return code;
}

const char *tern_status_take_detail(tern_status_t st)
{
    if (detail.st != st || st == TERN_OK || !detail.text[0])
        return NULL;
    detail.st = TERN_OK;
    return detail.text;
}
