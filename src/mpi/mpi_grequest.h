/* Generalized requests (mpi_grequest.c): their start and completion, and
 * what the completion procedures (mpi_request.c) do for one. Functions
 * returning int return MPI codes (a callback's code as it is). */
#ifndef TERN_MPI_GREQUEST_H
#define TERN_MPI_GREQUEST_H

#include "base/status.h"
#include "core/pt2pt/request.h"
#include <mpi.h>

tern_status_t tern_mpi_grequest_start(MPI_Grequest_query_function *query_fn,
                                      MPI_Grequest_free_function *free_fn,
                                      MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                                      tern_req_t **req_p);
int tern_mpi_grequest_complete(const char *func, MPI_Request request);
/* Wait/Test found it complete: query_fn fills status, free_fn runs, the
 * request is released. raise: the code goes through the error handler;
 * else (multi-request calls) it is also written into status->MPI_ERROR. */
int tern_mpi_grequest_finish(tern_req_t *req, MPI_Status *status, int raise);
/* MPI_Request_get_status on a complete one: query_fn only. */
int tern_mpi_grequest_get_status(tern_req_t *req, MPI_Status *status);
/* MPI_Request_free: free_fn now if complete, else in Grequest_complete. */
int tern_mpi_grequest_free(tern_req_t *req);
/* MPI_Cancel: cancel_fn, told whether the request is complete. */
int tern_mpi_grequest_cancel(tern_req_t *req);

#endif
