/* Making communicators: every constructor agrees on context ids (see
 * context_id.c) over internal point-to-point, never over the collectives.
 * The results carry groups, context ids and the parent's error handler;
 * attributes, names and info are the MPI layer's business. */
#ifndef TERN_CORE_COMM_CREATE_H
#define TERN_CORE_COMM_CREATE_H

#include "base/status.h"
#include "core/comm/comm.h"
#include "core/comm/comm_exchange.h"
#include "core/group/group.h"

/* An intercommunicator on context ids ctx (its own) and local_ctx (its
 * local_comm's) between our group lranks (we are rank) and rranks (both
 * copied); the error handler is eh_parent's. */
tern_status_t tern_comm_new_inter(const tern_comm_t *eh_parent, uint32_t ctx, uint32_t local_ctx,
                                  int rank, int lsize, const int *lranks, int rsize,
                                  const int *rranks, tern_comm_t **new_p);
/* Same group(s), new context: intra- or intercommunicator. */
tern_status_t tern_comm_dup(tern_comm_t *parent, tern_comm_t **new_p);
/* An intracommunicator's dup whose one agreement also checks each
 * rank's status mine and runs at_root(arg, mask) on rank 0 once every
 * status is TERN_OK (tern_ctx_agree_checked; at_root may be NULL): on
 * failure no communicator, every rank an error, *who the rank whose
 * status was the worst (-1: the agreement itself failed). */
tern_status_t tern_comm_dup_checked(tern_comm_t *parent, tern_status_t mine,
                                    tern_ctx_swap_fn at_root, void *arg, tern_comm_t **new_p,
                                    int *who);
/* The dup on context ids already agreed (one; two for an
 * intercommunicator: its own and its local_comm's), released on failure. */
tern_status_t tern_comm_dup_on(tern_comm_t *parent, const uint32_t *ids, tern_comm_t **new_p);
/* *new_p is NULL for color MPI_UNDEFINED. On an intercommunicator each
 * color gives an intercommunicator between the two groups' members of that
 * color (NULL when the other group has none). */
tern_status_t tern_comm_split(tern_comm_t *parent, int color, int key, tern_comm_t **new_p);
/* Collective over parent; g a subset of parent's (local) group. NULL for
 * processes outside g. On an intercommunicator the result connects g with
 * the group the other side passed (NULL if that one is empty). */
tern_status_t tern_comm_create(tern_comm_t *parent, const tern_group_t *g, tern_comm_t **new_p);
/* Collective over the members of g only (the caller is one of them). */
tern_status_t tern_comm_create_group(tern_comm_t *parent, const tern_group_t *g, int tag,
                                     tern_comm_t **new_p);
/* Leaders talk over peer (remote_leader is a rank of peer, read on the
 * leader only). */
tern_status_t tern_intercomm_create(tern_comm_t *local, int local_leader, tern_comm_t *peer,
                                    int remote_leader, int tag, tern_comm_t **new_p);
tern_status_t tern_intercomm_merge(tern_comm_t *inter, int high, tern_comm_t **new_p);

#endif
