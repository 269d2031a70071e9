/* Buffered sends: each pool is a buffer the user attached, carved into
 * blocks, one per pending buffered send (first fit, blocks kept in address
 * order), or an automatic pool (MPI_BUFFER_AUTOMATIC: a block is allocated
 * per message). The process has one pool (MPI_Buffer_attach); a
 * communicator may have its own (MPI_Comm_attach_buffer, found by its
 * point-to-point context id) and may be bound to a pool owned elsewhere (a
 * session's). A buffered send uses the communicator's pool if attached,
 * else the bound one if attached, else the process's. */
#ifndef TERN_CORE_BSEND_H
#define TERN_CORE_BSEND_H

#include "base/status.h"
#include "core/pt2pt/request.h"
#include <stddef.h>
#include <stdint.h>

typedef struct bblock bblock_t;
typedef struct tern_bsend_pool {
    char *buf_start;     /* the user's buffer; NULL: nothing attached */
    size_t buf_size;
    int automatic;       /* MPI_BUFFER_AUTOMATIC attached */
    bblock_t *used;      /* blocks of a user buffer, by address */
    volatile int n_used; /* pending messages (either kind) */
    int orphaned;        /* its communicator is gone: freed with its last block */
} tern_bsend_pool_t;

/* A pool's life, for its owner (the process, a communicator, a session).
 * attach: TERN_ERR_ARG when one is attached already (buf may be
 * MPI_BUFFER_AUTOMATIC, size then ignored). detach waits for the pool's
 * pending sends, then gives the buffer back (MPI_BUFFER_AUTOMATIC, 0 for an
 * automatic pool); TERN_ERR_ARG when nothing is attached. flush waits for
 * pending sends and keeps the buffer; iflush does it in a request. */
tern_status_t tern_bsend_pool_attach(tern_bsend_pool_t *p, void *buf, size_t size);
tern_status_t tern_bsend_pool_detach(tern_bsend_pool_t *p, void **buf_p, size_t *size_p);
void tern_bsend_pool_flush(tern_bsend_pool_t *p);
tern_status_t tern_bsend_pool_iflush(tern_bsend_pool_t *p, tern_req_t **req_p);
static inline int tern_bsend_pool_attached(const tern_bsend_pool_t *p)
{
    return p->buf_start != NULL || p->automatic;
}

/* The process's pool (MPI_Buffer_*). */
tern_bsend_pool_t *tern_bsend_process_pool(void);
/* The pool of the communicator with point-to-point context id ctx; NULL
 * when it has none and create is 0 (TERN_ERR_NOMEM: NULL too). */
tern_bsend_pool_t *tern_bsend_ctx_pool(uint32_t ctx, int create);
/* Binds ctx to a pool owned elsewhere (a session's), used when the
 * communicator has no buffer of its own; NULL unbinds. */
tern_status_t tern_bsend_ctx_bind(uint32_t ctx, tern_bsend_pool_t *fallback);
/* The pool ctx is bound to (NULL: none), so that a communicator derived
 * from it is bound to the same. */
tern_bsend_pool_t *tern_bsend_ctx_fallback(uint32_t ctx);
/* The pool of the session with handle session (MPI_Session_attach_buffer
 * and kin); NULL when it has none and create is 0 (TERN_ERR_NOMEM: NULL
 * too). */
tern_bsend_pool_t *tern_bsend_session_pool(uint32_t session, int create);
/* The session is finalized: the communicators bound to its pool are
 * unbound and the pool goes (after its last pending block). */
void tern_bsend_session_forget(uint32_t session);
/* The communicator is gone: its pool (detached by then, or not) and
 * binding are forgotten, so a later communicator with its context id
 * starts with none. */
void tern_bsend_ctx_forget(uint32_t ctx);
/* The pool a buffered send on context ctx uses. */
tern_bsend_pool_t *tern_bsend_pool_for(uint32_t ctx);

/* The process pool, as before. */
tern_status_t tern_bsend_attach(void *buf, size_t size);
tern_status_t tern_bsend_detach(void **buf_p, size_t *size_p);
int tern_bsend_attached(void);
/* Starts a buffered send described by send_req (left as it is): the data
 * is copied into a block of its pool (tern_bsend_pool_for) and sent from
 * there by an internal request that returns the block when released (its
 * release hook) and releases itself when complete. TERN_ERR_NO_ROOM when
 * the pool has no buffer or no room for send_req->bytes
 * (tern_bsend_pool_attached tells which). */
tern_status_t tern_bsend_start(tern_req_t *send_req);

#endif
