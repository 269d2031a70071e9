/* MPI_Pack, MPI_Unpack, their external32 forms and the sizes they need
 * (dtype_pack.c), on arguments the MPI layer has checked by kind: counts
 * not negative, dt committed, position and size pointers not NULL. The
 * packed buffer's size bounds the position: TERN_ERR_TRUNCATE when the
 * data does not fit. Positions are byte offsets, advanced by what moved. */
#ifndef TERN_CORE_DTYPE_PACK_H
#define TERN_CORE_DTYPE_PACK_H

#include "core/datatype/datatype.h"
#include "core/datatype/dtype_nums.h"

tern_status_t tern_dtype_pack(const void *inbuf, MPI_Count incount, MPI_Datatype dt,
                              void *outbuf, MPI_Count outsize, tern_num_ref_t position);
tern_status_t tern_dtype_unpack(const void *inbuf, MPI_Count insize, tern_num_ref_t position,
                                void *outbuf, MPI_Count outcount, MPI_Datatype dt);
tern_status_t tern_dtype_pack_size(MPI_Count incount, MPI_Datatype dt, tern_num_ref_t size);

/* datarep: only "external32" (TERN_ERR_DATAREP otherwise); a type with no
 * external32 form (long double) or a value that does not fit it (a long
 * beyond 32 bits) is TERN_ERR_CONVERSION. */
tern_status_t tern_dtype_pack_external(const char *datarep, const void *inbuf, MPI_Count incount,
                                       MPI_Datatype dt, void *outbuf, MPI_Count outsize,
                                       tern_num_ref_t position);
tern_status_t tern_dtype_unpack_external(const char *datarep, const void *inbuf,
                                         MPI_Count insize, tern_num_ref_t position, void *outbuf,
                                         MPI_Count outcount, MPI_Datatype dt);
tern_status_t tern_dtype_pack_external_size(const char *datarep, MPI_Count incount,
                                            MPI_Datatype dt, tern_num_ref_t size);

#endif
