/* Sessions at the API (mpi_session.h). A session's error handler is a
 * user function in the same table as communicators' (mpi_errors.c),
 * marked as made for sessions. */
#include "mpi/mpi_session.h"

int tern_check_session(const char *func, int err_obj, MPI_Session session,
                       tern_session_t **session_p)
{
    tern_session_t *s = tern_session_lookup(session);
    if (__builtin_expect(s != NULL, 1)) {
        *session_p = s;
        return MPI_SUCCESS;
    }
    if (session == MPI_SESSION_NULL)
        return tern_mpi_error(err_obj, MPI_ERR_SESSION, func, "session is MPI_SESSION_NULL");
    return tern_mpi_error(err_obj, MPI_ERR_SESSION, func, "invalid session handle 0x%x",
                          (unsigned)session);
}

tern_status_t tern_session_create_errhandler(MPI_Session_errhandler_function *fn,
                                             MPI_Errhandler *errhandler)
{
    /* The same shape as a communicator's handler: a pointer to the handle,
     * one to the code, and nothing else the caller passes. */
    return tern_errhandler_create_for(TERN_EH_FOR_SESSION, (MPI_Comm_errhandler_function *)fn,
                                      errhandler);
}
