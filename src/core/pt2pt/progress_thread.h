/* The asynchronous progress thread (TERN_ASYNC_PROGRESS, progress_thread.c).
 *
 * The progress engine is single-threaded. With the thread on, every MPI
 * entry point (TERN_CHECK_INIT in mpi/mpi_errors.h) holds one recursive
 * lock for the whole call, and the thread runs tern_progress() only when it
 * gets that lock with a try: so it progresses exactly while the application
 * is outside MPI (computing), and never competes with a call in progress.
 * With the thread off the entry points pay one load and a branch. */
#ifndef TERN_CORE_PROGRESS_THREAD_H
#define TERN_CORE_PROGRESS_THREAD_H

#include "base/status.h"

/* Non-zero while the thread runs (entry points then take the lock). */
extern int tern_async_active;

void tern_api_lock(void);
void tern_api_unlock(void);

/* An entry point's guard: 1 when it took the lock (then leave releases). */
static inline int tern_api_enter(void)
{
    if (__builtin_expect(tern_async_active, 0)) {
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

/* Starts the thread when TERN_ASYNC_PROGRESS is on (end of start-up). */
tern_status_t tern_progress_thread_start(void);
/* Stops and joins it (start of finalize; the caller may hold the lock). */
void tern_progress_thread_stop(void);

#endif
