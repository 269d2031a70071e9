/* Performance variables and events: the registry (pvars.def) and the
 * counting every layer does with it.
 *
 * A variable is one 64-bit value per process, tern_pvar_values[id]. The
 * core changes it under the entry points' lock (one thread at a time), so
 * an update is a plain "+=": one instruction, no lock, no atomic
 * read-modify-write (callgrind figures in docs/performance.md; relaxed
 * atomic loads and stores took three). The tools interface reads it under
 * the same lock (mpi/mpi_tools_pvar.c), so a reader is ordered with the
 * writer whenever the engine runs under the lock (MPI_THREAD_MULTIPLE, the
 * progress thread); below that a tool thread reads an aligned 64-bit word
 * another core stores, which is never torn on the machines Tern builds
 * for: at worst a value a moment old. Levels move with tern_pvar_inc/dec;
 * a level's HIGHWATERMARK row, declared right after it, follows on every
 * increase. The collectives count each algorithm in tern_pvar_coll[] (the
 * MPI tools interface names those after the algorithms).
 *
 * Events: tern_event_on[id] is non-zero while a tool has a callback
 * registered for event id (MPI_T_event_register_callback); the raising
 * site tests it (one load, predicted false) and calls tern_event_raise4,
 * which stamps the time and hands the data to the sink the MPI layer
 * installed (src/mpi/mpi_tools_event.c). Raising happens under the entry
 * points' lock, in the thread that runs progress. */
#ifndef TERN_BASE_PVARS_H
#define TERN_BASE_PVARS_H

#include <stdatomic.h>
#include <stdint.h>

typedef enum {
#define TERN_PVAR(id, cls, bind, verb, cat, doc) TERN_PVAR_##id,
#include "base/pvars.def"
    TERN_PVAR_N
} tern_pvar_id_t;

typedef enum {
#define TERN_EVENT(id, verb, cat, elems, doc) TERN_EVENT_##id,
#include "base/pvars.def"
    TERN_EVENT_N
} tern_event_id_t;

/* Room for the collective algorithms (coll_registry.c asserts they fit). */
#define TERN_PVAR_COLL_MAX 128

extern uint64_t tern_pvar_values[TERN_PVAR_N];
extern uint64_t tern_pvar_coll[TERN_PVAR_COLL_MAX];
extern _Atomic int tern_event_on[TERN_EVENT_N];

static inline uint64_t tern_pvar_get(tern_pvar_id_t id)
{
    return tern_pvar_values[id];
}

static inline void tern_pvar_set(tern_pvar_id_t id, uint64_t v)
{
    tern_pvar_values[id] = v;
}

static inline void tern_pvar_add(tern_pvar_id_t id, uint64_t n)
{
    tern_pvar_values[id] += n;
}

/* For a count made outside the entry points' lock too (the I/O worker
 * thread, io_async.c): an atomic add, for paths a system call dominates. */
static inline void tern_pvar_add_shared(tern_pvar_id_t id, uint64_t n)
{
    __atomic_fetch_add(&tern_pvar_values[id], n, __ATOMIC_RELAXED);
}

/* A level up by one; its high-water mark (the next row) follows. */
static inline void tern_pvar_inc(tern_pvar_id_t level)
{
    uint64_t v = tern_pvar_get(level) + 1;
    tern_pvar_set(level, v);
    if (v > tern_pvar_get((tern_pvar_id_t)(level + 1)))
        tern_pvar_set((tern_pvar_id_t)(level + 1), v);
}

static inline void tern_pvar_dec(tern_pvar_id_t level)
{
    tern_pvar_set(level, tern_pvar_get(level) - 1);
}

static inline void tern_pvar_coll_add(unsigned algo, uint64_t n)
{
    tern_pvar_coll[algo] += n;
}

/* Who watches beyond the plain counts, one bit each: the job's profile
 * recording (base/profile.h), a tool's handle bound to an object
 * (communicator, window or file: base/pvars_obj.h), a listener of the
 * collective-algorithm event. A site that serves several of them tests
 * this one word (a load and a branch predicted not taken) and calls its
 * out-of-line watcher, which sorts out who wants what. Changed rarely,
 * with atomic or/and; read relaxed. */
enum { TERN_WATCH_PROFILE = 1u, TERN_WATCH_OBJECTS = 2u, TERN_WATCH_COLL_EVENT = 4u };
extern _Atomic unsigned tern_watch;
static inline unsigned tern_watching(void)
{
    return atomic_load_explicit(&tern_watch, memory_order_relaxed);
}
void tern_watch_set(unsigned bit, int on);

/* Counts of one object. A performance variable bound to a communicator,
 * window or file (pvars.def, BIND not NO_OBJECT) is counted per object,
 * and only while a tool holds a handle bound to that object: binding
 * attaches a record to the object (tern_pvar_obj_bind, keyed by the core
 * object's address and, for a communicator, its context id) and sets the
 * TERN_WATCH_OBJECTS bit, so the sites that already test the watch word
 * (a communicator's sends and collectives, a window's operations) and the
 * receive sites (one test of the word each) count into the record, which
 * the handle reads. v[] is indexed by the variable's id. The object's end
 * (tern_pvar_obj_forget) detaches the record; the handles keep it, with
 * its last counts, until they are freed (refs). All of it runs under the
 * entry points' lock. */
typedef struct tern_pvar_obj_s {
    struct tern_pvar_obj_s *next;
    const void *key; /* the core object; NULL once it ended */
    uint32_t ctx;    /* a communicator's point-to-point context id */
    int is_comm;
    int refs; /* handles bound to it */
    uint64_t v[TERN_PVAR_N];
} tern_pvar_obj_t;
/* Binds one more handle to the object (made on the first); NULL: no memory. */
tern_pvar_obj_t *tern_pvar_obj_bind(const void *key, int is_comm, uint32_t ctx);
/* One handle fewer; the record goes with the last. */
void tern_pvar_obj_unbind(tern_pvar_obj_t *o);
/* The object key ends (a communicator, window or file freed). */
void tern_pvar_obj_forget(const void *key);
/* The record of the object, or of the communicator of context id ctx, or
 * NULL (nothing bound to it). */
tern_pvar_obj_t *tern_pvar_obj_of(const void *key);
tern_pvar_obj_t *tern_pvar_obj_of_ctx(uint32_t ctx);
/* A message of bytes sent (recv 0) or received (1) on the communicator of
 * context id ctx, when it has a record. */
void tern_pvar_obj_msg(uint32_t ctx, int recv, uint64_t bytes);
/* n to counter id of object key, when it has a record. */
void tern_pvar_obj_add(const void *key, tern_pvar_id_t id, uint64_t n);

/* A send of the program's own on the communicator of context id ctx to
 * world rank dest_world (< 0: MPI_PROC_NULL), bytes: the profile's row
 * and the communicator's counts, for the watchers there are. */
void tern_watched_send(uint32_t ctx, int dest_world, uint64_t bytes);
static inline void tern_watch_send(uint32_t ctx, int dest_world, uint64_t bytes)
{
    if (__builtin_expect(tern_watching(), 0))
        tern_watched_send(ctx, dest_world, bytes);
}
/* A message of bytes a receive on context id ctx took. */
static inline void tern_watch_recv(uint32_t ctx, uint64_t bytes)
{
    if (__builtin_expect(tern_watching() & TERN_WATCH_OBJECTS, 0))
        tern_pvar_obj_msg(ctx, 1, bytes);
}

/* A listener of event id more (delta 1) or fewer (-1): tern_event_on and
 * the watch bit of the collective event. */
void tern_event_listen(tern_event_id_t id, int delta);

/* The time stamp of events (MPI_T source 0): nanoseconds on the monotonic
 * clock. */
uint64_t tern_event_clock_ns(void);

/* The MPI layer's receiver of raised events (NULL: none). */
typedef void tern_event_sink_fn(tern_event_id_t id, uint64_t timestamp, const int64_t *values);
void tern_event_set_sink(tern_event_sink_fn *sink);

/* Raises event id with up to four values (as its elements list them). */
void tern_event_raise(tern_event_id_t id, int64_t a, int64_t b, int64_t c, int64_t d);

/* The raising site: nothing but a load and a branch unless a tool listens. */
#define tern_event4(id, a, b, c, d)                                                                \
    do {                                                                                           \
        if (__builtin_expect(atomic_load_explicit(&tern_event_on[id], memory_order_relaxed), 0))   \
            tern_event_raise(id, (int64_t)(a), (int64_t)(b), (int64_t)(c), (int64_t)(d));          \
    } while (0)

#endif
