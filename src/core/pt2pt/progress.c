#include "core/pt2pt/progress.h"
#include "core/pt2pt/p2p.h"
#include "core/runtime/runtime.h"
#include "core/pt2pt/peer_failure.h"
#include "core/runtime/api_lock.h"

#include "base/log.h"

#include <sched.h>

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

void tern_progress_idle(unsigned *idle_polls)
{
    int yield = ++*idle_polls > (unsigned long)tern_rt.spin_limit;
    if (atomic_load_explicit(&tern_api_locking, memory_order_relaxed))
        tern_api_wait_gap(yield); /* another thread's call may make our match */
    else if (yield)
        sched_yield();
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
