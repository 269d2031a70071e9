/* Pack and unpack into the user's buffers, native or external32
 * (dtype_pack.h), over the engine's pack (datatype.c) and external32
 * (dtype_external32.c). */
#include "core/datatype/dtype_pack.h"
#include "core/datatype/dtype_build.h"

#include <string.h>

static tern_status_t check_datarep(const char *datarep)
{
    if (strcmp(datarep, "external32") == 0)
        return TERN_OK;
    return tern_status_detail(TERN_ERR_DATAREP,
                              "data representation \"%s\" is not supported (only \"external32\")",
                              datarep);
}

/* Bytes of count elements of dt in external32. */
static tern_status_t ext32_size(MPI_Datatype dt, MPI_Count count, size_t *bytes)
{
    tern_status_t st = tern_dtype_ext32_size(dt, (size_t)count, bytes);
    if (st == TERN_ERR_NOT_SUPPORTED)
        return tern_status_detail(TERN_ERR_CONVERSION,
                                  "datatype 0x%x holds a type with no external32 form here "
                                  "(long double)", (unsigned)dt);
    return st;
}

/* Moves count elements of dt between the user's buffer and a packed buffer
 * of packed_size bytes at *position, native or external32, packing when
 * to_packed; advances the position. */
static tern_status_t transfer(int ext32, int to_packed, void *user, void *packed,
                              MPI_Count packed_size, tern_num_ref_t position, MPI_Count count,
                              MPI_Datatype dt)
{
    size_t need;
    tern_status_t st = TERN_OK;
    if (ext32)
        st = ext32_size(dt, count, &need);
    else
        need = tern_datatype_packed_size(dt, (size_t)count);
    if (st != TERN_OK)
        return st;
    MPI_Count pos = tern_num_ref_get(position);
    if (pos < 0 || pos > packed_size || (size_t)(packed_size - pos) < need)
        return tern_status_detail(TERN_ERR_TRUNCATE,
                                  "%zu bytes to %s at position %lld do not fit a %lld-byte "
                                  "buffer", need, to_packed ? "pack" : "unpack", (long long)pos,
                                  (long long)packed_size);
    if (need && !packed)
        return tern_status_detail(TERN_ERR_BUFFER, "%s is NULL", to_packed ? "outbuf" : "inbuf");
    char *at = (char *)packed + pos;
    if (ext32)
        st = to_packed ? tern_dtype_ext32_pack(user, (size_t)count, dt, at)
                       : tern_dtype_ext32_unpack(at, user, (size_t)count, dt);
    else
        st = to_packed ? tern_datatype_pack(user, (size_t)count, dt, at)
                       : tern_datatype_unpack(at, need, user, (size_t)count, dt);
    if (st == TERN_ERR_CONVERSION)
        return tern_status_detail(st, "a long value does not fit the 4 bytes of external32");
    if (st == TERN_OK)
        tern_num_ref_set(position, pos + (MPI_Count)need);
    return st;
}

tern_status_t tern_dtype_pack(const void *inbuf, MPI_Count incount, MPI_Datatype dt,
                              void *outbuf, MPI_Count outsize, tern_num_ref_t position)
{
    return transfer(0, 1, (void *)inbuf, outbuf, outsize, position, incount, dt);
}

tern_status_t tern_dtype_unpack(const void *inbuf, MPI_Count insize, tern_num_ref_t position,
                                void *outbuf, MPI_Count outcount, MPI_Datatype dt)
{
    return transfer(0, 0, outbuf, (void *)inbuf, insize, position, outcount, dt);
}

tern_status_t tern_dtype_pack_size(MPI_Count incount, MPI_Datatype dt, tern_num_ref_t size)
{
    tern_num_ref_set(size, (MPI_Count)tern_datatype_packed_size(dt, (size_t)incount));
    return TERN_OK;
}

tern_status_t tern_dtype_pack_external(const char *datarep, const void *inbuf, MPI_Count incount,
                                       MPI_Datatype dt, void *outbuf, MPI_Count outsize,
                                       tern_num_ref_t position)
{
    tern_status_t st = check_datarep(datarep);
    if (st != TERN_OK)
        return st;
    return transfer(1, 1, (void *)inbuf, outbuf, outsize, position, incount, dt);
}

tern_status_t tern_dtype_unpack_external(const char *datarep, const void *inbuf,
                                         MPI_Count insize, tern_num_ref_t position, void *outbuf,
                                         MPI_Count outcount, MPI_Datatype dt)
{
    tern_status_t st = check_datarep(datarep);
    if (st != TERN_OK)
        return st;
    return transfer(1, 0, outbuf, (void *)inbuf, insize, position, outcount, dt);
}

tern_status_t tern_dtype_pack_external_size(const char *datarep, MPI_Count incount,
                                            MPI_Datatype dt, tern_num_ref_t size)
{
    size_t bytes;
    tern_status_t st = check_datarep(datarep);
    if (st == TERN_OK)
        st = ext32_size(dt, incount, &bytes);
    if (st == TERN_OK)
        tern_num_ref_set(size, (MPI_Count)bytes);
    return st;
}
