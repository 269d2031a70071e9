#include "core/pt2pt/bsend.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/progress.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bblock {
    struct bblock *next;     /* next used block, by address (user buffers) */
    size_t len;              /* bytes of the block, header included */
    tern_bsend_pool_t *pool; /* where it goes back */
};

#define BLOCK_ALIGN 16
#define HDR_SIZE ((sizeof(bblock_t) + BLOCK_ALIGN - 1) & ~(size_t)(BLOCK_ALIGN - 1))

_Static_assert(HDR_SIZE + BLOCK_ALIGN <= MPI_BSEND_OVERHEAD, "MPI_BSEND_OVERHEAD too small");

static tern_bsend_pool_t process_pool;

/* Communicators' pools and bindings, by context id (few: only those that
 * attached a buffer or were bound). */
typedef struct {
    uint32_t ctx;
    tern_bsend_pool_t *own;      /* NULL: none */
    tern_bsend_pool_t *fallback; /* a session's; NULL: none */
} ctx_entry_t;
static ctx_entry_t *ctx_table;
static int n_ctx, cap_ctx;

tern_bsend_pool_t *tern_bsend_process_pool(void) { return &process_pool; }

static ctx_entry_t *ctx_find(uint32_t ctx, int create)
{
    for (int i = 0; i < n_ctx; i++)
        if (ctx_table[i].ctx == ctx)
            return &ctx_table[i];
    if (!create)
        return NULL;
    if (n_ctx == cap_ctx) {
        int cap = cap_ctx ? 2 * cap_ctx : 8;
        ctx_entry_t *t = realloc(ctx_table, (size_t)cap * sizeof *t);
        if (!t)
            return NULL;
        ctx_table = t;
        cap_ctx = cap;
    }
    ctx_table[n_ctx] = (ctx_entry_t){.ctx = ctx};
    return &ctx_table[n_ctx++];
}

tern_bsend_pool_t *tern_bsend_ctx_pool(uint32_t ctx, int create)
{
    ctx_entry_t *e = ctx_find(ctx, create);
    if (e && !e->own && create)
        e->own = calloc(1, sizeof *e->own);
    return e ? e->own : NULL;
}

tern_status_t tern_bsend_ctx_bind(uint32_t ctx, tern_bsend_pool_t *fallback)
{
    ctx_entry_t *e = ctx_find(ctx, fallback != NULL);
    if (!e)
        return fallback ? TERN_ERR_NOMEM : TERN_OK;
    e->fallback = fallback;
    return TERN_OK;
}

void tern_bsend_ctx_forget(uint32_t ctx)
{
    ctx_entry_t *e = ctx_find(ctx, 0);
    if (!e)
        return;
    /* Blocks still in flight point at the pool: it stays until the last
     * comes back, found by nobody. */
    if (e->own && e->own->n_used == 0)
        free(e->own);
    else if (e->own)
        e->own->orphaned = 1;
    *e = ctx_table[--n_ctx];
}

tern_bsend_pool_t *tern_bsend_ctx_fallback(uint32_t ctx)
{
    ctx_entry_t *e = n_ctx ? ctx_find(ctx, 0) : NULL;
    return e ? e->fallback : NULL;
}

typedef struct iflush iflush_t;
static iflush_t *iflushes;
static int iflush_progress(void);

/* Sessions' pools, by session handle (few: those that attached one). */
typedef struct {
    uint32_t session;
    tern_bsend_pool_t *pool;
} session_entry_t;
static session_entry_t *session_table;
static int n_sessions, cap_sessions;

tern_bsend_pool_t *tern_bsend_session_pool(uint32_t session, int create)
{
    for (int i = 0; i < n_sessions; i++)
        if (session_table[i].session == session)
            return session_table[i].pool;
    if (!create)
        return NULL;
    if (n_sessions == cap_sessions) {
        int cap = cap_sessions ? 2 * cap_sessions : 4;
        session_entry_t *t = realloc(session_table, (size_t)cap * sizeof *t);
        if (!t)
            return NULL;
        session_table = t;
        cap_sessions = cap;
    }
    tern_bsend_pool_t *p = calloc(1, sizeof *p);
    if (p)
        session_table[n_sessions++] = (session_entry_t){.session = session, .pool = p};
    return p;
}

void tern_bsend_session_forget(uint32_t session)
{
    for (int i = 0; i < n_sessions; i++) {
        if (session_table[i].session != session)
            continue;
        tern_bsend_pool_t *p = session_table[i].pool;
        if (p->n_used == 0 && iflushes)
            iflush_progress(); /* completes the iflush requests that wait on p */
        for (int j = 0; j < n_ctx; j++)
            if (ctx_table[j].fallback == p)
                ctx_table[j].fallback = NULL;
        if (p->n_used == 0)
            free(p);
        else
            p->orphaned = 1;
        session_table[i] = session_table[--n_sessions];
        return;
    }
}

tern_bsend_pool_t *tern_bsend_pool_for(uint32_t ctx)
{
    if (n_ctx) {
        ctx_entry_t *e = ctx_find(ctx, 0);
        if (e && e->own && tern_bsend_pool_attached(e->own))
            return e->own;
        if (e && e->fallback && tern_bsend_pool_attached(e->fallback))
            return e->fallback;
    }
    return &process_pool;
}

tern_status_t tern_bsend_pool_attach(tern_bsend_pool_t *p, void *buf, size_t size)
{
    if (tern_bsend_pool_attached(p))
        return TERN_ERR_ARG;
    p->used = NULL;
    if (buf == MPI_BUFFER_AUTOMATIC) {
        p->automatic = 1;
        return TERN_OK;
    }
    /* Align the start; the user accounted MPI_BSEND_OVERHEAD per message. */
    uintptr_t a = ((uintptr_t)buf + BLOCK_ALIGN - 1) & ~(uintptr_t)(BLOCK_ALIGN - 1);
    size_t lost = a - (uintptr_t)buf;
    p->buf_start = buf;
    p->buf_size = size > lost ? size : 0;
    return TERN_OK;
}

void tern_bsend_pool_flush(tern_bsend_pool_t *p)
{
    unsigned idle = 0;
    while (p->n_used) {
        if (tern_progress() == 0)
            tern_progress_idle(&idle);
    }
}

tern_status_t tern_bsend_pool_detach(tern_bsend_pool_t *p, void **buf_p, size_t *size_p)
{
    if (!tern_bsend_pool_attached(p))
        return TERN_ERR_ARG;
    tern_bsend_pool_flush(p);
    *buf_p = p->automatic ? MPI_BUFFER_AUTOMATIC : p->buf_start;
    *size_p = p->automatic ? 0 : p->buf_size;
    p->buf_start = NULL;
    p->buf_size = 0;
    p->automatic = 0;
    return TERN_OK;
}

/* MPI_Comm_iflush_buffer and MPI_Buffer_iflush: requests that complete
 * when their pool has no pending message, checked by a progress hook
 * while any is waiting. */
struct iflush {
    struct iflush *next;
    tern_req_t *req;
    tern_bsend_pool_t *pool;
};

static int iflush_progress(void)
{
    int n = 0;
    for (iflush_t **l = &iflushes; *l;) {
        iflush_t *f = *l;
        if (f->pool->n_used) {
            l = &f->next;
            continue;
        }
        *l = f->next;
        tern_req_complete(f->req);
        free(f);
        n++;
    }
    if (!iflushes)
        tern_progress_unregister(iflush_progress);
    return n;
}

tern_status_t tern_bsend_pool_iflush(tern_bsend_pool_t *p, tern_req_t **req_p)
{
    tern_req_t *req = tern_req_alloc(TERN_REQ_GENERIC);
    if (!req)
        return TERN_ERR_NOMEM;
    req->status_source = MPI_ANY_SOURCE;
    req->status_tag = MPI_ANY_TAG;
    *req_p = req;
    if (!p->n_used) {
        req->complete = 1;
        return TERN_OK;
    }
    iflush_t *f = malloc(sizeof *f);
    if (!f || tern_progress_register(iflush_progress) != TERN_OK) {
        free(f);
        tern_req_release(req);
        *req_p = NULL;
        return TERN_ERR_NOMEM;
    }
    *f = (iflush_t){.next = iflushes, .req = req, .pool = p};
    iflushes = f;
    return TERN_OK;
}

int tern_bsend_attached(void) { return tern_bsend_pool_attached(&process_pool); }

tern_status_t tern_bsend_attach(void *buf, size_t size)
{
    return tern_bsend_pool_attach(&process_pool, buf, size);
}

tern_status_t tern_bsend_detach(void **buf_p, size_t *size_p)
{
    return tern_bsend_pool_detach(&process_pool, buf_p, size_p);
}

/* A block of at least `bytes` payload; NULL when the pool has no room. */
static bblock_t *block_alloc(tern_bsend_pool_t *p, size_t bytes, void **payload_p)
{
    size_t need = HDR_SIZE + ((bytes + BLOCK_ALIGN - 1) & ~(size_t)(BLOCK_ALIGN - 1));
    if (p->automatic) {
        bblock_t *nb = malloc(need);
        if (!nb)
            return NULL;
        nb->len = need;
        nb->pool = p;
        p->n_used++;
        *payload_p = (char *)nb + HDR_SIZE;
        return nb;
    }
    if (!p->buf_start)
        return NULL;
    char *lo = (char *)(((uintptr_t)p->buf_start + BLOCK_ALIGN - 1) & ~(uintptr_t)(BLOCK_ALIGN - 1));
    char *end = p->buf_start + p->buf_size;
    bblock_t **link = &p->used;
    char *gap = lo;
    for (bblock_t *b = p->used;; b = b->next) {
        char *gap_end = b ? (char *)b : end;
        if (gap_end >= gap && (size_t)(gap_end - gap) >= need) {
            bblock_t *nb = (bblock_t *)gap;
            nb->len = need;
            nb->next = b;
            nb->pool = p;
            *link = nb;
            p->n_used++;
            *payload_p = (char *)nb + HDR_SIZE;
            return nb;
        }
        if (!b)
            return NULL;
        gap = (char *)b + b->len;
        link = &b->next;
    }
}

static void block_free(bblock_t *block)
{
    tern_bsend_pool_t *p = block->pool;
    p->n_used--;
    if (p->automatic) {
        free(block);
    } else {
        for (bblock_t **link = &p->used; *link; link = &(*link)->next) {
            if (*link == block) {
                *link = block->next;
                break;
            }
        }
    }
    if (p->orphaned && p->n_used == 0)
        free(p);
}

static void release_block(tern_req_t *req)
{
    block_free(req->ext);
    req->ext = NULL;
}

tern_status_t tern_bsend_start(tern_req_t *send_req)
{
    tern_bsend_pool_t *pool = tern_bsend_pool_for(send_req->context_id);
    void *payload;
    bblock_t *block = block_alloc(pool, send_req->bytes, &payload);
    if (!block)
        return pool->automatic ? TERN_ERR_NOMEM : TERN_ERR_NO_ROOM;
    if (send_req->noncontig)
        tern_datatype_pack(send_req->buf, (size_t)send_req->count, send_req->datatype, payload);
    else if (send_req->bytes)
        memcpy(payload, send_req->buf, send_req->bytes);
    tern_req_t *req = tern_req_alloc(TERN_REQ_SEND);
    if (!req) {
        block_free(block);
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
