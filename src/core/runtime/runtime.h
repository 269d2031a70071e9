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
    unsigned caps;
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
    /* Requests that wait for a packet from this peer (rendezvous and
     * synchronous sends, rendezvous receives under way), so that its
     * failure can complete them; linked through next / inflight_prev. */
    struct tern_req *inflight_head;
    /* Match packets (eager, synchronous eager, rendezvous) sent to and
     * received from this peer: a send's number names its message to the
     * receiver when the send is cancelled (pt2pt/send_cancel.c). */
    uint64_t match_sent, match_recvd;
    /* Cold: TERN_OK while the peer works, else the status every request
     * with it completes with (peer_failure.c), and what failed. */
    tern_status_t failed;
    char *failure;
} tern_peer_t;

typedef struct {
    int initialized;
    int finalized;
    int thread_level;
    int rank, size;
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
    long spin_limit;            /* empty polls before sched_yield */
    /* Peers with packets waiting, so progress need not scan them all. */
    int *pending_peers;
    int n_pending_peers;
    int n_failed_peers;
    int last_failed_peer;       /* world rank of the latest failure, for messages */
    char processor_name[256];
} tern_runtime_t;

extern tern_runtime_t tern_rt;

/* Joins the job through PMI, learns the node map, reads the runtime knobs
 * and opens the transports, which deliver active messages to am_handler;
 * peers then know their transport and limits. */
tern_status_t tern_runtime_start(tern_am_handler_fn am_handler, tern_peer_failed_fn peer_failed);
/* Closes the transports (packets still queued must have left). */
void tern_runtime_close_transports(void);

#endif
