/* Transport interface.
 *
 * A transport moves bytes between ranks; it knows nothing of MPI matching.
 * The core (src/core) owns the one tag-matching engine and the protocols
 * (eager, rendezvous) and drives every transport through this ops table.
 * The interface is shaped for RDMA networks from the start:
 *
 *  - query: what the transport offers (tern_tl_attr_t: capabilities, message
 *    limits, thresholds), for one peer or for any; the core asks once per
 *    peer when it assigns the peer its transport and keeps the answer in
 *    its peer table, so no limit costs a call on the fast path.
 *  - am_send: an "active message" of at most am_max bytes (a protocol header
 *    followed by an optional payload), delivered in order per (sender,
 *    receiver) pair to the receiver's handler. Returns TERN_ERR_AGAIN when
 *    there is no room now (the core queues it and retries after progress);
 *    never blocks.
 *  - mem_reg / mem_dereg: make a buffer accessible to peers; the rkey travels
 *    inside protocol headers (an RDMA key, or the pid for CMA).
 *  - get / put: one-sided copy from/to a peer's registered memory. Completion
 *    is reported through the completion callback, possibly before the call
 *    returns. TERN_ERR_NOT_SUPPORTED means the core must fall back to copying
 *    through active messages (for example when CMA is denied).
 *  - getv / putv (optional, caps GETV / PUTV): the same between one
 *    contiguous local buffer and a list of pieces of the peer's memory
 *    (MPI_Win_create windows with derived datatypes at the target). Where
 *    caps has TERN_TL_CAP_RMA_SYNC they are complete when they return, and
 *    comp may be NULL.
 *  - progress: polls for incoming messages and completions and calls the
 *    handler for each message; returns how many events it processed.
 *  - connect / disconnect: per-peer connection set-up for transports that need
 *    it (no-ops for shared memory). The core calls disconnect on every
 *    transport once a peer has failed: from then on it sends nothing to
 *    that peer, and the transport drops what it still holds for it, calls
 *    no completion callback for it, and waits for it nowhere (finalize).
 *
 * Failures: an error that concerns one peer (a send that fails, a
 * connection that cannot be set up, a completion with an error, a peer
 * process found gone) is reported through params->peer_failed, or as a
 * status other than TERN_OK / TERN_ERR_AGAIN from am_send or get; the core
 * then completes every request with that peer with the error. A failure of
 * the transport itself (its endpoint, its completion queue) is reported
 * for every peer it serves, with TERN_ERR_TRANSPORT.
 *  - watch_peers (optional): called while a rank waits, every
 *    TERN_PEER_CHECK_MS at most, never on the fast path, with the peers of
 *    this transport that the rank waits for (a request or a queued packet
 *    with them): a cheap liveness check (shm: is the process still there?)
 *    that reports the dead ones through params->peer_failed. ofi checks
 *    the peers on this host the same way (their pid and host identity come
 *    with their address); the others through their liveness port
 *    (ofi_live.c: a TCP connection their kernel resets when they die,
 *    with keepalive for a dead host or a cut link), besides what the
 *    provider reports (a send or read that fails, a connection that
 *    cannot be set up). (A probe message was tried: the net provider retries a refused
 *    connection instead of failing it.)
 *
 *  - bulk_reserve / bulk_commit (optional, NULL when absent): a second
 *    in-order channel per peer with larger messages (attr bulk_max bytes), for
 *    the data fragments of a streamed rendezvous. The caller writes the
 *    message in place (copy or datatype pack straight into shared memory)
 *    and commits it. Its messages reach the same handler but are not
 *    ordered with am_send messages, so they must name what they belong to.
 *
 * Reach: a transport serves either the job's ranks (TERN_TL_REACH_JOB:
 * started by MPI_Init in registry order, its peers the world ranks it
 * reports reachable) or processes of other jobs known by an address
 * (TERN_TL_REACH_BY_ADDRESS, dynamic processes: started when this process
 * first takes part in a spawn or accept/connect; address() is what others
 * reach it at, add_peer() names a peer index's address, and a connection
 * from an unknown address asks params->peer_for_addr for its index).
 *
 * The handler receives a pointer into the transport's own buffer, valid only
 * during the call.
 */
#ifndef TERN_TRANSPORT_TRANSPORT_H
#define TERN_TRANSPORT_TRANSPORT_H

#include "base/status.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct tern_tl tern_tl_t;
struct tern_store_reader; /* base/copy_store.h */

/* Room for a process's address on a by-address transport, NUL included. */
enum { TERN_TL_ADDR_MAX = 64 };

typedef enum {
    TERN_TL_REACH_JOB,        /* the job's ranks, from MPI_Init */
    TERN_TL_REACH_BY_ADDRESS, /* processes of other jobs, by address */
} tern_tl_reach_t;

/* Opaque remote-access key: for shm words[0] is the owner's pid. */
typedef struct {
    uint64_t words[3];
} tern_rkey_t;

typedef struct tern_tl_comp tern_tl_comp_t;
struct tern_tl_comp {
    void (*cb)(tern_tl_comp_t *comp, tern_status_t status);
};

/* Called by a transport for every incoming active message. */
typedef void (*tern_am_handler_fn)(void *ctx, int src_rank, const void *msg, size_t len);
/* Called by a transport when world rank `peer` failed (st: TERN_ERR_PEER,
 * or TERN_ERR_TRANSPORT when the transport itself broke); `why` names what
 * failed, for the error message. May be called from inside progress; the
 * core then calls disconnect(peer) before it returns. */
typedef void (*tern_peer_failed_fn)(int peer, tern_status_t st, const char *why);

/* What the core tells a transport at start-up. Transports may use PMI
 * (src/pmi/pmi.h) during init; init is called by every rank in the same
 * order, so PMI fences inside it are collective. */
typedef struct {
    int rank;                 /* world rank */
    int size;                 /* world size */
    const int *node_of_rank;  /* size entries: node index of every rank */
    int node;                 /* this rank's node index */
    int local_rank;           /* index among the ranks on this node */
    int local_size;           /* ranks on this node */
    const int *local_ranks;   /* local_size world ranks on this node, ascending */
    const char *job_id;       /* unique per job (PMI kvsname), for naming resources */
    int oversubscribed;       /* more ranks on this node than CPUs for them */
    int node_served;          /* a transport started before this one (shm)
                               * reaches this node's other ranks: 0 when shm
                               * is not allowed or chose no segment
                               * (TERN_SHM_FALLBACK=ofi); the same on every
                               * rank of a node */
    tern_am_handler_fn am_handler;
    void *am_ctx;
    tern_peer_failed_fn peer_failed;
    /* By-address transports: the peer index of the process at addr (a new
     * one when unknown); -1 when no more peers fit. NULL otherwise. */
    int (*peer_for_addr)(const char *addr);
} tern_tl_params_t;

enum {
    TERN_TL_CAP_GET = 1u << 0,   /* get() works (one-sided read) */
    TERN_TL_CAP_PUT = 1u << 1,
    /* getv() / putv() are offered to the peer; the kernel or provider may
     * still refuse a call (TERN_ERR_NOT_SUPPORTED), which only a call tells. */
    TERN_TL_CAP_GETV = 1u << 2,
    TERN_TL_CAP_PUTV = 1u << 3,
    /* getv() / putv() are complete, at both ends, when they return. */
    TERN_TL_CAP_RMA_SYNC = 1u << 4,
    /* A contiguous rendezvous from the peer: the receiver asks the sender
     * to put the data into its buffer (core/pt2pt/rndv_write.h) instead of
     * getting it. */
    TERN_TL_CAP_RNDV_WRITE = 1u << 5,
};

/* Most remote pieces one getv / putv takes (the kernel's UIO_MAXIOV). */
enum { TERN_TL_IOV_MAX = 1024 };

/* query's peer for the values that hold for the transport as a whole. */
enum { TERN_TL_ANY_PEER = -1 };

/* What a transport offers (query). The values for one peer may differ
 * from TERN_TL_ANY_PEER's where the peer matters (shm: the topology of
 * the two ranks decides rma_min and get_min). */
typedef struct {
    unsigned caps;        /* TERN_TL_CAP_* */
    size_t am_max;        /* largest active message, header and payload */
    /* Smallest message worth a get/put instead of copying through active
     * messages (the transport's measured crossover; a TERN_* knob);
     * SIZE_MAX: never. */
    size_t rma_min;
    /* Where the choice between the get and the stream is left to
     * measurement for this peer (core/pt2pt/rndv_path.h), the smallest
     * message the get may serve (below rma_min); 0: no choice. */
    size_t get_min;
    /* With TERN_TL_CAP_RNDV_WRITE, the smallest contiguous rendezvous the
     * sender writes (smaller ones take the get or the stream). */
    size_t write_min;
    /* Largest bulk-channel message to the peer; 0: no channel. */
    size_t bulk_max;
    /* Largest message am_big_reserve takes; 0: no such op. */
    size_t am_big_max;
    /* How the sender should copy a contiguous message into bulk-channel or
     * am_big_reserve room (core/pt2pt/p2p_queue.c, tern_p2p_bulk_copy):
     * from bulk_nt_min bytes with streaming stores where they pay, timed
     * against plain ones per peer, unless bulk_nt_fixed says which stores
     * always (TERN_STORES_PLAIN or TERN_STORES_STREAMED of
     * base/copy_store.h; those copies are timed too, for the stream's
     * rate); bulk_nt_min 0: plain untimed memcpy for every size (the
     * transport's knobs decide, so the core reads none of them). */
    size_t bulk_nt_min;
    int bulk_nt_fixed;
    /* Where get_min is set (core/pt2pt/rndv_path.c): below get_measure_min
     * the get serves when get_mid is 1, else the stream, untimed; from it
     * the receiver times both and keeps its choice get_measure_ms
     * milliseconds. */
    size_t get_measure_min;
    unsigned get_measure_ms;
    int get_mid;
    /* From get_measure_min, a rendezvous received while one of ours to the
     * peer is under way (an exchange): 0 the stream, untimed; 1 the get;
     * 2 the get while one CMA read beats one copy at the rank's own
     * stream rate into the bulk channel to the peer
     * (tern_single_copy_pays at twice that rate), else the stream. */
    int get_exchange;
    /* Percent of a rendezvous served by get whose tail the sender puts
     * while the receiver gets the head (core/pt2pt/p2p_coop.c); 0: off. */
    unsigned coop_split;
    /* 1 where the transport was told to leave CMA off (shm: TERN_SHM_CMA=off,
     * which keeps Yama's default): windows then take no vector ops unless
     * asked (core/rma/rma_cma.c). */
    int cma_declined;
    /* A counter that is 0 whenever progress would find nothing (the self
     * transport's queue length), so the progress loop can skip the call;
     * NULL means "always poll". */
    const int *work_hint;
} tern_tl_attr_t;

/* Remote atomics (the optional atomic_max and atomic ops): operations, in
 * the order of MPI's predefined reductions, then read, write, compare-swap;
 * element types; the three kinds of call (no result, fetching, compare). */
enum {
    TERN_TL_AOP_MIN, TERN_TL_AOP_MAX, TERN_TL_AOP_SUM, TERN_TL_AOP_PROD, TERN_TL_AOP_LOR,
    TERN_TL_AOP_LAND, TERN_TL_AOP_BOR, TERN_TL_AOP_BAND, TERN_TL_AOP_LXOR, TERN_TL_AOP_BXOR,
    TERN_TL_AOP_READ, TERN_TL_AOP_WRITE, TERN_TL_AOP_CSWAP, TERN_TL_AOP_COUNT
};
enum {
    TERN_TL_AT_INT8, TERN_TL_AT_UINT8, TERN_TL_AT_INT16, TERN_TL_AT_UINT16, TERN_TL_AT_INT32,
    TERN_TL_AT_UINT32, TERN_TL_AT_INT64, TERN_TL_AT_UINT64, TERN_TL_AT_FLOAT, TERN_TL_AT_DOUBLE,
    TERN_TL_AT_FLOAT_COMPLEX, TERN_TL_AT_DOUBLE_COMPLEX, TERN_TL_AT_COUNT
};
enum { TERN_TL_ATOMIC_PLAIN, TERN_TL_ATOMIC_FETCH, TERN_TL_ATOMIC_COMPARE, TERN_TL_ATOMIC_KINDS };

typedef struct {
    const char *name;
    tern_tl_reach_t reach;
    /* 1 if progress only reads memory (self, shm): a waiting rank may
     * spin on it for long; 0 (a NIC, a socket: each poll a system call)
     * shortens the spin before a yield (core/runtime/runtime.c). */
    int polls_memory;
    /* Optional (NULL: nothing to do): called for every transport the job
     * will start, before the first init, with the node map known
     * (params->node_served is 0: no transport has started); may start work
     * in the background that init then waits for (ofi: loading libfabric
     * while shm starts). */
    void (*prepare)(const tern_tl_params_t *params);
    /* Optional (NULL where prepare starts nothing): called for every
     * transport prepare was called for, once the job's transports have
     * started or one of them failed to (a later one's init then never
     * runs): waits for the work prepare left in the background, so that
     * none outlives the start, failed or not (ofi: joins the preload
     * thread, if its init did not). */
    void (*prepare_wait)(void);
    tern_status_t (*init)(const tern_tl_params_t *params, tern_tl_t **tl_p);
    void (*finalize)(tern_tl_t *tl);
    /* 1 if this transport can reach world rank `peer`. */
    int (*reachable)(tern_tl_t *tl, int peer);
    tern_status_t (*connect)(tern_tl_t *tl, int peer);
    void (*disconnect)(tern_tl_t *tl, int peer);
    /* Fills *attr_p with what the transport offers peer (a peer it
     * reaches, or TERN_TL_ANY_PEER). */
    void (*query)(tern_tl_t *tl, int peer, tern_tl_attr_t *attr_p);
    tern_status_t (*am_send)(tern_tl_t *tl, int peer, const void *hdr, size_t hdr_len,
                             const void *payload, size_t payload_len);
    int (*progress)(tern_tl_t *tl);
    tern_status_t (*mem_reg)(tern_tl_t *tl, void *buf, size_t len, tern_rkey_t *rkey_p);
    void (*mem_dereg)(tern_tl_t *tl, void *buf, size_t len);
    tern_status_t (*get)(tern_tl_t *tl, int peer, void *local, size_t len,
                         uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp);
    tern_status_t (*put)(tern_tl_t *tl, int peer, const void *local, size_t len,
                         uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp);
    /* Optional (caps GETV / PUTV): len bytes between local (contiguous) and
     * the n_remote pieces remote of peer's memory registered as rkey, in
     * order; iov_base is an address at the peer as get's remote_addr, the
     * pieces' lengths add up to len, n_remote <= TERN_TL_IOV_MAX.
     * Completion as get/put; comp may be NULL with TERN_TL_CAP_RMA_SYNC. */
    tern_status_t (*getv)(tern_tl_t *tl, int peer, void *local, size_t len,
                          const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                          tern_tl_comp_t *comp);
    tern_status_t (*putv)(tern_tl_t *tl, int peer, const void *local, size_t len,
                          const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                          tern_tl_comp_t *comp);
    /* Optional: am_send in two steps, so the caller can write (pack) the
     * message in place: am_reserve returns room for len bytes (at most
     * am_max; len is what the caller will write, shm packs small ones) or
     * NULL when full now; am_commit sends len bytes written there. */
    void *(*am_reserve)(tern_tl_t *tl, int peer, size_t len);
    void (*am_commit)(tern_tl_t *tl, int peer, size_t len);
    /* Optional with am_reserve: 1 if the room it just returned for len
     * bytes lies on lines this process took for writing beforehand (shm:
     * while it waited, tern_shm_warm), so no other core holds them; and
     * asks that the room after it be taken for len bytes at the next wait.
     * The core then copies by base/copy_vec.h (PKT_EAGER_VEC). */
    int (*am_reserved_warm)(tern_tl_t *tl, int peer, size_t len);
    /* Bulk channel (optional; where attr bulk_max is not 0): bulk_reserve
     * returns room for bulk_max bytes, or NULL when the channel is full
     * now; bulk_commit publishes len bytes written at the reserved
     * address. */
    void *(*bulk_reserve)(tern_tl_t *tl, int peer, size_t len);
    void (*bulk_commit)(tern_tl_t *tl, int peer, size_t len);
    /* Optional (where attr am_big_max is not 0): am_reserve / am_commit
     * for a message of len, up to am_big_max bytes, in order with
     * am_send's (shm: through bulk cells, the ring carrying a doorbell).
     * NULL when there is no room now. am_big_commit publishes a message of len
     * bytes of which the first `written` are in place; the sender writes
     * the rest in order, each part published by am_big_grow (the total
     * written so far), with no call into progress in between, so the
     * receiver may copy one part while the next is written. The receiver
     * of such a message (the core knows it by its packet) calls
     * am_big_wait before reading past what it has seen, and before its
     * handler returns for the whole len (an intra-message pipeline). */
    void *(*am_big_reserve)(tern_tl_t *tl, int peer, size_t len);
    void (*am_big_commit)(tern_tl_t *tl, int peer, size_t len, size_t written);
    /* Optional with am_big_commit (NULL: always commit len written):
     * am_big_grow: the first `written` bytes of the message at payload
     * (what am_big_reserve returned) are in place. am_big_wait: bytes of
     * the delivered message at pkt written so far, once at least `need`;
     * 0 when the peer died before writing them. */
    void (*am_big_grow)(tern_tl_t *tl, void *payload, size_t written);
    size_t (*am_big_wait)(tern_tl_t *tl, int peer, const void *pkt, size_t need);
    /* Optional with am_big_reserve (NULL: always 1): 1 when the peer has
     * taken every large message and chunk we sent it (the channel idle). */
    int (*am_big_idle)(tern_tl_t *tl, int peer);
    /* Optional with am_big_grow (NULL: every such message contiguous):
     * where byte `off` of a large message lies, the message given by its
     * start (what am_big_reserve returned, or the packet delivered, for
     * either side of the pair), and in *room the bytes in place from there
     * to the end of that piece (shm: a message over several bulk cells,
     * each cell's payload a piece). Such a message above one piece is
     * written in parts (am_big_grow) and read through this. */
    void *(*am_big_at)(tern_tl_t *tl, int peer, const void *payload, size_t off, size_t *room);
    /* Optional with bulk_reserve or am_big_reserve (NULL: none): where,
     * in memory the pair shares, the receiver of a bulk channel says what
     * copying out of it costs (base/copy_store.h): incoming 1, the
     * channel from peer (this rank writes them), 0, the one to peer (this
     * rank reads them). Asked once a message went through the channel. */
    struct tern_store_reader *(*bulk_reader)(tern_tl_t *tl, int peer, int incoming);
    /* Optional (NULL: nothing to check): see "watch_peers" above. */
    void (*watch_peers)(tern_tl_t *tl, const int *peers, int n_peers);
    /* Optional (NULL: none): remote atomics on registered memory, applied
     * by the provider, atomic per element with respect to each other
     * whatever the origin (this rank included: a peer may be ourselves or
     * a rank on this node). atomic_max: elements one call of that kind,
     * op and type takes, 0 when not offered (a question per call, not an
     * attribute: the provider is asked lazily, on first use). atomic:
     * count elements at remote_addr of peer; src (the operand; ignored
     * for READ), compare (COMPARE only), result (FETCH and COMPARE: the
     * old values) stay valid until comp's callback. A non-fetching atomic
     * completes once applied at the target. TERN_ERR_AGAIN: no room now,
     * retry after progress. */
    size_t (*atomic_max)(tern_tl_t *tl, int kind, int op, int type);
    tern_status_t (*atomic)(tern_tl_t *tl, int peer, int kind, int op, int type, const void *src,
                            const void *compare, void *result, size_t count,
                            uint64_t remote_addr, const tern_rkey_t *rkey, tern_tl_comp_t *comp);
    /* By-address transports only (NULL otherwise): this process's address
     * (NUL-terminated, shorter than TERN_TL_ADDR_MAX), and peer index
     * `peer` is the process listening at addr. */
    const char *(*address)(tern_tl_t *tl);
    tern_status_t (*add_peer)(tern_tl_t *tl, int peer, const char *addr);
} tern_tl_ops_t;

/* The transports compiled in, NULL-terminated (src/transport/registry.c):
 * those that reach the job's ranks in order of preference for a peer (self
 * first, then shm, then network), then those that reach other jobs. */
extern const tern_tl_ops_t tern_tl_self_ops;
extern const tern_tl_ops_t tern_tl_shm_ops;
extern const tern_tl_ops_t *const tern_tl_all[];

#endif
