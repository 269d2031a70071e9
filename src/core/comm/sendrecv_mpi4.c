/* MPI-4's point-to-point calls on a communicator (sendrecv_mpi4.h). An
 * Isendrecv is a generic request over a send and a receive, completed by
 * a progress hook (registered while one is pending) once both are. */
#include "core/comm/sendrecv_mpi4.h"
#include "core/comm/sendrecv.h"
#include "core/pt2pt/partitioned.h"
#include "core/pt2pt/progress.h"

#include <limits.h>
#include <stdlib.h>

_Static_assert(2 * TERN_CTX_SLOTS <= 0x10000, "partitioned.h's hidden contexts need ids < 0x10000");

typedef struct isr {
    struct isr *next;
    tern_req_t *req, *send, *recv;
    void *tmp; /* Isendrecv_replace: the packed copy being sent */
} isr_t;

static isr_t *pending;

/* Status and error of the pair into req; frees the parts. */
static void isr_finish(tern_req_t *req, tern_req_t *send, tern_req_t *recv, void *tmp)
{
    req->status_source = recv->status_source;
    req->status_tag = recv->status_tag;
    req->status_bytes = recv->status_bytes;
    req->bytes = recv->bytes;
    req->cancelled = recv->cancelled;
    req->error = recv->error != TERN_OK ? recv->error : send->error;
    tern_req_release(send);
    tern_req_release(recv);
    free(tmp);
    tern_req_complete(req);
}

static int isr_progress(void)
{
    int n = 0;
    for (isr_t **l = &pending; *l;) {
        isr_t *x = *l;
        if (!x->send->complete || !x->recv->complete) {
            l = &x->next;
            continue;
        }
        *l = x->next;
        isr_finish(x->req, x->send, x->recv, x->tmp);
        free(x);
        n++;
    }
    if (!pending)
        tern_progress_unregister(isr_progress);
    return n;
}

static tern_status_t isendrecv(tern_comm_t *c, const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, const tern_dt_desc_t *sd, int dest,
                               int sendtag, void *recvbuf, MPI_Count recvcount,
                               MPI_Datatype recvtype,
                               const tern_dt_desc_t *rd, int source, int recvtag, void *tmp,
                               tern_req_t **req_p)
{
    /* First, so that nothing is left half made (the hook unregisters
     * itself when it finds nothing pending). */
    if (tern_progress_register(isr_progress) != TERN_OK) {
        free(tmp);
        return tern_status_detail(TERN_ERR_INTERNAL, "cannot register Isendrecv progress");
    }
    tern_req_t *req = tern_req_alloc(TERN_REQ_GENERIC);
    isr_t *x = req ? malloc(sizeof *x) : NULL;
    if (!x) {
        if (req)
            tern_req_release(req);
        free(tmp);
        return tern_req_alloc_failed();
    }
    req->comm = c->handle;
    tern_req_t *rreq = NULL, *sreq = NULL;
    tern_status_t st =
        tern_recv_call(c, recvbuf, recvcount, recvtype, rd, source, recvtag, NULL, &rreq, 0);
    if (st == TERN_OK)
        st = tern_send_call(c, sendbuf, sendcount, sendtype, sd, dest, sendtag,
                            TERN_SEND_STANDARD, &sreq, 0);
    if (st != TERN_OK) {
        if (rreq) {
            if (!rreq->complete)
                tern_p2p_cancel_recv(rreq);
            (void)tern_req_wait_result(rreq, MPI_STATUS_IGNORE);
            tern_req_release(rreq);
        }
        tern_req_release(req);
        free(x);
        free(tmp);
        return st;
    }
    *req_p = req;
    if (sreq->complete && rreq->complete) {
        free(x);
        isr_finish(req, sreq, rreq, tmp);
        return TERN_OK;
    }
    *x = (isr_t){.next = pending, .req = req, .send = sreq, .recv = rreq, .tmp = tmp};
    pending = x;
    return TERN_OK;
}

tern_status_t tern_isendrecv_call(tern_comm_t *c, const void *sendbuf, MPI_Count sendcount,
                                  MPI_Datatype sendtype, const tern_dt_desc_t *sd, int dest,
                                  int sendtag, void *recvbuf, MPI_Count recvcount,
                                  MPI_Datatype recvtype,
                                  const tern_dt_desc_t *rd, int source, int recvtag,
                                  tern_req_t **req_p)
{
    return isendrecv(c, sendbuf, sendcount, sendtype, sd, dest, sendtag, recvbuf, recvcount,
                     recvtype, rd, source, recvtag, NULL, req_p);
}

tern_status_t tern_isendrecv_replace_call(tern_comm_t *c, void *buf, MPI_Count count,
                                          MPI_Datatype dt, const tern_dt_desc_t *d, int dest,
                                          int sendtag, int source, int recvtag,
                                          tern_req_t **req_p)
{
    size_t bytes = (size_t)d->size * (size_t)count;
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return tern_status_detail(TERN_ERR_NOMEM, "cannot allocate %zu bytes", bytes);
    if (dest != MPI_PROC_NULL && bytes)
        tern_datatype_pack(buf, (size_t)count, dt, tmp);
    tern_dt_desc_t bd;
    tern_datatype_describe(MPI_BYTE, &bd);
    return isendrecv(c, tmp, (MPI_Count)bytes, MPI_BYTE, &bd, dest, sendtag, buf, count, dt, d, source,
                     recvtag, tmp, req_p);
}

tern_status_t tern_part_init_call(int is_send, tern_comm_t *c, const void *buf, int partitions,
                                  size_t count, MPI_Datatype dt, int peer, int tag,
                                  tern_req_t **req_p)
{
    tern_part_addr_t a = {.comm = c->handle, .ctx = c->context_id, .comm_rank = c->rank,
                          .peer = peer,
                          .peer_world = peer == MPI_PROC_NULL ? -1 : tern_comm_world_rank(c, peer),
                          .tag = tag};
    return tern_part_init(is_send, &a, buf, partitions, count, dt, req_p);
}
