#include "base/pvars.h"

#include <stddef.h>
#include <time.h>

uint64_t tern_pvar_values[TERN_PVAR_N];
uint64_t tern_pvar_coll[TERN_PVAR_COLL_MAX];
_Atomic int tern_event_on[TERN_EVENT_N];
_Atomic unsigned tern_watch;

void tern_watch_set(unsigned bit, int on)
{
    if (on)
        atomic_fetch_or_explicit(&tern_watch, bit, memory_order_relaxed);
    else
        atomic_fetch_and_explicit(&tern_watch, ~bit, memory_order_relaxed);
}

void tern_event_listen(tern_event_id_t id, int delta)
{
    int n = atomic_fetch_add(&tern_event_on[id], delta) + delta;
    if (id == TERN_EVENT_COLL_ALGORITHM_CHOSEN)
        tern_watch_set(TERN_WATCH_COLL_EVENT, n > 0);
}

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
