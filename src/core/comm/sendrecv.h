/* MPI's point-to-point calls on a communicator (sendrecv.c): sends and
 * receives in their blocking, nonblocking and persistent forms, sendrecv,
 * probes, matched receives and the attached buffer, on arguments the MPI
 * layer has checked (d describes the datatype). req_p NULL is the blocking
 * form; otherwise *req_p is the new request (persistent: inactive). Errors
 * carry a detail in the words of the call (tern_status_detail). */
#ifndef TERN_CORE_COMM_SENDRECV_H
#define TERN_CORE_COMM_SENDRECV_H

#include "core/comm/comm.h"
#include "base/profile.h"
#include "core/datatype/datatype.h"
#include "core/datatype/dtype_nums.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/request.h"

/* The paths off the fast ones below (out of line). */
tern_status_t tern_send_general(tern_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype dt,
                                const tern_dt_desc_t *d, int dest, int tag, int mode,
                                tern_req_t **req_p, int persistent);
/* TERN_ERR_NOMEM with its words (no request could be allocated). */
tern_status_t tern_req_alloc_failed(void);
tern_status_t tern_recv_general(tern_comm_t *c, void *buf, MPI_Count count, MPI_Datatype dt,
                                const tern_dt_desc_t *d, int source, int tag, MPI_Status *status,
                                tern_req_t **req_p, int persistent);

/* The fast paths are inline, so that they run in the entry point's frame
 * as they did when the MPI layer held them (an extra call with ten
 * arguments cost ~20 instructions per message). */

/* The common send, blocking or not: contiguous data that can go eager now
 * is pushed into the transport at once. A nonblocking send then gets a
 * request that is already complete (a send's status holds only the error;
 * MPI_Cancel reads its peer and match number). */
static inline tern_status_t tern_send_call(tern_comm_t *c, const void *buf, MPI_Count count,
                                           MPI_Datatype dt, const tern_dt_desc_t *d, int dest,
                                           int tag, int mode, tern_req_t **req_p, int persistent)
{
    /* The profile of the job and a tool's counts of the communicator
     * count the program's sends once, here (a persistent one at each
     * start: tern_mpi_start); one test of the watch word (base/pvars.h). */
    if (__builtin_expect(tern_watching(), 0) && !persistent && dest != MPI_PROC_NULL)
        tern_watched_send(c->context_id, tern_comm_world_rank(c, dest),
                          (uint64_t)d->size * (uint64_t)count);
    if (mode == TERN_SEND_STANDARD && !persistent && dest != MPI_PROC_NULL && d->contig &&
        !c->revoked &&
        tern_p2p_send_eager_now(c->rank, c->context_id, (const char *)buf + d->true_lb,
                                (size_t)d->size * (size_t)count, tern_comm_world_rank(c, dest),
                                tag))
    {
        if (!req_p)
            return TERN_OK;
        tern_req_t *req = tern_req_alloc(TERN_REQ_SEND);
        if (!req)
            return tern_req_alloc_failed();
        req->comm = c->handle;
        req->complete = 1;
        /* What MPI_Cancel needs to name the message (send_cancel.h). */
        req->peer = dest;
        req->peer_world = tern_comm_world_rank(c, dest);
        req->match_seq = tern_p2p_last_match_seq(req->peer_world);
        req->has_seq = 1;
        *req_p = req;
        return TERN_OK;
    }
    return tern_send_general(c, buf, count, dt, d, dest, tag, mode, req_p, persistent);
}

/* MPI_Recv of a message already here that fits: copied at once, no
 * request. */
static inline tern_status_t tern_recv_call(tern_comm_t *c, void *buf, MPI_Count count,
                                           MPI_Datatype dt, const tern_dt_desc_t *d, int source,
                                           int tag, MPI_Status *status, tern_req_t **req_p,
                                           int persistent)
{
    tern_recv_done_t done;
    if (!req_p && d->contig && source != MPI_PROC_NULL && !c->revoked &&
        tern_p2p_recv_fitting_now(c->context_id, (char *)buf + d->true_lb,
                                  (size_t)d->size * (size_t)count, source, tag, &done)) {
        tern_status_set(status, done.source, done.tag, MPI_SUCCESS, done.bytes, 0);
        return TERN_OK;
    }
    return tern_recv_general(c, buf, count, dt, d, source, tag, status, req_p, persistent);
}
tern_status_t tern_sendrecv_call(tern_comm_t *c, const void *sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, const tern_dt_desc_t *sd, int dest,
                                 int sendtag, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype recvtype, const tern_dt_desc_t *rd, int source,
                                 int recvtag, MPI_Status *status);
tern_status_t tern_sendrecv_replace_call(tern_comm_t *c, void *buf, MPI_Count count,
                                         MPI_Datatype dt, const tern_dt_desc_t *d, int dest,
                                         int sendtag, int source, int recvtag, MPI_Status *status);
/* Probes: blocking waits for a match; otherwise *flag says whether there
 * was one. message (matched probes) takes the message off the queue. */
tern_status_t tern_probe_call(tern_comm_t *c, int source, int tag, int blocking, int *flag,
                              MPI_Message *message, MPI_Status *status);
tern_status_t tern_mrecv_call(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message,
                              MPI_Status *status, tern_req_t **req_p);
/* Starts req (MPI_Start and the general send path); errors in the words
 * of the call (the attached buffer's room...). */
tern_status_t tern_start_call(tern_req_t *req);
/* Waits for req, fills status and returns its error, with the words of a
 * truncation (sizes, source, tag). Does not release req. */
tern_status_t tern_req_wait_result(tern_req_t *req, MPI_Status *status);
/* A completed request's error, with those words. */
tern_status_t tern_req_result(const tern_req_t *req);

#endif
