/* What a process records for the profile of its job (profile.h). The
 * per-procedure table is open addressing on the address of the entry
 * point's name (each entry point has its own static string), so finding a
 * procedure's slot is a multiply and, nearly always, one comparison. */
#include "base/profile.h"
#include "base/pvars.h"

#include <stdlib.h>
#include <time.h>

/* More than the entry points there are (each C and large-count name). */
#define CALL_SLOTS 2048

typedef struct {
    const char *name;
    uint64_t count, ns;
} call_t;

int tern_profile_rec;
int tern_profile_n;
uint64_t *tern_profile_rows[4];
uint64_t *tern_profile_coll;

static call_t *calls;
static int started, paused;
/* The calling thread's outermost timed call: its start and name. */
static _Thread_local uint64_t call_t0;
static _Thread_local const char *call_name;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int tern_profile_start(int n)
{
    if (started || n <= 0)
        return started;
    uint64_t *rows = calloc((size_t)n * 4, sizeof *rows);
    tern_profile_coll = calloc(2 * TERN_PVAR_COLL_MAX, sizeof *tern_profile_coll);
    calls = calloc(CALL_SLOTS, sizeof *calls);
    if (!rows || !tern_profile_coll || !calls) {
        free(rows);
        free(tern_profile_coll);
        free(calls);
        tern_profile_coll = NULL;
        calls = NULL;
        return 0;
    }
    for (int i = 0; i < 4; i++)
        tern_profile_rows[i] = rows + (size_t)i * (size_t)n;
    tern_profile_n = n;
    started = 1;
    tern_profile_rec = !paused;
    tern_watch_set(TERN_WATCH_PROFILE, tern_profile_rec);
    return 1;
}

void tern_profile_pause(int p)
{
    paused = p;
    tern_profile_rec = started && !paused;
    tern_watch_set(TERN_WATCH_PROFILE, tern_profile_rec);
}

void tern_profile_coll_count(unsigned algo, uint64_t bytes)
{
    if (algo < TERN_PVAR_COLL_MAX) {
        tern_profile_coll[algo]++;
        tern_profile_coll[TERN_PVAR_COLL_MAX + algo] += bytes;
    }
}

int tern_profile_call_enter(const char *func)
{
    if (!tern_profile_rec || call_name)
        return 0;
    call_name = func;
    call_t0 = now_ns();
    return 1;
}

void tern_profile_call_leave(void)
{
    uint64_t dt = now_ns() - call_t0;
    const char *name = call_name;
    call_name = NULL;
    size_t i = (size_t)(((uintptr_t)name >> 3) * 0x9E3779B97F4A7C15ull >> 40) % CALL_SLOTS;
    for (size_t probe = 0; probe < CALL_SLOTS; probe++, i = (i + 1) % CALL_SLOTS) {
        if (calls[i].name == name || !calls[i].name) {
            calls[i].name = name;
            calls[i].count++;
            calls[i].ns += dt;
            return;
        }
    }
}

size_t tern_profile_call_slots(void)
{
    return calls ? CALL_SLOTS : 0;
}

const char *tern_profile_call_at(size_t i, uint64_t *count_p, uint64_t *ns_p)
{
    if (!calls || i >= CALL_SLOTS || !calls[i].name)
        return NULL;
    *count_p = calls[i].count;
    *ns_p = calls[i].ns;
    return calls[i].name;
}
