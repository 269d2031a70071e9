#include "base/pvars.h"
#include "base/profile.h"

#include <stddef.h>
#include <stdlib.h>
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

/* Object records: a short list (a tool binds few objects). */
static tern_pvar_obj_t *objs;

tern_pvar_obj_t *tern_pvar_obj_of(const void *key)
{
    for (tern_pvar_obj_t *o = objs; o; o = o->next)
        if (o->key == key)
            return o;
    return NULL;
}

tern_pvar_obj_t *tern_pvar_obj_of_ctx(uint32_t ctx)
{
    for (tern_pvar_obj_t *o = objs; o; o = o->next)
        if (o->is_comm && o->ctx == ctx)
            return o;
    return NULL;
}

tern_pvar_obj_t *tern_pvar_obj_bind(const void *key, int is_comm, uint32_t ctx)
{
    tern_pvar_obj_t *o = tern_pvar_obj_of(key);
    if (!o) {
        if (!(o = calloc(1, sizeof *o)))
            return NULL;
        o->key = key;
        o->is_comm = is_comm;
        o->ctx = ctx;
        o->next = objs;
        objs = o;
        tern_watch_set(TERN_WATCH_OBJECTS, 1);
    }
    o->refs++;
    return o;
}

static void obj_unlink(tern_pvar_obj_t *o)
{
    for (tern_pvar_obj_t **p = &objs; *p; p = &(*p)->next)
        if (*p == o) {
            *p = o->next;
            break;
        }
    o->next = NULL;
    if (!objs)
        tern_watch_set(TERN_WATCH_OBJECTS, 0);
}

void tern_pvar_obj_unbind(tern_pvar_obj_t *o)
{
    if (--o->refs > 0)
        return;
    if (o->key)
        obj_unlink(o);
    free(o);
}

void tern_pvar_obj_forget(const void *key)
{
    tern_pvar_obj_t *o = tern_pvar_obj_of(key);
    if (!o)
        return;
    obj_unlink(o);
    o->key = NULL;
}

void tern_pvar_obj_msg(uint32_t ctx, int recv, uint64_t bytes)
{
    tern_pvar_obj_t *o = tern_pvar_obj_of_ctx(ctx);
    if (!o)
        return;
    o->v[recv ? TERN_PVAR_COMM_MSGS_RECVD : TERN_PVAR_COMM_MSGS_SENT]++;
    o->v[recv ? TERN_PVAR_COMM_BYTES_RECVD : TERN_PVAR_COMM_BYTES_SENT] += bytes;
}

void tern_pvar_obj_add(const void *key, tern_pvar_id_t id, uint64_t n)
{
    tern_pvar_obj_t *o = tern_pvar_obj_of(key);
    if (o)
        o->v[id] += n;
}

void tern_watched_send(uint32_t ctx, int dest_world, uint64_t bytes)
{
    if (dest_world < 0)
        return;
    unsigned w = tern_watching();
    if (w & TERN_WATCH_PROFILE)
        tern_profile_row_add(1, dest_world, bytes);
    if (w & TERN_WATCH_OBJECTS)
        tern_pvar_obj_msg(ctx, 0, bytes);
}
