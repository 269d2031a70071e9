/* Buffered-send buffers of sessions (session_buffer.h). */
#include "core/init/session_buffer.h"
#include "core/pt2pt/bsend.h"

#include <stdint.h>

static tern_bsend_pool_t *pool_of(const tern_session_t *s)
{
    return tern_bsend_session_pool((uint32_t)s->handle, 0);
}

tern_status_t tern_session_attach_buffer(const tern_session_t *s, void *buffer, tern_num_t size)
{
    if (buffer != MPI_BUFFER_AUTOMATIC && !buffer && size.v > 0)
        return tern_status_detail(TERN_ERR_BUFFER, "buffer is NULL");
    if (buffer != MPI_BUFFER_AUTOMATIC && (uint64_t)size.v > SIZE_MAX)
        return tern_status_detail(TERN_ERR_COUNT, "size=%lld is too large", (long long)size.v);
    tern_bsend_pool_t *p = pool_of(s);
    if (!p) /* made by MPI_Session_init: only a failure there leaves none */
        return tern_status_detail(TERN_ERR_INTERNAL, "the session has no buffer record");
    if (tern_bsend_pool_attach(p, buffer, (size_t)size.v) != TERN_OK)
        return tern_status_detail(TERN_ERR_BUFFER,
                                  "a buffer is already attached to the session (detach it first)");
    return TERN_OK;
}

tern_status_t tern_session_detach_buffer(const tern_session_t *s, void *buffer_addr,
                                         tern_num_ref_t size)
{
    tern_bsend_pool_t *p = pool_of(s);
    void *buf;
    size_t sz;
    if (!p || tern_bsend_pool_detach(p, &buf, &sz) != TERN_OK)
        return tern_status_detail(TERN_ERR_BUFFER, "no buffer is attached to the session");
    *(void **)buffer_addr = buf;
    tern_num_ref_set(size, (MPI_Count)sz);
    return TERN_OK;
}

tern_status_t tern_session_flush_buffer(const tern_session_t *s)
{
    tern_bsend_pool_t *p = pool_of(s);
    if (p)
        tern_bsend_pool_flush(p);
    return TERN_OK;
}

tern_status_t tern_session_iflush_buffer(const tern_session_t *s, tern_req_t **req_p)
{
    static tern_bsend_pool_t none; /* nothing pending */
    tern_bsend_pool_t *p = pool_of(s);
    tern_status_t st = tern_bsend_pool_iflush(p ? p : &none, req_p);
    if (st != TERN_OK)
        return tern_status_detail(st, "out of memory for a request");
    return TERN_OK;
}
