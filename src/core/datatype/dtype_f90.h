/* The parameterized Fortran types (MPI_Type_create_f90_integer/real/complex,
 * MPI-4.1 19.2.5) and the pair types of MPI_MINLOC/MAXLOC
 * (MPI_Type_get_value_index), dtype_f90.c. */
#ifndef TERN_CORE_DTYPE_F90_H
#define TERN_CORE_DTYPE_F90_H

#include "core/datatype/datatype.h"

/* combiner: MPI_COMBINER_F90_INTEGER (r only; p is ignored), _REAL or
 * _COMPLEX. The type of the gfortran kind that SELECTED_INT_KIND(r) /
 * SELECTED_REAL_KIND(p, r) picks: a committed type with that kind's type
 * map and the combiner in its envelope, made once per (combiner, p, r) and
 * returned again after (it must not be freed). MPI_UNDEFINED leaves p or r
 * free (not both). TERN_ERR_ARG when no kind fits. */
tern_status_t tern_dtype_create_f90(int combiner, int p, int r, MPI_Datatype *newtype);

/* 1 if dt is one of those types (MPI_Type_free refuses them). */
int tern_dtype_is_f90(MPI_Datatype dt);

/* The predefined pair type (MPI_FLOAT_INT, MPI_2INTEGER...) of a value and
 * an index type, or MPI_DATATYPE_NULL when there is none. */
tern_status_t tern_dtype_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                                     MPI_Datatype *pair_type);

#endif
