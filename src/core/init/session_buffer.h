/* Buffered-send buffers of sessions (MPI_Session_attach_buffer and kin,
 * MPI-4.1 3.6): a session's buffer serves the buffered sends on the
 * communicators made from its groups (and those derived from them) that
 * have no buffer of their own; the process's buffer serves the rest. The
 * pool (core/pt2pt/bsend.h) lives from MPI_Session_init to
 * MPI_Session_finalize. */
#ifndef TERN_CORE_SESSION_BUFFER_H
#define TERN_CORE_SESSION_BUFFER_H

#include "core/datatype/dtype_nums.h"
#include "core/init/session.h"
#include "core/pt2pt/request.h"

/* buffer may be MPI_BUFFER_AUTOMATIC (size ignored). */
tern_status_t tern_session_attach_buffer(const tern_session_t *s, void *buffer, tern_num_t size);
/* Waits for the buffer's pending sends; *(void **)buffer_addr and *size
 * get it back (MPI_BUFFER_AUTOMATIC and 0 for automatic buffering). */
tern_status_t tern_session_detach_buffer(const tern_session_t *s, void *buffer_addr,
                                         tern_num_ref_t size);
tern_status_t tern_session_flush_buffer(const tern_session_t *s);
tern_status_t tern_session_iflush_buffer(const tern_session_t *s, tern_req_t **req_p);

#endif
