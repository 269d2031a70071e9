#include "core/pt2pt/progress.h"
#include "core/pt2pt/p2p.h"
#include "core/runtime/runtime.h"
#include "core/pt2pt/peer_failure.h"
#include "core/runtime/api_lock.h"

#include "base/log.h"
#include "base/pvars.h"

#include <sched.h>
#include <stdint.h>
#include <time.h>

#define MAX_HOOKS 16
static tern_progress_hook_fn hooks[MAX_HOOKS];
static int n_hooks;
uint64_t tern_progress_events;

tern_status_t tern_progress_register(tern_progress_hook_fn fn)
{
    for (int i = 0; i < n_hooks; i++)
        if (hooks[i] == fn)
            return TERN_OK;
    if (n_hooks == MAX_HOOKS) {
        tern_error("internal error (a bug in Tern): more than %d progress hooks", MAX_HOOKS);
        return TERN_ERR_INTERNAL;
    }
    hooks[n_hooks++] = fn;
    return TERN_OK;
}

void tern_progress_unregister(tern_progress_hook_fn fn)
{
    for (int i = 0; i < n_hooks; i++)
        if (hooks[i] == fn) {
            hooks[i] = hooks[--n_hooks];
            return;
        }
}

int tern_progress(void)
{
    int n = 0;
    for (int i = 0; i < tern_rt.n_poll; i++)
        if (!tern_rt.poll[i].hint || *tern_rt.poll[i].hint)
            n += tern_rt.poll[i].ops->progress(tern_rt.poll[i].tl);
    if (tern_rt.n_pending_peers)
        n += tern_p2p_flush_pending();
    tern_progress_events += (uint64_t)n;
    for (int i = 0; i < n_hooks; i++)
        n += hooks[i]();
    return n;
}

/* A yield that returns within about 500 ns switched to no other task. On
 * x86-64 the time stamp counter (~1,500 cycles at 2-3 GHz; 20 cycles to
 * read, where clock_gettime cost 1-2% of a 4-rank 8 B alltoall), else the
 * monotonic clock. */
#if defined(__x86_64__)
#include <x86intrin.h>
#define LONE_YIELD_TICKS 1500
static uint64_t ticks(void)
{
    return __rdtsc();
}
#else
#define LONE_YIELD_TICKS 500
static uint64_t ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif
/* Long enough for the crowded core to push a rank here: 1 us never moved
 * one, 20 and 100 us did (docs/performance.md). */
#define LONE_SLEEP_NS 50000

/* sched_yield, and with more ranks than CPUs a short sleep once this rank
 * has yielded tern_rt.lone_yields times in a row with nothing else to run
 * on its core. Unbound ranks placed 3 + 1 on 2 cores stay so while the
 * lone one keeps its core busy yielding (SCHED_RR pulls a task only to a
 * core that drops to a lower priority; 4-rank alltoall 8 B 3.3-3.4 us
 * against 2.4-2.5 placed 2 + 2); its sleep lets the scheduler move a
 * waiting rank over. Each sleep doubles the yields the next one needs, so
 * ranks bound 3 + 1 on purpose lose at most ~0.5% to them. */
static void yield_cpu(void)
{
    static _Thread_local long lone, need;
    if (tern_rt.lone_yields <= 0) {
        sched_yield();
        return;
    }
    uint64_t t0 = ticks();
    sched_yield();
    if (ticks() - t0 >= LONE_YIELD_TICKS) {
        lone = 0;
        return;
    }
    if (!need)
        need = tern_rt.lone_yields;
    if (++lone < need)
        return;
    struct timespec nap = {0, LONE_SLEEP_NS};
    nanosleep(&nap, NULL);
    tern_pvar_add(TERN_PVAR_PROGRESS_LONE_SLEEPS, 1);
    lone = 0;
    if (need < tern_rt.lone_yields * 1024)
        need *= 2;
}

void tern_progress_idle(unsigned *idle_polls)
{
    int yield = ++*idle_polls > (unsigned long)tern_rt.spin_limit;
    if (atomic_load_explicit(&tern_api_locking, memory_order_relaxed))
        tern_api_wait_gap(yield); /* another thread's call may make our match */
    else if (yield)
        yield_cpu();
    if (yield) {
        *idle_polls = 0;
        tern_peer_watch(); /* here, where the rank has nothing to do */
    }
}

void tern_progress_test_missed(void)
{
    /* A program that polls with MPI_Test never goes idle in a wait loop:
     * every 4096 misses stand for one idle round. */
    static unsigned misses;
    if (++misses >= 4096) {
        misses = 0;
        tern_peer_watch();
    }
}

void tern_progress_wait(volatile int *flag)
{
    unsigned idle = 0;
    while (!*flag) {
        if (tern_progress() == 0 && !*flag)
            tern_progress_idle(&idle);
    }
}
