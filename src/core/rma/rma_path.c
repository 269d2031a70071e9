/* Routes of one-sided operations, the active-message path and the
 * helpers every path shares (rma_path.h). */
#include "core/rma/rma_path.h"
#include "core/rma/rma_cma.h"
#include "core/rma/rma_rdma.h"
#include "base/pvars.h"

#include <stdlib.h>
#include <string.h>

void tern_rma_route_target(tern_win_t *w, int t)
{
    tern_rma_route_t *r = &w->route[t];
    if (w->direct) {
        r->rw = r->acc = &tern_rma_path_direct;
    } else {
        /* CMA before RDMA: under TERN_TRANSPORTS=ofi both reach a rank of
         * this node, and CMA is complete at the call. Accumulates by CMA
         * need the shared accumulate locks (w->ctrl), and a window that
         * has them has dropped the network's atomics (window.c): one agent
         * per location. */
        const int cma = w->cma && w->cma->ok[t];
        r->rw = cma ? &tern_rma_path_cma
                : tern_rma_rdma_reaches(w, t) ? &tern_rma_path_rdma
                                              : &tern_rma_path_am;
        r->acc = cma && w->ctrl ? &tern_rma_path_cma
                 : w->atomic    ? &tern_rma_path_atomic
                                : &tern_rma_path_am;
    }
    /* A target routed anywhere but direct (messages, RDMA, NIC atomics)
     * may have operations in flight at a flush: its engine pass stays. */
    if (r->rw != &tern_rma_path_direct || r->acc != &tern_rma_path_direct)
        w->flush_fence_only = 0;
}

tern_status_t tern_rma_route_all(tern_win_t *w)
{
    if (!w->route && !(w->route = calloc((size_t)w->size, sizeof *w->route)))
        return TERN_ERR_NOMEM;
    w->flush_fence_only = 1;
    for (int t = 0; t < w->size; t++)
        tern_rma_route_target(w, t);
    return TERN_OK;
}

tern_status_t tern_rma_origin_data(const tern_rma_call_t *c, const rma_hdr_t *h, int in_place,
                                   const char **data_p, char **owned_p)
{
    *owned_p = NULL;
    if (in_place && c->type != RMA_CAS && tern_datatype_is_contig(c->otype)) {
        *data_p = (const char *)c->origin + tern_datatype_true_lb(c->otype);
        return TERN_OK;
    }
    char *data = malloc(h->data_bytes ? h->data_bytes : 1);
    if (!data)
        return TERN_ERR_NOMEM;
    tern_status_t st = tern_datatype_pack(c->origin, (size_t)c->ocount, c->otype, data);
    if (st != TERN_OK) {
        free(data);
        return st;
    }
    if (c->type == RMA_CAS)
        memcpy(data + h->bytes, c->compare, h->bytes);
    *data_p = data;
    *owned_p = data;
    return TERN_OK;
}

tern_status_t tern_rma_result_buf(const tern_rma_call_t *c, const rma_hdr_t *h, char **out_p,
                                  char **owned_p)
{
    *owned_p = NULL;
    if (tern_datatype_is_contig(c->rtype)) {
        *out_p = (char *)c->result + tern_datatype_true_lb(c->rtype);
        return TERN_OK;
    }
    if (!(*owned_p = *out_p = malloc(h->bytes ? h->bytes : 1)))
        return TERN_ERR_NOMEM;
    return TERN_OK;
}

tern_status_t tern_rma_unpack_result(const tern_rma_call_t *c, const rma_hdr_t *h,
                                     const char *owned)
{
    if (!owned)
        return TERN_OK; /* landed in place */
    return tern_datatype_unpack(owned, h->bytes, c->result, (size_t)c->rcount, c->rtype);
}

tern_status_t tern_rma_done_now(tern_win_t *w, tern_req_t **req_p)
{
    if (req_p) {
        if (!(*req_p = tern_req_alloc(TERN_REQ_GENERIC)))
            return TERN_ERR_NOMEM;
        (*req_p)->comm = w->comm->handle;
        tern_req_complete(*req_p);
    }
    return TERN_OK;
}

/* Active messages: the request carries a copy of the origin data (the
 * engine copies it into its message), so a contiguous origin is read where
 * it lies. */
static tern_status_t am_issue(tern_win_t *w, const tern_rma_call_t *c, rma_hdr_t *h,
                              const tern_dt_seg_t *segs)
{
    const char *data = NULL;
    char *owned = NULL;
    tern_status_t st = c->ships ? tern_rma_origin_data(c, h, 1, &data, &owned) : TERN_OK;
    rma_op_t *op = NULL;
    if (st == TERN_OK)
        st = tern_rma_am_issue(w, c->target, h, segs, data, c->fetch ? h->bytes : 0,
                               c->fetch ? c->result : NULL, c->rcount, c->rtype, &op);
    free(owned);
    if (st == TERN_OK)
        tern_pvar_add(TERN_PVAR_RMA_AM, 1);
    if (st == TERN_OK && c->req_p) {
        if (!(op->user_req = tern_req_alloc(TERN_REQ_GENERIC)))
            return TERN_ERR_NOMEM; /* the operation goes on; the epoch's end completes it */
        op->user_req->comm = w->comm->handle;
        *c->req_p = op->user_req;
    }
    return st;
}

const tern_rma_path_t tern_rma_path_am = {.name = "active messages", .issue = am_issue};
