/* The argument checks of the collectives that need more than one rule per
 * parameter (roots, MPI_IN_PLACE, intercommunicators, counts per rank):
 * called by the generated entry points (src/mpi/api/coll.toml, check_call)
 * after the communicator check. Each returns MPI_SUCCESS or the raised
 * error's code. */
#ifndef TERN_MPI_COLL_H
#define TERN_MPI_COLL_H

#include "mpi/mpi_checks.h"

int tern_check_bcast(const char *func, tern_comm_t *c, const void *buf, int count,
                     MPI_Datatype dt, int root);

#endif
