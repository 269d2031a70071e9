/* Argument checks shared by the group and communicator entry points. */
#ifndef TERN_MPI_GROUP_H
#define TERN_MPI_GROUP_H

#include "core/comm/group.h"
#include "mpi/mpi_errors.h"

/* MPI_ERR_GROUP unless g is a live group (MPI_GROUP_EMPTY included). */
int tern_check_group(const char *func, MPI_Comm comm, MPI_Group g, tern_group_t **g_p);

#endif
