/* User-Level Failure Mitigation (the MPIX_ interface; docs/design.md,
 * "Failure handling under ULFM"): what each communicator knows of its
 * failed members, revocation, the fault-tolerant agreement and shrink. */
#ifndef TERN_CORE_ULFM_H
#define TERN_CORE_ULFM_H

#include "base/status.h"
#include "core/comm/comm.h"
#include "core/pt2pt/peer_failure.h"
#include "core/pt2pt/request.h"
#include "core/runtime/runtime.h"
#include <stddef.h>

tern_status_t tern_ulfm_revoke(tern_comm_t *c);
tern_status_t tern_ulfm_is_revoked(tern_comm_t *c, int *flag);
tern_status_t tern_ulfm_shrink(tern_comm_t *c, MPI_Comm *newcomm);
tern_status_t tern_ulfm_ishrink(tern_comm_t *c, MPI_Comm *newcomm, tern_req_t **req_p);
tern_status_t tern_ulfm_agree(tern_comm_t *c, int *flag);
tern_status_t tern_ulfm_iagree(tern_comm_t *c, int *flag, tern_req_t **req_p);
tern_status_t tern_ulfm_failure_ack(tern_comm_t *c);
tern_status_t tern_ulfm_get_acked(tern_comm_t *c, MPI_Group *failedgrp);
tern_status_t tern_ulfm_get_failed(tern_comm_t *c, MPI_Group *failedgrp);
tern_status_t tern_ulfm_ack_failed(tern_comm_t *c, int num_to_ack, int *num_acked);

/* Fault-tolerant mode (mpiexec --ft, TERN_FT=1): every peer is watched
 * while a rank waits, not only those it waits for. */
int tern_ulfm_ft(void);

/* The packets of revocations and agreements (TERN_PKT_ULFM). */
void tern_ulfm_packet(int src_world, const void *pkt, size_t len);

/* A communicator's state for ULFM, NULL until first needed; freed with it. */
void tern_ulfm_comm_free(tern_comm_t *c);

/* TERN_ERR_REVOKED, with a text naming c, when c is revoked (the check of
 * every operation on it but agree and shrink), else TERN_OK. One load. */
tern_status_t tern_ulfm_revoked_error(const tern_comm_t *c);
static inline tern_status_t tern_ulfm_check(const tern_comm_t *c)
{
    return __builtin_expect(c->revoked, 0) ? tern_ulfm_revoked_error(c) : TERN_OK;
}

/* The error of a collective on c, which is revoked or has a failed
 * member. */
tern_status_t tern_ulfm_coll_error(tern_comm_t *c);

/* Whether a collective already running on c stops (its next step, a
 * shared-memory wait): c is revoked, or a member is known failed (one
 * that gave up never answers). Not for a failed member inside
 * MPI_Finalize's barrier outside fault-tolerant mode
 * (tern_rt.in_final_barrier): a rank past that barrier may end before its
 * message was taken, and only a transfer with a rank that really died
 * fails there. */
static inline int tern_ulfm_coll_stopped(const tern_comm_t *c)
{
    return __builtin_expect(c->revoked | c->n_failed, 0) &&
           (c->revoked || !tern_rt.in_final_barrier);
}

/* Waits for a receive from MPI_ANY_SOURCE: while a member of its
 * communicator has failed and is not acknowledged, a blocking receive
 * fails (TERN_ERR_PEER, taken out of the posted queue), a nonblocking
 * wait returns TERN_ERR_PROC_FAILED_PENDING with the request pending. */
tern_status_t tern_ulfm_wait_anysource(tern_req_t *req, int blocking);
/* 1 when MPI_Test on such a receive should say PROC_FAILED_PENDING. */
int tern_ulfm_anysource_pending(tern_req_t *req);

/* Waits until every member of c not known failed called it (MPI_Finalize
 * in fault-tolerant mode): an agreement whose flag nobody reads. */
tern_status_t tern_ulfm_sync(tern_comm_t *c);

/* Frees what messages left behind (MPI_Finalize). */
void tern_ulfm_finalize(void);

/* The failures progress found: a posted receive on a revoked communicator
 * or a collective's on one with a failed member completes with the error. */
void tern_ulfm_on_failure(int peer_world);

#endif
