/* Process-wide state of the library: who we are, which transport reaches
 * which peer, and the per-peer protocol state. The base of the core: every
 * room may read tern_rt; starting the rooms in order is core/init's job. */
#ifndef TERN_CORE_RUNTIME_H
#define TERN_CORE_RUNTIME_H

#include "base/status.h"
#include "transport/transport.h"
#include <stddef.h>
#include <stdint.h>

typedef struct tern_pending tern_pending_t;
struct tern_req;

typedef struct {
    const tern_tl_ops_t *ops;   /* transport reaching this peer */
    tern_tl_t *tl;
    size_t am_max;              /* largest active message */
    size_t eager_max;           /* largest eager payload */
    size_t rma_min;             /* smallest rendezvous worth a get */
    /* From get_min up to rma_min the receiver measures which serves
     * better (rndv_path.h); 0: rma_min alone decides. */
    size_t get_min;
    struct tern_rndv_path *rndv_path; /* its measurements, made on first use */
    unsigned caps;
    uint8_t bulk_nt_fixed;      /* the transport's (transport.h); cold */
    uint8_t coop_split;         /* the transport's (transport.h, 0-90); cold */
    /* The transport's write_min (transport.h) in KiB, rounded up: read by
     * the RTS of a peer with TERN_TL_CAP_RNDV_WRITE only. */
    uint16_t write_min_kb;
    /* Flow control: eager bytes we may still send unmatched (sender side),
     * and eager bytes consumed since the last credit return (receiver). */
    long credits;
    long consumed;
    size_t bulk_max;            /* largest bulk-channel message, 0: none */
    /* Packets waiting for room in the transport, in order. */
    tern_pending_t *pending_head, *pending_tail;
    /* Rendezvous streams to push (fragments carry their offset, so they
     * need no order with other packets and do not wait behind them). */
    tern_pending_t *stream_head, *stream_tail;
    int in_pending_list;
    /* One-sided transfers in flight to this peer (RDMA, remote atomics):
     * the rank waits for it too, so its liveness is watched. */
    int rma_inflight;
    /* Requests that wait for a packet from this peer (rendezvous and
     * synchronous sends, rendezvous receives under way), so that its
     * failure can complete them; linked through next / inflight_prev. */
    struct tern_req *inflight_head;
    /* Match packets (eager, synchronous eager, rendezvous) sent to and
     * received from this peer: a send's number names its message to the
     * receiver when the send is cancelled (pt2pt/send_cancel.c). */
    uint64_t match_sent, match_recvd;
    /* Largest eager payload through the transport's ordered large messages
     * (am_big_reserve), above eager_max; 0: none. Behind the hot fields:
     * only sends above eager_max read them. */
    size_t eager_big_max;
    size_t am_big_max;          /* the transport's largest such message */
    /* The transport's bulk_nt_min (transport.h): from this size a copy
     * into bulk or am_big room goes through tern_p2p_bulk_copy; SIZE_MAX:
     * never. (rma_inflight sits in in_pending_list's padding and
     * bulk_nt_fixed, coop_split and write_min_kb in caps', so the entry stays 192
     * bytes.) */
    size_t bulk_nt_min;
    /* Cold: TERN_OK while the peer works, else the status every request
     * with it completes with (peer_failure.c), and what failed. */
    tern_status_t failed;
    /* 1 + match_recvd's low bits at our last eager send through the
     * transport's large messages (p2p.c, eager_big_send): equal again means
     * a window of sends with nothing received between them (0: none yet).
     * In failed's padding. */
    uint32_t eager_big_recvd;
    char *failure;
} tern_peer_t;

typedef struct {
    /* The world model: MPI_Init was called; MPI_Finalize was. */
    int initialized;
    int finalized;
    /* The runtime is up (brought up by MPI_Init or the first
     * MPI_Session_init, down when the last of the two ends): the entry
     * points work. One load on every call's init check. */
    int active;
    int ended;                  /* it was up and came down: never again */
    int n_sessions;             /* live sessions (core/init/session.c) */
    int thread_level;
    int rank, size;
    /* Peers are world ranks 0..size-1, then the processes of other jobs
     * met through dynamic processes (dyn_peers.c), up to peer_cap. Tables
     * indexed by world rank (peers, node_of_rank) have peer_cap entries. */
    int n_peers, peer_cap;
    tern_tl_t *dyn_tl;          /* the transport to them (by address: sock), once opened */
    int appnum, universe_size;
    double wtime_base;
    int node, local_rank, local_size;
    int *node_of_rank;
    int *local_ranks;
    tern_peer_t *peers;
    struct {
        const tern_tl_ops_t *ops;
        tern_tl_t *tl;
    } tls[4];
    int n_tls;
    /* The transports progress polls: those that serve at least one peer,
     * each with its optional work hint (transport.h). */
    struct {
        const tern_tl_ops_t *ops;
        tern_tl_t *tl;
        const int *hint;
    } poll[4];
    int n_poll;
    long credit_max;
    /* Eager sends written in place from this size take the aligned
     * header (p2p_pkt.h); SIZE_MAX: never. */
    size_t eager_align_min;
    /* Aligned eager sends up to this size copy into the cell by `rep
     * movsb` (base/copy_movsb.h; TERN_P2P_EAGER_MOVSB_MAX, 0: never). */
    size_t eager_movsb_max;
    /* Aligned eager sends of eager_vec_min to eager_vec_min +
     * eager_vec_span bytes copy by the AVX2 loop into a cell the transport
     * took beforehand (base/copy_vec.h; TERN_P2P_EAGER_VEC_MIN / _MAX);
     * eager_vec_min SIZE_MAX: never. */
    size_t eager_vec_min;
    size_t eager_vec_span;
    /* Direct puts and gets from this size copy by `rep movsb`
     * (base/copy_movsb.h; TERN_RMA_MOVSB_MIN). */
    size_t rma_movsb_min;
    /* Direct puts and gets from rma_nt_min bytes choose their stores
     * (base/copy_store.h; TERN_RMA_NT_MIN, SIZE_MAX under TERN_RMA_NT=off),
     * streaming always under rma_nt_always (TERN_RMA_NT=on). */
    size_t rma_nt_min;
    int rma_nt_always;
    /* Eager messages through a transport's large ordered messages above
     * this go in parts (TERN_P2P_EAGER_BIG_PART; 0: never). Here, not per
     * peer: a larger tern_peer_t costs every message an instruction to
     * index it. */
    size_t eager_big_part;
    long spin_limit;            /* empty polls before sched_yield */
    long lone_yields;           /* instant yields in a row before a 50 us sleep; 0: never */
    /* More ranks on this node than it has CPUs online: every rank of the
     * node gets the same answer (unlike the affinity masks'), so the
     * collectives may choose algorithms by it. */
    int node_oversubscribed;
    /* Peers with packets waiting, so progress need not scan them all. */
    int *pending_peers;
    int n_pending_peers;
    int n_failed_peers;
    /* Inside MPI_Finalize's barrier (not fault-tolerant): a member known
     * failed does not fail it by itself (coll_sched.c post, shm_region.c
     * check_peer); only a transfer with a failed peer does. */
    int in_final_barrier;
    int last_failed_peer;       /* world rank of the latest failure, for messages */
    /* Messages that arrived and were never received, since the process
     * started (comm/unmatched.h), for the tools interface to read. */
    uint64_t n_unmatched;
    char processor_name[256];
    char job_id[256];           /* PMI kvsname: names shared files (coll/shm_region.c) */
} tern_runtime_t;

extern tern_runtime_t tern_rt;

/* Joins the job through PMI, learns the node map, reads the runtime knobs
 * and opens the transports, which deliver active messages to am_handler;
 * peers then know their transport and limits. */
tern_status_t tern_runtime_start(tern_am_handler_fn am_handler, tern_peer_failed_fn peer_failed);
/* Fills peer's limits and capabilities (index p) from its transport's
 * query, the eager payload capped at eager_knob, and its credits. */
void tern_peer_set_attr(tern_peer_t *peer, int p, size_t eager_knob);
/* TERN_P2P_EAGER_MAX changed (MPI_T_cvar_write): every live peer's eager
 * limit again, the knob capped by what its transport carries; the next
 * send to it chooses its protocol by the new limit. Under the entry
 * points' lock; nothing to do before MPI_Init or after MPI_Finalize. */
void tern_peers_eager_reset(void);
/* Closes the transports (packets still queued must have left). */
void tern_runtime_close_transports(void);
/* After the transports closed: frees the peer and node tables and resets
 * what tern_runtime_start set up, so that MPI may start again (sessions).
 * The job stays joined (PMI) and the counters since the process started
 * (n_unmatched) stay. */
void tern_runtime_free(void);

/* ---- Peers of other jobs (dyn_peers.c) ---- */
#define TERN_DYN_PEERS_MAX 1024
/* Opens the transport to other jobs if needed; *addr_p is this process's
 * address there (for port names and connection handshakes). */
tern_status_t tern_dyn_open(const char **addr_p);
/* The peer index of the process at addr (a new peer if unknown): >= size.
 * TERN_ERR_LIMIT past TERN_DYN_PEERS_MAX. */
tern_status_t tern_dyn_peer(const char *addr, int *peer_p);
void tern_dyn_close(void);
/* For tern_runtime_start: what the transport to other jobs delivers to. */
void tern_dyn_set_handlers(tern_am_handler_fn am_handler, tern_peer_failed_fn peer_failed);

#endif
