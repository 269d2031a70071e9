/* MPI's point-to-point calls on a communicator (sendrecv.h): the paths
 * that used to live in the MPI layer, with their fast cases (an eager send
 * written into the transport at once, a receive of a message already
 * here copied at once, a blocking receive's request on the stack). */
#include "core/comm/sendrecv.h"
#include "core/comm/ulfm.h"
#include "core/pt2pt/bsend.h"
#include "core/pt2pt/message.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/progress.h"
#include "core/pt2pt/start.h"

#include <stdlib.h>

tern_status_t tern_req_wait_result(tern_req_t *req, MPI_Status *status)
{
    if (!req->complete) {
        if (__builtin_expect(req->kind == TERN_REQ_RECV && req->peer == MPI_ANY_SOURCE, 0)) {
            /* ULFM: fails while a member's failure is not acknowledged. */
            tern_status_t st = tern_ulfm_wait_anysource(req, 1);
            if (st != TERN_OK) {
                tern_req_status(req, status);
                return st;
            }
        } else {
            tern_progress_wait(&req->complete);
        }
    }
    /* A single completion leaves the status's MPI_ERROR alone (MPI 3.2.5). */
    tern_req_status(req, status);
    if (__builtin_expect(req->error == TERN_OK, 1))
        return TERN_OK;
    return tern_req_result(req);
}

tern_status_t tern_req_result(const tern_req_t *req)
{
    if (req->error == TERN_OK)
        return TERN_OK;
    /* Words its owner kept (a collective's schedule: sizes that differ
     * between ranks); the status fields below are a point-to-point's. */
    if (req->kind == TERN_REQ_GENERIC && req->error_text)
        return tern_status_detail(req->error, "%s", req->error_text);
    if (req->error == TERN_ERR_TRUNCATE)
        return tern_status_detail(TERN_ERR_TRUNCATE,
                                  "message truncated: a message of more than %zu bytes arrived "
                                  "from rank %d with tag %d, the receive buffer holds %zu bytes",
                                  req->status_bytes, req->status_source, req->status_tag,
                                  req->bytes);
    /* A send or receive with a failed peer: name it and what failed. */
    const char *failure = req->kind == TERN_REQ_SEND || req->kind == TERN_REQ_RECV
                              ? tern_peer_failure(req->peer_world)
                              : NULL;
    if (failure)
        return tern_status_detail(req->error, "%s rank %d (world rank %d) failed: %s: %s",
                                  req->kind == TERN_REQ_SEND ? "destination" : "source",
                                  req->kind == TERN_REQ_SEND ? req->peer : req->status_source,
                                  req->peer_world, tern_status_string(req->error), failure);
    return tern_status_detail(req->error, "request failed: %s", tern_status_string(req->error));
}

/* The words of a request that could not start. */
static __attribute__((noinline, cold)) tern_status_t start_error(const tern_req_t *req,
                                                                 tern_status_t st)
{
    if (req->start_fn)
        return tern_status_detail(st, "cannot start the operation: %s", tern_status_string(st));
    if (st == TERN_ERR_NO_ROOM)
        return tern_status_detail(st,
                                  tern_bsend_pool_attached(tern_bsend_pool_for(req->context_id))
                                      ? "the attached buffer has no room for %zu more bytes "
                                        "(MPI_Buffer_attach a larger one; add MPI_BSEND_OVERHEAD "
                                        "per message)"
                                      : "no buffer attached for %zu bytes (call MPI_Buffer_attach)",
                                  req->bytes);
    if (st == TERN_ERR_NOMEM && req->mode == TERN_SEND_BUFFERED)
        return tern_status_detail(st, "out of memory");
    return tern_status_detail(st, "send failed: %s", tern_status_string(st));
}

tern_status_t tern_start_call(tern_req_t *req)
{
    tern_status_t st = tern_req_start(req);
    if (__builtin_expect(st == TERN_OK, 1))
        return TERN_OK;
    return start_error(req, st);
}

tern_status_t tern_req_alloc_failed(void)
{
    return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a request");
}

static tern_req_t *alloc_req(tern_req_kind_t kind)
{
    tern_req_t *req = tern_req_alloc(kind);
    if (!req)
        tern_req_alloc_failed();
    return req;
}

/* Fills a send request from the user's arguments. */
static void fill_send(tern_req_t *req, tern_comm_t *c, const void *buf, MPI_Count count,
                      MPI_Datatype dt, const tern_dt_desc_t *d, int dest, int tag, int mode)
{
    req->comm = c->handle;
    req->context_id = c->context_id;
    req->peer = dest;
    req->peer_world = dest == MPI_PROC_NULL ? -1 : tern_comm_world_rank(c, dest);
    req->comm_rank = c->rank;
    req->tag = tag;
    tern_p2p_set_data_desc(req, buf, count, dt, d);
    req->mode = (uint8_t)mode;
}

static void fill_recv(tern_req_t *req, tern_comm_t *c, void *buf, MPI_Count count, MPI_Datatype dt,
                      const tern_dt_desc_t *d, int source, int tag)
{
    req->comm = c->handle;
    req->context_id = c->context_id;
    req->peer = source;
    req->tag = tag;
    tern_p2p_set_data_desc(req, buf, count, dt, d);
}

tern_status_t tern_send_general(tern_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype dt,
                                const tern_dt_desc_t *d, int dest, int tag, int mode,
                                tern_req_t **req_p, int persistent)
{
    if (__builtin_expect(c->revoked, 0))
        return tern_ulfm_revoked_error(c);
    tern_req_t *req = alloc_req(TERN_REQ_SEND);
    if (!req)
        return TERN_ERR_NOMEM;
    fill_send(req, c, buf, count, dt, d, dest, tag, mode);
    if (persistent) {
        req->persistent = 1;
        req->complete = 1;
        *req_p = req;
        return TERN_OK;
    }
    tern_status_t st = tern_start_call(req);
    if (st != TERN_OK) {
        tern_req_release(req);
        return st;
    }
    if (!req_p) {
        st = tern_req_wait_result(req, MPI_STATUS_IGNORE);
        tern_req_release(req);
        return st;
    }
    *req_p = req;
    return TERN_OK;
}

/* MPI_Recv when no message that fits is here yet: the request lives on
 * this stack frame, since nothing can refer to it once the call returns. */
static tern_status_t recv_blocking(tern_comm_t *c, void *buf, MPI_Count count, MPI_Datatype dt,
                                   const tern_dt_desc_t *d, int source, int tag,
                                   MPI_Status *status)
{
    tern_req_t req;
    tern_req_init(&req, TERN_REQ_RECV);
    fill_recv(&req, c, buf, count, dt, d, source, tag);
    /* A fresh request needs none of tern_req_start's resets. */
    if (source != MPI_PROC_NULL)
        tern_p2p_start_recv(&req);
    else
        tern_req_start(&req);
    tern_status_t st = tern_req_wait_result(&req, status);
    tern_req_fini(&req);
    return st;
}

tern_status_t tern_recv_general(tern_comm_t *c, void *buf, MPI_Count count, MPI_Datatype dt,
                                const tern_dt_desc_t *d, int source, int tag, MPI_Status *status,
                                tern_req_t **req_p, int persistent)
{
    if (__builtin_expect(c->revoked, 0))
        return tern_ulfm_revoked_error(c);
    if (!req_p)
        return recv_blocking(c, buf, count, dt, d, source, tag, status);
    tern_req_t *req = alloc_req(TERN_REQ_RECV);
    if (!req)
        return TERN_ERR_NOMEM;
    fill_recv(req, c, buf, count, dt, d, source, tag);
    if (persistent) {
        req->persistent = 1;
        req->complete = 1;
        *req_p = req;
        return TERN_OK;
    }
    /* A fresh request needs none of tern_req_start's resets. */
    if (source != MPI_PROC_NULL)
        tern_p2p_start_recv(req);
    else
        tern_req_start(req);
    *req_p = req;
    return TERN_OK;
}

tern_status_t tern_sendrecv_call(tern_comm_t *c, const void *sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, const tern_dt_desc_t *sd, int dest,
                                 int sendtag, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype recvtype, const tern_dt_desc_t *rd, int source,
                                 int recvtag, MPI_Status *status)
{
    tern_req_t *rreq = NULL, *sreq = NULL;
    tern_status_t st =
        tern_recv_call(c, recvbuf, recvcount, recvtype, rd, source, recvtag, NULL, &rreq, 0);
    if (st != TERN_OK)
        return st;
    st = tern_send_call(c, sendbuf, sendcount, sendtype, sd, dest, sendtag, TERN_SEND_STANDARD,
                        &sreq, 0);
    if (st != TERN_OK) {
        if (!rreq->complete)
            tern_p2p_cancel_recv(rreq);
        (void)tern_req_wait_result(rreq, MPI_STATUS_IGNORE);
        tern_req_release(rreq);
        return st;
    }
    tern_status_t sst = tern_req_wait_result(sreq, MPI_STATUS_IGNORE);
    tern_req_release(sreq);
    st = tern_req_wait_result(rreq, status);
    tern_req_release(rreq);
    return st != TERN_OK ? st : sst;
}

tern_status_t tern_sendrecv_replace_call(tern_comm_t *c, void *buf, MPI_Count count,
                                         MPI_Datatype dt, const tern_dt_desc_t *d, int dest,
                                         int sendtag, int source, int recvtag, MPI_Status *status)
{
    size_t bytes = (size_t)d->size * (size_t)count;
    /* Receive the packed form into a copy, then unpack it over buf. */
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return tern_status_detail(TERN_ERR_NOMEM, "cannot allocate %zu bytes", bytes);
    tern_dt_desc_t bd;
    tern_datatype_describe(MPI_BYTE, &bd);
    MPI_Status st;
    tern_status_t rc = tern_sendrecv_call(c, buf, count, dt, d, dest, sendtag, tmp,
                                          (MPI_Count)bytes, MPI_BYTE, &bd, source, recvtag, &st);
    if (rc == TERN_OK)
        tern_datatype_unpack(tmp, tern_status_bytes(&st), buf, (size_t)count, dt);
    free(tmp);
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

tern_status_t tern_probe_call(tern_comm_t *c, int source, int tag, int blocking, int *flag,
                              MPI_Message *message, MPI_Status *status)
{
    if (__builtin_expect(c->revoked, 0))
        return tern_ulfm_revoked_error(c);
    if (source == MPI_PROC_NULL) {
        tern_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG,
                        status != MPI_STATUS_IGNORE ? status->MPI_ERROR : MPI_SUCCESS, 0, 0);
        if (flag)
            *flag = 1;
        if (message)
            *message = MPI_MESSAGE_NO_PROC;
        return TERN_OK;
    }
    unsigned idle = 0;
    for (;;) {
        int events = tern_progress();
        tern_unexp_t *u = tern_match_find_unexpected(c->context_id, source, tag, message != NULL);
        if (u) {
            tern_status_set(status, u->msg.src, u->msg.tag,
                            status != MPI_STATUS_IGNORE ? status->MPI_ERROR : MPI_SUCCESS,
                            u->msg.size, 0);
            if (flag)
                *flag = 1;
            /* Out of memory: as before, the message is dropped and the
             * caller sees MPI_MESSAGE_NULL. */
            if (message && tern_message_new(u, message) != TERN_OK)
                *message = MPI_MESSAGE_NULL;
            return TERN_OK;
        }
        if (!blocking) {
            *flag = 0;
            if (message)
                *message = MPI_MESSAGE_NULL;
            return TERN_OK;
        }
        if (!events)
            tern_progress_idle(&idle);
    }
}

tern_status_t tern_mrecv_call(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *message,
                              MPI_Status *status, tern_req_t **req_p)
{
    tern_req_t *req;
    if (*message == MPI_MESSAGE_NO_PROC) {
        req = alloc_req(TERN_REQ_RECV);
        if (!req)
            return TERN_ERR_NOMEM;
        req->comm = MPI_COMM_WORLD;
        req->peer = MPI_PROC_NULL;
        req->status_source = MPI_PROC_NULL;
        req->status_tag = MPI_ANY_TAG;
        req->complete = 1;
    } else {
        tern_unexp_t *u;
        if (tern_message_take(*message, &u) != TERN_OK)
            return tern_status_detail(TERN_ERR_REQUEST,
                                      "message handle 0x%x is not a matched message",
                                      (unsigned)*message);
        req = alloc_req(TERN_REQ_RECV);
        if (!req)
            return TERN_ERR_NOMEM;
        req->comm = MPI_COMM_WORLD;
        req->context_id = u->msg.context_id;
        req->peer = u->msg.src;
        req->tag = u->msg.tag;
        tern_p2p_set_data(req, buf, count, dt);
        tern_p2p_recv_unexpected(req, u);
    }
    *message = MPI_MESSAGE_NULL;
    if (req_p) {
        *req_p = req;
        return TERN_OK;
    }
    tern_status_t st = tern_req_wait_result(req, status);
    tern_req_release(req);
    return st;
}

