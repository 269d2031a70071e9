/* The libfabric transport's sends (ofi.c has the design): every active
 * message leaves from a registered send buffer, as a copy (am_send) or
 * written in place (am_reserve, am_commit), against one of the peer's
 * credits; the credits we owe ride along in the header. A provider queue
 * full at commit parks the message on the deferred list, which progress
 * empties in order (tern_ofi_send_deferred). */
#include "transport/ofi/ofi_internal.h"

#include <string.h>

/* Sends a send buffer whose message (len bytes after our header) is
 * written: fills in the header, with the credits we owe riding along and
 * the padding to a multiple of 8, and posts it. fi_send's result. */
static ssize_t send_buffer(tern_tl_t *tl, ofi_op_t *op, int peer, int rail, uint16_t type,
                           size_t len)
{
    ofi_peer_t *p = &tl->peers[peer];
    char *buf = tl->send_mem + (size_t)op->index * tl->buf_size;
    int credits = p->owed > 65535 ? 65535 : p->owed;
    size_t total = sizeof(ofi_hdr_t) + len, padded = (total + 7) & ~(size_t)7;
    ofi_hdr_t h = {.src = (uint32_t)tl->rank, .type = (uint8_t)type,
                   .pad = (uint8_t)(padded - total), .credits = (uint16_t)credits};
    memcpy(buf, &h, sizeof h);
    ofi_rail_t *rl = &tl->rails[rail];
    ssize_t ret = fi_send(rl->ep, buf, padded, rl->send_desc, p->addr[rail], &op->ctx);
    if (ret == 0) {
        tl->sends_in_flight++;
        p->owed -= credits;
    }
    return ret;
}

static tern_status_t post_send(tern_tl_t *tl, int peer, int rail, uint16_t type, const void *hdr,
                               size_t hdr_len, const void *payload, size_t payload_len)
{
    ofi_peer_t *p = &tl->peers[peer];
    if (!p->resolved) {
        tern_status_t st = tern_ofi_resolve(tl, peer);
        if (st != TERN_OK) {
            tern_ofi_peer_error(tl, peer, st, "ofi: no connection can be set up to it");
            return st;
        }
    }
    ofi_op_t *op = tl->send_free;
    if (!op)
        return TERN_ERR_AGAIN;
    char *msg = tl->send_mem + (size_t)op->index * tl->buf_size + sizeof(ofi_hdr_t);
    if (hdr_len)
        memcpy(msg, hdr, hdr_len);
    if (payload_len)
        memcpy(msg + hdr_len, payload, payload_len);
    op->peer = peer; /* a completion with an error names it */
    ssize_t ret = send_buffer(tl, op, peer, rail, type, hdr_len + payload_len);
    if (ret == -FI_EAGAIN)
        return TERN_ERR_AGAIN;
    if (ret) {
        tern_ofi_peer_error(tl, peer, TERN_ERR_PEER, "ofi: posting a send failed: %s",
                            fi_strerror((int)-ret));
        return TERN_ERR_PEER;
    }
    tl->send_free = op->next;
    return TERN_OK;
}

tern_status_t tern_ofi_am_send(tern_tl_t *tl, int peer, const void *hdr, size_t hdr_len,
                               const void *payload, size_t payload_len)
{
    ofi_peer_t *p = &tl->peers[peer];
    if (hdr_len + payload_len > tern_ofi_am_max(tl))
        return TERN_ERR_ARG;
    if (p->credits == 0 || tl->deferred_head)
        return TERN_ERR_AGAIN;
    tern_status_t st = post_send(tl, peer, p->rail, OFI_MSG_AM, hdr, hdr_len, payload, payload_len);
    if (st == TERN_OK)
        p->credits--;
    return st;
}

/* In-place sends: the core writes (packs) its message straight into a send
 * buffer, one copy for contiguous and non-contiguous data alike. Reserve
 * takes the buffer and the peer's credit, so commit cannot fail for want of
 * them; a provider queue full at commit (-FI_EAGAIN) leaves the message on
 * the deferred list, which progress sends in order, and until it is empty
 * no other active message leaves (order per pair). */
void *tern_ofi_am_reserve(tern_tl_t *tl, int peer, size_t len)
{
    (void)len; /* every send buffer holds am_max */
    ofi_peer_t *p = &tl->peers[peer];
    if (p->credits == 0 || !tl->send_free || tl->deferred_head)
        return NULL;
    if (!p->resolved && tern_ofi_resolve(tl, peer) != TERN_OK)
        return NULL;   /* am_send, the fallback, reports it */
    ofi_op_t *op = tl->send_free;
    tl->send_free = op->next;
    tl->reserved = op;
    p->credits--;
    return tl->send_mem + (size_t)op->index * tl->buf_size + sizeof(ofi_hdr_t);
}

/* Sends a committed send buffer; -FI_EAGAIN when the queue is full, 0
 * when sent or when the send failed (the buffer is then free again and
 * the peer reported failed: the caller must not hold op in a list). */
static ssize_t send_committed(tern_tl_t *tl, ofi_op_t *op)
{
    ssize_t ret = send_buffer(tl, op, op->peer, tl->peers[op->peer].rail, OFI_MSG_AM, op->len);
    if (ret == 0 || ret == -FI_EAGAIN)
        return ret;
    op->next = tl->send_free;
    tl->send_free = op;
    tern_ofi_peer_error(tl, op->peer, TERN_ERR_PEER, "ofi: posting a send failed: %s",
                        fi_strerror((int)-ret));
    return 0;
}

void tern_ofi_am_commit(tern_tl_t *tl, int peer, size_t len)
{
    ofi_op_t *op = tl->reserved;
    tl->reserved = NULL;
    op->peer = peer;
    op->len = len;
    if (tl->deferred_head || send_committed(tl, op) == -FI_EAGAIN) {
        op->next = NULL;
        if (tl->deferred_tail)
            tl->deferred_tail->next = op;
        else
            tl->deferred_head = op;
        tl->deferred_tail = op;
    }
}

int tern_ofi_send_deferred(tern_tl_t *tl)
{
    int n = 0;
    while (tl->deferred_head) {
        /* Unlinked first: a failure drops the peer's other messages. */
        ofi_op_t *op = tl->deferred_head;
        tl->deferred_head = op->next;
        if (!tl->deferred_head)
            tl->deferred_tail = NULL;
        if (send_committed(tl, op) == -FI_EAGAIN) {
            op->next = tl->deferred_head;
            tl->deferred_head = op;
            if (!tl->deferred_tail)
                tl->deferred_tail = op;
            break;
        }
        n++;
    }
    return n;
}

tern_status_t tern_ofi_send_ctrl(tern_tl_t *tl, int peer, int rail, uint16_t type)
{
    return post_send(tl, peer, rail, type, NULL, 0, NULL, 0);
}
