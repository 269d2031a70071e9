/* Buffered sends: MPI_Buffer_attach's buffer, carved into blocks, one per
 * pending MPI_Bsend (first fit, blocks kept in address order). */
#ifndef TERN_CORE_BSEND_H
#define TERN_CORE_BSEND_H

#include "base/status.h"
#include "core/pt2pt/request.h"
#include <stddef.h>

tern_status_t tern_bsend_attach(void *buf, size_t size);
/* Waits for pending buffered sends, then returns the buffer. */
tern_status_t tern_bsend_detach(void **buf_p, size_t *size_p);
/* A block of at least `bytes` payload; NULL when the buffer has no room. */
void *tern_bsend_block_alloc(size_t bytes, void **payload_p);
void tern_bsend_block_free(void *block);
int tern_bsend_attached(void);
/* Starts a buffered send described by send_req (left as it is): the data
 * is copied into a block of the attached buffer and sent from there by an
 * internal request that returns the block when released (its release
 * hook) and releases itself when complete. TERN_ERR_NO_ROOM when there is
 * no buffer or no room for send_req->bytes (tern_bsend_attached tells
 * which). */
tern_status_t tern_bsend_start(tern_req_t *send_req);

#endif
