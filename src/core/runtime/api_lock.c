/* The entry points' global lock (api_lock.h). A futex-based mutex with the
 * depth kept per thread: a thread holds the lock exactly when its depth is
 * positive, so a wait can drop all of it and take it back without knowing
 * how deep the calls above it went.
 *
 * Why not a pthread mutex: uncontended, every entry point under
 * MPI_THREAD_MULTIPLE paid ~125 instructions for the lock (glibc's trylock
 * and unlock, which dispatch on the mutex kind, and two __tls_get_addr
 * calls for the depth): 22% of an MPI_Isend (docs/performance.md, "Threads").
 * The lock word below takes one compare-and-swap and one exchange, and the
 * depth is read in the initial-exec TLS model (one %fs-relative load; the
 * 4 bytes fit glibc's surplus for libraries loaded by dlopen). */
#include "core/runtime/api_lock.h"
#include "base/profile.h"
#include "base/pvars.h"

#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A wait lets a waiting thread in for at most this many yields. */
#define HANDOFF_YIELDS 64

atomic_int tern_api_locking;
atomic_int tern_api_slow;

/* The lock word, as in Drepper's "Futexes Are Tricky" (mutex 3): 0 free,
 * 1 held, 2 held and a thread may sleep on it (then its release wakes
 * one). Acquire on taking, release on letting go: what one holder wrote
 * the next one sees. */
static atomic_int lock_word;
static _Thread_local unsigned depth __attribute__((tls_model("initial-exec")));
/* Threads blocked on the lock, and acquisitions so far: a wait that
 * releases the lock sees the count move when another thread got it. */
static atomic_uint waiters;
static atomic_uint acquisitions;

static int take(void)
{
    int free_word = 0;
    return atomic_compare_exchange_strong_explicit(&lock_word, &free_word, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

static void acquire(void)
{
    if (!take()) {
        atomic_fetch_add_explicit(&waiters, 1, memory_order_relaxed);
        /* Mark the word contended; sleep while it stays held so. */
        while (atomic_exchange_explicit(&lock_word, 2, memory_order_acquire) != 0)
            syscall(SYS_futex, &lock_word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        atomic_fetch_sub_explicit(&waiters, 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&acquisitions, 1, memory_order_relaxed);
}

static void release(void)
{
    if (atomic_exchange_explicit(&lock_word, 0, memory_order_release) == 2)
        syscall(SYS_futex, &lock_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void tern_api_lock(void)
{
    if (depth++ == 0)
        acquire();
}

void tern_api_unlock(void)
{
    if (--depth == 0)
        release();
}

int tern_api_trylock(void)
{
    if (depth) {
        depth++;
        return 1;
    }
    if (!take())
        return 0;
    depth = 1;
    atomic_fetch_add_explicit(&acquisitions, 1, memory_order_relaxed);
    return 1;
}

int tern_api_held(void)
{
    return depth > 0;
}

void tern_api_locking_on(void)
{
    atomic_store_explicit(&tern_api_locking, 1, memory_order_release);
    atomic_fetch_or_explicit(&tern_api_slow, 1, memory_order_release);
}

void tern_api_profile_calls(int on)
{
    if (on)
        atomic_fetch_or_explicit(&tern_api_slow, 2, memory_order_release);
    else
        atomic_fetch_and_explicit(&tern_api_slow, ~2, memory_order_release);
}

void tern_api_time_calls(int on)
{
    if (on)
        atomic_fetch_or_explicit(&tern_api_slow, 4, memory_order_release);
    else
        atomic_fetch_and_explicit(&tern_api_slow, ~4, memory_order_release);
}

/* The timers' call being timed in this thread (NULL: none) and its start. */
static __thread const char *timed_func __attribute__((tls_model("initial-exec")));
static __thread uint64_t timed_t0 __attribute__((tls_model("initial-exec")));

/* The timer of procedure func besides TIME_MPI (TERN_PVAR_N: none). Names
 * are looked up by the address of the entry point's own string, so each
 * address is compared by name once and then found in a small cache. */
static const struct {
    const char *name;
    tern_pvar_id_t id;
} timed[] = {
    {"MPI_Send", TERN_PVAR_TIME_SEND},         {"MPI_Recv", TERN_PVAR_TIME_RECV},
    {"MPI_Sendrecv", TERN_PVAR_TIME_SENDRECV}, {"MPI_Sendrecv_replace", TERN_PVAR_TIME_SENDRECV},
    {"MPI_Wait", TERN_PVAR_TIME_WAIT},         {"MPI_Waitall", TERN_PVAR_TIME_WAIT},
    {"MPI_Waitany", TERN_PVAR_TIME_WAIT},      {"MPI_Waitsome", TERN_PVAR_TIME_WAIT},
    {"MPI_Barrier", TERN_PVAR_TIME_BARRIER},   {"MPI_Bcast", TERN_PVAR_TIME_BCAST},
    {"MPI_Reduce", TERN_PVAR_TIME_REDUCE},     {"MPI_Allreduce", TERN_PVAR_TIME_ALLREDUCE},
    {"MPI_Allgather", TERN_PVAR_TIME_ALLGATHER}, {"MPI_Alltoall", TERN_PVAR_TIME_ALLTOALL},
};

static tern_pvar_id_t timer_of(const char *func)
{
    enum { CACHE = 64 };
    static struct {
        const char *func;
        tern_pvar_id_t id;
    } cache[CACHE];
    size_t slot = ((uintptr_t)func >> 3) % CACHE;
    if (cache[slot].func == func)
        return cache[slot].id;
    tern_pvar_id_t id = TERN_PVAR_N;
    size_t n = strlen(func);
    if (n > 2 && strcmp(func + n - 2, "_c") == 0)
        n -= 2; /* the large-count form */
    for (size_t i = 0; i < sizeof timed / sizeof timed[0]; i++)
        if (strlen(timed[i].name) == n && strncmp(timed[i].name, func, n) == 0)
            id = timed[i].id;
    cache[slot].func = func;
    cache[slot].id = id;
    return id;
}

static uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int tern_api_enter_slow(const char *func)
{
    int held = 0;
    if (atomic_load_explicit(&tern_api_locking, memory_order_relaxed)) {
        tern_api_lock();
        held = 1;
    }
    /* Under the lock (when there is one): the profile's records change
     * one thread at a time. Without the profile a locked call makes no
     * further call. */
    int slow = atomic_load_explicit(&tern_api_slow, memory_order_relaxed);
    if ((slow & 2) && tern_profile_call_enter(func))
        held |= 2;
    if ((slow & 4) && !timed_func) {
        timed_func = func;
        timed_t0 = clock_ns();
        held |= 4;
    }
    return held;
}

void tern_api_leave_slow(int held)
{
    if (held & 4) {
        uint64_t dt = clock_ns() - timed_t0;
        tern_pvar_add(TERN_PVAR_TIME_MPI, dt);
        tern_pvar_id_t id = timer_of(timed_func);
        if (id != TERN_PVAR_N)
            tern_pvar_add(id, dt);
        timed_func = NULL;
    }
    if (held & 2)
        tern_profile_call_leave();
    if (held & 1)
        tern_api_unlock();
}

void tern_api_wait_gap(int yield)
{
    if (!depth)
        return;
    int want = atomic_load_explicit(&waiters, memory_order_relaxed) != 0;
    if (!want && !yield)
        return;
    unsigned saved = depth, seen = atomic_load_explicit(&acquisitions, memory_order_relaxed);
    depth = 0;
    release();
    if (yield)
        sched_yield();
    /* A woken waiter needs a moment to take the mutex: without this the
     * releasing thread takes it straight back and the waiter starves. */
    for (int i = 0; want && i < HANDOFF_YIELDS &&
                    atomic_load_explicit(&acquisitions, memory_order_relaxed) == seen;
         i++)
        sched_yield();
    acquire();
    depth = saved;
}

unsigned tern_api_suspend(void)
{
    unsigned saved = depth;
    if (saved) {
        depth = 0;
        release();
    }
    return saved;
}

void tern_api_resume(unsigned held)
{
    if (held) {
        acquire();
        depth = held;
    }
}
