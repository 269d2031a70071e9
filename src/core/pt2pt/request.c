#include "core/pt2pt/request.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/p2p.h"
#include "core/runtime/handle_table.h"
#include "base/log.h"

#include <stdlib.h>
#include <string.h>

/* Requests come from a free list; a request gets a handle (from the
 * request handle table) only when the user needs one. */
static tern_req_t *free_list;
static tern_handle_table_t requests = TERN_HANDLE_TABLE(TERN_KIND_REQUEST, 256);

void tern_req_init(tern_req_t *req, tern_req_kind_t kind)
{
    memset(req, 0, sizeof *req);
    req->kind = (uint8_t)kind;
    req->handle = MPI_REQUEST_NULL;
}

tern_req_t *tern_req_alloc(tern_req_kind_t kind)
{
    tern_req_t *r = free_list;
    if (r)
        free_list = r->next;
    else if (!(r = malloc(sizeof *r)))
        return NULL;
    tern_req_init(r, kind);
    return r;
}

void tern_req_fini(tern_req_t *req)
{
    if (req->release_fn)
        req->release_fn(req);
    if (req->noncontig) {
        tern_datatype_release(req->datatype);
        req->noncontig = 0;
    }
}

MPI_Request tern_req_handle(tern_req_t *req)
{
    if (req->handle != MPI_REQUEST_NULL)
        return req->handle;
    if (tern_handle_new(&requests, req, &req->handle) != TERN_OK)
        req->handle = MPI_REQUEST_NULL;
    return req->handle;
}

tern_req_t *tern_req_lookup(MPI_Request handle)
{
    tern_req_t *r = tern_handle_get(&requests, handle);
    return r && r->handle == handle ? r : NULL;
}

void tern_req_release(tern_req_t *req)
{
    tern_req_fini(req);
    if (req->handle != MPI_REQUEST_NULL)
        tern_handle_release(&requests, req->handle);
    req->handle = 0; /* poison: lookups of a stale handle fail */
    req->next = free_list;
    free_list = req;
}

int tern_req_pending_on(MPI_Comm comm)
{
    /* Every nonblocking operation the user started has a handle (Request_free
     * keeps it until completion); blocking calls end before they return. */
    int n = 0;
    for (uint32_t i = 0; i < requests.len; i++) {
        const tern_req_t *r = requests.slots[i];
        if (r && r->comm == comm && !r->complete && (!r->persistent || r->active))
            n++;
    }
    return n;
}

void tern_req_complete(tern_req_t *req)
{
    req->complete = 1;
    /* A persistent request stays active until the user's Wait/Test sees
     * the completion (that is where its status is read). */
    if (req->freed)
        tern_req_release(req);
}

void tern_status_set(MPI_Status *status, int source, int tag, int error, size_t bytes, int cancelled)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = source;
    status->MPI_TAG = tag;
    status->MPI_ERROR = error;
    status->count_lo = (int)(uint32_t)(bytes & 0xffffffffu);
    status->count_hi_and_cancelled = (int)(((uint64_t)bytes >> 32) << 1) | (cancelled ? 1 : 0);
}

size_t tern_status_bytes(const MPI_Status *status)
{
    uint64_t hi = (uint32_t)status->count_hi_and_cancelled >> 1;
    return (size_t)((hi << 32) | (uint32_t)status->count_lo);
}

void tern_req_status(const tern_req_t *req, MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    if (req->kind == TERN_REQ_SEND) {
        /* MPI leaves a send's status fields undefined except the error and
         * cancellation; give them tidy values. */
        tern_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, status->MPI_ERROR, 0, req->cancelled);
        return;
    }
    tern_status_set(status, req->status_source, req->status_tag, status->MPI_ERROR,
                    req->status_bytes, req->cancelled);
}

/* ------------------------------------------------------------------------ */
/* A point-to-point request's data (p2p.h). */

void tern_p2p_set_data(tern_req_t *req, const void *buf, MPI_Count count, MPI_Datatype dt)
{
    tern_dt_desc_t d;
    if (!tern_datatype_describe(dt, &d))
        d = (tern_dt_desc_t){.size = 0, .contig = 1}; /* as before: invalid types move nothing */
    tern_p2p_set_data_desc(req, buf, count, dt, &d);
}

void tern_p2p_set_data_desc(tern_req_t *req, const void *buf, MPI_Count count, MPI_Datatype dt,
                            const tern_dt_desc_t *d)
{
    req->count = count;
    req->datatype = dt;
    req->bytes = (size_t)d->size * (size_t)count;
    if (d->contig) {
        /* The fast path: one block, moved with memcpy / get. */
        req->buf = (void *)((uintptr_t)buf + (uintptr_t)d->true_lb);
        return;
    }
    req->buf = (void *)buf;
    req->noncontig = 1;
    tern_datatype_retain(dt);
}
