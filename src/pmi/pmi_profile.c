/* Start-up profile (pmi_profile.h): a fixed table of marks, filled only
 * when TERN_INIT_PROFILE is on. The PMI counters live here too; the client
 * (pmi_client.c) bumps them through tern_pmi_count_*. */
#include "pmi/pmi_profile.h"
#include "pmi/pmi_flavour.h"
#include "base/config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define PROFILE_STEPS 32

typedef struct {
    char step[24];
    int64_t ns;
    tern_pmi_counts_t counts; /* totals at the mark */
} profile_mark_t;

static tern_pmi_counts_t counts;
static struct {
    int on;
    int n;
    int64_t start_ns;
    profile_mark_t marks[PROFILE_STEPS];
} profile;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tern_pmi_count_put(size_t key_len, size_t value_len)
{
    counts.puts++;
    counts.put_bytes += key_len + value_len;
}

void tern_pmi_count_get(size_t key_len, size_t value_len)
{
    counts.gets++;
    counts.get_bytes += key_len + value_len;
}

void tern_pmi_count_fence(void) { counts.fences++; }
void tern_pmi_count_other(void) { counts.other++; }

void tern_pmi_counts(tern_pmi_counts_t *counts_p) { *counts_p = counts; }

void tern_init_profile_start(void)
{
    profile.on = tern_knob_bool(TERN_KNOB_INIT_PROFILE);
    profile.n = 0;
    profile.start_ns = now_ns();
}

void tern_init_profile_mark(const char *step)
{
    if (!profile.on || profile.n == PROFILE_STEPS)
        return;
    profile_mark_t *m = &profile.marks[profile.n++];
    snprintf(m->step, sizeof m->step, "%s", step);
    m->ns = now_ns();
    m->counts = counts;
}

void tern_init_profile_report(int rank, int size, int local_size)
{
    if (!profile.on)
        return;
    profile.on = 0;
    if (rank != 0)
        return;
    /* One write per line, so lines of other ranks' output do not split it. */
    char line[256];
    snprintf(line, sizeof line,
             "tern init-profile: %d ranks, %d on this node (rank 0's clock and PMI operations; times "
             "on a loaded machine are noise)\n",
             size, local_size);
    fputs(line, stderr);
    snprintf(line, sizeof line, "tern init-profile: %-22s %10s %6s %6s %6s %6s %10s %10s\n", "step", "ms", "puts",
             "gets", "fences", "other", "put B", "get B");
    fputs(line, stderr);
    int64_t prev_ns = profile.start_ns;
    tern_pmi_counts_t prev = {0};
    for (int i = 0; i < profile.n; i++) {
        const profile_mark_t *m = &profile.marks[i];
        snprintf(line, sizeof line,
                 "tern init-profile: %-22s %10.3f %6llu %6llu %6llu %6llu %10llu %10llu\n", m->step,
                 (double)(m->ns - prev_ns) / 1e6, (unsigned long long)(m->counts.puts - prev.puts),
                 (unsigned long long)(m->counts.gets - prev.gets),
                 (unsigned long long)(m->counts.fences - prev.fences),
                 (unsigned long long)(m->counts.other - prev.other),
                 (unsigned long long)(m->counts.put_bytes - prev.put_bytes),
                 (unsigned long long)(m->counts.get_bytes - prev.get_bytes));
        fputs(line, stderr);
        prev_ns = m->ns;
        prev = m->counts;
    }
    snprintf(line, sizeof line, "tern init-profile: %-22s %10.3f %6llu %6llu %6llu %6llu %10llu %10llu\n", "total",
             (double)(prev_ns - profile.start_ns) / 1e6, (unsigned long long)prev.puts,
             (unsigned long long)prev.gets, (unsigned long long)prev.fences, (unsigned long long)prev.other,
             (unsigned long long)prev.put_bytes, (unsigned long long)prev.get_bytes);
    fputs(line, stderr);
}
