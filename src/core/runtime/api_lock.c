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

#include <linux/futex.h>
#include <sched.h>
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
    if ((atomic_load_explicit(&tern_api_slow, memory_order_relaxed) & 2) &&
        tern_profile_call_enter(func))
        held |= 2;
    return held;
}

void tern_api_leave_slow(int held)
{
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
