/* The libfabric transport: one reliable-datagram (FI_EP_RDM) endpoint per
 * rank and rail serves every peer; the provider (verbs, efa, cxi, psm2,
 * tcp...) is chosen by libfabric, TERN_OFI_PROVIDER or FI_PROVIDER, the
 * rails (one by default) by TERN_OFI_RAILS (ofi_rails.c).
 *
 * Active messages go eagerly into receive buffers posted at start-up, with
 * credit-based flow control: a sender holds credit_window credits per peer,
 * one per message; the receiver returns them piggybacked on its own messages
 * or, when it owes half a window, in a CREDIT message (for which every peer
 * has a reserve of posted buffers). am_send copies into a registered send
 * buffer and never blocks: no credit, no buffer or a full queue is
 * TERN_ERR_AGAIN. With several rails every message to one peer takes the
 * same rail, (our rank + peer) mod rails, so order per pair holds and pairs
 * spread over the rails; receive buffers are posted and completion queues
 * polled on every rail. Large messages use the core's rendezvous over get()
 * (fi_read, zero copy, striped over the rails), see ofi_rma.c. This file
 * opens, polls and closes the endpoints; ofi_send.c sends. */
#include "transport/ofi/ofi_internal.h"
#include "base/config.h"
#include "base/log.h"
#include "base/proc.h"
#include "pmi/pmi.h"
#include "pmi/pmi_profile.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Posted buffers per peer beyond its credits: CREDIT and HELLO messages. */
#define OFI_RESERVE_PER_PEER 3
/* Multi-receive slabs per rail, each at least OFI_SLAB_MIN bytes and room
 * for OFI_SLAB_MESSAGES largest messages. */
#define OFI_SLABS 4
#define OFI_SLAB_MIN ((size_t)1 << 20)
#define OFI_SLAB_MESSAGES 16

/* Providers that move every byte through a socket in software: RMA is
 * emulated, so a rendezvous costs two extra trips and saves no copy that
 * matters; eager messages go up to 64 KB there (Open MPI's TCP eager limit
 * too). libfabric's net provider, the one Tern picks for TCP: 8 KB 28 us by
 * rendezvous, 13 us eager between two netns hosts. tcp;ofi_rxm keeps 8 KB:
 * rxm sends what exceeds its own 16 KB buffers by a rendezvous of its own. */
static int socket_provider(const struct fi_info *info)
{
    const char *p = info->fabric_attr->prov_name;
    return strcmp(p, "net") == 0 || strcmp(p, "sockets") == 0;
}

/* Any of libfabric's TCP providers, rxm-layered or not. */
static int tcp_provider(const struct fi_info *info)
{
    return socket_provider(info) || strcmp(info->fabric_attr->prov_name, "tcp;ofi_rxm") == 0;
}

/* Peers this transport will serve: everyone but us, except the ranks on our
 * node when shm serves them (params->node_served: shm allowed and its
 * segment set up; the runtime prefers it). */
static int is_network_peer(const tern_tl_params_t *p, int shm, int r)
{
    return r != p->rank && !(shm && p->node_of_rank[r] == p->node);
}

static int network_peers(const tern_tl_params_t *p)
{
    int shm = p->node_served;
    int n = 0;
    for (int r = 0; r < p->size; r++)
        n += is_network_peer(p, shm, r);
    return n;
}

/* Before shm starts: a job with ranks on other hosts (or no shm allowed)
 * will open libfabric, so its load runs meanwhile. A job whose shm then
 * falls back to ofi (TERN_SHM_FALLBACK) loads it in ofi_init as before. */
static void ofi_prepare(const tern_tl_params_t *p)
{
    int shm = tern_knob_lists(TERN_KNOB_TRANSPORTS, "shm");
    int n = 0;
    for (int r = 0; r < p->size && !n; r++)
        n = is_network_peer(p, shm, r);
    if (n && tern_knob_bool(TERN_KNOB_OFI_PRELOAD))
        tern_ofi_lib_preload();
}

int tern_ofi_mr_reg(tern_tl_t *tl, int rail, void *buf, size_t len, uint64_t access, uint64_t key,
                    struct fid_mr **mr_p)
{
    ofi_rail_t *rl = &tl->rails[rail];
    int ret = fi_mr_reg(rl->domain, buf, len, access, 0, key, 0, mr_p, NULL);
    if (ret || !tl->mr_endpoint)
        return ret;
    if ((ret = fi_mr_bind(*mr_p, &rl->ep->fid, 0)) || (ret = fi_mr_enable(*mr_p))) {
        fi_close(&(*mr_p)->fid);
        *mr_p = NULL;
    }
    return ret;
}

tern_status_t tern_ofi_reg_local(tern_tl_t *tl, int rail, void *buf, size_t len, uint64_t access,
                                 struct fid_mr **mr_p, void **desc_p)
{
    *mr_p = NULL;
    *desc_p = NULL;
    if (!tl->mr_local)
        return TERN_OK;
    int ret = tern_ofi_mr_reg(tl, rail, buf, len, access, tl->next_key++, mr_p);
    if (ret) {
        tern_error("ofi: fi_mr_reg of %zu bytes failed: %s", len, fi_strerror(-ret));
        return TERN_ERR_NOMEM;
    }
    *desc_p = fi_mr_desc(*mr_p);
    return TERN_OK;
}

/* A slab is given back (and reposted) once less than one largest message
 * fits in what is left of it. */
static int set_min_multi_recv(ofi_rail_t *rl, size_t min)
{
    return fi_setopt(&rl->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof min);
}

static tern_status_t open_endpoint(tern_tl_t *tl, int rail)
{
    ofi_rail_t *rl = &tl->rails[rail];
    struct fi_info *info = rl->info;
    int ret;
    if ((ret = fi_fabric(info->fabric_attr, &rl->fabric, NULL)) ||
        (ret = fi_domain(rl->fabric, info, &rl->domain, NULL))) {
        tern_error("ofi: cannot open %s: %s", info->fabric_attr->prov_name, fi_strerror(-ret));
        return TERN_ERR_IO;
    }
    /* DATA format: a multi-receive completion says where its message is. */
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE,
                                 .size = (size_t)(rl->multi_recv ? tl->credit_window * tl->size
                                                                 : rl->n_recv) +
                                         (size_t)tl->n_send + 1024};
    struct fi_av_attr av_attr = {.type = info->domain_attr->av_type, .count = (size_t)tl->size};
    if ((ret = fi_cq_open(rl->domain, &cq_attr, &rl->cq, NULL)) ||
        (ret = fi_av_open(rl->domain, &av_attr, &rl->av, NULL)) ||
        (ret = fi_endpoint(rl->domain, info, &rl->ep, NULL)) ||
        (ret = fi_ep_bind(rl->ep, &rl->cq->fid, FI_TRANSMIT | FI_RECV)) ||
        (ret = fi_ep_bind(rl->ep, &rl->av->fid, 0)) ||
        (rl->multi_recv && (ret = set_min_multi_recv(rl, tl->buf_size))) ||
        (ret = fi_enable(rl->ep))) {
        tern_error("ofi: cannot open an endpoint on %s/%s: %s", info->fabric_attr->prov_name,
                   info->domain_attr->name, fi_strerror(-ret));
        return TERN_ERR_IO;
    }
    /* Rails share one provider (ofi_rails.c), so rail 0 sets the modes. */
    if (rail == 0) {
        tl->mr_local = (info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
        /* mr_mode 0 is scalable mode: target addresses are offsets. */
        tl->mr_virt_addr = (info->domain_attr->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) != 0;
        tl->mr_prov_key = (info->domain_attr->mr_mode & (FI_MR_PROV_KEY | FI_MR_BASIC)) != 0;
        tl->mr_endpoint = (info->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
    }
    /* TERN_OFI_RMA_EP: opened at the first RDMA transfer (ofi_rma.c), so
     * a job that never makes one opens no second endpoint. */
    rl->rma_ep_wanted = tern_knob_bool_or(TERN_KNOB_OFI_RMA_EP, tcp_provider(info)) &&
                        !tl->mr_endpoint;
    rl->rma_ep_on = rl->rma_ep_wanted;
    rl->rma_ep_reads = tern_knob_is(TERN_KNOB_OFI_RNDV_WRITE, "off");
    rl->max_msg_size = info->ep_attr->max_msg_size;
    if (rl->max_msg_size == 0 || rl->max_msg_size > ((size_t)1 << 30))
        rl->max_msg_size = (size_t)1 << 30;
    /* Over TCP one read of 1 MB or more runs at half the speed of 512 KB
     * reads in flight together (netns hosts: 1-4 MB bw 2.6-3.2 -> 3.8-4.8
     * GB/s, bibw 1.6-3.2 -> 4.4-5.1, 1 MB ping-pong 410-700 -> 171-191 us;
     * the kernel's socket buffers, not the provider, set the knee, and
     * every TCP MPI shows it: see docs/performance.md). */
    size_t chunk = tern_knob_size_or(TERN_KNOB_OFI_RMA_CHUNK, tcp_provider(info) ? 512L << 10 : 0);
    if (chunk > 0 && chunk < rl->max_msg_size)
        rl->max_msg_size = chunk;
    return TERN_OK;
}

/* A remote key holds the sender's key on every rail (one shared word when
 * we choose the keys: every rail's region gets the same one) and, when the
 * provider addresses regions by offset, the region's base after them. */
static tern_status_t check_rkey_room(tern_tl_t *tl)
{
    tl->rkey_key_words = tl->mr_prov_key ? tl->n_rails : 1;
    int words = tl->rkey_key_words + !tl->mr_virt_addr;
    if (words <= (int)(sizeof(tern_rkey_t) / sizeof(uint64_t)))
        return TERN_OK;
    tern_error("ofi: TERN_OFI_RAILS: %d rails on provider %s need %d words of remote key, a "
               "tern_rkey_t has 3 (its keys are its own per domain and regions are addressed "
               "by offset): use at most %d rails",
               tl->n_rails, tl->rails[0].info->fabric_attr->prov_name, words,
               3 - !tl->mr_virt_addr);
    return TERN_ERR_ARG;
}

static tern_status_t post_recv(tern_tl_t *tl, int rail, int i)
{
    ofi_rail_t *rl = &tl->rails[rail];
    ofi_op_t *op = &rl->recv_ops[i];
    char *mem = rl->recv_mem + (size_t)i * rl->recv_size;
    int ret;
    if (rl->multi_recv) {
        struct iovec iov = {.iov_base = mem, .iov_len = rl->recv_size};
        struct fi_msg msg = {.msg_iov = &iov, .desc = &rl->recv_desc, .iov_count = 1,
                             .addr = FI_ADDR_UNSPEC, .context = &op->ctx};
        ret = (int)fi_recvmsg(rl->ep, &msg, FI_MULTI_RECV);
    } else {
        ret = (int)fi_recv(rl->ep, mem, rl->recv_size, rl->recv_desc, FI_ADDR_UNSPEC, &op->ctx);
    }
    if (ret == -FI_EAGAIN) {
        rl->repost[rl->n_repost++] = i;
        return TERN_OK;
    }
    if (ret) {
        tern_error("ofi: fi_recv failed: %s", fi_strerror(-ret));
        return TERN_ERR_IO;
    }
    return TERN_OK;
}

/* Receive buffers per rail: a window for each peer whose messages come on
 * that rail plus a reserve for every peer (HELLOs come on every rail). With
 * one rail this is n_peers x (window + reserve). */
static tern_status_t setup_buffers(tern_tl_t *tl, const int *peers_on_rail, int n_peers)
{
    long window = tern_knob_count(TERN_KNOB_OFI_CREDITS);
    long reserve = (long)n_peers * OFI_RESERVE_PER_PEER;
    for (int r = 0; r < tl->n_rails; r++) {
        long rx_max = (long)tl->rails[r].info->rx_attr->size;
        if (rx_max > 0 && peers_on_rail[r] && peers_on_rail[r] * window + reserve > rx_max) {
            /* The receive queue is the limit: share it out (the provider
             * buffers what overflows, so fewer credits cost speed, not
             * correctness). */
            window = (rx_max - reserve) / peers_on_rail[r];
            if (window < 2)
                window = 2;
        }
    }
    long n_send = tern_knob_count(TERN_KNOB_OFI_SEND_BUFS);
    /* Large eager messages: at most 8 MB of send buffers (64 at 64 KB is
     * still a full bandwidth window). */
    long n_send_max = (long)((8u << 20) / tl->buf_size);
    if (n_send > n_send_max)
        n_send = n_send_max < 64 ? 64 : n_send_max;
    for (int r = 0; r < tl->n_rails; r++) {
        long tx_max = (long)tl->rails[r].info->tx_attr->size;
        if (tx_max > 0 && n_send > tx_max)
            n_send = tx_max;
    }
    tl->credit_window = (int)window;
    tl->credit_return_at = (int)(window / 2);
    tl->n_send = (int)n_send;
    tl->send_mem = aligned_alloc(64, (size_t)n_send * tl->buf_size);
    tl->send_ops = calloc((size_t)n_send, sizeof *tl->send_ops);
    if (!tl->send_mem || !tl->send_ops)
        return TERN_ERR_NOMEM;
    for (int r = 0; r < tl->n_rails; r++) {
        ofi_rail_t *rl = &tl->rails[r];
        long n_recv = peers_on_rail[r] * window + reserve;
        long rx_max = (long)rl->info->rx_attr->size;
        if (rx_max > 0 && n_recv > rx_max)
            n_recv = rx_max;
        rl->recv_size = tl->buf_size;
        if (rl->multi_recv) {
            /* A few slabs for all peers: memory no longer grows with the
             * job (credits still bound each peer; what overflows waits in
             * the provider, or in the socket for TCP). */
            rl->recv_size = tl->buf_size * OFI_SLAB_MESSAGES;
            if (rl->recv_size < OFI_SLAB_MIN)
                rl->recv_size = OFI_SLAB_MIN;
            n_recv = OFI_SLABS;
        }
        rl->n_recv = (int)n_recv;
        rl->recv_mem = aligned_alloc(64, (size_t)n_recv * rl->recv_size);
        rl->recv_ops = calloc((size_t)n_recv, sizeof *rl->recv_ops);
        rl->repost = calloc((size_t)n_recv, sizeof *rl->repost);
        if (!rl->recv_mem || !rl->recv_ops || !rl->repost)
            return TERN_ERR_NOMEM;
    }
    return TERN_OK;
}

static tern_status_t post_buffers(tern_tl_t *tl, int rail)
{
    ofi_rail_t *rl = &tl->rails[rail];
    tern_status_t st = tern_ofi_reg_local(tl, rail, rl->recv_mem, (size_t)rl->n_recv * rl->recv_size,
                                          FI_RECV, &rl->recv_mr, &rl->recv_desc);
    /* The send buffers are shared: registered on every rail's domain. */
    if (st == TERN_OK)
        st = tern_ofi_reg_local(tl, rail, tl->send_mem, (size_t)tl->n_send * tl->buf_size, FI_SEND,
                                &rl->send_mr, &rl->send_desc);
    if (st != TERN_OK)
        return st;
    for (int i = 0; i < rl->n_recv; i++) {
        rl->recv_ops[i].kind = OFI_OP_RECV;
        rl->recv_ops[i].index = i;
        rl->recv_ops[i].rail = rail;
        if ((st = post_recv(tl, rail, i)) != TERN_OK)
            return st;
    }
    return TERN_OK;
}

static void init_send_ops(tern_tl_t *tl)
{
    for (int i = tl->n_send - 1; i >= 0; i--) {
        tl->send_ops[i].kind = OFI_OP_SEND;
        tl->send_ops[i].index = i;
        tl->send_ops[i].next = tl->send_free;
        tl->send_free = &tl->send_ops[i];
    }
}

/* Opens every rail: endpoints, buffers, posted receives. */
static tern_status_t open_rails(tern_tl_t *tl, const tern_tl_params_t *p, int shm, int n_peers)
{
    int peers_on_rail[OFI_RAILS_MAX] = {0};
    for (int r = 0; r < p->size; r++) {
        tl->peers[r].rail = (p->rank + r) % tl->n_rails;
        tl->peers[r].net = is_network_peer(p, shm, r);
        peers_on_rail[tl->peers[r].rail] += tl->peers[r].net;
    }
    tern_status_t st = setup_buffers(tl, peers_on_rail, n_peers);
    for (int r = 0; r < tl->n_rails && st == TERN_OK; r++)
        st = open_endpoint(tl, r);
    if (st == TERN_OK)
        st = check_rkey_room(tl);
    for (int r = 0; r < tl->n_rails && st == TERN_OK; r++)
        st = post_buffers(tl, r);
    if (st == TERN_OK)
        init_send_ops(tl);
    return st;
}

static void ofi_finalize(tern_tl_t *tl);

/* The same entry with FI_MULTI_RECV asked for, or NULL. */
static struct fi_info *with_multi_recv(const struct fi_info *info)
{
    struct fi_info *hints = fi_dupinfo(info), *out = NULL;
    if (!hints)
        return NULL;
    hints->caps |= FI_MULTI_RECV;
    hints->rx_attr->caps |= FI_MULTI_RECV;
    int ret = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &out);
    fi_freeinfo(hints);
    if (ret || !out)
        return NULL;
    if (out->next) {   /* the first is the closest match */
        fi_freeinfo(out->next);
        out->next = NULL;
    }
    return out;
}

/* Eager size (TERN_OFI_EAGER_SIZE, auto by provider) and receive buffers:
 * slabs that take many messages each (FI_MULTI_RECV) where the provider has
 * them and TERN_OFI_MULTI_RECV allows, else a fixed buffer per message in
 * flight. With slabs the receive memory stays a few MB whatever the job
 * size and eager size; fixed buffers cost peers x credits x eager size. */
static tern_status_t choose_receive_mode(tern_tl_t *tl)
{
    const struct fi_info *info = tl->rails[0].info;
    /* auto: 64 KB of payload plus the core's and our headers on sockets. */
    size_t eager = tern_knob_size_or(TERN_KNOB_OFI_EAGER_SIZE, socket_provider(info) ? 65536 + 128 : 8192);
    /* A multiple of 8, so padded messages fit their buffer. */
    tl->buf_size = eager & ~(size_t)7;
    int want = tern_knob_bool_or(TERN_KNOB_OFI_MULTI_RECV, tcp_provider(info));
    if (!want)
        return TERN_OK;
    /* All rails or none: every rank must post alike on each. */
    struct fi_info *up[OFI_RAILS_MAX] = {0};
    int ok = 1;
    for (int r = 0; r < tl->n_rails && ok; r++)
        ok = (up[r] = with_multi_recv(tl->rails[r].info)) != NULL;
    for (int r = 0; r < tl->n_rails; r++) {
        if (ok) {
            fi_freeinfo(tl->rails[r].info);
            tl->rails[r].info = up[r];
            tl->rails[r].multi_recv = 1;
        } else if (up[r]) {
            fi_freeinfo(up[r]);
        }
    }
    if (!ok)
        tern_debug("ofi: provider %s has no FI_MULTI_RECV: a receive buffer per message",
                   info->fabric_attr->prov_name);
    return TERN_OK;
}

static tern_status_t ofi_init(const tern_tl_params_t *p, tern_tl_t **tl_p)
{
    tern_tl_t *tl = calloc(1, sizeof *tl);
    if (!tl)
        return TERN_ERR_NOMEM;
    tl->rank = p->rank;
    tl->size = p->size;
    tl->live_fd = -1;
    tl->node_of_rank = p->node_of_rank;
    tl->node = p->node;
    tl->handler = p->am_handler;
    tl->am_ctx = p->am_ctx;
    tl->peer_failed = p->peer_failed;
    *tl_p = tl;
    /* Decided from facts every rank agrees on (init may fence): the knobs,
     * and shm's outcome, the same on every rank of a node; a job on one
     * host served by shm opens nothing. */
    int n_peers = network_peers(p);
    if (n_peers == 0) {
        tl->idle = 1;
        return TERN_OK;
    }
    tl->peers = calloc((size_t)p->size, sizeof *tl->peers);
    tl->credit_list = calloc((size_t)p->size, sizeof *tl->credit_list);
    if (!tl->peers || !tl->credit_list)
        return TERN_ERR_NOMEM;
    tl->rma_min = tern_knob_size(TERN_KNOB_OFI_RMA_MIN);
    tl->stripe_min = tern_knob_size(TERN_KNOB_OFI_STRIPE_MIN);
    tl->next_key = 1;

    struct fi_info *infos[OFI_RAILS_MAX];
    tern_status_t st = tern_ofi_choose_rails(infos, &tl->n_rails);
    for (int r = 0; r < tl->n_rails; r++)
        tl->rails[r].info = infos[r];
    if (st != TERN_OK)
        goto fail;
    tern_ofi_atomic_choose(tl);
    if ((st = choose_receive_mode(tl)) != TERN_OK)
        goto fail;
    if ((st = open_rails(tl, p, p->node_served, n_peers)) != TERN_OK)
        goto fail;
    tern_init_profile_mark("ofi load, open");
    for (int r = 0; r < p->size; r++)
        tl->peers[r].credits = tl->credit_window;
    for (int r = 0; r < tl->n_rails; r++) {
        ofi_rail_t *rl = &tl->rails[r];
        tern_info("ofi: rail %d of %d: provider %s, domain %s, fabric %s, mr_mode 0x%x, %d receive "
                  "%s of %zu bytes, eager messages up to %zu bytes, %d credits per peer",
                  r, tl->n_rails, rl->info->fabric_attr->prov_name, rl->info->domain_attr->name,
                  rl->info->fabric_attr->name, (unsigned)rl->info->domain_attr->mr_mode,
                  rl->n_recv, rl->multi_recv ? "slabs (FI_MULTI_RECV)" : "buffers", rl->recv_size,
                  tl->buf_size, tl->credit_window);
    }

    if ((st = tern_ofi_publish_address(tl)) != TERN_OK)
        goto fail;
    tern_init_profile_mark("ofi publish");
    if (tern_knob_is(TERN_KNOB_CONNECT, "all"))
        tl->connect_all = 1;
    else if (tern_knob_is(TERN_KNOB_CONNECT, "lazy"))
        tl->connect_all = 0;
    else
        /* Measured (docs/performance.md, start-up with network
         * connections): all-to-all in MPI_Init costs 10-15% more MPI_Init at
         * 2-8 ranks and 70% more at 32, while each lazy first message
         * costs 0.3-2 ms; above 8 ranks lazy wins even for a program that
         * talks to every peer. On one oversubscribed 2-core host: to be
         * measured again on a cluster. */
        tl->connect_all = p->size <= 8;
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
    if (!tl->idle && tl->rails[0].ep) {
        /* Let our last sends (credit returns, FINs) leave, then wait for
         * every rank so no endpoint closes under a peer still talking. A
         * failed peer (here or on another transport) never comes to the
         * fence: then the job is broken anyway and we do not wait. */
        while (tl->sends_in_flight || tl->deferred_head || tl->rma_in_flight || tl->rma_head)
            tern_ofi_progress(tl);
        if (!tl->n_failed)
            tern_pmi_fence();
    }
    tern_ofi_rma_finalize(tl);
    tern_ofi_live_close_all(tl);
    for (int r = 0; r < tl->n_rails; r++) {
        ofi_rail_t *rl = &tl->rails[r];
        close_fid(rl->rma_ep ? &rl->rma_ep->fid : NULL);
        close_fid(rl->ep ? &rl->ep->fid : NULL);
        close_fid(rl->av ? &rl->av->fid : NULL);
        close_fid(rl->cq ? &rl->cq->fid : NULL);
        close_fid(rl->recv_mr ? &rl->recv_mr->fid : NULL);
        close_fid(rl->send_mr ? &rl->send_mr->fid : NULL);
        close_fid(rl->domain ? &rl->domain->fid : NULL);
        close_fid(rl->fabric ? &rl->fabric->fid : NULL);
        if (rl->info)
            fi_freeinfo(rl->info);
        free(rl->recv_mem);
        free(rl->recv_ops);
        free(rl->repost);
    }
    free(tl->send_mem);
    free(tl->send_ops);
    free(tl->peers);
    free(tl->credit_list);
    free(tl);
}

static int ofi_reachable(tern_tl_t *tl, int peer) { return !tl->idle && peer != tl->rank; }

static tern_status_t ofi_connect(tern_tl_t *tl, int peer)
{
    return tl->peers[peer].resolved ? TERN_OK : tern_ofi_resolve(tl, peer);
}

/* The core gave up on peer (transport.h): no credit, so am_send and
 * am_reserve say "full" and the core drops what it would send; no credit
 * owed; its committed messages dropped; messages from it and completions
 * of reads from it ignored (recv_done, ofi_rma.c). */
static void ofi_disconnect(tern_tl_t *tl, int peer)
{
    if (tl->idle && !tl->peers)
        return;
    tl->n_failed++;
    if (!tl->peers)
        return;
    ofi_peer_t *p = &tl->peers[peer];
    p->failed = 1;
    tern_ofi_live_close(tl, peer);
    p->credits = 0;
    p->owed = 0;
    ofi_op_t **link = &tl->deferred_head;
    tl->deferred_tail = NULL;
    while (*link) {
        ofi_op_t *op = *link;
        if (op->peer != peer) {
            tl->deferred_tail = op;
            link = &op->next;
            continue;
        }
        *link = op->next;
        op->next = tl->send_free;
        tl->send_free = op;
    }
}

void tern_ofi_peer_error(tern_tl_t *tl, int peer, tern_status_t st, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    tl->peer_failed(peer, st, why);
}

/* Our own endpoint broke (a receive cannot be reposted, the completion
 * queue cannot be read): every network peer is unreachable. Progress stops
 * polling (idle) and finalize waits for nothing. */
static void transport_failed(tern_tl_t *tl, const char *what, int ret)
{
    tl->idle = 1;
    for (int r = 0; r < tl->size; r++)
        if (tl->peers[r].net && !tl->peers[r].failed)
            tern_ofi_peer_error(tl, r, TERN_ERR_TRANSPORT, "ofi: %s: %s", what,
                                fi_strerror(ret < 0 ? -ret : ret));
}

/* The ranks of this host also get the vector ops (CMA, ofi_rma.c). */
static void ofi_query(tern_tl_t *tl, int peer, tern_tl_attr_t *attr_p)
{
    unsigned vec = TERN_TL_CAP_GETV | TERN_TL_CAP_PUTV | TERN_TL_CAP_RMA_SYNC;
    int here = peer >= 0 && peer < tl->size && tl->node_of_rank[peer] == tl->node;
    /* TERN_OFI_RNDV_WRITE=auto: where the reads' own connections
     * (TERN_OFI_RMA_EP) would carry bulk one way and requests the other. */
    int write = tern_knob_is(TERN_KNOB_OFI_RNDV_WRITE, "on") ||
                (tern_knob_is(TERN_KNOB_OFI_RNDV_WRITE, "auto") && !here &&
                 tl->rails[0].rma_ep_on);
    *attr_p = (tern_tl_attr_t){.caps = TERN_TL_CAP_GET | TERN_TL_CAP_PUT | (here ? vec : 0) |
                                       (write ? TERN_TL_CAP_RNDV_WRITE : 0),
                               .am_max = tern_ofi_am_max(tl),
                               .rma_min = tl->rma_min,
                               .write_min = tern_knob_size(TERN_KNOB_OFI_RNDV_WRITE_MIN)};
}

/* One message arrived in a receive buffer, or at `at` in a slab; the
 * buffer is reposted after it (a slab only when the provider releases it:
 * `release`). */
static void recv_done(tern_tl_t *tl, ofi_op_t *op, const char *at, size_t len, int release)
{
    ofi_rail_t *rl = &tl->rails[op->rail];
    if (rl->multi_recv && len == 0) {   /* a slab handed back with nothing in it */
        if (release && post_recv(tl, op->rail, op->index) != TERN_OK)
            transport_failed(tl, "reposting a receive slab failed", FI_EIO);
        return;
    }
    const char *buf = rl->multi_recv ? at : rl->recv_mem + (size_t)op->index * rl->recv_size;
    ofi_hdr_t h;
    /* Kept fatal (three checks): a message that breaks the framing is
     * memory corruption or a foreign sender; it names no peer whose
     * requests could take the error. */
    if (len < sizeof h)
        tern_fatal("ofi: corrupt input, not recoverable: runt message of %zu bytes", len);
    memcpy(&h, buf, sizeof h);
    if (h.pad > 7 || h.pad > len - sizeof h)
        tern_fatal("ofi: corrupt input, not recoverable: padding %u of a %zu-byte message", h.pad,
                   len);
    len -= h.pad;
    if (h.src >= (uint32_t)tl->size)
        tern_fatal("ofi: corrupt input, not recoverable: message from unknown rank %u", h.src);
    ofi_peer_t *p = &tl->peers[h.src];
    p->credits += h.credits;
    /* A failed peer's late messages may name requests already completed
     * with the error: dropped (one test on a line just read). */
    if (h.type == OFI_MSG_AM && __builtin_expect(!p->failed, 1))
        tl->handler(tl->am_ctx, (int)h.src, buf + sizeof h, len - sizeof h);
    else if (h.type == OFI_MSG_HELLO)
        p->hellos_recvd++;
    if ((!rl->multi_recv || release) && post_recv(tl, op->rail, op->index) != TERN_OK)
        transport_failed(tl, "reposting a receive buffer failed", FI_EIO);
    /* Only active messages spent a credit of the sender. */
    if (h.type == OFI_MSG_AM && ++p->owed >= tl->credit_return_at && !p->in_credit_list) {
        p->in_credit_list = 1;
        tl->credit_list[tl->n_credit_list++] = (int)h.src;
    }
}

/* A completion with an error: the send's or RDMA transfer's peer failed
 * (its requests complete with the error); a receive buffer is reposted. */
static void report_cq_error(tern_tl_t *tl, int rail)
{
    ofi_rail_t *rl = &tl->rails[rail];
    struct fi_cq_err_entry err = {0};
    ssize_t ret = fi_cq_readerr(rl->cq, &err, 0);
    if (ret != 1) {
        transport_failed(tl, "reading a completion error failed", ret < 0 ? (int)ret : FI_EIO);
        return;
    }
    ofi_op_t *op = err.op_context;
    if (err.err == FI_ECANCELED)
        return;
    const char *detail = fi_cq_strerror(rl->cq, err.prov_errno, err.err_data, NULL, 0);
    if (!op) {
        tern_error("ofi: an operation failed on rail %d: %s (%s)", rail, fi_strerror(err.err),
                   detail);
        return;
    }
    switch (op->kind) {
    case OFI_OP_SEND:
        op->next = tl->send_free;
        tl->send_free = op;
        tl->sends_in_flight--;
        tern_ofi_peer_error(tl, op->peer, TERN_ERR_PEER, "ofi: a send failed on rail %d: %s (%s)",
                            rail, fi_strerror(err.err), detail);
        return;
    case OFI_OP_RMA:
        tern_ofi_peer_error(tl, op->rma->peer, TERN_ERR_PEER,
                            "ofi: an RDMA %s failed on rail %d: %s (%s)",
                            op->rma->is_write ? "write" : "read", rail, fi_strerror(err.err), detail);
        tern_ofi_rma_chunk_done(tl, op); /* no callback: the peer has failed */
        return;
    case OFI_OP_ATOMIC:
        tern_ofi_peer_error(tl, op->peer, TERN_ERR_PEER, "ofi: a remote atomic failed on rail "
                            "%d: %s (%s)", rail, fi_strerror(err.err), detail);
        tern_ofi_atomic_done(tl, op, 1);
        return;
    case OFI_OP_RECV:
        tern_error("ofi: a receive failed on rail %d: %s (%s); reposting it", rail,
                   fi_strerror(err.err), detail);
        if ((!rl->multi_recv || (err.flags & FI_MULTI_RECV)) &&
            post_recv(tl, rail, op->index) != TERN_OK)
            transport_failed(tl, "reposting a receive buffer failed", FI_EIO);
        return;
    }
}

static void return_credits(tern_tl_t *tl)
{
    for (int i = 0; i < tl->n_credit_list;) {
        int peer = tl->credit_list[i];
        ofi_peer_t *p = &tl->peers[peer];
        if (p->owed >= tl->credit_return_at &&
            tern_ofi_send_ctrl(tl, peer, p->rail, OFI_MSG_CREDIT) != TERN_OK) {
            i++;   /* no send buffer now: retry at the next progress */
            continue;
        }
        p->in_credit_list = 0;
        tl->credit_list[i] = tl->credit_list[--tl->n_credit_list];
    }
}

/* Reads one rail's completion queue dry; returns the events. */
static int poll_rail(tern_tl_t *tl, int rail)
{
    ofi_rail_t *rl = &tl->rails[rail];
    int events = 0;
    struct fi_cq_data_entry ent[16];
    for (;;) {
        ssize_t n = fi_cq_read(rl->cq, ent, 16);
        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            report_cq_error(tl, rail);
            if (tl->idle)
                return events;
            continue;
        }
        if (n < 0) {
            transport_failed(tl, "reading the completion queue failed", (int)n);
            return events;
        }
        for (ssize_t i = 0; i < n; i++) {
            ofi_op_t *op = ent[i].op_context;
            switch (op->kind) {
            case OFI_OP_RECV:
                recv_done(tl, op, ent[i].buf, ent[i].len, (ent[i].flags & FI_MULTI_RECV) != 0);
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
            case OFI_OP_ATOMIC:
                tern_ofi_atomic_done(tl, op, 0);
                events++;
                break;
            }
        }
        if (n < 16)
            break;
    }
    for (int n = rl->n_repost; n > 0 && !tl->idle; n--) {
        int i = rl->repost[--rl->n_repost];
        if (post_recv(tl, rail, i) != TERN_OK)
            transport_failed(tl, "reposting a receive buffer failed", FI_EIO);
    }
    return events;
}

/* Our reads' requests go out, and their data comes back, on this
 * endpoint's connections; the peers' reads of our memory arrive at ep.
 * Over TCP that is one socket per direction of bulk data. Same CQ and AV:
 * the progress and the peers' addresses are shared. On failure the rail's
 * ep carries the transfers, as with the knob off. Where rendezvous writes
 * are on, reads stay on ep (rma_ep_reads). */
struct fid_ep *tern_ofi_rma_ep(tern_tl_t *tl, int rail, int is_write)
{
    ofi_rail_t *rl = &tl->rails[rail];
    if (!is_write && !rl->rma_ep_reads)
        return rl->ep;
    if (rl->rma_ep || !rl->rma_ep_wanted)
        return rl->rma_ep ? rl->rma_ep : rl->ep;
    rl->rma_ep_wanted = 0;
    struct fi_info *info = rl->info;
    int ret;
    if ((ret = fi_endpoint(rl->domain, info, &rl->rma_ep, NULL)) ||
        (ret = fi_ep_bind(rl->rma_ep, &rl->cq->fid, FI_TRANSMIT | FI_RECV)) ||
        (ret = fi_ep_bind(rl->rma_ep, &rl->av->fid, 0)) || (ret = fi_enable(rl->rma_ep))) {
        tern_warn("ofi: cannot open the RDMA endpoint (TERN_OFI_RMA_EP) on %s/%s: %s; "
                  "transfers share the rail's endpoint", info->fabric_attr->prov_name,
                  info->domain_attr->name, fi_strerror(-ret));
        if (rl->rma_ep)
            fi_close(&rl->rma_ep->fid);
        rl->rma_ep = NULL;
        return rl->ep;
    }
    return rl->rma_ep;
}

int tern_ofi_progress(tern_tl_t *tl)
{
    if (tl->idle)
        return 0;
    int events = 0;
    for (int r = 0; r < tl->n_rails; r++)
        events += poll_rail(tl, r);
    if (tl->deferred_head)
        events += tern_ofi_send_deferred(tl);
    events += tern_ofi_rma_push(tl);
    if (tl->n_credit_list)
        return_credits(tl);
    return events;
}

static int ofi_progress(tern_tl_t *tl) { return tern_ofi_progress(tl); }

/* The peers this rank waits for (a request, a queued packet, a posted
 * receive, a one-sided transfer in flight): the provider reports no dead
 * peer by itself (a write to a killed process stays pending, the net and
 * tcp providers alike), so a peer on this host whose process is gone is
 * failed here. Found gone once, it is failed at the next check, not at
 * once: what it sent before it exited is still read in between (progress
 * runs all the while). Peers on other hosts: through their liveness port
 * (ofi_live.c), besides the provider's errors and the launcher. */
static void ofi_watch_peers(tern_tl_t *tl, const int *peers, int n_peers)
{
    if (tl->idle || !tl->peers)
        return;
    for (int i = 0; i < n_peers; i++) {
        if (peers[i] < 0 || peers[i] >= tl->size)
            continue;
        ofi_peer_t *p = &tl->peers[peers[i]];
        if (!p->pid || p->failed || !tern_pid_gone((pid_t)p->pid))
            continue;
        if (!p->gone_seen) {
            p->gone_seen = 1;
            continue;
        }
        tern_ofi_peer_error(tl, peers[i], TERN_ERR_PEER, "ofi: its process %d (on this host) "
                            "is gone", p->pid);
    }
    tern_ofi_live_watch(tl, peers, n_peers);
}

const tern_tl_ops_t tern_tl_ofi_ops = {
    .name = "ofi",
    .reach = TERN_TL_REACH_JOB,
    .prepare = ofi_prepare,
    .prepare_wait = tern_ofi_lib_preload_join,
    .init = ofi_init,
    .finalize = ofi_finalize,
    .reachable = ofi_reachable,
    .connect = ofi_connect,
    .disconnect = ofi_disconnect,
    .query = ofi_query,
    .am_send = tern_ofi_am_send,
    .progress = ofi_progress,
    .mem_reg = tern_ofi_mem_reg,
    .mem_dereg = tern_ofi_mem_dereg,
    .get = tern_ofi_get,
    .put = tern_ofi_put,
    .getv = tern_ofi_getv,
    .putv = tern_ofi_putv,
    .am_reserve = tern_ofi_am_reserve,
    .am_commit = tern_ofi_am_commit,
    .atomic_max = tern_ofi_atomic_max,
    .atomic = tern_ofi_atomic,
    .watch_peers = ofi_watch_peers,
};
