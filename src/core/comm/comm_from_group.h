/* The MPI-4 constructors with no parent communicator (sessions' way to a
 * communicator): MPI_Comm_create_from_group and
 * MPI_Intercomm_create_from_groups, collective over the groups' members
 * only. Their agreements run on MPI_COMM_WORLD's internal object, which
 * exists whenever the runtime is up (with or without MPI_Init), with tags
 * drawn from the string tag. */
#ifndef TERN_CORE_COMM_FROM_GROUP_H
#define TERN_CORE_COMM_FROM_GROUP_H

#include "core/comm/comm.h"
#include "core/group/group.h"
#include "core/info/info.h"

/* info may be NULL (MPI_INFO_NULL); the new communicator gets errhandler. */
tern_status_t tern_comm_from_group(const tern_group_t *g, const char *stringtag,
                                   const tern_info_t *info, MPI_Errhandler errhandler,
                                   MPI_Comm *newcomm);
tern_status_t tern_intercomm_from_groups(const tern_group_t *local_group, int local_leader,
                                         const tern_group_t *remote_group, int remote_leader,
                                         const char *stringtag, const tern_info_t *info,
                                         MPI_Errhandler errhandler, MPI_Comm *newintercomm);

#endif
