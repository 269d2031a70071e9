/* The library's start and end: the order in which the core's rooms come
 * up (runtime and transports, then the protocols' handler, then the
 * predefined communicators) and go down. The top room of the core: it may
 * call into every other. */
#ifndef TERN_CORE_INIT_H
#define TERN_CORE_INIT_H

#include "base/status.h"

/* Brings the runtime up unless it is (MPI_Init and the first
 * MPI_Session_init share it): *provided is the thread level granted. */
tern_status_t tern_runtime_init(int required, int *provided);
/* The thread level granted for a requested one. */
int tern_runtime_thread_level(int required);
/* Called when the world model or a session ended: the last of them to end
 * brings the runtime down (a barrier over every process, then
 * tern_runtime_finalize); otherwise nothing. */
tern_status_t tern_runtime_release(const char *func);
/* Tears the runtime down (after the callers' barrier). */
tern_status_t tern_runtime_finalize(void);

#endif
