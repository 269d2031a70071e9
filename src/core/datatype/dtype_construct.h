/* The datatype constructors of MPI (dtype_construct.c; subarray and darray
 * in dtype_grid.c), on arguments the MPI layer has checked by kind: counts
 * non-negative, arrays non-NULL, oldtype an existing type (committed or
 * not), newtype non-NULL. They check what depends on the values (block
 * lengths, the types of a struct, dimensions that fit, a process grid),
 * record the envelope with every value in the list of the C type the
 * caller passed it as (dtype_nums.h), and return a new uncommitted type in
 * *newtype. Errors carry a detail naming the argument. */
#ifndef TERN_CORE_DTYPE_CONSTRUCT_H
#define TERN_CORE_DTYPE_CONSTRUCT_H

#include "core/datatype/datatype.h"
#include "core/datatype/dtype_nums.h"

tern_status_t tern_dtype_contiguous(tern_num_t count, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype);
/* stride in extents of oldtype (vector) or in bytes (hvector). */
tern_status_t tern_dtype_vector(tern_num_t count, tern_num_t blocklength, tern_num_t stride,
                                MPI_Datatype oldtype, MPI_Datatype *newtype);
tern_status_t tern_dtype_hvector(tern_num_t count, tern_num_t blocklength, tern_num_t stride,
                                 MPI_Datatype oldtype, MPI_Datatype *newtype);
/* Displacements in extents of oldtype (indexed) or in bytes (hindexed). */
tern_status_t tern_dtype_indexed(tern_num_t count, tern_nums_t blocklengths,
                                 tern_nums_t displacements, MPI_Datatype oldtype,
                                 MPI_Datatype *newtype);
tern_status_t tern_dtype_hindexed(tern_num_t count, tern_nums_t blocklengths,
                                  tern_nums_t displacements, MPI_Datatype oldtype,
                                  MPI_Datatype *newtype);
tern_status_t tern_dtype_indexed_block(tern_num_t count, tern_num_t blocklength,
                                       tern_nums_t displacements, MPI_Datatype oldtype,
                                       MPI_Datatype *newtype);
tern_status_t tern_dtype_hindexed_block(tern_num_t count, tern_num_t blocklength,
                                        tern_nums_t displacements, MPI_Datatype oldtype,
                                        MPI_Datatype *newtype);
/* TERN_ERR_TYPE when a member of types is not a datatype. */
tern_status_t tern_dtype_struct(tern_num_t count, tern_nums_t blocklengths,
                                tern_nums_t displacements, const MPI_Datatype *types,
                                MPI_Datatype *newtype);
tern_status_t tern_dtype_resized(MPI_Datatype oldtype, tern_num_t lb, tern_num_t extent,
                                 MPI_Datatype *newtype);
/* order: MPI_ORDER_C or MPI_ORDER_FORTRAN (checked by the MPI layer). */
tern_status_t tern_dtype_subarray(int ndims, tern_nums_t sizes, tern_nums_t subsizes,
                                  tern_nums_t starts, int order, MPI_Datatype oldtype,
                                  MPI_Datatype *newtype);
tern_status_t tern_dtype_darray(int size, int rank, int ndims, tern_nums_t gsizes,
                                const int *distribs, const int *dargs, const int *psizes,
                                int order, MPI_Datatype oldtype, MPI_Datatype *newtype);

#endif
