/* Point-to-point entry points: argument checks, then the core protocols. */
#include "mpi/mpi_errors.h"
#include "mpi/mpi_p2p.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/bsend.h"
#include "core/pt2pt/message.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/progress.h"
#include "core/pt2pt/start.h"
#include "core/pt2pt/peer_failure.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

tern_req_t *tern_mpi_null_proc_request(tern_req_kind_t kind, MPI_Comm comm)
{
    tern_req_t *req = tern_req_alloc(kind);
    if (!req)
        return NULL;
    req->comm = comm;
    req->peer = MPI_PROC_NULL;
    req->status_source = MPI_PROC_NULL;
    req->status_tag = MPI_ANY_TAG;
    req->complete = 1;
    return req;
}

int tern_mpi_request_error(const char *func, tern_req_t *req)
{
    if (req->error == TERN_ERR_TRUNCATE)
        return tern_mpi_error(req->comm, MPI_ERR_TRUNCATE, func,
                              "message truncated: a message of more than %zu bytes arrived from "
                              "rank %d with tag %d, the receive buffer holds %zu bytes",
                              req->status_bytes, req->status_source, req->status_tag, req->bytes);
    /* A send or receive with a failed peer: name it and what failed. */
    const char *failure = req->kind == TERN_REQ_SEND || req->kind == TERN_REQ_RECV
                              ? tern_peer_failure(req->peer_world)
                              : NULL;
    if (failure)
        return tern_mpi_error(req->comm, tern_mpi_class_of(req->error), func,
                              "%s rank %d (world rank %d) failed: %s: %s",
                              req->kind == TERN_REQ_SEND ? "destination" : "source",
                              req->kind == TERN_REQ_SEND ? req->peer : req->status_source,
                              req->peer_world, tern_status_string(req->error), failure);
    return tern_mpi_status_error(req->comm, req->error, func, "request failed");
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

int tern_mpi_wait_one(const char *func, tern_req_t *req, MPI_Status *status)
{
    if (!req->complete)
        tern_progress_wait(&req->complete);
    if (status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = MPI_SUCCESS;
    tern_req_status(req, status);
    if (req->error != TERN_OK)
        return tern_mpi_request_error(func, req);
    return MPI_SUCCESS;
}

/* Bytes per element for the NULL-buffer check: derived types may address
 * absolute locations from MPI_BOTTOM (NULL), so only predefined ones count. */
static size_t data_size(MPI_Datatype dt, size_t extent)
{
    return tern_datatype_is_predefined(dt) ? extent : 0;
}

/* Raises the error of the first bad argument of a send or receive, in the
 * order of the checks. Kept out of line: check_p2p only calls it when its
 * one-pass test found something wrong. */
static __attribute__((noinline, cold)) int p2p_arg_error(const char *func, const void *buf,
                                                         int count, MPI_Datatype dt, int peer,
                                                         int tag, MPI_Comm comm, int is_send)
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

/* The argument checks of a send or receive: the common case (every
 * argument valid) is one pass over a single decode of the communicator and
 * datatype handles; p2p_arg_error names the bad argument otherwise. On
 * success *c_p is the communicator and *d describes dt. */
static inline int check_p2p(const char *func, const void *buf, int count, MPI_Datatype dt,
                            int peer, int tag, MPI_Comm comm, int is_send, tern_comm_t **c_p,
                            tern_dt_desc_t *d)
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
    return p2p_arg_error(func, buf, count, dt, peer, tag, comm, is_send);
}

/* Fills a send request from the user's arguments. */
static void fill_send(tern_req_t *req, tern_comm_t *c, const void *buf, int count, MPI_Datatype dt,
                      const tern_dt_desc_t *d, int dest, int tag, int mode)
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

static void fill_recv(tern_req_t *req, tern_comm_t *c, void *buf, int count, MPI_Datatype dt,
                      const tern_dt_desc_t *d, int source, int tag)
{
    req->comm = c->handle;
    req->context_id = c->context_id;
    req->peer = source;
    req->tag = tag;
    tern_p2p_set_data_desc(req, buf, count, dt, d);
}

/* The error of a request that could not start, in the words of func. */
static __attribute__((noinline, cold)) int start_error(const char *func, const tern_req_t *req,
                                                       tern_status_t st)
{
    if (req->start_fn)
        return tern_mpi_status_error(req->comm, st, func, "cannot start the operation");
    if (st == TERN_ERR_NO_ROOM)
        return tern_mpi_error(req->comm, MPI_ERR_BUFFER, func,
                              tern_bsend_attached()
                                  ? "the attached buffer has no room for %zu more bytes "
                                    "(MPI_Buffer_attach a larger one; add MPI_BSEND_OVERHEAD "
                                    "per message)"
                                  : "no buffer attached for %zu bytes (call MPI_Buffer_attach)",
                              req->bytes);
    if (st == TERN_ERR_NOMEM && req->mode == TERN_SEND_BUFFERED)
        return tern_mpi_error(req->comm, MPI_ERR_NO_MEM, func, "out of memory");
    return tern_mpi_status_error(req->comm, st, func, "send failed");
}

int tern_mpi_start(const char *func, tern_req_t *req)
{
    tern_status_t st = tern_req_start(req);
    if (__builtin_expect(st == TERN_OK, 1))
        return MPI_SUCCESS;
    return start_error(func, req, st);
}

static int send_any(const char *func, const void *buf, int count, MPI_Datatype dt, int dest,
                    int tag, MPI_Comm comm, int mode, MPI_Request *request, int persistent)
{
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    tern_dt_desc_t d;
    int err = check_p2p(func, buf, count, dt, dest, tag, comm, 1, &c, &d);
    if (err)
        return err;
    int blocking = request == NULL;
    /* The common case, blocking or not: contiguous data that can go eager
     * now is pushed into the transport at once. A nonblocking send then
     * gets a request that is already complete (nothing else of it is ever
     * read: a send's status holds only the error, and sends are not
     * cancelled). */
    if (mode == TERN_SEND_STANDARD && !persistent && dest != MPI_PROC_NULL && d.contig &&
        tern_p2p_send_eager_now(c->rank, c->context_id, (const char *)buf + d.true_lb,
                                (size_t)d.size * (size_t)count, tern_comm_world_rank(c, dest),
                                tag)) {
        if (blocking)
            return MPI_SUCCESS;
        tern_req_t *req = tern_req_alloc(TERN_REQ_SEND);
        if (!req)
            return tern_mpi_error(comm, MPI_ERR_NO_MEM, func, "out of memory");
        req->comm = c->handle;
        req->complete = 1;
        return tern_mpi_request_handle(func, comm, req, request);
    }
    tern_req_t *req = tern_req_alloc(TERN_REQ_SEND);
    if (!req)
        return tern_mpi_error(comm, MPI_ERR_NO_MEM, func, "out of memory");
    fill_send(req, c, buf, count, dt, &d, dest, tag, mode);
    if (persistent) {
        req->persistent = 1;
        req->complete = 1;
        return tern_mpi_request_handle(func, comm, req, request);
    }
    err = tern_mpi_start(func, req);
    if (err) {
        tern_req_release(req);
        return err;
    }
    if (blocking) {
        err = tern_mpi_wait_one(func, req, MPI_STATUS_IGNORE);
        tern_req_release(req);
        return err;
    }
    return tern_mpi_request_handle(func, comm, req, request);
}

/* MPI_Recv: a message already here that fits is copied at once;
 * otherwise the request lives on this stack frame, since nothing can refer
 * to it once the call returns. (Inlined: a call with these nine arguments
 * cost 36 instructions.) */
static inline int recv_blocking(const char *func, tern_comm_t *c, void *buf, int count,
                                MPI_Datatype dt, const tern_dt_desc_t *d, int source, int tag,
                                MPI_Status *status)
{
    tern_recv_done_t done;
    if (d->contig && source != MPI_PROC_NULL &&
        tern_p2p_recv_fitting_now(c->context_id, (char *)buf + d->true_lb,
                                  (size_t)d->size * (size_t)count, source, tag, &done)) {
        tern_status_set(status, done.source, done.tag, MPI_SUCCESS, done.bytes, 0);
        return MPI_SUCCESS;
    }
    tern_req_t req;
    tern_req_init(&req, TERN_REQ_RECV);
    fill_recv(&req, c, buf, count, dt, d, source, tag);
    /* A fresh request needs none of tern_mpi_start's resets. */
    if (source != MPI_PROC_NULL)
        tern_p2p_start_recv(&req);
    else
        tern_mpi_start(func, &req);
    int err = tern_mpi_wait_one(func, &req, status);
    tern_req_fini(&req);
    return err;
}

static int recv_any(const char *func, void *buf, int count, MPI_Datatype dt, int source, int tag,
                    MPI_Comm comm, MPI_Request *request, MPI_Status *status, int persistent)
{
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    tern_dt_desc_t d;
    int err = check_p2p(func, buf, count, dt, source, tag, comm, 0, &c, &d);
    if (err)
        return err;
    if (!request)
        return recv_blocking(func, c, buf, count, dt, &d, source, tag, status);
    tern_req_t *req = tern_req_alloc(TERN_REQ_RECV);
    if (!req)
        return tern_mpi_error(comm, MPI_ERR_NO_MEM, func, "out of memory");
    fill_recv(req, c, buf, count, dt, &d, source, tag);
    if (persistent) {
        req->persistent = 1;
        req->complete = 1;
        return tern_mpi_request_handle(func, comm, req, request);
    }
    /* A fresh request needs none of tern_mpi_start's resets. */
    if (source != MPI_PROC_NULL)
        tern_p2p_start_recv(req);
    else
        tern_mpi_start(func, req);
    return tern_mpi_request_handle(func, comm, req, request);
}

#define REQ_ARG_CHECK(func, request, comm)                                     \
    do {                                                                       \
        if (!(request))                                                        \
            return tern_mpi_error(comm, MPI_ERR_ARG, func, "request is NULL"); \
    } while (0)

TERN_PMPI_ALIAS(Send)
int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_any("MPI_Send", buf, count, dt, dest, tag, comm, TERN_SEND_STANDARD, NULL, 0);
}

TERN_PMPI_ALIAS(Ssend)
int PMPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_any("MPI_Ssend", buf, count, dt, dest, tag, comm, TERN_SEND_SYNC, NULL, 0);
}

TERN_PMPI_ALIAS(Rsend)
int PMPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_any("MPI_Rsend", buf, count, dt, dest, tag, comm, TERN_SEND_READY, NULL, 0);
}

TERN_PMPI_ALIAS(Bsend)
int PMPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    return send_any("MPI_Bsend", buf, count, dt, dest, tag, comm, TERN_SEND_BUFFERED, NULL, 0);
}

#define ISEND_FN(Name, name_str, mode, persistent)                                               \
    TERN_PMPI_ALIAS(Name)                                                                        \
    int PMPI_##Name(const void *buf, int count, MPI_Datatype dt, int dest, int tag,              \
                    MPI_Comm comm, MPI_Request *request)                                         \
    {                                                                                            \
        REQ_ARG_CHECK(name_str, request, comm);                                                  \
        return send_any(name_str, buf, count, dt, dest, tag, comm, mode, request, persistent);   \
    }

ISEND_FN(Isend, "MPI_Isend", TERN_SEND_STANDARD, 0)
ISEND_FN(Issend, "MPI_Issend", TERN_SEND_SYNC, 0)
ISEND_FN(Irsend, "MPI_Irsend", TERN_SEND_READY, 0)
ISEND_FN(Ibsend, "MPI_Ibsend", TERN_SEND_BUFFERED, 0)
ISEND_FN(Send_init, "MPI_Send_init", TERN_SEND_STANDARD, 1)
ISEND_FN(Ssend_init, "MPI_Ssend_init", TERN_SEND_SYNC, 1)
ISEND_FN(Rsend_init, "MPI_Rsend_init", TERN_SEND_READY, 1)
ISEND_FN(Bsend_init, "MPI_Bsend_init", TERN_SEND_BUFFERED, 1)

TERN_PMPI_ALIAS(Recv)
int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    return recv_any("MPI_Recv", buf, count, dt, source, tag, comm, NULL, status, 0);
}

TERN_PMPI_ALIAS(Irecv)
int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    REQ_ARG_CHECK("MPI_Irecv", request, comm);
    return recv_any("MPI_Irecv", buf, count, dt, source, tag, comm, request, MPI_STATUS_IGNORE, 0);
}

TERN_PMPI_ALIAS(Recv_init)
int PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    REQ_ARG_CHECK("MPI_Recv_init", request, comm);
    return recv_any("MPI_Recv_init", buf, count, dt, source, tag, comm, request,
                    MPI_STATUS_IGNORE, 1);
}

TERN_PMPI_ALIAS(Sendrecv)
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    static const char *const func = "MPI_Sendrecv";
    TERN_CHECK_INIT(func);
    MPI_Request rreq, sreq;
    int err = recv_any(func, recvbuf, recvcount, recvtype, source, recvtag, comm, &rreq,
                       MPI_STATUS_IGNORE, 0);
    if (err)
        return err;
    err = send_any(func, sendbuf, sendcount, sendtype, dest, sendtag, comm, TERN_SEND_STANDARD,
                   &sreq, 0);
    if (err) {
        PMPI_Cancel(&rreq);
        PMPI_Request_free(&rreq);
        return err;
    }
    int serr = PMPI_Wait(&sreq, MPI_STATUS_IGNORE);
    err = PMPI_Wait(&rreq, status);
    return err ? err : serr;
}

TERN_PMPI_ALIAS(Sendrecv_replace)
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Status *status)
{
    static const char *const func = "MPI_Sendrecv_replace";
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    tern_dt_desc_t d;
    int err = check_p2p(func, buf, count, dt, dest, sendtag, comm, 1, &c, &d);
    if (err)
        return err;
    size_t bytes = (size_t)d.size * (size_t)count;
    /* Receive the packed form into a copy, then unpack it over buf. */
    if (bytes > INT_MAX)
        return tern_mpi_error(comm, MPI_ERR_COUNT, func, "%zu bytes exceed the int count of "
                              "MPI_BYTE used for the copy", bytes);
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return tern_mpi_error(comm, MPI_ERR_NO_MEM, func, "cannot allocate %zu bytes", bytes);
    MPI_Status st;
    err = PMPI_Sendrecv(buf, count, dt, dest, sendtag, tmp, (int)bytes, MPI_BYTE, source,
                        recvtag, comm, &st);
    if (err == MPI_SUCCESS)
        tern_datatype_unpack(tmp, tern_status_bytes(&st), buf, (size_t)count, dt);
    free(tmp);
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return err;
}

/* ------------------------------------------------------------------------ */
/* Probes and matched probes. */

static void probe_status(const tern_unexp_t *u, MPI_Status *status)
{
    tern_status_set(status, u->msg.src, u->msg.tag, MPI_SUCCESS, u->msg.size, 0);
}

static int probe_any(const char *func, int source, int tag, MPI_Comm comm, int blocking,
                     int *flag, MPI_Message *message, MPI_Status *status)
{
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    int err;
    if ((err = tern_check_comm(func, comm, &c)) || (err = tern_check_source(func, c, source)) ||
        (err = tern_check_recv_tag(func, comm, tag)))
        return err;
    if (!blocking && !flag)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "flag is NULL");
    if (source == MPI_PROC_NULL) {
        tern_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        if (flag)
            *flag = 1;
        if (message)
            *message = MPI_MESSAGE_NO_PROC;
        return MPI_SUCCESS;
    }
    unsigned idle = 0;
    for (;;) {
        int events = tern_progress();
        tern_unexp_t *u = tern_match_find_unexpected(c->context_id, source, tag, message != NULL);
        if (u) {
            probe_status(u, status);
            if (flag)
                *flag = 1;
            /* Out of memory: as before, the message is dropped and the
             * caller sees MPI_MESSAGE_NULL. */
            if (message && tern_message_new(u, message) != TERN_OK)
                *message = MPI_MESSAGE_NULL;
            return MPI_SUCCESS;
        }
        if (!blocking) {
            *flag = 0;
            if (message)
                *message = MPI_MESSAGE_NULL;
            return MPI_SUCCESS;
        }
        if (!events)
            tern_progress_idle(&idle);
    }
}

TERN_PMPI_ALIAS(Probe)
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return probe_any("MPI_Probe", source, tag, comm, 1, NULL, NULL, status);
}

TERN_PMPI_ALIAS(Iprobe)
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe_any("MPI_Iprobe", source, tag, comm, 0, flag, NULL, status);
}

TERN_PMPI_ALIAS(Mprobe)
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (!message)
        return tern_mpi_error(comm, MPI_ERR_ARG, "MPI_Mprobe", "message is NULL");
    return probe_any("MPI_Mprobe", source, tag, comm, 1, NULL, message, status);
}

TERN_PMPI_ALIAS(Improbe)
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    if (!message)
        return tern_mpi_error(comm, MPI_ERR_ARG, "MPI_Improbe", "message is NULL");
    return probe_any("MPI_Improbe", source, tag, comm, 0, flag, message, status);
}

static int mrecv_any(const char *func, void *buf, int count, MPI_Datatype dt, MPI_Message *message,
                     MPI_Request *request, MPI_Status *status)
{
    TERN_CHECK_INIT(func);
    size_t size;
    int err;
    if (!message)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "message is NULL");
    if ((err = tern_check_count(func, MPI_COMM_NULL, count)) ||
        (err = tern_check_datatype(func, MPI_COMM_NULL, dt, &size)) ||
        (err = tern_check_buffer(func, MPI_COMM_NULL, buf, count, data_size(dt, size))))
        return err;
    tern_req_t *req;
    if (*message == MPI_MESSAGE_NO_PROC) {
        req = tern_mpi_null_proc_request(TERN_REQ_RECV, MPI_COMM_WORLD);
    } else {
        tern_unexp_t *u;
        if (tern_message_take(*message, &u) != TERN_OK)
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_REQUEST, func,
                                  "message handle 0x%x is not a matched message",
                                  (unsigned)*message);
        req = tern_req_alloc(TERN_REQ_RECV);
        if (!req)
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, func, "out of memory");
        req->comm = MPI_COMM_WORLD;
        req->context_id = u->msg.context_id;
        req->peer = u->msg.src;
        req->tag = u->msg.tag;
        tern_p2p_set_data(req, buf, count, dt);
        tern_p2p_recv_unexpected(req, u);
    }
    *message = MPI_MESSAGE_NULL;
    if (request) {
        return tern_mpi_request_handle(func, req->comm, req, request);
    }
    err = tern_mpi_wait_one(func, req, status);
    tern_req_release(req);
    return err;
}

TERN_PMPI_ALIAS(Mrecv)
int PMPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
    return mrecv_any("MPI_Mrecv", buf, count, dt, message, NULL, status);
}

TERN_PMPI_ALIAS(Imrecv)
int PMPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Request *request)
{
    if (!request)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Imrecv", "request is NULL");
    return mrecv_any("MPI_Imrecv", buf, count, dt, message, request, MPI_STATUS_IGNORE);
}

/* ------------------------------------------------------------------------ */

TERN_PMPI_ALIAS(Buffer_attach)
int PMPI_Buffer_attach(void *buffer, int size)
{
    static const char *const func = "MPI_Buffer_attach";
    TERN_CHECK_INIT(func);
    if (size < 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "size=%d is negative", size);
    if (!buffer && size > 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_BUFFER, func, "buffer is NULL");
    if (tern_bsend_attach(buffer, (size_t)size) != TERN_OK)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_BUFFER, func,
                              "a buffer is already attached (detach it first)");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Buffer_detach)
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    static const char *const func = "MPI_Buffer_detach";
    TERN_CHECK_INIT(func);
    if (!buffer_addr || !size)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "%s is NULL",
                              !size ? "size" : "buffer_addr");
    void *buf;
    size_t sz;
    if (tern_bsend_detach(&buf, &sz) != TERN_OK) {
        *(void **)buffer_addr = NULL;
        *size = 0;
        return MPI_SUCCESS;
    }
    *(void **)buffer_addr = buf;
    *size = (int)sz;
    return MPI_SUCCESS;
}
