/* Datatypes in a file representation other than native (MPI-5.0 14.5):
 * what the I/O views need from the engine to place and convert data whose
 * basic elements have other sizes in the file than in memory (external32,
 * or a representation registered with MPI_Register_datarep).
 *
 * A representation is given by the file extent of each predefined type
 * (tern_dt_extent_fn: external32's sizes, or the program's
 * dtype_file_extent_fn). From it:
 *   - a data item is an entry of a type signature (a basic element; each
 *     half of a pair type without padding such as MPI_2INT is one, as the
 *     engine's leaves count them); tern_dtype_file_span counts the items
 *     of one element, their bytes in the file and in memory, or only those
 *     that fit a number of file bytes (a read that met the end of the file);
 *   - tern_dtype_file_layout gives where a filetype's data lies in the file:
 *     the type rebuilt from its envelope with every basic element taking
 *     its file extent. Displacements counted in elements of an old type
 *     (contiguous, vector, indexed, indexed_block, subarray, darray) scale
 *     with it; displacements given in bytes (hvector, hindexed,
 *     hindexed_block, struct, resized) are kept as they are, as 14.5.1
 *     says ("MPI will interpret these byte displacements as is; no scaling
 *     will be done"). A predefined type is its data items back to back (no
 *     alignment padding: the file's representation is byte-aligned), so
 *     MPI_DOUBLE_INT is 12 bytes in external32.
 * external32's conversion of a range of items (tern_dtype_ext32_range) is
 * the engine's external32 walk (dtype_external32.c) over a byte range. */
#ifndef TERN_CORE_DTYPE_FILEREP_H
#define TERN_CORE_DTYPE_FILEREP_H

#include "core/datatype/datatype.h"

#include <stddef.h>

/* The bytes one element of the predefined type basic takes in the file;
 * a status other than TERN_OK when the representation has no form for it
 * (the status is returned as it is). */
typedef tern_status_t (*tern_dt_extent_fn)(MPI_Datatype basic, MPI_Aint *extent, void *arg);

/* external32's extents (MPI-5.0 14.5.2, Table 14.2): TERN_ERR_NOT_SUPPORTED
 * for a type that has no external32 form here (long double). */
tern_status_t tern_dtype_ext32_extent(MPI_Datatype basic, MPI_Aint *extent, void *arg);

/* Data items and their bytes in the file and in memory (packed). */
typedef struct {
    size_t items, file_bytes, native_bytes;
} tern_dt_span_t;

/* One element of dt (any valid type); with limit < SIZE_MAX only its
 * leading items whose file bytes add up to at most limit. */
tern_status_t tern_dtype_file_span(MPI_Datatype dt, tern_dt_extent_fn fn, void *arg, size_t limit,
                                   tern_dt_span_t *span);

/* dt's type map in the file (the placement rule above): a new committed
 * type of MPI_BYTE blocks whose size is the file bytes of dt's items and
 * whose extent is dt's extent in the file (MPI_File_get_type_extent). The
 * caller releases it (tern_datatype_release). */
tern_status_t tern_dtype_file_layout(MPI_Datatype dt, tern_dt_extent_fn fn, void *arg,
                                     MPI_Datatype *out);

/* Converts the data items whose native packed bytes are [skip, skip + len)
 * of count elements of dt at buf (skip and len on item boundaries) to
 * external32 at file (to_external), or back from file into buf.
 * TERN_ERR_CONVERSION: a long that does not fit external32's 4 bytes. */
tern_status_t tern_dtype_ext32_range(void *buf, size_t count, MPI_Datatype dt, size_t skip,
                                     size_t len, void *file, int to_external);

#endif
