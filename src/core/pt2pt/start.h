/* Starting a request: the one dispatch behind MPI_Start and the
 * nonblocking and blocking sends that take the general path (generic
 * requests through their start hook, MPI_PROC_NULL, receives, buffered
 * and other sends). Inline, as it was in the MPI layer: a send's slow
 * path pays no extra call. */
#ifndef TERN_CORE_PT2PT_START_H
#define TERN_CORE_PT2PT_START_H

#include "core/pt2pt/bsend.h"
#include "core/pt2pt/p2p.h"

/* Makes req active with a clean result and starts it. A buffered send is
 * complete at once (its data went to the attached buffer), even when that
 * failed: the returned status says why (TERN_ERR_NO_ROOM, see bsend.h). */
static inline tern_status_t tern_req_start(tern_req_t *req)
{
    req->active = 1;
    req->complete = 0;
    req->cancelled = 0;
    req->error = TERN_OK;
    if (req->start_fn)
        return req->start_fn(req);
    if (req->peer == MPI_PROC_NULL) {
        req->status_source = MPI_PROC_NULL;
        req->status_tag = MPI_ANY_TAG;
        req->status_bytes = 0;
        req->complete = 1;
        return TERN_OK;
    }
    if (req->kind == TERN_REQ_RECV) {
        tern_p2p_start_recv(req);
        return TERN_OK;
    }
    if (req->mode == TERN_SEND_BUFFERED) {
        req->has_seq = 0;
        req->cancel_state = TERN_CANCEL_NONE;
        tern_status_t st = tern_bsend_start(req);
        req->complete = 1;
        return st;
    }
    return tern_p2p_start_send(req);
}

#endif
