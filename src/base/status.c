#include "base/status.h"

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
