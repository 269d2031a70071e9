/* The communicator queries of MPI (comm_query.c), on communicators the MPI
 * layer has checked; errors carry a detail naming the argument. */
#ifndef TERN_CORE_COMM_QUERY_H
#define TERN_CORE_COMM_QUERY_H

#include "core/comm/comm.h"

tern_status_t tern_comm_get_rank(const tern_comm_t *c, int *rank);
tern_status_t tern_comm_get_size(const tern_comm_t *c, int *size);
/* TERN_ERR_COMM unless c is an intercommunicator. */
tern_status_t tern_comm_get_remote_size(const tern_comm_t *c, int *size);
tern_status_t tern_comm_test_inter(const tern_comm_t *c, int *flag);
/* A new group: the local group of c, or (intercommunicators) the remote one. */
tern_status_t tern_comm_get_group(const tern_comm_t *c, MPI_Group *group);
tern_status_t tern_comm_get_remote_group(const tern_comm_t *c, MPI_Group *group);
/* MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL. */
tern_status_t tern_comm_compare(const tern_comm_t *a, const tern_comm_t *b, int *result);
tern_status_t tern_comm_set_name(tern_comm_t *c, const char *name);
tern_status_t tern_comm_get_name(const tern_comm_t *c, char *name, int *resultlen);
/* Replaces c's hints by a copy of info; get_info returns a new copy. */
tern_status_t tern_comm_set_info(tern_comm_t *c, MPI_Info info);
tern_status_t tern_comm_get_info(const tern_comm_t *c, MPI_Info *info_used);

/* Whether every rank of intracommunicator c is on this node (0 for an
 * intercommunicator). */
int tern_comm_one_node(const tern_comm_t *c);

#endif
