/* Peer failures: a peer that died or cannot be reached any more makes the
 * requests with it complete with an error instead of ending the process
 * (docs/design.md, "Errors"). Everything here is off the fast path. */
#ifndef TERN_CORE_PEER_FAILURE_H
#define TERN_CORE_PEER_FAILURE_H

#include "base/status.h"
#include "core/pt2pt/request.h"

/* World rank peer_world failed (st: TERN_ERR_PEER for a dead or unreachable
 * peer, TERN_ERR_TRANSPORT when our own endpoint broke, or what broke the
 * packet stream with it, e.g. TERN_ERR_NOMEM); `why` names what failed.
 * The first report is kept; every transport is told (disconnect), every
 * request that waits for the peer completes with the status, and later
 * operations with it fail at once. Safe to call from inside progress and
 * again for a peer already failed. The transports' peer_failed callback. */
void tern_peer_failed(int peer_world, tern_status_t st, const char *why);

/* How to find the world rank of a posted receive's source (its rank is
 * one of its communicator's, a room above): set once at MPI_Init. */
void tern_peer_failure_set_source_map(int (*world_of)(const tern_req_t *req));

/* User-Level Failure Mitigation (core/comm/ulfm.c, a room above), set at
 * MPI_Init: told of every new failure of a world rank, and handed the
 * packets of revocations and agreements (TERN_PKT_ULFM, numbered beside
 * p2p_pkt.h's). */
enum { TERN_PKT_ULFM = 68 };
void tern_peer_failure_set_ulfm(void (*on_failure)(int peer_world),
                                void (*packet)(int src_world, const void *pkt, size_t len));
void tern_peer_failure_packet(int src_world, const void *pkt, size_t len);
/* Nonzero: the watch checks every world rank, not only those this rank
 * waits for (fault-tolerant mode, TERN_FT; a ULFM agreement, revocation). */
extern int tern_peer_watch_all;

/* What failed for world rank peer_world, or NULL while it works. */
const char *tern_peer_failure(int peer_world);

/* Called while a rank waits with nothing to do (tern_progress_idle): fails
 * posted receives whose source has failed, and every TERN_PEER_CHECK_MS
 * runs the transports' liveness checks (watch_peers). */
void tern_peer_watch(void);

#endif
