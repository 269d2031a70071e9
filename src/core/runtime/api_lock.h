/* The global lock of the MPI entry points (api_lock.c).
 *
 * Under MPI_THREAD_MULTIPLE, or with the asynchronous progress thread
 * (TERN_ASYNC_PROGRESS), every entry point holds one lock for its whole
 * call (TERN_CHECK_INIT, mpi/mpi_errors.h), the way MPICH's "global"
 * critical section works: the engine itself stays single-threaded. The
 * lock is recursive per thread (an error handler or a callback may call
 * MPI again). Every blocking wait goes through tern_progress_idle
 * (progress.h), which lets a thread that waits for the lock in, so another
 * thread's call can make the send this wait needs. With the lock off
 * (below MULTIPLE, no progress thread) entry points pay one load and a
 * branch. */
#ifndef TERN_CORE_API_LOCK_H
#define TERN_CORE_API_LOCK_H

#include <stdatomic.h>

/* Non-zero while entry points take the lock (set once MPI_THREAD_MULTIPLE
 * is granted or the progress thread starts; never cleared while threads
 * may be in MPI). */
extern atomic_int tern_api_locking;

void tern_api_lock(void);
void tern_api_unlock(void);
/* For the progress thread: 1 when it took the lock without waiting. */
int tern_api_trylock(void);
/* 1 when the calling thread holds the lock. */
int tern_api_held(void);

/* Turns the entry points' lock on (before the calling thread's first use
 * of MPI with the new level; the caller may hold nothing). */
void tern_api_locking_on(void);

/* A blocking wait's gap: when the caller holds the lock and another
 * thread waits for it, releases it fully (whatever the depth), lets that
 * thread in and takes it back at the same depth. yield: also give up the
 * CPU (the wait is idle). */
void tern_api_wait_gap(int yield);

/* Lets go of the lock fully (whatever the depth) while the caller blocks
 * outside the engine, in a file system call say, so that other threads'
 * calls go on; returns what tern_api_resume takes back (0: nothing was
 * held, nothing to take). */
unsigned tern_api_suspend(void);
void tern_api_resume(unsigned held);

/* An entry point's guard: 1 when it took the lock (then leave releases). */
static inline int tern_api_enter(void)
{
    if (__builtin_expect(atomic_load_explicit(&tern_api_locking, memory_order_relaxed), 0)) {
        tern_api_lock();
        return 1;
    }
    return 0;
}

static inline void tern_api_leave(int *held)
{
    if (*held)
        tern_api_unlock();
}

/* The guard of the entry points that name themselves (TERN_CHECK_INIT):
 * one flag word says whether the call takes the lock (bit 0, as
 * tern_api_locking), is timed for the profile of the job (bit 1,
 * base/profile.h) or for the tools interface's timers (bit 2,
 * base/pvars.def's TIME_* rows), so a call with none pays the same load
 * and branch as the lock's guard alone. enter returns what leave must
 * undo. */
extern atomic_int tern_api_slow;
int tern_api_enter_slow(const char *func);
void tern_api_leave_slow(int held);
/* Turns the profile's timing of calls on or off (bit 1). */
void tern_api_profile_calls(int on);
/* Turns the timers' timing of calls on or off (bit 2). */
void tern_api_time_calls(int on);

static inline int tern_api_enter_call(const char *func)
{
    if (__builtin_expect(atomic_load_explicit(&tern_api_slow, memory_order_relaxed), 0))
        return tern_api_enter_slow(func);
    return 0;
}

static inline void tern_api_leave_call(int *held)
{
    if (*held)
        tern_api_leave_slow(*held);
}

#endif
