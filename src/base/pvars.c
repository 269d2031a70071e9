#include "base/pvars.h"

#include <stddef.h>
#include <time.h>

uint64_t tern_pvar_values[TERN_PVAR_N];
uint64_t tern_pvar_coll[TERN_PVAR_COLL_MAX];
_Atomic int tern_event_on[TERN_EVENT_N];

static tern_event_sink_fn *_Atomic event_sink;

uint64_t tern_event_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tern_event_set_sink(tern_event_sink_fn *sink)
{
    atomic_store(&event_sink, sink);
}

void tern_event_raise(tern_event_id_t id, int64_t a, int64_t b, int64_t c, int64_t d)
{
    tern_event_sink_fn *sink = atomic_load(&event_sink);
    if (!sink)
        return;
    const int64_t values[4] = {a, b, c, d};
    sink(id, tern_event_clock_ns(), values);
}
