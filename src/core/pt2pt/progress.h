/* The progress engine: polls every transport and retries queued packets.
 * Waiting loops spin while this rank has a core of its own and yield the CPU
 * when ranks outnumber cores, so oversubscribed jobs still move. */
#ifndef TERN_CORE_PROGRESS_H
#define TERN_CORE_PROGRESS_H

#include "base/status.h"

#include <stdint.h>

/* One pass over all transports and registered hooks; returns the number of
 * events handled. */
int tern_progress(void);
/* Events the transports have handled so far: a hook that serves many
 * objects (one-sided windows) rescans them only when it changed, since
 * nothing arrived for them otherwise. */
extern uint64_t tern_progress_events;

/* Layers above point-to-point (nonblocking collectives, RMA) register a
 * function called on every progress pass; it returns events handled. */
typedef int (*tern_progress_hook_fn)(void);
/* TERN_ERR_INTERNAL when the (small, fixed) table of hooks is full. */
tern_status_t tern_progress_register(tern_progress_hook_fn fn);
void tern_progress_unregister(tern_progress_hook_fn fn);

/* Waiting helper: call after each empty tern_progress() in a wait loop.
 * When it yields the CPU it also runs the peer-failure watch
 * (peer_failure.h). Every blocking wait comes here: with the entry points'
 * lock on (runtime/api_lock.h) it is where a waiting thread lets the
 * others' calls in, so what the wait loop looks at after it may have
 * changed. */
void tern_progress_idle(unsigned *idle_polls);
/* The same watch for MPI_Test and its kin, called when they find their
 * requests incomplete (a program may poll them instead of waiting). */
void tern_progress_test_missed(void);

/* Spins on progress until *flag becomes non-zero. */
void tern_progress_wait(volatile int *flag);

#endif
