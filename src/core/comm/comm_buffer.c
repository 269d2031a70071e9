/* Buffered-send buffers of communicators and of the process
 * (comm_buffer.h). A communicator's pool is found by its point-to-point
 * context id; sessions' are core/init/session_buffer.c's. */
#include "core/comm/comm_buffer.h"
#include "core/pt2pt/bsend.h"

#include <stdint.h>

static const char *owner(const tern_comm_t *c)
{
    return c ? "the communicator" : "the process";
}

tern_status_t tern_buffer_attach_to(tern_comm_t *c, void *buffer, tern_num_t size)
{
    if (buffer != MPI_BUFFER_AUTOMATIC && !buffer && size.v > 0)
        return tern_status_detail(TERN_ERR_BUFFER, "buffer is NULL");
    if (buffer != MPI_BUFFER_AUTOMATIC && (uint64_t)size.v > SIZE_MAX)
        return tern_status_detail(TERN_ERR_COUNT, "size=%lld is too large", (long long)size.v);
    tern_bsend_pool_t *p = c ? tern_bsend_ctx_pool(c->context_id, 1) : tern_bsend_process_pool();
    if (!p)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the buffer's record");
    if (tern_bsend_pool_attach(p, buffer, (size_t)size.v) != TERN_OK)
        return tern_status_detail(TERN_ERR_BUFFER,
                                  "a buffer is already attached to %s (detach it first)", owner(c));
    return TERN_OK;
}

tern_status_t tern_buffer_detach_from(tern_comm_t *c, void *buffer_addr, tern_num_ref_t size)
{
    tern_bsend_pool_t *p = c ? tern_bsend_ctx_pool(c->context_id, 0) : tern_bsend_process_pool();
    void *buf;
    size_t sz;
    if (!p || tern_bsend_pool_detach(p, &buf, &sz) != TERN_OK) {
        if (!c) { /* as Tern always did for MPI_Buffer_detach: NULL, 0 */
            *(void **)buffer_addr = NULL;
            tern_num_ref_set(size, 0);
            return TERN_OK;
        }
        return tern_status_detail(TERN_ERR_BUFFER, "no buffer is attached to the communicator");
    }
    *(void **)buffer_addr = buf;
    tern_num_ref_set(size, (MPI_Count)sz);
    return TERN_OK;
}

tern_status_t tern_buffer_flush_of(tern_comm_t *c)
{
    tern_bsend_pool_t *p = c ? tern_bsend_ctx_pool(c->context_id, 0) : tern_bsend_process_pool();
    if (p)
        tern_bsend_pool_flush(p);
    return TERN_OK;
}

tern_status_t tern_buffer_iflush_of(tern_comm_t *c, tern_req_t **req_p)
{
    tern_bsend_pool_t *p = c ? tern_bsend_ctx_pool(c->context_id, 0) : tern_bsend_process_pool();
    static tern_bsend_pool_t none; /* a communicator without a buffer: nothing pending */
    tern_status_t st = tern_bsend_pool_iflush(p ? p : &none, req_p);
    if (st != TERN_OK)
        return tern_status_detail(st, "out of memory for a request");
    if (c)
        (*req_p)->comm = c->handle;
    return TERN_OK;
}
