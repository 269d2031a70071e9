/* Which copy serves a rendezvous between two ranks of a node where both can:
 * the receiver's single read of the sender's buffer (a get: CMA), or the
 * sender's stream through the two-copy bulk pipeline (shm.c). Which is
 * faster depends on where the two cores are (a shared cache or not; a VM's
 * host placing its vCPUs near or far, which hwloc cannot see), on how many
 * messages are in flight (a window keeps the pipeline full, a lone message
 * pays its fill) and changes while a job runs (docs/performance.md measured
 * both ways round, 2-3x apart). So with TERN_SHM_LARGE_PATH=measure the
 * receiver times both on the messages themselves, per peer and per
 * power-of-two size class, by runs: a run is the messages of the class
 * matched while the run's earlier ones are still landing or within a short
 * gap after the last landed (a window of nonblocking receives, or receives
 * posted back to back), at most RUN_MAX counted; all of a run take one path,
 * and its sample is the run's bytes over its busy time (a counted message
 * matched and not landed) plus at most 1 us of each idle gap it continued
 * across: a lone message's latency, a window's throughput (a ping-pong's
 * reply is not copy time). A run counts only when no other receive from that
 * peer was under way at its start (so a queue does not count as copy time)
 * and no send of ours to it went out or was under way while its messages
 * landed (an exchange's stream sample holds both directions' copies, a get's
 * does not; such an exchange streams untimed, or takes the get where the
 * transport's get_exchange says so). Runs alternate between the paths; after
 * three clean runs of each (the first run each way only warms) the faster
 * per byte serves the class, until the transport's get_measure_ms (shm:
 * TERN_SHM_MEASURE_MS) later both are timed again. Below its get_measure_min
 * (TERN_SHM_MEASURE_MIN, 128 KB) nothing is timed and get_mid
 * (TERN_SHM_MID_PATH) says the path (the stream by default): there the
 * stream's samples cost more than any choice could win (2-rank bcast, gather
 * and reduce at 32-64 KB 1.5-2.7x slower with them). */
#ifndef TERN_CORE_PT2PT_RNDV_PATH_H
#define TERN_CORE_PT2PT_RNDV_PATH_H

#include "core/pt2pt/request.h"
#include "core/runtime/runtime.h"
#include <stddef.h>

/* Receiver, on the RTS of an n-byte message from peer below
 * peer->rma_min, that could be read with a get, before req joins the
 * peer's in-flight list: 1 read it with a get, 0 ask for the stream (below
 * peer->get_min, or no measurement: always 0; from get_min up to
 * the transport's get_measure_min: as its get_mid says). Marks req when this
 * message is counted in a timed run. */
int tern_rndv_path_by_get(tern_peer_t *peer, tern_req_t *req, size_t n);

void tern_rndv_path_record(tern_peer_t *peer, tern_req_t *req);

void tern_rndv_path_sent(tern_peer_t *peer);

/* Sender: req, a rendezvous to peer, is under way; its start tells the
 * receiver's choice that an exchange may follow (TERN_SHM_EXCHANGE_PATH). */
static inline void tern_rndv_path_sending(tern_peer_t *peer, tern_req_t *req)
{
    req->rndv = 1;
    if (peer->rndv_path)
        tern_rndv_path_sent(peer);
}

/* Receiver, when all of a rendezvous receive's bytes landed: adds them to
 * its run if req is counted in one. */
static inline void tern_rndv_path_landed(tern_peer_t *peer, tern_req_t *req)
{
    if (__builtin_expect(req->rndv_sample != 0, 0))
        tern_rndv_path_record(peer, req);
}

#endif
