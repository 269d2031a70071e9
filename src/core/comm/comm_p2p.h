/* Point-to-point addressed by the ranks of a communicator, for the
 * library's own traffic: collective schedules and the exchanges of
 * communicator creation (comm_exchange.h). Contiguous bytes on a context
 * the caller picks; the request is the caller's to wait for and release. */
#ifndef TERN_CORE_COMM_P2P_H
#define TERN_CORE_COMM_P2P_H

#include "core/comm/comm.h"
#include "core/pt2pt/p2p.h"

tern_status_t tern_comm_isend(tern_comm_t *comm, uint32_t ctx, const void *buf, size_t bytes,
                              int dest, int tag, int mode, tern_req_t **req_p);
tern_status_t tern_comm_irecv(tern_comm_t *comm, uint32_t ctx, void *buf, size_t bytes, int src,
                              int tag, tern_req_t **req_p);

/* The world rank of a posted receive's source rank in its communicator, or
 * -1 (for the peer-failure watch, tern_peer_failure_set_source_map). */
int tern_comm_request_source_world(const tern_req_t *req);

#endif
