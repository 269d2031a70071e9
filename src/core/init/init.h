/* The library's start and end: the order in which the core's rooms come
 * up (runtime and transports, then the protocols' handler, then the
 * predefined communicators) and go down. The top room of the core: it may
 * call into every other. */
#ifndef TERN_CORE_INIT_H
#define TERN_CORE_INIT_H

#include "base/status.h"

/* MPI_Init / MPI_Init_thread: *provided is the thread level granted. */
tern_status_t tern_runtime_init(int required, int *provided);
/* MPI_Finalize, after the callers' barrier. */
tern_status_t tern_runtime_finalize(void);

#endif
