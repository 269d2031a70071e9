/* Cooperative large-message copies (p2p_coop.h). */
#include "core/pt2pt/p2p_coop.h"
#include "base/log.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/p2p_queue.h"
#include "core/runtime/runtime.h"

typedef struct {
    uint32_t type;
    uint32_t pad;
    uint64_t sreq, rreq;
    uint64_t addr;   /* the receiver's buffer */
    tern_rkey_t rkey;
    uint64_t offset; /* the tail: [offset, offset + bytes) of the message */
    uint64_t bytes;
} pkt_coop_t;

typedef struct {
    uint32_t type;
    uint32_t pad;
    uint64_t rreq;
    uint64_t bytes;
} pkt_coop_done_t;

/* The head ends on a page boundary of the buffer: the two writers never
 * share a line, and the kernel copies whole pages. */
#define COOP_ALIGN 4096

size_t tern_p2p_coop_begin(int src_world, tern_req_t *req, size_t n, uint64_t sreq)
{
    req->coop_bytes = 0;
    tern_peer_t *peer = &tern_rt.peers[src_world];
    size_t pct = peer->coop_split; /* the transport's (shm: TERN_SHM_COOP_SPLIT) */
    if (pct == 0 || !(peer->caps & TERN_TL_CAP_PUT))
        return n;
    size_t head = n - n / 100 * pct - n % 100 * pct / 100;
    head = (head + COOP_ALIGN - 1) / COOP_ALIGN * COOP_ALIGN;
    if (head >= n)
        return n; /* too small to split */
    pkt_coop_t c = {.type = TERN_PKT_COOP, .sreq = sreq, .rreq = (uint64_t)(uintptr_t)req,
                    .addr = (uint64_t)(uintptr_t)req->buf, .offset = head, .bytes = n - head};
    if (peer->ops->mem_reg(peer->tl, req->buf, n, &c.rkey) != TERN_OK)
        return n;
    req->coop_bytes = n - head;
    tern_debug("cooperative copy from rank %d: this rank reads %zu bytes, the sender writes %zu", src_world,
               head, n - head);
    tern_p2p_send_header(src_world, &c, sizeof c);
    return head;
}

static void put_done(tern_tl_comp_t *comp, tern_status_t st)
{
    (void)comp;
    (void)st; /* shm's put completes before it returns: see coop_put */
}

static void coop_put(int src_world, const pkt_coop_t *c)
{
    tern_peer_t *peer = &tern_rt.peers[src_world];
    tern_req_t *req = (tern_req_t *)(uintptr_t)c->sreq;
    tern_tl_comp_t comp = {.cb = put_done};
    tern_status_t st = peer->ops->put(peer->tl, src_world, (const char *)req->buf + c->offset,
                                      (size_t)c->bytes, c->addr + c->offset, &c->rkey, &comp);
    if (st != TERN_OK) {
        /* The receiver waits for a tail that will not come. */
        tern_peer_failed(src_world, st, "a cooperative rendezvous write failed");
        return;
    }
    pkt_coop_done_t d = {.type = TERN_PKT_COOP_DONE, .rreq = c->rreq, .bytes = c->bytes};
    tern_p2p_send_header(src_world, &d, sizeof d);
}

void tern_p2p_coop_packet(int src_world, const void *pkt, size_t len)
{
    uint32_t type = *(const uint32_t *)pkt;
    if (type == TERN_PKT_COOP && len >= sizeof(pkt_coop_t)) {
        coop_put(src_world, pkt);
    } else if (type == TERN_PKT_COOP_DONE && len >= sizeof(pkt_coop_done_t)) {
        const pkt_coop_done_t *d = pkt;
        tern_p2p_rndv_landed(src_world, (tern_req_t *)(uintptr_t)d->rreq, (size_t)d->bytes);
    } else {
        tern_peer_failed(src_world, TERN_ERR_INTERNAL, "corrupt cooperative-copy packet");
    }
}
