/* Point-to-point entry points: argument checks, then the core protocols. */
#include "mpi/mpi_checks.h"
#include "mpi/mpi_p2p.h"
#include "core/comm/sendrecv.h"
#include "core/datatype/datatype.h"
#include "base/profile.h"

int tern_mpi_request_error(const char *func, tern_req_t *req)
{
    return tern_mpi_raise(req->comm, func, tern_req_result(req));
}

int tern_mpi_request_no_handle(const char *func, MPI_Comm comm, tern_req_t *req)
{
    if (req->complete)
        tern_req_release(req);
    else
        req->freed = 1;
    return tern_mpi_error(comm, MPI_ERR_NO_MEM, func,
                          "out of memory growing the request table: the operation has no handle");
}

/* Bytes per element for the NULL-buffer check: derived types may address
 * absolute locations from MPI_BOTTOM (NULL), so only predefined ones count. */
static size_t data_size(MPI_Datatype dt, size_t extent)
{
    return tern_datatype_is_predefined(dt) ? extent : 0;
}

/* Raises the error of the first bad argument of a send or receive, in the
 * order of the checks (tern_check_p2p calls it when its one-pass test found
 * something wrong). */
int tern_p2p_arg_error(const char *func, const void *buf, MPI_Count count, MPI_Datatype dt,
                       int peer, int tag, MPI_Comm comm, int is_send)
{
    tern_comm_t *c;
    size_t size;
    int err;
    if ((err = tern_check_comm(func, comm, &c)) || (err = tern_check_count(func, comm, count)) ||
        (err = tern_check_datatype(func, comm, dt, &size)) ||
        (err = tern_check_buffer(func, comm, buf, count, data_size(dt, size))) ||
        (err = is_send ? tern_check_dest(func, c, peer) : tern_check_source(func, c, peer)) ||
        (err = is_send ? tern_check_send_tag(func, comm, tag) : tern_check_recv_tag(func, comm, tag)))
        return err;
    return tern_mpi_error(comm, MPI_ERR_INTERN, func, "internal: argument check disagreement");
}

int tern_mpi_start(const char *func, tern_req_t *req)
{
    /* A persistent send counts in the profile of the job and the
     * communicator's counts at each start (partitioned ones: the
     * profile only, partitioned.c). */
    if (req->kind == TERN_REQ_SEND)
        tern_watch_send(req->context_id, req->peer_world, req->bytes);
    return tern_mpi_result(req->comm, func, tern_start_call(req));
}

int tern_check_sendrecv_replace(const char *func, void *buf, MPI_Count count, MPI_Datatype dt,
                                int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                                tern_comm_t **c_p, tern_dt_desc_t *d)
{
    int err = tern_check_p2p(func, buf, count, dt, dest, sendtag, comm, 1, c_p, d);
    if (!err)
        err = tern_check_source(func, *c_p, source);
    if (!err)
        err = tern_check_recv_tag(func, comm, recvtag);
    return err;
}

int tern_check_source_tag(const char *func, tern_comm_t *c, int source, int tag)
{
    int err = tern_check_source(func, c, source);
    return err ? err : tern_check_recv_tag(func, c->handle, tag);
}

int tern_check_data(const char *func, int err_obj, const void *buf, MPI_Count count,
                    MPI_Datatype dt)
{
    size_t size;
    int err;
    if ((err = tern_check_count(func, err_obj, count)) ||
        (err = tern_check_datatype(func, err_obj, dt, &size)))
        return err;
    return tern_check_buffer(func, err_obj, buf, count, data_size(dt, size));
}
