/* The large-message path per peer (shm_path.h): hwloc places and the
 * start-up cache-line probe. */
#include "transport/shm/shm_path.h"

#include <hwloc.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

static int index_covering(hwloc_topology_t t, hwloc_const_bitmap_t set, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(t, type);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t, type, (unsigned)i);
        if (o && o->cpuset && hwloc_bitmap_isincluded(set, o->cpuset))
            return (int)o->logical_index;
    }
    return -1;
}

void tern_shm_place_self(tern_shm_place_t *p)
{
    p->package = p->numa = p->l3 = -1;
    cpu_set_t mask;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    /* Unbound: the scheduler may move it anywhere, no place to compare
     * (and no topology to load at start-up). */
    if (sched_getaffinity(0, sizeof mask, &mask) != 0 || CPU_COUNT(&mask) >= online)
        return;
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return;
    /* Only what the choice needs: packages and L3 caches (PUs and NUMA
     * nodes are always there). */
    hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(t, HWLOC_OBJ_PACKAGE, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_type_filter(t, HWLOC_OBJ_L3CACHE, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    if (hwloc_topology_load(t) == 0 && bound &&
        hwloc_get_cpubind(t, bound, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bound)) {
        p->package = index_covering(t, bound, HWLOC_OBJ_PACKAGE);
        p->numa = index_covering(t, bound, HWLOC_OBJ_NUMANODE);
        p->l3 = index_covering(t, bound, HWLOC_OBJ_L3CACHE);
    }
    hwloc_bitmap_free(bound);
    hwloc_topology_destroy(t);
}

int tern_shm_places_far(const tern_shm_place_t *a, const tern_shm_place_t *b)
{
    if (a->package < 0 || b->package < 0)
        return 0; /* an unbound rank: not known */
    if (a->package != b->package)
        return 1;
    if (a->numa >= 0 && b->numa >= 0 && a->numa != b->numa)
        return 1;
    return a->l3 >= 0 && b->l3 >= 0 && a->l3 != b->l3;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Round trips in batches; the fastest batch's mean counts, so a batch in
 * which either rank was descheduled (a loaded node) does not make near
 * cores look far. */
enum { WARM = 20, BATCH = 20, BATCHES = 10, VERDICT_NEAR = 1, VERDICT_FAR = 2, VERDICT_UNKNOWN = 3 };

/* Waits until *w reaches v; 0 after timeout_ns. Spins (the probe is only
 * run when every rank has a core), checking the clock now and then and
 * yielding then, so that a partner descheduled on a loaded node gets the
 * CPU back (such a round trip lands in a slow batch, which does not
 * count). */
static int wait_for(_Atomic uint64_t *w, uint64_t v, double timeout_ns)
{
    double deadline = 0;
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(w, memory_order_acquire) >= v)
            return 1;
        if ((spins & 1023) == 1023) {
            double t = now_ns();
            if (!deadline)
                deadline = t + timeout_ns;
            else if (t > deadline)
                return 0;
            sched_yield();
        }
    }
}

int tern_shm_probe_far(void *line, int local_rank, double far_ns, double *rtt_ns)
{
    _Atomic uint64_t *ping = line, *verdict = ping + 1;
    *rtt_ns = 0;
    /* The two ranks reach this after the same PMI fence: a second for each
     * answer, two for the whole probe. */
    if (local_rank == 0) {
        double t0 = 0, best = 0, end = now_ns() + 2e9;
        int ok = 1;
        for (uint64_t k = 0; ok && k < WARM + BATCH * BATCHES; k++) {
            if (k >= WARM && (k - WARM) % BATCH == 0) {
                double t = now_ns();
                if (k > WARM && (best == 0 || (t - t0) / BATCH < best))
                    best = (t - t0) / BATCH;
                t0 = t;
            }
            atomic_store_explicit(ping, 2 * k + 1, memory_order_release);
            ok = wait_for(ping, 2 * k + 2, 1e9) && ((k & 15) || now_ns() < end);
        }
        uint64_t v = VERDICT_UNKNOWN;
        if (ok) {
            double t = (now_ns() - t0) / BATCH; /* the last batch */
            *rtt_ns = best == 0 || t < best ? t : best;
            v = *rtt_ns > far_ns ? VERDICT_FAR : VERDICT_NEAR;
        }
        atomic_store_explicit(verdict, v, memory_order_release);
    } else if (local_rank == 1) {
        for (uint64_t k = 0; k < WARM + BATCH * BATCHES; k++) {
            if (!wait_for(ping, 2 * k + 1, 1e9))
                break;
            atomic_store_explicit(ping, 2 * k + 2, memory_order_release);
        }
    }
    if (!wait_for(verdict, 1, 5e9))
        return -1;
    uint64_t v = atomic_load_explicit(verdict, memory_order_acquire);
    return v == VERDICT_FAR ? 1 : v == VERDICT_NEAR ? 0 : -1;
}
