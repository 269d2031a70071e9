/* The argument checks of the neighbourhood collectives (mpi_neighbor.c),
 * called by their generated entry points (src/mpi/api/topo.toml,
 * check_call) after the communicator, info and request checks: one
 * function for every form (blocking, nonblocking, persistent, large-count)
 * of the five collectives. Returns MPI_SUCCESS or the raised error's code. */
#ifndef TERN_MPI_NEIGHBOR_H
#define TERN_MPI_NEIGHBOR_H

#include "core/coll/neighbor.h"
#include "mpi/mpi_checks.h"

/* MPI_ERR_TOPOLOGY unless c is an intracommunicator with a topology;
 * counts (MPI_ERR_COUNT), datatypes (MPI_ERR_TYPE), count and
 * displacement arrays (MPI_ERR_ARG) and buffers (MPI_ERR_BUFFER: NULL with
 * data, MPI_IN_PLACE, or both the same memory) of each side. */
int tern_check_neighbor(const char *func, tern_comm_t *c, const void *sbuf, tern_nbr_blocks_t sb,
                        const void *rbuf, tern_nbr_blocks_t rb);

#endif
