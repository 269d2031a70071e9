/* Sessions at the API (MPI-4.0 11.3): the handle check and the session's
 * handler constructor; the rest is core/init/session.c. */
#ifndef TERN_MPI_SESSION_H
#define TERN_MPI_SESSION_H

#include "core/init/session.h"
#include "mpi/mpi_errors.h"

/* MPI_ERR_SESSION unless session is a live session. */
int tern_check_session(const char *func, int err_obj, MPI_Session session,
                       tern_session_t **session_p);

tern_status_t tern_session_create_errhandler(MPI_Session_errhandler_function *fn,
                                             MPI_Errhandler *errhandler);

#endif
