/* The MPI environment (env.c): initialisation and finalisation, abort,
 * thread queries, versions, the processor name and the clock, on arguments
 * the MPI layer has checked. */
#ifndef TERN_CORE_ENV_H
#define TERN_CORE_ENV_H

#include "core/comm/comm.h"
#include "core/info/info.h"

/* MPI_Init/MPI_Init_thread: a second call, or a failure, ends the job with
 * a message naming func (there is no error handler yet). */
tern_status_t tern_env_init(const char *func, int required, int *provided);
tern_status_t tern_env_finalize(void);
tern_status_t tern_env_initialized(int *flag);
tern_status_t tern_env_finalized(int *flag);
/* Ends the job through the process manager; does not return. */
tern_status_t tern_env_abort(const tern_comm_t *c, int errorcode);
tern_status_t tern_env_query_thread(int *provided);
tern_status_t tern_env_is_thread_main(int *flag);
tern_status_t tern_env_get_processor_name(char *name, int *resultlen);
tern_status_t tern_env_get_version(int *version, int *subversion);
tern_status_t tern_env_get_library_version(char *version, int *resultlen);
/* MPI_Alloc_mem (info: NULL for MPI_INFO_NULL; the key
 * mpi_minimum_memory_alignment is honoured) and MPI_Free_mem, over
 * core/runtime/mem.c. */
tern_status_t tern_env_alloc_mem(MPI_Aint size, const tern_info_t *info, void *baseptr);
tern_status_t tern_env_free_mem(void *base);
/* Seconds on the monotonic clock (MPI_Wtime's base is taken when the
 * runtime comes up). */
double tern_env_clock(void);
/* Seconds since MPI_Init on a monotonic clock, and its resolution. */
double tern_env_wtime(void);
double tern_env_wtick(void);

#endif
