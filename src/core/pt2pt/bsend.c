#include "core/pt2pt/bsend.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/progress.h"

#include <mpi.h>
#include <stdint.h>
#include <string.h>

typedef struct bblock {
    struct bblock *next; /* next used block, by address */
    size_t len;          /* bytes of the block, header included */
} bblock_t;

#define BLOCK_ALIGN 16
#define HDR_SIZE ((sizeof(bblock_t) + BLOCK_ALIGN - 1) & ~(size_t)(BLOCK_ALIGN - 1))

_Static_assert(HDR_SIZE + BLOCK_ALIGN <= MPI_BSEND_OVERHEAD, "MPI_BSEND_OVERHEAD too small");

static char *buf_start;
static size_t buf_size;
static bblock_t *used; /* sorted by address */
static volatile int n_used;

int tern_bsend_attached(void) { return buf_start != NULL; }

tern_status_t tern_bsend_attach(void *buf, size_t size)
{
    if (buf_start)
        return TERN_ERR_ARG;
    /* Align the start; the user accounted MPI_BSEND_OVERHEAD per message. */
    uintptr_t a = ((uintptr_t)buf + BLOCK_ALIGN - 1) & ~(uintptr_t)(BLOCK_ALIGN - 1);
    size_t lost = a - (uintptr_t)buf;
    buf_start = buf;
    buf_size = size > lost ? size : 0;
    used = NULL;
    n_used = 0;
    return TERN_OK;
}

tern_status_t tern_bsend_detach(void **buf_p, size_t *size_p)
{
    if (!buf_start)
        return TERN_ERR_ARG;
    unsigned idle = 0;
    while (n_used) {
        if (tern_progress() == 0)
            tern_progress_idle(&idle);
    }
    *buf_p = buf_start;
    *size_p = buf_size;
    buf_start = NULL;
    buf_size = 0;
    return TERN_OK;
}

void *tern_bsend_block_alloc(size_t bytes, void **payload_p)
{
    if (!buf_start)
        return NULL;
    char *lo = (char *)(((uintptr_t)buf_start + BLOCK_ALIGN - 1) & ~(uintptr_t)(BLOCK_ALIGN - 1));
    char *end = buf_start + buf_size;
    size_t need = HDR_SIZE + ((bytes + BLOCK_ALIGN - 1) & ~(size_t)(BLOCK_ALIGN - 1));
    bblock_t **link = &used;
    char *gap = lo;
    for (bblock_t *b = used;; b = b->next) {
        char *gap_end = b ? (char *)b : end;
        if (gap_end >= gap && (size_t)(gap_end - gap) >= need) {
            bblock_t *nb = (bblock_t *)gap;
            nb->len = need;
            nb->next = b;
            *link = nb;
            n_used++;
            *payload_p = (char *)nb + HDR_SIZE;
            return nb;
        }
        if (!b)
            return NULL;
        gap = (char *)b + b->len;
        link = &b->next;
    }
}

void tern_bsend_block_free(void *block)
{
    for (bblock_t **link = &used; *link; link = &(*link)->next) {
        if (*link == block) {
            *link = ((bblock_t *)block)->next;
            n_used--;
            return;
        }
    }
}

static void release_block(tern_req_t *req)
{
    tern_bsend_block_free(req->ext);
    req->ext = NULL;
}

tern_status_t tern_bsend_start(tern_req_t *send_req)
{
    void *payload;
    void *block = tern_bsend_block_alloc(send_req->bytes, &payload);
    if (!block)
        return TERN_ERR_NO_ROOM;
    if (send_req->noncontig)
        tern_datatype_pack(send_req->buf, (size_t)send_req->count, send_req->datatype, payload);
    else if (send_req->bytes)
        memcpy(payload, send_req->buf, send_req->bytes);
    tern_req_t *req = tern_req_alloc(TERN_REQ_SEND);
    if (!req) {
        tern_bsend_block_free(block);
        return TERN_ERR_NOMEM;
    }
    *req = *send_req;
    req->next = NULL;
    req->handle = MPI_REQUEST_NULL;
    req->persistent = 0;
    req->buf = payload;
    req->noncontig = 0; /* packed into the block; the user's request keeps its reference */
    req->ext = block;
    req->release_fn = release_block;
    req->mode = TERN_SEND_STANDARD;
    tern_status_t st = tern_p2p_start_send(req);
    if (st != TERN_OK) {
        tern_req_release(req);
        return st;
    }
    /* MPI_Cancel on the user's request names the copy's message. */
    send_req->match_seq = req->match_seq;
    send_req->has_seq = req->has_seq;
    if (req->complete)
        tern_req_release(req);
    else
        req->freed = 1;
    return TERN_OK;
}
