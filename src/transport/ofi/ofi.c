/* The libfabric transport: one reliable-datagram (FI_EP_RDM) endpoint per
 * rank serves every peer; the provider (verbs, efa, cxi, psm2, tcp...) is
 * chosen by libfabric, TERN_OFI_PROVIDER or FI_PROVIDER.
 *
 * Active messages go eagerly into receive buffers posted at start-up, with
 * credit-based flow control: a sender holds credit_window credits per peer,
 * one per message; the receiver returns them piggybacked on its own messages
 * or, when it owes half a window, in a CREDIT message (for which every peer
 * has a reserve of posted buffers). am_send copies into a registered send
 * buffer and never blocks: no credit, no buffer or a full queue is
 * TERN_ERR_AGAIN. Large messages use the core's rendezvous over get()
 * (fi_read, zero copy), see ofi_rma.c. */
#include "transport/ofi/ofi_internal.h"
#include "base/config.h"
#include "base/log.h"
#include "pmi/pmi.h"

#include <stdlib.h>
#include <string.h>

/* Posted buffers per peer beyond its credits: CREDIT and HELLO messages. */
#define OFI_RESERVE_PER_PEER 3

static int list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

/* Peers this transport will serve: everyone but us, except that when shm is
 * allowed it takes the ranks on our node (the runtime prefers it). */
static int is_network_peer(const tern_tl_params_t *p, int shm, int r)
{
    return r != p->rank && !(shm && p->node_of_rank[r] == p->node);
}

static int network_peers(const tern_tl_params_t *p)
{
    int shm = list_has(tern_config_str("TERN_TRANSPORTS"), "shm");
    int n = 0;
    for (int r = 0; r < p->size; r++)
        n += is_network_peer(p, shm, r);
    return n;
}

int tern_ofi_mr_reg(tern_tl_t *tl, void *buf, size_t len, uint64_t access, struct fid_mr **mr_p)
{
    int ret = fi_mr_reg(tl->domain, buf, len, access, 0, tl->next_key++, 0, mr_p, NULL);
    if (ret || !tl->mr_endpoint)
        return ret;
    if ((ret = fi_mr_bind(*mr_p, &tl->ep->fid, 0)) || (ret = fi_mr_enable(*mr_p))) {
        fi_close(&(*mr_p)->fid);
        *mr_p = NULL;
    }
    return ret;
}

tern_status_t tern_ofi_reg_local(tern_tl_t *tl, void *buf, size_t len, uint64_t access,
                                 struct fid_mr **mr_p, void **desc_p)
{
    *mr_p = NULL;
    *desc_p = NULL;
    if (!tl->mr_local)
        return TERN_OK;
    int ret = tern_ofi_mr_reg(tl, buf, len, access, mr_p);
    if (ret) {
        tern_error("ofi: fi_mr_reg of %zu bytes failed: %s", len, fi_strerror(-ret));
        return TERN_ERR_NOMEM;
    }
    *desc_p = fi_mr_desc(*mr_p);
    return TERN_OK;
}

static struct fi_info *choose_provider(void)
{
    struct fi_info *hints = fi_allocinfo();
    if (!hints)
        return NULL;
    hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    /* The core relies on in-order delivery per pair. */
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    const char *prov = tern_config_str("TERN_OFI_PROVIDER");
    int forced = strcmp(prov, "auto") != 0 && prov[0];
    if (forced)
        hints->fabric_attr->prov_name = strdup(prov);
    struct fi_info *all = NULL;
    int ret = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &all);
    fi_freeinfo(hints);
    if (ret || !all) {
        tern_error("ofi: no libfabric provider offers reliable messages and RMA%s%s: %s",
                   forced ? " for TERN_OFI_PROVIDER=" : "", forced ? prov : "",
                   ret ? fi_strerror(-ret) : "none found");
        return NULL;
    }
    /* libfabric lists the best first; skip what cannot leave the host
     * (its shm provider, loopback domains) unless asked for by name. */
    struct fi_info *pick = NULL;
    for (struct fi_info *i = all; i && !pick; i = i->next) {
        const char *pn = i->fabric_attr->prov_name;
        const char *dn = i->domain_attr->name ? i->domain_attr->name : "";
        if (!forced && (strstr(pn, "shm") || strcmp(dn, "lo") == 0))
            continue;
        pick = i;
    }
    if (!pick)
        pick = all;
    struct fi_info *dup = fi_dupinfo(pick);
    fi_freeinfo(all);
    return dup;
}

static tern_status_t open_endpoint(tern_tl_t *tl)
{
    struct fi_info *info = tl->info;
    int ret;
    if ((ret = fi_fabric(info->fabric_attr, &tl->fabric, NULL)) ||
        (ret = fi_domain(tl->fabric, info, &tl->domain, NULL))) {
        tern_error("ofi: cannot open %s: %s", info->fabric_attr->prov_name, fi_strerror(-ret));
        return TERN_ERR_IO;
    }
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_NONE,
                                 .size = (size_t)(tl->n_recv + tl->n_send) + 1024};
    struct fi_av_attr av_attr = {.type = info->domain_attr->av_type, .count = (size_t)tl->size};
    if ((ret = fi_cq_open(tl->domain, &cq_attr, &tl->cq, NULL)) ||
        (ret = fi_av_open(tl->domain, &av_attr, &tl->av, NULL)) ||
        (ret = fi_endpoint(tl->domain, info, &tl->ep, NULL)) ||
        (ret = fi_ep_bind(tl->ep, &tl->cq->fid, FI_TRANSMIT | FI_RECV)) ||
        (ret = fi_ep_bind(tl->ep, &tl->av->fid, 0)) || (ret = fi_enable(tl->ep))) {
        tern_error("ofi: cannot open an endpoint on %s/%s: %s", info->fabric_attr->prov_name,
                   info->domain_attr->name, fi_strerror(-ret));
        return TERN_ERR_IO;
    }
    tl->mr_local = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    /* mr_mode 0 is scalable mode: target addresses are offsets. */
    tl->mr_virt_addr = (info->domain_attr->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) != 0;
    tl->mr_prov_key = (info->domain_attr->mr_mode & (FI_MR_PROV_KEY | FI_MR_BASIC)) != 0;
    tl->mr_endpoint = (info->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
    tl->max_msg_size = info->ep_attr->max_msg_size;
    if (tl->max_msg_size == 0 || tl->max_msg_size > ((size_t)1 << 30))
        tl->max_msg_size = (size_t)1 << 30;
    return TERN_OK;
}

static tern_status_t post_recv(tern_tl_t *tl, int i)
{
    ofi_op_t *op = &tl->recv_ops[i];
    int ret = (int)fi_recv(tl->ep, tl->recv_mem + (size_t)i * tl->buf_size, tl->buf_size,
                           tl->recv_desc, FI_ADDR_UNSPEC, &op->ctx);
    if (ret == -FI_EAGAIN) {
        tl->repost[tl->n_repost++] = i;
        return TERN_OK;
    }
    if (ret) {
        tern_error("ofi: fi_recv failed: %s", fi_strerror(-ret));
        return TERN_ERR_IO;
    }
    return TERN_OK;
}

static tern_status_t setup_buffers(tern_tl_t *tl, int n_peers)
{
    long window = tern_config_long("TERN_OFI_CREDITS");
    if (window < 2)
        window = 2;
    long n_recv = (long)n_peers * (window + OFI_RESERVE_PER_PEER);
    long rx_max = (long)tl->info->rx_attr->size;
    if (rx_max > 0 && n_recv > rx_max) {
        /* The receive queue is the limit: share it out (the provider buffers
         * what overflows, so fewer credits cost speed, not correctness). */
        n_recv = rx_max;
        window = n_recv / n_peers - OFI_RESERVE_PER_PEER;
        if (window < 2)
            window = 2;
    }
    long n_send = tern_config_long("TERN_OFI_SEND_BUFS");
    if (n_send < 4)
        n_send = 4;
    long tx_max = (long)tl->info->tx_attr->size;
    if (tx_max > 0 && n_send > tx_max)
        n_send = tx_max;
    tl->credit_window = (int)window;
    tl->credit_return_at = (int)(window / 2);
    tl->n_recv = (int)n_recv;
    tl->n_send = (int)n_send;
    tl->recv_mem = aligned_alloc(64, (size_t)n_recv * tl->buf_size);
    tl->send_mem = aligned_alloc(64, (size_t)n_send * tl->buf_size);
    tl->recv_ops = calloc((size_t)n_recv, sizeof *tl->recv_ops);
    tl->send_ops = calloc((size_t)n_send, sizeof *tl->send_ops);
    tl->repost = calloc((size_t)n_recv, sizeof *tl->repost);
    if (!tl->recv_mem || !tl->send_mem || !tl->recv_ops || !tl->send_ops || !tl->repost)
        return TERN_ERR_NOMEM;
    return TERN_OK;
}

static tern_status_t post_buffers(tern_tl_t *tl)
{
    tern_status_t st = tern_ofi_reg_local(tl, tl->recv_mem, (size_t)tl->n_recv * tl->buf_size,
                                          FI_RECV, &tl->recv_mr, &tl->recv_desc);
    if (st == TERN_OK)
        st = tern_ofi_reg_local(tl, tl->send_mem, (size_t)tl->n_send * tl->buf_size, FI_SEND,
                                &tl->send_mr, &tl->send_desc);
    if (st != TERN_OK)
        return st;
    for (int i = tl->n_send - 1; i >= 0; i--) {
        tl->send_ops[i].kind = OFI_OP_SEND;
        tl->send_ops[i].index = i;
        tl->send_ops[i].next = tl->send_free;
        tl->send_free = &tl->send_ops[i];
    }
    for (int i = 0; i < tl->n_recv; i++) {
        tl->recv_ops[i].kind = OFI_OP_RECV;
        tl->recv_ops[i].index = i;
        if ((st = post_recv(tl, i)) != TERN_OK)
            return st;
    }
    return TERN_OK;
}

static void ofi_finalize(tern_tl_t *tl);

static tern_status_t ofi_init(const tern_tl_params_t *p, tern_tl_t **tl_p)
{
    tern_tl_t *tl = calloc(1, sizeof *tl);
    if (!tl)
        return TERN_ERR_NOMEM;
    tl->rank = p->rank;
    tl->size = p->size;
    tl->handler = p->am_handler;
    tl->am_ctx = p->am_ctx;
    *tl_p = tl;
    /* Decided from job-wide facts only, so every rank agrees (init may
     * fence): a job on one host with shm allowed opens nothing. */
    int n_peers = network_peers(p);
    if (n_peers == 0) {
        tl->idle = 1;
        return TERN_OK;
    }
    tl->peers = calloc((size_t)p->size, sizeof *tl->peers);
    tl->credit_list = calloc((size_t)p->size, sizeof *tl->credit_list);
    if (!tl->peers || !tl->credit_list)
        return TERN_ERR_NOMEM;
    long eager = tern_config_long("TERN_OFI_EAGER_SIZE");
    if (eager < 256)
        eager = 256;
    tl->buf_size = (size_t)eager;
    long rma_min = tern_config_long("TERN_OFI_RMA_MIN");
    tl->rma_min = rma_min < 0 ? 0 : (size_t)rma_min;
    tl->next_key = 1;

    tern_status_t st = TERN_ERR_NOT_SUPPORTED;
    if (!(tl->info = choose_provider()))
        goto fail;
    if ((st = setup_buffers(tl, n_peers)) != TERN_OK || (st = open_endpoint(tl)) != TERN_OK ||
        (st = post_buffers(tl)) != TERN_OK)
        goto fail;
    int shm = list_has(tern_config_str("TERN_TRANSPORTS"), "shm");
    for (int r = 0; r < p->size; r++) {
        tl->peers[r].credits = tl->credit_window;
        tl->peers[r].net = is_network_peer(p, shm, r);
    }
    tern_info("ofi: provider %s, domain %s, mr_mode 0x%x, %d receive buffers of %zu bytes, %d credits per peer",
              tl->info->fabric_attr->prov_name, tl->info->domain_attr->name,
              (unsigned)tl->info->domain_attr->mr_mode, tl->n_recv,
              tl->buf_size, tl->credit_window);

    if ((st = tern_ofi_publish_address(tl)) != TERN_OK)
        goto fail;
    const char *mode = tern_config_str("TERN_CONNECT");
    if (strcmp(mode, "all") == 0)
        tl->connect_all = 1;
    else if (strcmp(mode, "lazy") == 0)
        tl->connect_all = 0;
    else if (strcmp(mode, "auto") == 0)
        tl->connect_all = p->size <= 64;
    else {
        tern_error("ofi: TERN_CONNECT=%s: expected all, lazy or auto", mode);
        st = TERN_ERR_ARG;
        goto fail;
    }
    if (tl->connect_all && (st = tern_ofi_connect_all(tl)) != TERN_OK)
        goto fail;
    return TERN_OK;
fail:
    /* The runtime reports the failure and ends; release what we opened
     * (idle: no drain, no fence with ranks that may not get there). */
    tl->idle = 1;
    ofi_finalize(tl);
    *tl_p = NULL;
    return st;
}

static void close_fid(struct fid *f)
{
    if (f)
        fi_close(f);
}

static void ofi_finalize(tern_tl_t *tl)
{
    if (!tl)
        return;
    if (!tl->idle && tl->ep) {
        /* Let our last sends (credit returns, FINs) leave, then wait for
         * every rank so no endpoint closes under a peer still talking. */
        while (tl->sends_in_flight || tl->rma_in_flight || tl->rma_head)
            tern_ofi_progress(tl);
        tern_pmi_fence();
    }
    tern_ofi_rma_finalize(tl);
    close_fid(tl->ep ? &tl->ep->fid : NULL);
    close_fid(tl->av ? &tl->av->fid : NULL);
    close_fid(tl->cq ? &tl->cq->fid : NULL);
    close_fid(tl->recv_mr ? &tl->recv_mr->fid : NULL);
    close_fid(tl->send_mr ? &tl->send_mr->fid : NULL);
    close_fid(tl->domain ? &tl->domain->fid : NULL);
    close_fid(tl->fabric ? &tl->fabric->fid : NULL);
    if (tl->info)
        fi_freeinfo(tl->info);
    free(tl->recv_mem);
    free(tl->send_mem);
    free(tl->recv_ops);
    free(tl->send_ops);
    free(tl->repost);
    free(tl->peers);
    free(tl->credit_list);
    free(tl);
}

static int ofi_reachable(tern_tl_t *tl, int peer) { return !tl->idle && peer != tl->rank; }

static tern_status_t ofi_connect(tern_tl_t *tl, int peer)
{
    return tl->peers[peer].resolved ? TERN_OK : tern_ofi_resolve(tl, peer);
}

static void ofi_disconnect(tern_tl_t *tl, int peer) { (void)tl, (void)peer; }
static size_t ofi_am_max(tern_tl_t *tl) { return tl->buf_size - sizeof(ofi_hdr_t); }
static unsigned ofi_caps(tern_tl_t *tl) { (void)tl; return TERN_TL_CAP_GET | TERN_TL_CAP_PUT; }
static size_t ofi_rma_min(tern_tl_t *tl) { return tl->rma_min; }

/* Fills a send buffer and posts it. Credits returned ride along. */
static tern_status_t post_send(tern_tl_t *tl, int peer, uint16_t type, const void *hdr,
                               size_t hdr_len, const void *payload, size_t payload_len)
{
    ofi_peer_t *p = &tl->peers[peer];
    if (!p->resolved) {
        tern_status_t st = tern_ofi_resolve(tl, peer);
        if (st != TERN_OK)
            return st;
    }
    ofi_op_t *op = tl->send_free;
    if (!op)
        return TERN_ERR_AGAIN;
    char *buf = tl->send_mem + (size_t)op->index * tl->buf_size;
    int credits = p->owed > 65535 ? 65535 : p->owed;
    ofi_hdr_t h = {.src = (uint32_t)tl->rank, .type = type, .credits = (uint16_t)credits};
    memcpy(buf, &h, sizeof h);
    if (hdr_len)
        memcpy(buf + sizeof h, hdr, hdr_len);
    if (payload_len)
        memcpy(buf + sizeof h + hdr_len, payload, payload_len);
    ssize_t ret = fi_send(tl->ep, buf, sizeof h + hdr_len + payload_len, tl->send_desc, p->addr,
                          &op->ctx);
    if (ret == -FI_EAGAIN)
        return TERN_ERR_AGAIN;
    if (ret) {
        tern_error("ofi: sending to rank %d failed: %s", peer, fi_strerror((int)-ret));
        return TERN_ERR_PEER;
    }
    tl->send_free = op->next;
    tl->sends_in_flight++;
    p->owed -= credits;
    return TERN_OK;
}

static tern_status_t ofi_am_send(tern_tl_t *tl, int peer, const void *hdr, size_t hdr_len,
                                 const void *payload, size_t payload_len)
{
    ofi_peer_t *p = &tl->peers[peer];
    if (hdr_len + payload_len > ofi_am_max(tl))
        return TERN_ERR_ARG;
    if (p->credits == 0)
        return TERN_ERR_AGAIN;
    tern_status_t st = post_send(tl, peer, OFI_MSG_AM, hdr, hdr_len, payload, payload_len);
    if (st == TERN_OK)
        p->credits--;
    return st;
}

tern_status_t tern_ofi_send_ctrl(tern_tl_t *tl, int peer, uint16_t type)
{
    return post_send(tl, peer, type, NULL, 0, NULL, 0);
}

static void recv_done(tern_tl_t *tl, ofi_op_t *op, size_t len)
{
    const char *buf = tl->recv_mem + (size_t)op->index * tl->buf_size;
    ofi_hdr_t h;
    if (len < sizeof h)
        tern_fatal("ofi: runt message of %zu bytes", len);
    memcpy(&h, buf, sizeof h);
    if (h.src >= (uint32_t)tl->size)
        tern_fatal("ofi: message from unknown rank %u", h.src);
    ofi_peer_t *p = &tl->peers[h.src];
    p->credits += h.credits;
    if (h.type == OFI_MSG_AM)
        tl->handler(tl->am_ctx, (int)h.src, buf + sizeof h, len - sizeof h);
    else if (h.type == OFI_MSG_HELLO)
        p->hello_recvd = 1;
    if (post_recv(tl, op->index) != TERN_OK)
        tern_fatal("ofi: cannot repost a receive buffer");
    /* Only active messages spent a credit of the sender. */
    if (h.type == OFI_MSG_AM && ++p->owed >= tl->credit_return_at && !p->in_credit_list) {
        p->in_credit_list = 1;
        tl->credit_list[tl->n_credit_list++] = (int)h.src;
    }
}

static void report_cq_error(tern_tl_t *tl)
{
    struct fi_cq_err_entry err = {0};
    if (fi_cq_readerr(tl->cq, &err, 0) != 1)
        tern_fatal("ofi: completion queue error (no details)");
    ofi_op_t *op = err.op_context;
    if (err.err == FI_ECANCELED)
        return;
    tern_fatal("ofi: %s failed: %s (%s)",
               !op                        ? "an operation"
               : op->kind == OFI_OP_RECV ? "a receive"
               : op->kind == OFI_OP_RMA  ? (op->rma->is_write ? "an RDMA write" : "an RDMA read")
                                         : "a send to a peer",
               fi_strerror(err.err), fi_cq_strerror(tl->cq, err.prov_errno, err.err_data, NULL, 0));
}

static void return_credits(tern_tl_t *tl)
{
    for (int i = 0; i < tl->n_credit_list;) {
        int peer = tl->credit_list[i];
        ofi_peer_t *p = &tl->peers[peer];
        if (p->owed >= tl->credit_return_at && tern_ofi_send_ctrl(tl, peer, OFI_MSG_CREDIT) != TERN_OK) {
            i++;   /* no send buffer now: retry at the next progress */
            continue;
        }
        p->in_credit_list = 0;
        tl->credit_list[i] = tl->credit_list[--tl->n_credit_list];
    }
}

int tern_ofi_progress(tern_tl_t *tl)
{
    if (tl->idle)
        return 0;
    int events = 0;
    struct fi_cq_msg_entry ent[16];
    for (;;) {
        ssize_t n = fi_cq_read(tl->cq, ent, 16);
        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            report_cq_error(tl);
            continue;
        }
        if (n < 0)
            tern_fatal("ofi: reading the completion queue failed: %s", fi_strerror((int)-n));
        for (ssize_t i = 0; i < n; i++) {
            ofi_op_t *op = ent[i].op_context;
            switch (op->kind) {
            case OFI_OP_RECV:
                recv_done(tl, op, ent[i].len);
                events++;
                break;
            case OFI_OP_SEND:
                op->next = tl->send_free;
                tl->send_free = op;
                tl->sends_in_flight--;
                break;
            case OFI_OP_RMA:
                tern_ofi_rma_chunk_done(tl, op);
                events++;
                break;
            }
        }
        if (n < 16)
            break;
    }
    for (int n = tl->n_repost; n > 0; n--) {
        int i = tl->repost[--tl->n_repost];
        if (post_recv(tl, i) != TERN_OK)
            tern_fatal("ofi: cannot repost a receive buffer");
    }
    events += tern_ofi_rma_push(tl);
    if (tl->n_credit_list)
        return_credits(tl);
    return events;
}

static int ofi_progress(tern_tl_t *tl) { return tern_ofi_progress(tl); }

const tern_tl_ops_t tern_tl_ofi_ops = {
    .name = "ofi",
    .init = ofi_init,
    .finalize = ofi_finalize,
    .reachable = ofi_reachable,
    .connect = ofi_connect,
    .disconnect = ofi_disconnect,
    .am_max = ofi_am_max,
    .am_send = ofi_am_send,
    .progress = ofi_progress,
    .caps = ofi_caps,
    .rma_min = ofi_rma_min,
    .mem_reg = tern_ofi_mem_reg,
    .mem_dereg = tern_ofi_mem_dereg,
    .get = tern_ofi_get,
    .put = tern_ofi_put,
};
