/* State shared by the files of the libfabric (OFI) transport. This directory
 * is the only place in Tern that includes <rdma/...> headers. */
#ifndef TERN_TRANSPORT_OFI_INTERNAL_H
#define TERN_TRANSPORT_OFI_INTERNAL_H

#include "transport/transport.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

/* Wire header in front of every message this transport sends. */
enum {
    OFI_MSG_AM = 1,     /* an active message for the core */
    OFI_MSG_HELLO,      /* connection warm-up (TERN_CONNECT=all) */
    OFI_MSG_CREDIT,     /* returns receive credits, nothing else */
};

typedef struct {
    uint32_t src;       /* sender's world rank: lazy peers are not in our AV yet */
    uint8_t type;
    uint8_t pad;        /* bytes added after the message to make it a multiple of
                         * 8 long: a multi-receive slab packs messages end to
                         * end, and the next one must start 8-aligned */
    uint16_t credits;   /* receive buffers the sender reposted for us */
} ofi_hdr_t;

/* At most this many rails (TERN_OFI_RAILS): a remote key (tern_rkey_t) has
 * 3 words and a striped read needs the sender's key on every rail. */
#define OFI_RAILS_MAX 3

/* Every posted operation carries one of these; fi_context2 comes first
 * because providers with FI_CONTEXT/FI_CONTEXT2 mode use it as scratch. */
enum { OFI_OP_RECV = 1, OFI_OP_SEND, OFI_OP_RMA, OFI_OP_ATOMIC };

typedef struct ofi_rma ofi_rma_t;

typedef struct ofi_op {
    struct fi_context2 ctx;
    int kind;
    int index;            /* buffer index for RECV/SEND */
    int rail;             /* RECV: whose buffers; RMA: where it was issued */
    struct ofi_op *next;  /* free list of send ops; the deferred list */
    int peer;             /* SEND deferred by a full queue: where, and the bytes */
    size_t len;           /* after our header */
    ofi_rma_t *rma;       /* RMA: the transfer this chunk belongs to */
} ofi_op_t;

/* The part [issued, end) of a transfer still to issue on one rail. */
typedef struct {
    int rail;
    size_t issued, end;
} ofi_piece_t;

/* One get or put: a piece per rail when striped (one piece otherwise), each
 * split into chunks of at most its rail's max_msg_size. */
struct ofi_rma {
    ofi_rma_t *next;      /* list of transfers with chunks not yet issued */
    int is_write;
    int peer;
    char *local;
    size_t len, issued;   /* issued: bytes of all pieces */
    int outstanding;
    uint64_t remote;      /* address as the provider wants it (virtual or offset) */
    int n_pieces;
    ofi_piece_t piece[OFI_RAILS_MAX];
    uint64_t key[OFI_RAILS_MAX];           /* the peer's key on each rail */
    struct fid_mr *local_mr[OFI_RAILS_MAX]; /* FI_MR_LOCAL: ours on each rail used */
    void *local_desc[OFI_RAILS_MAX];
    tern_tl_comp_t *comp;
};

/* A buffer exposed to peers, shared by sends of it in flight at once; its
 * registration comes from the cache (ofi_regcache.h). */
typedef struct ofi_reg {
    struct ofi_reg *next;
    void *buf;
    size_t len;
    int refs;
    struct ofi_mr_entry *entry;
} ofi_reg_t;

typedef struct ofi_regcache ofi_regcache_t;

typedef struct {
    fi_addr_t addr[OFI_RAILS_MAX];  /* on each rail's AV */
    int rail;             /* carries every message to this peer (order per pair) */
    int resolved;         /* addresses in our AVs */
    int credits;          /* messages we may still send */
    int owed;             /* receive buffers reposted for this peer, not yet returned */
    int in_credit_list;
    int hellos_recvd;     /* one per rail (TERN_CONNECT=all) */
    int net;              /* served by us (shm takes on-node peers when allowed) */
    int failed;           /* the core gave up on it (disconnect): nothing more to or from it */
    int pid;              /* its process, when on this host and in our pid namespace, else 0
                           * (from its address blob: watch_peers checks it is still there) */
    int gone_seen;        /* watch_peers found that process gone (fails it at the next check) */
    /* On another host: its liveness port (ofi_live.c), from its blob. */
    int live_known;       /* its blob was read */
    int live_state;       /* none, connecting, connected, off */
    int live_fd;          /* while connecting or connected */
    double live_deadline; /* a connection not made by then: its host is gone */
    unsigned char live_family; /* 4, 6, or 0: it has no liveness port */
    uint16_t live_port;
    unsigned char live_addr[16];
    char host_name[64];
    int live_gone;        /* a check saw it gone (failed at the next one) */
    char gone_why[160];   /* what that check saw */
} ofi_peer_t;

/* One rail: an endpoint of its own on one provider domain (a NIC, a port,
 * an interface), with its receive buffers and completion queue. */
typedef struct {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    struct fid_ep *rma_ep;      /* TERN_OFI_RMA_EP: issues our RDMA reads and writes on
                                 * connections of their own; else NULL (ep does) */
    int rma_ep_wanted;          /* rma_ep not opened yet (tern_ofi_rma_ep) */
    int rma_ep_on;              /* the knob asked for rma_ep (open or not) */
    /* rma_ep issues our reads too; 0 where rendezvous writes are on
     * (TERN_OFI_RNDV_WRITE): the reads below TERN_OFI_RNDV_WRITE_MIN stay
     * on ep, whose connections carry bulk both ways (docs/performance.md). */
    int rma_ep_reads;
    size_t max_msg_size;
    size_t addr_len;            /* bytes of this endpoint's name */
    int n_recv;                 /* receive buffers, or multi-receive slabs */
    int multi_recv;             /* FI_MULTI_RECV: slabs that take many messages */
    size_t recv_size;           /* bytes per receive buffer or slab */
    char *recv_mem;
    struct fid_mr *recv_mr, *send_mr;   /* send_mr: the shared send buffers */
    void *recv_desc, *send_desc;
    ofi_op_t *recv_ops;
    int *repost;                /* receive buffers fi_recv refused (EAGAIN) */
    int n_repost;
} ofi_rail_t;

struct tern_tl {
    int rank, size;
    const int *node_of_rank;    /* the runtime's (params): who shares this host */
    int node;
    int idle;                   /* no peer needs the network: nothing opened */
    tern_am_handler_fn handler;
    void *am_ctx;
    tern_peer_failed_fn peer_failed;
    int n_failed;               /* peers given up on: finalize fences with nobody */
    uint64_t host_id;           /* this host's boot id and pid namespace, 0 unknown: a peer
                                 * publishing the same one has a pid that means ours */
    int live_fd;                /* our liveness port's listener (ofi_live.c), or -1 */
    int live_family;            /* 4 or 6 */
    uint16_t live_port;
    unsigned char live_addr[16];
    char host_name[64];

    ofi_rail_t rails[OFI_RAILS_MAX];
    int n_rails;
    int mr_local, mr_virt_addr, mr_prov_key, mr_endpoint;
    int rkey_key_words;         /* keys in a remote key: one per rail, or one shared */
    uint64_t next_key;
    size_t stripe_min;          /* smallest get/put split over the rails */

    ofi_peer_t *peers;
    int credit_window;          /* credits per peer */
    int credit_return_at;       /* owed count that triggers an explicit return */
    int *credit_list;           /* peers owing a return */
    int n_credit_list;

    size_t buf_size;            /* header + largest active message */
    int n_send;                 /* send buffers, shared by the rails */
    char *send_mem;
    ofi_op_t *send_ops;
    ofi_op_t *send_free;
    int sends_in_flight;
    ofi_op_t *reserved;         /* am_reserve's buffer, until am_commit */
    ofi_op_t *deferred_head, *deferred_tail;  /* committed, queue was full */

    ofi_rma_t *rma_head, *rma_tail;  /* transfers with chunks to issue */
    ofi_rma_t *rma_free;        /* free lists of transfers and chunks (ofi_rma.c) */
    ofi_op_t *chunk_free;
    int rma_in_flight;
    ofi_reg_t *regs;
    ofi_regcache_t *regcache;   /* ofi_regcache.c; made at the first rendezvous */
    size_t rma_min;

    int connect_all;
    int hellos_sent_done;

    int atomics;                /* the rails were opened with FI_ATOMIC (ofi_atomic.c) */
    int atomic_probed;
    size_t atomic_count[TERN_TL_ATOMIC_KINDS][TERN_TL_AOP_COUNT][TERN_TL_AT_COUNT];
};

/* ofi_lib.c: opens libfabric (dlopen, TERN_OFI_LIBRARY) on first use; the
 * fi_* functions Tern calls forward to it. tern_ofi_lib_preload starts the
 * load and the providers' start-up in a thread (TERN_OFI_PRELOAD), which
 * tern_ofi_lib_load then waits for; tern_ofi_lib_preload_join waits for it
 * where the transport's init did not (the op prepare_wait: a start that
 * failed before ofi's init, or an init that needed no library). */
void tern_ofi_lib_preload(void);
void tern_ofi_lib_preload_join(void);
tern_status_t tern_ofi_lib_load(void);

/* ofi_rails.c: the provider entries the rails open (TERN_OFI_RAILS,
 * TERN_OFI_PROVIDER); fills rails[] with fi_dupinfo copies. */
tern_status_t tern_ofi_choose_rails(struct fi_info **rails, int *n_rails);

/* ofi_addr.c: address exchange through PMI and connection set-up. */
tern_status_t tern_ofi_publish_address(tern_tl_t *tl);
tern_status_t tern_ofi_connect_all(tern_tl_t *tl);
tern_status_t tern_ofi_resolve(tern_tl_t *tl, int peer);

/* ofi_addr.c: reads peer's blob for its identity and liveness port only. */
tern_status_t tern_ofi_fetch_live(tern_tl_t *tl, int peer);

/* ofi_live.c: liveness ports for peers on other hosts (see there). open:
 * our listener (before the blob is published); blob: its part of our
 * blob, returns the bytes (at most OFI_LIVE_MAX); parse: a peer's part;
 * watch: the check of watch_peers for the peers not on this host; close:
 * one peer's connection; close_all: every one and our listener. */
#define OFI_LIVE_MAX (1 + 2 + 16 + 1 + 63)
void tern_ofi_live_open(tern_tl_t *tl);
size_t tern_ofi_live_blob(const tern_tl_t *tl, unsigned char *out);
void tern_ofi_live_parse(tern_tl_t *tl, int peer, const unsigned char *in, size_t n);
void tern_ofi_live_watch(tern_tl_t *tl, const int *peers, int n_peers);
void tern_ofi_live_close(tern_tl_t *tl, int peer);
void tern_ofi_live_close_all(tern_tl_t *tl);

/* ofi.c: reports that peer failed (st, what failed) to the core. */
void tern_ofi_peer_error(tern_tl_t *tl, int peer, tern_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ofi.c */
int tern_ofi_progress(tern_tl_t *tl);
/* ofi.c: the endpoint that issues RDMA writes (is_write) or reads on a
 * rail (rma_ep, opened at the first call, or ep). */
struct fid_ep *tern_ofi_rma_ep(tern_tl_t *tl, int rail, int is_write);

/* ofi_send.c: the ops table's active-message sends. */
tern_status_t tern_ofi_am_send(tern_tl_t *tl, int peer, const void *hdr, size_t hdr_len,
                               const void *payload, size_t payload_len);
void *tern_ofi_am_reserve(tern_tl_t *tl, int peer, size_t len);
void tern_ofi_am_commit(tern_tl_t *tl, int peer, size_t len);
/* Sends what commits left parked (queue full), in order; how many left. */
int tern_ofi_send_deferred(tern_tl_t *tl);
/* Sends a transport message (header + data) without credit on the given
 * rail: for HELLO and CREDIT. TERN_ERR_AGAIN when no send buffer or queue
 * slot is free. */
tern_status_t tern_ofi_send_ctrl(tern_tl_t *tl, int peer, int rail, uint16_t type);

/* The largest active message (header and payload) a send buffer holds. */
static inline size_t tern_ofi_am_max(tern_tl_t *tl)
{
    return tl->buf_size - sizeof(ofi_hdr_t);
}

/* ofi_rma.c */
tern_status_t tern_ofi_mem_reg(tern_tl_t *tl, void *buf, size_t len, tern_rkey_t *rkey_p);
/* getv / putv to a rank of this host, by CMA (ofi_rma.c). */
tern_status_t tern_ofi_getv(tern_tl_t *tl, int peer, void *local, size_t len,
                            const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                            tern_tl_comp_t *comp);
tern_status_t tern_ofi_putv(tern_tl_t *tl, int peer, const void *local, size_t len,
                            const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                            tern_tl_comp_t *comp);
void tern_ofi_mem_dereg(tern_tl_t *tl, void *buf, size_t len);
tern_status_t tern_ofi_get(tern_tl_t *tl, int peer, void *local, size_t len, uint64_t remote_addr,
                           const tern_rkey_t *rkey, tern_tl_comp_t *comp);
tern_status_t tern_ofi_put(tern_tl_t *tl, int peer, const void *local, size_t len,
                           uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp);
/* Issues queued chunks; returns how many. */
int tern_ofi_rma_push(tern_tl_t *tl);
/* A chunk is back (after an error too: ofi.c reports the peer failed
 * first, and a transfer with a failed peer ends without a callback). */
void tern_ofi_rma_chunk_done(tern_tl_t *tl, ofi_op_t *op);
void tern_ofi_rma_finalize(tern_tl_t *tl);

/* ofi_atomic.c: asks every rail's entry for FI_ATOMIC (before the rails
 * open; unless TERN_RMA_ATOMICS=off); the transport's atomic ops; a
 * completion (failed: with an error, the peer reported failed already). */
void tern_ofi_atomic_choose(tern_tl_t *tl);
size_t tern_ofi_atomic_max(tern_tl_t *tl, int kind, int op, int type);
tern_status_t tern_ofi_atomic(tern_tl_t *tl, int peer, int kind, int op, int type,
                              const void *src, const void *compare, void *result, size_t count,
                              uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp);
void tern_ofi_atomic_done(tern_tl_t *tl, ofi_op_t *op, int failed);

/* Registers with fi_mr_reg on one rail's domain, asking for `key` (used
 * unless the provider picks keys: FI_MR_PROV_KEY) and, for FI_MR_ENDPOINT
 * providers (cxi), binds the region to the rail's endpoint and enables it. */
int tern_ofi_mr_reg(tern_tl_t *tl, int rail, void *buf, size_t len, uint64_t access, uint64_t key,
                    struct fid_mr **mr_p);
/* Registers memory on one rail for local use as the provider requires
 * (FI_MR_LOCAL). */
tern_status_t tern_ofi_reg_local(tern_tl_t *tl, int rail, void *buf, size_t len, uint64_t access,
                                 struct fid_mr **mr_p, void **desc_p);

#endif
