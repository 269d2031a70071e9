/* Buffered-send buffers of a communicator (MPI_Comm_attach_buffer and
 * kin, MPI-4.1) and of the process (MPI_Buffer_flush, MPI_Buffer_iflush),
 * over core/pt2pt/bsend.h's pools. c NULL: the process's buffer. */
#ifndef TERN_CORE_COMM_BUFFER_H
#define TERN_CORE_COMM_BUFFER_H

#include "core/comm/comm.h"
#include "core/datatype/dtype_nums.h"
#include "core/pt2pt/request.h"

/* buffer may be MPI_BUFFER_AUTOMATIC (size ignored). */
tern_status_t tern_buffer_attach_to(tern_comm_t *c, void *buffer, tern_num_t size);
/* Waits for the buffer's pending sends; *(void **)buffer_addr and *size
 * get it back (MPI_BUFFER_AUTOMATIC and 0 for automatic buffering). */
tern_status_t tern_buffer_detach_from(tern_comm_t *c, void *buffer_addr, tern_num_ref_t size);
tern_status_t tern_buffer_flush_of(tern_comm_t *c);
tern_status_t tern_buffer_iflush_of(tern_comm_t *c, tern_req_t **req_p);

#endif
