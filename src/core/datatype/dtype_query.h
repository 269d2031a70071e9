/* The datatype procedures of MPI besides constructors and pack/unpack
 * (dtype_query.c): validity checks worded for the MPI layer, free, names,
 * envelope and contents, size and extents, addresses, and the element
 * counts of a received message (MPI_Type_commit is tern_dtype_commit,
 * dtype_build.h). The MPI layer checks arguments by kind (handles exist,
 * pointers are not NULL); errors carry a detail naming the argument. */
#ifndef TERN_CORE_DTYPE_QUERY_H
#define TERN_CORE_DTYPE_QUERY_H

#include "core/datatype/datatype.h"
#include "core/datatype/dtype_nums.h"

#include <stdint.h>

/* 1 if dt names a type: predefined, or derived (committed or not). */
int tern_dtype_exists(MPI_Datatype dt);
/* TERN_OK if dt names a type; else TERN_ERR_TYPE, the detail naming the
 * argument `name`. */
tern_status_t tern_dtype_check_exists(MPI_Datatype dt, const char *name);
/* TERN_OK if data can move with dt (predefined, or committed); else
 * TERN_ERR_TYPE (an uncommitted type is told to commit). */
tern_status_t tern_dtype_check_committed(MPI_Datatype dt, const char *name);

/* MPI_Type_free: drops the user's reference (operations and types built on
 * it keep theirs) and sets *dt to MPI_DATATYPE_NULL; TERN_ERR_TYPE for a
 * predefined type. */
tern_status_t tern_dtype_free(MPI_Datatype *dt);
/* TERN_ERR_TYPE for a predefined type: its name is fixed. */
tern_status_t tern_dtype_set_name(MPI_Datatype dt, const char *name);
/* name: MPI_MAX_OBJECT_NAME bytes. */
tern_status_t tern_dtype_get_name(MPI_Datatype dt, char *name, int *resultlen);

/* MPI_Type_get_envelope(_c): the counts of each list the constructor
 * filled (a _c constructor's counts and displacements are large counts).
 * num_large_counts is NULL for the int form, which refuses (TERN_ERR_TYPE)
 * a type that has large counts. */
tern_status_t tern_dtype_get_envelope(MPI_Datatype dt, tern_num_ref_t num_integers,
                                      tern_num_ref_t num_addresses, MPI_Count *num_large_counts,
                                      tern_num_ref_t num_datatypes, int *combiner);
/* MPI_Type_get_contents(_c): TERN_ERR_TYPE for a predefined type (no
 * contents) and, in the int form (large_counts NULL), for a type with
 * large counts; TERN_ERR_ARG when an array is too small. The caller owns
 * the datatypes it gets. */
tern_status_t tern_dtype_get_contents(MPI_Datatype dt, MPI_Count max_integers,
                                      MPI_Count max_addresses, MPI_Count max_large_counts,
                                      MPI_Count max_datatypes, int *integers,
                                      MPI_Aint *addresses, MPI_Count *large_counts,
                                      MPI_Datatype *datatypes);

/* Of any type, committed or not. */
tern_status_t tern_dtype_get_size(MPI_Datatype dt, tern_num_ref_t size);
tern_status_t tern_dtype_get_extent(MPI_Datatype dt, tern_num_ref_t lb, tern_num_ref_t extent);
tern_status_t tern_dtype_get_true_extent(MPI_Datatype dt, tern_num_ref_t true_lb,
                                         tern_num_ref_t true_extent);

tern_status_t tern_dtype_get_address(const void *location, MPI_Aint *address);
/* Address arithmetic on MPI_Aint (MPI_Aint_add / MPI_Aint_diff): wraps as
 * the unsigned addresses do. */
static inline MPI_Aint tern_dtype_aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
static inline MPI_Aint tern_dtype_aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* The first `bytes` of a packed stream of committed dt, as whole elements
 * of dt (MPI_Get_count) or as basic elements (MPI_Get_elements);
 * MPI_UNDEFINED when they end inside an element (of dt for the count, a
 * basic one for the elements). */
tern_status_t tern_dtype_get_count(MPI_Datatype dt, size_t bytes, tern_num_ref_t count);
tern_status_t tern_dtype_get_elements(MPI_Datatype dt, size_t bytes, tern_num_ref_t count);
/* The bytes of count basic elements of committed dt, any type map
 * (MPI_Status_set_elements): MPI_Get_elements with dt then gives count.
 * TERN_ERR_COUNT when dt has no basic elements (count > 0) or the bytes
 * pass 2^63. */
tern_status_t tern_dtype_elements_bytes(MPI_Datatype dt, MPI_Count count, size_t *bytes);

#endif
