/* MPI sessions (MPI-4.0 11.3): handles of kind TERN_KIND_SESSION, each
 * with its error handler and thread level. The first MPI_Session_init
 * brings the runtime up unless MPI_Init did; the last of the world model
 * and the sessions to end brings it down (init.h). */
#ifndef TERN_CORE_SESSION_H
#define TERN_CORE_SESSION_H

#include "base/status.h"
#include "core/info/info.h"
#include <mpi.h>

typedef struct tern_session {
    MPI_Session handle;
    MPI_Errhandler errhandler;
    int thread_level; /* granted */
} tern_session_t;

/* Handle to object; NULL if not a live session. */
tern_session_t *tern_session_lookup(MPI_Session handle);

/* Whether a live session has errhandler eh (a handler the user freed is
 * kept while one uses it). */
int tern_session_errhandler_in_use(MPI_Errhandler eh);

/* The MPI_Session_* procedures on checked arguments (info: NULL for
 * MPI_INFO_NULL; the key thread_level asks for a thread level by name). */
tern_status_t tern_session_init(const tern_info_t *info, MPI_Errhandler errhandler,
                                MPI_Session *session);
tern_status_t tern_session_finalize(MPI_Session *session);
tern_status_t tern_session_get_num_psets(const tern_session_t *s, int *npset_names);
/* MPI's string rule: *pset_len 0 asks for the length only (name may be
 * NULL); otherwise at most *pset_len - 1 characters and a NUL are written.
 * *pset_len returns the name's length plus one either way. */
tern_status_t tern_session_get_nth_pset(const tern_session_t *s, int n, int *pset_len,
                                        char *pset_name);
/* A new info with mpi_size (the set's size). */
tern_status_t tern_session_get_pset_info(const tern_session_t *s, const char *pset_name,
                                         MPI_Info *info);
/* A new info with thread_level (the level granted). */
tern_status_t tern_session_get_info(const tern_session_t *s, MPI_Info *info_used);
tern_status_t tern_session_group_from_pset(const tern_session_t *s, const char *pset_name,
                                           MPI_Group *newgroup);

#endif
