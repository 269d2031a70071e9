/* The progress engine: polls every transport and retries queued packets.
 * Waiting loops spin while this rank has a core of its own and yield the CPU
 * when ranks outnumber cores, so oversubscribed jobs still move. */
#ifndef TERN_CORE_PROGRESS_H
#define TERN_CORE_PROGRESS_H

/* One pass over all transports and registered hooks; returns the number of
 * events handled. */
int tern_progress(void);

/* Layers above point-to-point (nonblocking collectives, RMA) register a
 * function called on every progress pass; it returns events handled. */
typedef int (*tern_progress_hook_fn)(void);
void tern_progress_register(tern_progress_hook_fn fn);
void tern_progress_unregister(tern_progress_hook_fn fn);

/* Waiting helper: call after each empty tern_progress() in a wait loop. */
void tern_progress_idle(unsigned *idle_polls);

/* Spins on progress until *flag becomes non-zero. */
void tern_progress_wait(volatile int *flag);

#endif
