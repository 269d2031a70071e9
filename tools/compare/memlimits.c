/* Physical limits of this machine, for the compare report: single-thread
 * memcpy bandwidth at several sizes, and the one-way latency of moving one
 * cache line between two cores (two threads pinned to different cores
 * ping-pong a flag). A shared-memory MPI cannot beat these; the report shows
 * how far Tern is from them.
 *
 * --probe times only the cache line, in a few ms: the VM's mode, which the
 * compare tool probes right before and after every benchmark run
 * (tools/compare/modes.py). Its figure is the best of 15 bursts of 500
 * round trips (0.05-0.2 ms each): a burst that another process interrupts
 * (the machine may be loaded) is ignored, while the mode slows every burst
 * alike.
 *
 * Usage: memlimits [--quick | --probe]   prints one JSON object ({} from
 * --probe where cores 0 and 1 cannot be pinned). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, pthread_setaffinity_np */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of `reps` runs of copying `size` bytes for at least `min_s` seconds. */
static double memcpy_gbs(size_t size, int reps, double min_s)
{
    char *src = aligned_alloc(4096, size), *dst = aligned_alloc(4096, size);
    if (!src || !dst) return 0;
    memset(src, 1, size);
    memset(dst, 2, size);
    double best = 0;
    for (int r = 0; r < reps; r++) {
        long n = 0;
        double t0 = now(), t;
        do {
            memcpy(dst, src, size);
            /* Keep the copy from being optimised away and the source warm alike. */
            __asm__ volatile("" : : "r"(dst) : "memory");
            n++;
        } while ((t = now() - t0) < min_s);
        double gbs = (double)size * n / t / 1e9;
        if (gbs > best) best = gbs;
    }
    free(src);
    free(dst);
    return best;
}

static _Alignas(128) atomic_long flag;
static long rounds;

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *ponger(void *arg)
{
    if (pin(*(int *)arg)) {
        atomic_store(&flag, -1); /* tell the main thread to give up */
        return (void *)1;
    }
    for (long i = 0; i < rounds; i++) {
        while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 1) continue;
        atomic_store_explicit(&flag, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

/* One-way cache-line transfer between cpu a and cpu b: ns[k] for each of
 * `bursts` bursts of n round trips, with one ponger thread for all. The
 * first round trip, which waits for that thread to start and pin itself,
 * is not timed. Returns the bursts measured (0: cannot pin). */
static int cacheline_ns(int a, int b, long n, int bursts, double *ns)
{
    pthread_t t;
    if (pin(a)) return 0;
    rounds = n * bursts + 1;
    atomic_store(&flag, 0);
    if (pthread_create(&t, NULL, ponger, &b)) return 0;
    int done = 0;
    double t0 = 0;
    for (long i = 0; i < rounds; i++) {
        long f = 0;
        if (i > 0 && (i - 1) % n == 0) t0 = now(); /* a burst begins */
        /* Only the ponger's failure can move the flag away from 0 before 1 is written. */
        if (atomic_load(&flag) < 0) break;
        atomic_store_explicit(&flag, 2 * i + 1, memory_order_release);
        while ((f = atomic_load_explicit(&flag, memory_order_acquire)) != 2 * i + 2 && f >= 0) continue;
        if (f < 0) break;
        if (i > 0 && i % n == 0) ns[done++] = (now() - t0) * 1e9 / (2.0 * n); /* it ends */
    }
    void *rc;
    pthread_join(t, &rc);
    return rc ? 0 : done;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether this process may run on cores 0 and 1, those the benchmarks'
 * two ranks are bound to. */
static int two_cores(void)
{
    cpu_set_t allowed;
    return !sched_getaffinity(0, sizeof allowed, &allowed) && CPU_ISSET(0, &allowed) && CPU_ISSET(1, &allowed);
}

static int probe(void)
{
    double ns[15];
    int n = two_cores() ? cacheline_ns(0, 1, 500, 15, ns) : 0;
    if (n) {
        qsort(ns, n, sizeof *ns, cmp_double);
        printf("{\"cacheline_ns\":%.1f}\n", ns[0]);
    } else
        printf("{}\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--probe")) return probe();
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    static const size_t sizes[] = {4096, 65536, 1 << 20, 4 << 20, 64 << 20};
    printf("{\"memcpy_gbs\":{");
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        printf("%s\"%zu\":%.3f", i ? "," : "", sizes[i], memcpy_gbs(sizes[i], quick ? 2 : 5, quick ? 0.02 : 0.1));
    printf("}");
    /* Cores 0 and 1, as the benchmarks' ranks are bound. Median of runs: the
     * host may move vCPUs around between them. */
    double runs[7];
    int ok = two_cores() ? cacheline_ns(0, 1, quick ? 20000 : 200000, quick ? 3 : 7, runs) : 0;
    if (ok) {
        qsort(runs, ok, sizeof *runs, cmp_double);
        printf(",\"cacheline_ns\":%.1f,\"cacheline_ns_min\":%.1f", runs[ok / 2], runs[0]);
    }
    printf("}\n");
    return 0;
}
