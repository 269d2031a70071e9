/* Process groups: an ordered list of world ranks. Group handles index a
 * table that grows by doubling (0x88000000 | index); MPI_GROUP_EMPTY is a
 * predefined object. Each handle owns its group (no sharing), so
 * MPI_Group_free simply frees it. */
#ifndef TERN_CORE_GROUP_H
#define TERN_CORE_GROUP_H

#include "base/status.h"
#include <mpi.h>

typedef struct tern_group {
    MPI_Group handle;
    int size;
    int rank;        /* this process's rank in the group, or MPI_UNDEFINED */
    int *world_ranks; /* group rank -> world rank */
    /* The session it derives from (MPI_Group_from_session_pset and groups
     * made from such), else MPI_SESSION_NULL: communicators made from it
     * use that session's buffered-send buffer. */
    MPI_Session session;
} tern_group_t;

/* Handle to object; NULL if not a live group (MPI_GROUP_EMPTY is live). */
tern_group_t *tern_group_lookup(MPI_Group handle);
/* New group with a handle from a list of world ranks (copied). n == 0 gives
 * MPI_GROUP_EMPTY. */
tern_status_t tern_group_new(const int *world_ranks, int n, MPI_Group *handle_p);
/* Marks a group made by tern_group_new as derived from session (no-op
 * for MPI_GROUP_EMPTY). */
void tern_group_set_session(MPI_Group handle, MPI_Session session);
/* Frees a group made by tern_group_new (MPI_GROUP_EMPTY is left alone). */
void tern_group_free(MPI_Group handle);

/* Rank in g of a world rank, or MPI_UNDEFINED. */
int tern_group_rank_of_world(const tern_group_t *g, int world_rank);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL, from two lists of world ranks. */
int tern_group_compare_ranks(const int *a, int na, const int *b, int nb);

/* The MPI_Group_* operations (group_ops.c), on groups the MPI layer has
 * checked; errors carry a detail naming the argument. */
tern_status_t tern_group_get_size(const tern_group_t *g, int *size);
tern_status_t tern_group_get_rank(const tern_group_t *g, int *rank);
/* Frees *handle's group and sets it to MPI_GROUP_NULL. */
tern_status_t tern_group_release(MPI_Group *handle);
tern_status_t tern_group_compare(const tern_group_t *g1, const tern_group_t *g2, int *result);
tern_status_t tern_group_translate_ranks(const tern_group_t *g1, int n, const int *ranks1,
                                         const tern_group_t *g2, int *ranks2);
tern_status_t tern_group_incl(const tern_group_t *g, int n, const int *ranks, MPI_Group *newgroup);
tern_status_t tern_group_excl(const tern_group_t *g, int n, const int *ranks, MPI_Group *newgroup);
tern_status_t tern_group_range_incl(const tern_group_t *g, int n, int ranges[][3],
                                    MPI_Group *newgroup);
tern_status_t tern_group_range_excl(const tern_group_t *g, int n, int ranges[][3],
                                    MPI_Group *newgroup);
tern_status_t tern_group_union(const tern_group_t *g1, const tern_group_t *g2, MPI_Group *newgroup);
tern_status_t tern_group_intersection(const tern_group_t *g1, const tern_group_t *g2,
                                      MPI_Group *newgroup);
tern_status_t tern_group_difference(const tern_group_t *g1, const tern_group_t *g2,
                                    MPI_Group *newgroup);

/* Frees every group still allocated (MPI_Finalize). */
void tern_group_finalize(void);

#endif
