/* The self transport: messages a rank sends to itself. An active message is
 * copied into a FIFO and delivered at the next progress call (never from
 * inside am_send, so the core never re-enters itself); get/put are memcpy. */
#include "transport/transport.h"
#include "base/log.h"

#include <stdlib.h>
#include <string.h>

typedef struct self_msg {
    struct self_msg *next;
    size_t len;
    unsigned char data[];
} self_msg_t;

struct tern_tl {
    int rank;
    tern_am_handler_fn handler;
    void *ctx;
    self_msg_t *head, *tail;
    int queued; /* work hint: messages in the FIFO */
};

static tern_status_t self_init(const tern_tl_params_t *p, tern_tl_t **tl_p)
{
    tern_tl_t *tl = calloc(1, sizeof *tl);
    if (!tl)
        return TERN_ERR_NOMEM;
    tl->rank = p->rank;
    tl->handler = p->am_handler;
    tl->ctx = p->am_ctx;
    *tl_p = tl;
    return TERN_OK;
}

static void self_finalize(tern_tl_t *tl)
{
    while (tl->head) {
        self_msg_t *m = tl->head;
        tl->head = m->next;
        free(m);
    }
    free(tl);
}

static int self_reachable(tern_tl_t *tl, int peer) { return peer == tl->rank; }
static tern_status_t self_connect(tern_tl_t *tl, int peer) { (void)tl, (void)peer; return TERN_OK; }
static void self_disconnect(tern_tl_t *tl, int peer) { (void)tl, (void)peer; }

static void self_query(tern_tl_t *tl, int peer, tern_tl_attr_t *attr_p)
{
    (void)peer;
    *attr_p = (tern_tl_attr_t){
        .caps = TERN_TL_CAP_GET | TERN_TL_CAP_PUT | TERN_TL_CAP_GETV | TERN_TL_CAP_PUTV |
                TERN_TL_CAP_RMA_SYNC,
        /* Large enough that eager covers what other transports send eagerly. */
        .am_max = 16384,
        .rma_min = 0,
        .work_hint = &tl->queued,
    };
}

static tern_status_t self_am_send(tern_tl_t *tl, int peer, const void *hdr, size_t hdr_len,
                                  const void *payload, size_t payload_len)
{
    (void)peer;
    self_msg_t *m = malloc(sizeof *m + hdr_len + payload_len);
    if (!m)
        return TERN_ERR_NOMEM;
    m->next = NULL;
    m->len = hdr_len + payload_len;
    memcpy(m->data, hdr, hdr_len);
    if (payload_len)
        memcpy(m->data + hdr_len, payload, payload_len);
    if (tl->tail)
        tl->tail->next = m;
    else
        tl->head = m;
    tl->tail = m;
    tl->queued++;
    return TERN_OK;
}

static int self_progress(tern_tl_t *tl)
{
    int n = 0;
    /* Deliver only what was queued before this call: handlers may queue more. */
    self_msg_t *last = tl->tail;
    while (tl->head) {
        self_msg_t *m = tl->head;
        tl->head = m->next;
        if (!tl->head)
            tl->tail = NULL;
        int was_last = m == last;
        tl->queued--;
        tl->handler(tl->ctx, tl->rank, m->data, m->len);
        free(m);
        n++;
        if (was_last)
            break;
    }
    return n;
}

static tern_status_t self_mem_reg(tern_tl_t *tl, void *buf, size_t len, tern_rkey_t *rkey_p)
{
    (void)tl, (void)buf, (void)len;
    memset(rkey_p, 0, sizeof *rkey_p);
    return TERN_OK;
}

static void self_mem_dereg(tern_tl_t *tl, void *buf, size_t len) { (void)tl, (void)buf, (void)len; }

static tern_status_t self_get(tern_tl_t *tl, int peer, void *local, size_t len,
                              uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    (void)tl, (void)peer, (void)rkey;
    memcpy(local, (const void *)(uintptr_t)remote_addr, len);
    comp->cb(comp, TERN_OK);
    return TERN_OK;
}

static tern_status_t self_put(tern_tl_t *tl, int peer, const void *local, size_t len,
                              uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp)
{
    (void)tl, (void)peer, (void)rkey;
    memcpy((void *)(uintptr_t)remote_addr, local, len);
    comp->cb(comp, TERN_OK);
    return TERN_OK;
}

/* Our own memory: a memcpy per piece. */
static tern_status_t self_getv(tern_tl_t *tl, int peer, void *local, size_t len,
                               const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                               tern_tl_comp_t *comp)
{
    (void)tl, (void)peer, (void)len, (void)rkey;
    char *at = local;
    for (size_t i = 0; i < n_remote; i++) {
        memcpy(at, remote[i].iov_base, remote[i].iov_len);
        at += remote[i].iov_len;
    }
    if (comp)
        comp->cb(comp, TERN_OK);
    return TERN_OK;
}

static tern_status_t self_putv(tern_tl_t *tl, int peer, const void *local, size_t len,
                               const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                               tern_tl_comp_t *comp)
{
    (void)tl, (void)peer, (void)len, (void)rkey;
    const char *at = local;
    for (size_t i = 0; i < n_remote; i++) {
        memcpy(remote[i].iov_base, at, remote[i].iov_len);
        at += remote[i].iov_len;
    }
    if (comp)
        comp->cb(comp, TERN_OK);
    return TERN_OK;
}

const tern_tl_ops_t tern_tl_self_ops = {
    .name = "self",
    .reach = TERN_TL_REACH_JOB,
    .polls_memory = 1,
    .init = self_init,
    .finalize = self_finalize,
    .reachable = self_reachable,
    .connect = self_connect,
    .disconnect = self_disconnect,
    .query = self_query,
    .am_send = self_am_send,
    .progress = self_progress,
    .mem_reg = self_mem_reg,
    .mem_dereg = self_mem_dereg,
    .get = self_get,
    .put = self_put,
    .getv = self_getv,
    .putv = self_putv,
};
