/* What the datatype procedures need from the MPI layer itself
 * (mpi_type.c): the status of a message is point-to-point's, above the
 * datatype core. */
#ifndef TERN_MPI_TYPE_H
#define TERN_MPI_TYPE_H

#include "base/status.h"
#include <mpi.h>

/* MPI_Status_set_elements on checked arguments: the status says count
 * basic elements of datatype arrived (its source, tag, error and
 * cancelled flag are kept). */
tern_status_t tern_mpi_status_set_elements(MPI_Status *status, MPI_Datatype datatype,
                                           MPI_Count count);

#endif
