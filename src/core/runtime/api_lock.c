/* The entry points' global lock (api_lock.h). A plain mutex with the depth
 * kept per thread: a thread holds the lock exactly when its depth is
 * positive, so a wait can drop all of it and take it back without knowing
 * how deep the calls above it went. */
#include "core/runtime/api_lock.h"
#include "base/profile.h"

#include <pthread.h>
#include <sched.h>

/* A wait lets a waiting thread in for at most this many yields. */
#define HANDOFF_YIELDS 64

atomic_int tern_api_locking;
atomic_int tern_api_slow;

static pthread_mutex_t api_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local unsigned depth;
/* Threads blocked on the mutex, and acquisitions so far: a wait that
 * releases the lock sees the count move when another thread got it. */
static atomic_uint waiters;
static atomic_uint acquisitions;

static void acquire(void)
{
    if (pthread_mutex_trylock(&api_mutex) != 0) {
        atomic_fetch_add_explicit(&waiters, 1, memory_order_relaxed);
        pthread_mutex_lock(&api_mutex);
        atomic_fetch_sub_explicit(&waiters, 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&acquisitions, 1, memory_order_relaxed);
}

void tern_api_lock(void)
{
    if (depth++ == 0)
        acquire();
}

void tern_api_unlock(void)
{
    if (--depth == 0)
        pthread_mutex_unlock(&api_mutex);
}

int tern_api_trylock(void)
{
    if (depth) {
        depth++;
        return 1;
    }
    if (pthread_mutex_trylock(&api_mutex) != 0)
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
    pthread_mutex_unlock(&api_mutex);
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
