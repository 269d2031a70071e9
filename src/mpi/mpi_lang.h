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

/* MPI_Abi_get_info: a new info with the sizes of MPI_Aint, MPI_Count and
 * MPI_Offset (mpi_aint_size, mpi_count_size, mpi_offset_size). */
tern_status_t tern_lang_abi_info(MPI_Info *info);

/* Tern's Fortran ABI is fixed by its bindings (gfortran's defaults: 4-byte
 * INTEGER, REAL and LOGICAL, 8-byte DOUBLE PRECISION, .TRUE. = 1 and
 * .FALSE. = 0 at every LOGICAL size), so the library knows it from the
 * start. MPI_Abi_get_fortran_info: a new info with those sizes and the
 * optional types Tern has (mpi_<type>_supported). */
tern_status_t tern_lang_abi_fortran_info(MPI_Info *info);
/* MPI_Abi_set_fortran_info: the first call succeeds when every size it
 * gives agrees with Tern's (TERN_ERR_ABI naming the first that does not);
 * every call after a successful one is TERN_ERR_ABI (MPI-5.0 21.4.1). */
tern_status_t tern_lang_abi_set_fortran_info(MPI_Info info);
/* MPI_Abi_get_fortran_booleans: .TRUE. and .FALSE. as logical_size-byte
 * integers, *is_set = 1; TERN_ERR_ARG unless logical_size is a power of
 * two up to 16. */
tern_status_t tern_lang_abi_fortran_booleans(int logical_size, void *logical_true,
                                             void *logical_false, int *is_set);
/* MPI_Abi_set_fortran_booleans: as set_fortran_info, for the two values. */
tern_status_t tern_lang_abi_set_fortran_booleans(int logical_size, const void *logical_true,
                                                 const void *logical_false);

#endif
