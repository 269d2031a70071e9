/* Shared by the point-to-point entry points. */
#ifndef TERN_MPI_P2P_H
#define TERN_MPI_P2P_H

#include "core/pt2pt/request.h"
#include <mpi.h>

/* A request that is already complete with an empty status (operations on
 * MPI_PROC_NULL). */
tern_req_t *tern_mpi_null_proc_request(tern_req_kind_t kind, MPI_Comm comm);
/* Waits for a request and reports its error (through the handler of its
 * communicator); fills status. Does not release it. */
int tern_mpi_wait_one(const char *func, tern_req_t *req, MPI_Status *status);
/* Starts an inactive persistent request. */
int tern_mpi_start(const char *func, tern_req_t *req);
/* Error code for a completed request's failure (raised through the handler). */
int tern_mpi_request_error(const char *func, tern_req_t *req);
/* Hands req to the user as *request. MPI_ERR_NO_MEM when the handle table
 * cannot grow (tern_mpi_request_no_handle): the operation then goes on
 * without a handle and frees itself when done. */
int tern_mpi_request_no_handle(const char *func, MPI_Comm comm, tern_req_t *req);
static inline int tern_mpi_request_handle(const char *func, MPI_Comm comm, tern_req_t *req,
                                          MPI_Request *request)
{
    *request = tern_req_handle(req);
    if (__builtin_expect(*request != MPI_REQUEST_NULL, 1))
        return MPI_SUCCESS;
    return tern_mpi_request_no_handle(func, comm, req);
}

#endif
