/* Argument checks of MPI-4's point-to-point additions (mpi_part.c):
 * partitioned request constructors. */
#ifndef TERN_MPI_PART_H
#define TERN_MPI_PART_H

#include "core/comm/comm.h"
#include "core/datatype/datatype.h"
#include <mpi.h>

/* MPI_Psend_init (is_send) and MPI_Precv_init: buffer, partitions, count,
 * type, peer and tag as a send or receive checks them, except that a
 * receive may name neither MPI_ANY_SOURCE nor MPI_ANY_TAG. On success *c_p
 * is the communicator. */
int tern_check_part(const char *func, const void *buf, int partitions, MPI_Count count,
                    MPI_Datatype dt, int peer, int tag, MPI_Comm comm, int is_send,
                    tern_comm_t **c_p);

#endif
