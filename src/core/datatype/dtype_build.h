/* The engine's constructors of derived datatypes, their queries and
 * external32; the procedures of MPI (dtype_construct.h, dtype_query.h,
 * dtype_pack.h) check what depends on values and call these. Displacements
 * are in bytes. Every constructor records the envelope (combiner and the
 * arguments as given, for MPI_Type_get_contents) and returns a new
 * uncommitted handle. */
#ifndef TERN_CORE_DTYPE_BUILD_H
#define TERN_CORE_DTYPE_BUILD_H

#include "core/datatype/datatype.h"

/* Arguments as the user gave them (copied). */
typedef struct {
    int combiner;
    int ni, na, nc, nd;
    const int *ints;
    const MPI_Aint *aints;
    const MPI_Count *counts;
    const MPI_Datatype *types;
} tern_dtype_args_t;

/* A committed type with basic's type map and args's envelope (no member
 * types): the types MPI_Type_create_f90_* return (dtype_f90.c). */
tern_status_t tern_dtype_build_named_like(MPI_Datatype basic, const tern_dtype_args_t *args,
                                          MPI_Datatype *out);
/* count copies of (blen copies of old, contiguous) at i * stride bytes. */
tern_status_t tern_dtype_build_vector(size_t count, size_t blen, MPI_Aint stride,
                                      MPI_Datatype old, const tern_dtype_args_t *args,
                                      MPI_Datatype *out);
/* Block i: blen[i] copies of types[i] (types[0] for all when single_type)
 * at displ[i]. MPI_LB / MPI_UB members set the bounds (struct). */
tern_status_t tern_dtype_build_blocks(size_t n, const size_t *blen, const MPI_Aint *displ,
                                      const MPI_Datatype *types, int single_type,
                                      int pad_extent, const tern_dtype_args_t *args,
                                      MPI_Datatype *out);
/* Multi-dimensional grids (subarray, darray): dim d owns nblk[d] runs
 * (start[d][j], len[d][j]) of elements; gsize[d] elements per dim; order
 * MPI_ORDER_C or MPI_ORDER_FORTRAN. Extent: the whole array. */
tern_status_t tern_dtype_build_grid(int ndims, const size_t *gsize, const size_t *nblk,
                                    size_t *const *start, size_t *const *len, int order,
                                    MPI_Datatype old, const tern_dtype_args_t *args,
                                    MPI_Datatype *out);
/* Subarray (dtype_grid.c): dim d keeps subsizes[d] of sizes[d] elements
 * from starts[d]. */
tern_status_t tern_dtype_build_subarray(int ndims, const size_t *sizes, const size_t *subsizes,
                                        const size_t *starts, int order, MPI_Datatype old,
                                        const tern_dtype_args_t *args, MPI_Datatype *out);
/* Darray (dtype_grid.c): the part of a gsizes array distributed over a
 * psizes process grid (ranks row-major) that rank owns; distribs[d] is
 * MPI_DISTRIBUTE_NONE / BLOCK / CYCLIC with dargs[d] (or DFLT_DARG). */
tern_status_t tern_dtype_build_darray(int rank, int ndims, const size_t *gsizes,
                                      const int *distribs, const int *dargs, const int *psizes,
                                      int order, MPI_Datatype old, const tern_dtype_args_t *args,
                                      MPI_Datatype *out);
tern_status_t tern_dtype_build_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                                       const tern_dtype_args_t *args, MPI_Datatype *out);
/* A copy of old; committed if old is. */
tern_status_t tern_dtype_dup(MPI_Datatype old, MPI_Datatype *out);

/* A predefined or committed type is committed already. */
tern_status_t tern_dtype_commit(MPI_Datatype dt);
/* 1 for a derived handle that exists (committed or not). */
int tern_dtype_is_derived(MPI_Datatype dt);
int tern_dtype_is_committed(MPI_Datatype dt);

/* Queries valid for every existing type, committed or not. */
typedef struct {
    MPI_Aint lb, extent, true_lb, true_extent;
    size_t size;
} tern_dtype_info_t;
int tern_dtype_info(MPI_Datatype dt, tern_dtype_info_t *info);
/* Envelope: returns 0 if dt is no type; for predefined types the combiner
 * is MPI_COMBINER_NAMED and the counts are 0. */
int tern_dtype_envelope(MPI_Datatype dt, tern_dtype_args_t *args);

/* external32: packed size, pack (whole buffers) and unpack. */
tern_status_t tern_dtype_ext32_size(MPI_Datatype dt, size_t count, size_t *bytes);
tern_status_t tern_dtype_ext32_pack(const void *buf, size_t count, MPI_Datatype dt, void *out);
tern_status_t tern_dtype_ext32_unpack(const void *in, void *buf, size_t count, MPI_Datatype dt);

#endif
