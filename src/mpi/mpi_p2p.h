/* Shared by the point-to-point and completion entry points: the one-pass
 * argument check of sends and receives (inline: it is on the fast path of
 * every message) and the request helpers of the MPI layer. */
#ifndef TERN_MPI_P2P_H
#define TERN_MPI_P2P_H

#include "core/comm/comm.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/request.h"
#include "mpi/mpi_errors.h"
#include <mpi.h>

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

/* The completion procedures (mpi_request.c), after their entry points
 * generic checks; they return MPI codes (statuses carry MPI codes). The
 * any/some forms serve Wait and Test (blocking). */
int tern_mpi_wait(const char *func, MPI_Request *request, MPI_Status *status);
int tern_mpi_test(const char *func, MPI_Request *request, int *flag, MPI_Status *status);
int tern_mpi_waitall(const char *func, int count, MPI_Request reqs[], MPI_Status statuses[]);
int tern_mpi_testall(const char *func, int count, MPI_Request reqs[], int *flag,
                     MPI_Status statuses[]);
int tern_mpi_any(const char *func, int count, MPI_Request reqs[], int *index, int *flag,
                 MPI_Status *status, int blocking);
int tern_mpi_some(const char *func, int incount, MPI_Request reqs[], int *outcount,
                  int indices[], MPI_Status statuses[], int blocking);
int tern_mpi_request_free(const char *func, MPI_Request *request);
int tern_mpi_request_get_status(const char *func, MPI_Request request, int *flag,
                                MPI_Status *status);
int tern_mpi_request_get_status_all(const char *func, int count, const MPI_Request reqs[],
                                    int *flag, MPI_Status statuses[]);
int tern_mpi_request_get_status_any(const char *func, int count, const MPI_Request reqs[],
                                    int *index, int *flag, MPI_Status *status);
int tern_mpi_request_get_status_some(const char *func, int incount, const MPI_Request reqs[],
                                     int *outcount, int indices[], MPI_Status statuses[]);
int tern_mpi_cancel(const char *func, MPI_Request *request);
int tern_mpi_test_cancelled(const char *func, const MPI_Status *status, int *flag);
int tern_mpi_start_request(const char *func, MPI_Request *request);
int tern_mpi_startall(const char *func, int count, MPI_Request reqs[]);
int tern_mpi_status_set_cancelled(MPI_Status *status, int flag);
/* MPI_Status_get_error/source/tag (field: a member of status) and the
 * set forms: the public fields, read and written as they are. */
int tern_mpi_status_get_field(const MPI_Status *status, const int *field, int *value);
int tern_mpi_status_set_field(int *field, int value);

/* Raises the error of the first bad argument of a send or receive, in the
 * order of the checks. */
__attribute__((noinline, cold)) int tern_p2p_arg_error(const char *func, const void *buf,
                                                       MPI_Count count, MPI_Datatype dt, int peer,
                                                       int tag, MPI_Comm comm, int is_send);

/* The argument checks of a send or receive: the common case (every
 * argument valid) is one pass over a single decode of the communicator and
 * datatype handles; tern_p2p_arg_error names the bad argument otherwise. On
 * success *c_p is the communicator and *d describes dt. */
static inline int tern_check_p2p(const char *func, const void *buf, MPI_Count count,
                                 MPI_Datatype dt, int peer, int tag, MPI_Comm comm, int is_send,
                                 tern_comm_t **c_p, tern_dt_desc_t *d)
{
    tern_comm_t *c = *c_p = tern_comm_lookup(comm);
    if (__builtin_expect(c != NULL && tern_datatype_describe(dt, d) && count >= 0, 1)) {
        /* A NULL buffer is an error only for predefined types of nonzero
         * extent (derived ones may address absolute locations). */
        int buf_ok = buf || count == 0 || !d->predefined || d->extent == 0;
        int peer_ok = (unsigned)peer < (unsigned)tern_comm_peer_size(c) || peer == MPI_PROC_NULL ||
                      (!is_send && peer == MPI_ANY_SOURCE);
        int tag_ok = (unsigned)tag <= TERN_TAG_UB || (!is_send && tag == MPI_ANY_TAG);
        if (__builtin_expect(buf_ok && peer_ok && tag_ok, 1))
            return MPI_SUCCESS;
    }
    return tern_p2p_arg_error(func, buf, count, dt, peer, tag, comm, is_send);
}

/* MPI_Sendrecv: the receive's arguments, then the send's (one decode of
 * the communicator serves both). */
static inline int tern_check_sendrecv(const char *func, const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                                      MPI_Count recvcount, MPI_Datatype recvtype, int source,
                                      int recvtag, MPI_Comm comm, tern_comm_t **c_p,
                                      tern_dt_desc_t *sd, tern_dt_desc_t *rd)
{
    int err = tern_check_p2p(func, recvbuf, recvcount, recvtype, source, recvtag, comm, 0, c_p, rd);
    return err ? err : tern_check_p2p(func, sendbuf, sendcount, sendtype, dest, sendtag, comm, 1,
                                      c_p, sd);
}
/* MPI_Sendrecv_replace: the send's arguments, the source and the receive tag. */
int tern_check_sendrecv_replace(const char *func, void *buf, MPI_Count count, MPI_Datatype dt,
                                int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                                tern_comm_t **c_p, tern_dt_desc_t *d);
/* Probes: source and tag on c. */
int tern_check_source_tag(const char *func, tern_comm_t *c, int source, int tag);
/* count x dt at buf (matched receives: no communicator). */
int tern_check_data(const char *func, int err_obj, const void *buf, MPI_Count count,
                    MPI_Datatype dt);
/* MPI_Buffer_attach's size (and MPI_Buffer_attach_c's). */
static inline int tern_check_buffer_size(const char *func, MPI_Count size)
{
    if (__builtin_expect(size >= 0, 1))
        return MPI_SUCCESS;
    return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "size=%lld is negative",
                          (long long)size);
}

#endif
