/* Rendezvous by the sender's RDMA write (rndv_write.h). */
#include "core/pt2pt/rndv_write.h"
#include "base/pvars.h"
#include "core/pt2pt/p2p_coop.h"
#include "core/pt2pt/p2p_queue.h"
#include "core/runtime/runtime.h"

#include <stddef.h>

typedef struct {
    uint32_t type;
    uint32_t pad;
    uint64_t sreq, rreq;
    uint64_t addr; /* the receiver's buffer */
    tern_rkey_t rkey;
    uint64_t bytes;
} pkt_wcts_t;

typedef struct {
    uint32_t type;
    uint32_t pad;
    uint64_t rreq;
} pkt_wdone_t;

int tern_p2p_rndv_write_begin(int src_world, tern_req_t *req, size_t n, uint64_t sreq)
{
    tern_peer_t *peer = &tern_rt.peers[src_world];
    pkt_wcts_t c = {.type = TERN_PKT_WCTS, .sreq = sreq, .rreq = (uint64_t)(uintptr_t)req,
                    .addr = (uint64_t)(uintptr_t)req->buf, .bytes = n};
    if (peer->ops->mem_reg(peer->tl, req->buf, n, &c.rkey) != TERN_OK)
        return 0;
    req->coop_bytes = 0;
    tern_pvar_add(TERN_PVAR_P2P_RNDV_WRITE, 1);
    tern_pvar_add(TERN_PVAR_P2P_RNDV_WRITE_BYTES, n);
    tern_p2p_send_header(src_world, &c, sizeof c);
    return 1;
}

/* Sender: the write is in the receiver's memory (delivery complete). */
static void write_done(tern_tl_comp_t *comp, tern_status_t st)
{
    tern_req_t *req = (tern_req_t *)((char *)comp - offsetof(tern_req_t, get_comp));
    if (st != TERN_OK) {
        /* The receiver waits for a WDONE that will not come. */
        tern_p2p_peer_broken(req->peer_world, st, "a rendezvous write failed");
        return;
    }
    tern_peer_t *peer = &tern_rt.peers[req->peer_world];
    pkt_wdone_t d = {.type = TERN_PKT_WDONE, .rreq = req->remote_req};
    tern_p2p_send_header(req->peer_world, &d, sizeof d);
    /* The RTS registered the buffer (p2p.c), as the FIN's release does. */
    peer->ops->mem_dereg(peer->tl, req->buf, req->bytes);
    tern_p2p_inflight_remove(peer, req);
    tern_p2p_send_complete(req);
}

static void write_start(int src_world, const pkt_wcts_t *c)
{
    tern_peer_t *peer = &tern_rt.peers[src_world];
    tern_req_t *req = (tern_req_t *)(uintptr_t)c->sreq;
    req->remote_req = c->rreq;
    req->get_comp.cb = write_done;
    tern_status_t st = peer->ops->put(peer->tl, src_world, req->buf, (size_t)c->bytes, c->addr,
                                      &c->rkey, &req->get_comp);
    if (st != TERN_OK)
        tern_p2p_peer_broken(src_world, st, "a rendezvous write could not start");
}

void tern_p2p_rndv_write_packet(int src_world, const void *pkt, size_t len)
{
    uint32_t type = *(const uint32_t *)pkt;
    if (type == TERN_PKT_WCTS && len >= sizeof(pkt_wcts_t)) {
        write_start(src_world, pkt);
    } else if (type == TERN_PKT_WDONE && len >= sizeof(pkt_wdone_t)) {
        tern_req_t *req = (tern_req_t *)(uintptr_t)((const pkt_wdone_t *)pkt)->rreq;
        tern_peer_t *peer = &tern_rt.peers[src_world];
        peer->ops->mem_dereg(peer->tl, req->buf, req->transfer_bytes);
        tern_p2p_rndv_landed(src_world, req, req->transfer_bytes);
    } else {
        tern_p2p_peer_broken(src_world, TERN_ERR_INTERNAL, "corrupt rendezvous-write packet");
    }
}
