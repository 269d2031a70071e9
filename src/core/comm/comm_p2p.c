/* Point-to-point addressed by the ranks of a communicator, for the
 * library's own traffic (collective schedules, communicator creation):
 * the protocols below know world ranks and context ids only. */
#include "core/comm/comm_p2p.h"

tern_status_t tern_comm_isend(tern_comm_t *comm, uint32_t ctx, const void *buf, size_t bytes,
                              int dest, int tag, int mode, tern_req_t **req_p)
{
    tern_req_t *req = tern_req_alloc(TERN_REQ_SEND);
    if (!req)
        return TERN_ERR_NOMEM;
    req->comm = comm->handle;
    req->context_id = ctx;
    req->peer = dest;
    req->peer_world = tern_comm_world_rank(comm, dest);
    req->comm_rank = comm->rank;
    req->tag = tag;
    req->buf = (void *)buf;
    req->bytes = bytes;
    req->mode = (uint8_t)mode;
    tern_status_t st = tern_p2p_start_send(req);
    if (st != TERN_OK) {
        tern_req_release(req);
        return st;
    }
    *req_p = req;
    return TERN_OK;
}

tern_status_t tern_comm_irecv(tern_comm_t *comm, uint32_t ctx, void *buf, size_t bytes, int src,
                              int tag, tern_req_t **req_p)
{
    tern_req_t *req = tern_req_alloc(TERN_REQ_RECV);
    if (!req)
        return TERN_ERR_NOMEM;
    req->comm = comm->handle;
    req->context_id = ctx;
    req->peer = src;
    req->tag = tag;
    req->buf = buf;
    req->bytes = bytes;
    tern_p2p_start_recv(req);
    *req_p = req;
    return TERN_OK;
}

int tern_comm_request_source_world(const tern_req_t *req)
{
    const tern_comm_t *c = tern_comm_lookup(req->comm);
    return c ? tern_comm_world_rank(c, req->peer) : -1;
}
