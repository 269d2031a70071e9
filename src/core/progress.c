#include "core/progress.h"
#include "core/p2p.h"
#include "core/runtime.h"

#include <sched.h>

int tern_progress(void)
{
    int n = 0;
    for (int i = 0; i < tern_rt.n_tls; i++)
        n += tern_rt.tls[i].ops->progress(tern_rt.tls[i].tl);
    if (tern_rt.n_pending_peers)
        n += tern_p2p_flush_pending();
    return n;
}

void tern_progress_idle(unsigned *idle_polls)
{
    if (++*idle_polls > (unsigned long)tern_rt.spin_limit) {
        sched_yield();
        *idle_polls = 0;
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
