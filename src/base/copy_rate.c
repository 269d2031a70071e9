/* This rank's copy and CMA read rates (copy_rate.h). */
#include "base/copy_rate.h"
#include "base/clock.h"
#include "base/cma.h"
#include "base/config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { COPY_BYTES = 64 * 1024, COPY_TRIES = 3 };

static double last_s = -1e9, copy_gbs = 1e9, cma_gbs;
static char *buf; /* source then destination, allocated at the first timing */
static int cma_refused; /* a kernel that refuses CMA once refuses it for good */

/* The best of tries: a preempted try is slower, never faster. */
static double best_gbs(int cma)
{
    double best = 1e9;
    for (int i = 0; i < COPY_TRIES; i++) {
        double t0 = tern_clock_s();
        if (!cma)
            memcpy(buf + COPY_BYTES, buf, COPY_BYTES);
        else if (tern_cma_read(getpid(), buf + COPY_BYTES, (uint64_t)(uintptr_t)buf, COPY_BYTES) !=
                 TERN_OK)
            return 0;
        __asm__ volatile("" ::"r"(buf) : "memory"); /* the copy happens */
        double dt = tern_clock_s() - t0;
        if (dt < best)
            best = dt;
    }
    return best > 0 ? (double)COPY_BYTES / best * 1e-9 : 1e9;
}

static void time_both(void)
{
    double t = tern_clock_s();
    if (t - last_s < 1.0)
        return;
    last_s = t;
    if (!buf && !(buf = aligned_alloc(4096, 2 * (size_t)COPY_BYTES)))
        return;
    memset(buf, 1, 2 * (size_t)COPY_BYTES); /* the first call faults both halves in */
    copy_gbs = best_gbs(0);
    if (!cma_refused)
        cma_refused = (cma_gbs = best_gbs(1)) == 0;
}

double tern_copy_rate_gbs(void)
{
    time_both();
    return copy_gbs;
}

double tern_cma_rate_gbs(void)
{
    time_both();
    return cma_gbs;
}

int tern_single_copy_pays(double copy_gbs)
{
    /* The read's time n / cma under pct% of the copies' 2 n / copy. */
    double pct = (double)tern_knob_count(TERN_KNOB_CMA_PAYS_PCT);
    return copy_gbs > 0 && copy_gbs < 2e-2 * pct * tern_cma_rate_gbs();
}
