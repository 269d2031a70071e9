/* The asynchronous progress thread (TERN_ASYNC_PROGRESS, progress_thread.c).
 *
 * The progress engine is single-threaded. With the thread on, every MPI
 * entry point holds the global lock (runtime/api_lock.h) for the whole
 * call, and the thread runs tern_progress() only when it gets that lock
 * with a try: so it progresses exactly while the application is outside
 * MPI (computing) or waits idle, and never competes with a call in
 * progress. */
#ifndef TERN_CORE_PROGRESS_THREAD_H
#define TERN_CORE_PROGRESS_THREAD_H

#include "base/status.h"
#include "core/runtime/api_lock.h"

/* Non-zero while the thread runs. */
extern int tern_async_active;

/* Starts the thread when TERN_ASYNC_PROGRESS is on (end of start-up). */
tern_status_t tern_progress_thread_start(void);
/* 1 in the progress thread itself (events raised there ask thread-safe
 * callbacks, mpi/mpi_tools_event.c). */
int tern_progress_thread_is_self(void);
/* Stops and joins it (start of finalize; the caller may hold the lock). */
void tern_progress_thread_stop(void);

#endif
