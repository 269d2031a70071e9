#include "core/pt2pt/request.h"
#include "core/datatype/datatype.h"
#include "core/runtime/handle.h"
#include "base/log.h"

#include <stdlib.h>
#include <string.h>

/* Requests come from a free list; handles index a table of pointers that
 * grows by doubling. Handle = MPI_REQUEST_NULL | (slot + 1). */
static tern_req_t *free_list;
static tern_req_t **table;
static size_t table_len, table_cap;
static uint32_t *free_slots;
static size_t n_free_slots;

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
    uint32_t slot;
    if (n_free_slots) {
        slot = free_slots[--n_free_slots];
    } else {
        if (table_len == table_cap) {
            size_t cap = table_cap ? table_cap * 2 : 256;
            tern_req_t **t = realloc(table, cap * sizeof *t);
            uint32_t *fs = realloc(free_slots, cap * sizeof *fs);
            if (t)
                table = t; /* what realloc kept is still ours */
            if (fs)
                free_slots = fs;
            if (!t || !fs)
                return MPI_REQUEST_NULL;
            table_cap = cap;
        }
        slot = (uint32_t)table_len++;
    }
    table[slot] = req;
    req->handle = (int)((uint32_t)MPI_REQUEST_NULL | (slot + 1));
    return req->handle;
}

tern_req_t *tern_req_lookup(MPI_Request handle)
{
    uint32_t h = (uint32_t)handle;
    if ((h & 0xfc000000u) != (uint32_t)MPI_REQUEST_NULL)
        return NULL;
    uint32_t slot = (h & TERN_HANDLE_INDEX_MASK);
    if (slot == 0 || slot > table_len)
        return NULL;
    tern_req_t *r = table[slot - 1];
    if (!r || r->handle != handle)
        return NULL;
    return r;
}

void tern_req_release(tern_req_t *req)
{
    tern_req_fini(req);
    if (req->handle != MPI_REQUEST_NULL) {
        uint32_t slot = TERN_HANDLE_INDEX(req->handle) - 1;
        table[slot] = NULL;
        free_slots[n_free_slots++] = slot;
    }
    req->handle = 0; /* poison: lookups of a stale handle fail */
    req->next = free_list;
    free_list = req;
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
