/* Datatypes. This milestone has the predefined types only; their handle
 * carries the size (bits 8-15 of the handle). */
#ifndef TERN_CORE_DATATYPE_H
#define TERN_CORE_DATATYPE_H

#include <mpi.h>
#include <stddef.h>

/* Size in bytes of a valid datatype (data only), -1 if the handle is not
 * one. */
long tern_datatype_size(MPI_Datatype dt);
/* Extent: the bytes one element spans in memory (what point-to-point moves
 * per element of a predefined type, padding included). */
long tern_datatype_extent(MPI_Datatype dt);
/* Name for messages ("MPI_INT"), or NULL if unknown. */
const char *tern_datatype_name(MPI_Datatype dt);
int tern_datatype_is_valid(MPI_Datatype dt);

#endif
