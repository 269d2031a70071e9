/* Language bindings and the ABI queries (MPI-5.0 chapters 19 and 20): status
 * conversions, the sized Fortran types, the ABI version. Handle conversions
 * are casts, generated from the specs (src/mpi/api/lang.toml, abi.toml). */
#ifndef TERN_MPI_LANG_H
#define TERN_MPI_LANG_H

#include "base/status.h"
#include <mpi.h>

/* A C status, a Fortran status array and an MPI_F08_status share one layout. */
_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint) &&
                   sizeof(MPI_F08_status) == sizeof(MPI_Status),
               "the three status forms have one layout");

/* Copies one status form into another (checked, non-NULL arguments). */
tern_status_t tern_lang_status_copy(void *dst, const void *src);

/* MPI_Type_match_size: the predefined Fortran type of typeclass
 * (MPI_TYPECLASS_*) and size bytes; TERN_ERR_ARG when there is none. */
tern_status_t tern_lang_match_size(int typeclass, int size, MPI_Datatype *datatype);

/* MPI_Abi_get_version: -1.-1, Tern does not implement the standard ABI. */
tern_status_t tern_lang_abi_version(int *major, int *minor);

#endif
