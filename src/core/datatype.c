#include "core/datatype.h"
#include "core/handle.h"

#include <string.h>

#define DT_LIST(X)                                                             \
    X(MPI_CHAR) X(MPI_SIGNED_CHAR) X(MPI_UNSIGNED_CHAR) X(MPI_BYTE) X(MPI_WCHAR)   \
    X(MPI_SHORT) X(MPI_UNSIGNED_SHORT) X(MPI_INT) X(MPI_UNSIGNED) X(MPI_LONG)      \
    X(MPI_UNSIGNED_LONG) X(MPI_LONG_LONG_INT) X(MPI_UNSIGNED_LONG_LONG)            \
    X(MPI_FLOAT) X(MPI_DOUBLE) X(MPI_LONG_DOUBLE) X(MPI_PACKED) X(MPI_C_BOOL)      \
    X(MPI_INT8_T) X(MPI_INT16_T) X(MPI_INT32_T) X(MPI_INT64_T) X(MPI_UINT8_T)      \
    X(MPI_UINT16_T) X(MPI_UINT32_T) X(MPI_UINT64_T) X(MPI_AINT) X(MPI_OFFSET)      \
    X(MPI_COUNT) X(MPI_C_FLOAT_COMPLEX) X(MPI_C_DOUBLE_COMPLEX)                    \
    X(MPI_C_LONG_DOUBLE_COMPLEX) X(MPI_CXX_BOOL) X(MPI_CXX_FLOAT_COMPLEX)          \
    X(MPI_CXX_DOUBLE_COMPLEX) X(MPI_CXX_LONG_DOUBLE_COMPLEX) X(MPI_FLOAT_INT)      \
    X(MPI_DOUBLE_INT) X(MPI_LONG_INT) X(MPI_2INT) X(MPI_SHORT_INT)                 \
    X(MPI_LONG_DOUBLE_INT) X(MPI_INTEGER) X(MPI_REAL) X(MPI_DOUBLE_PRECISION)      \
    X(MPI_LOGICAL) X(MPI_CHARACTER) X(MPI_COMPLEX) X(MPI_DOUBLE_COMPLEX)           \
    X(MPI_2INTEGER) X(MPI_2REAL) X(MPI_2DOUBLE_PRECISION) X(MPI_LB) X(MPI_UB)

static const struct {
    MPI_Datatype handle;
    const char *name;
} predefined[] = {
#define DT_ENTRY(h) {h, #h},
    DT_LIST(DT_ENTRY)
#undef DT_ENTRY
};

#define DT_COUNT (sizeof predefined / sizeof predefined[0])

/* Predefined handles are 0x4c0000II with a dense index II, 1..DT_COUNT. */
static int predefined_index(MPI_Datatype dt)
{
    uint32_t h = (uint32_t)dt;
    if ((h & 0xffff0000u) != 0x4c000000u)
        return -1;
    unsigned idx = h & 0xffu;
    if (idx < 1 || idx > DT_COUNT || predefined[idx - 1].handle != dt)
        return -1;
    return (int)idx - 1;
}

int tern_datatype_is_valid(MPI_Datatype dt) { return predefined_index(dt) >= 0; }

long tern_datatype_extent(MPI_Datatype dt)
{
    if (predefined_index(dt) < 0)
        return -1;
    return (long)(((uint32_t)dt >> 8) & 0xffu);
}

long tern_datatype_size(MPI_Datatype dt)
{
    /* The pair types for MINLOC/MAXLOC hold padding: their size (bytes of
     * data) is less than their extent (sizeof the C struct). */
    switch (dt) {
    case MPI_DOUBLE_INT: return (long)(sizeof(double) + sizeof(int));
    case MPI_LONG_INT: return (long)(sizeof(long) + sizeof(int));
    case MPI_SHORT_INT: return (long)(sizeof(short) + sizeof(int));
    case MPI_LONG_DOUBLE_INT: return (long)(sizeof(long double) + sizeof(int));
    default: return tern_datatype_extent(dt);
    }
}

const char *tern_datatype_name(MPI_Datatype dt)
{
    int i = predefined_index(dt);
    return i < 0 ? NULL : predefined[i].name;
}

/* The pair types carry padding; every other predefined type is dense. */
int tern_datatype_is_contig(MPI_Datatype dt)
{
    return tern_datatype_is_valid(dt) && tern_datatype_size(dt) == tern_datatype_extent(dt);
}

MPI_Aint tern_datatype_true_lb(MPI_Datatype dt)
{
    (void)dt;
    return 0;
}

size_t tern_datatype_packed_size(MPI_Datatype dt, size_t count)
{
    long sz = tern_datatype_size(dt);
    return sz < 0 ? 0 : (size_t)sz * count;
}

/* Pair types: the value, then the int right after it in the packed form. */
static size_t pair_value_size(MPI_Datatype dt)
{
    return (size_t)tern_datatype_size(dt) - sizeof(int);
}

tern_status_t tern_datatype_pack(const void *buf, size_t count, MPI_Datatype dt, void *out)
{
    if (!tern_datatype_is_valid(dt))
        return TERN_ERR_ARG;
    size_t size = (size_t)tern_datatype_size(dt), extent = (size_t)tern_datatype_extent(dt);
    if (size == extent) {
        if (count && size)
            memcpy(out, buf, count * size);
        return TERN_OK;
    }
    size_t v = pair_value_size(dt);
    for (size_t i = 0; i < count; i++) {
        const char *src = (const char *)buf + i * extent;
        char *dst = (char *)out + i * size;
        memcpy(dst, src, v);
        /* The int member follows the value at the next int boundary
         * (offsets 4, 8, 8, 4, 16 for float, double, long, short and long
         * double on LP64). */
        memcpy(dst + v, src + (v + sizeof(int) - 1) / sizeof(int) * sizeof(int), sizeof(int));
    }
    return TERN_OK;
}

tern_status_t tern_datatype_unpack(const void *in, size_t in_bytes, void *buf, size_t count,
                                   MPI_Datatype dt)
{
    if (!tern_datatype_is_valid(dt))
        return TERN_ERR_ARG;
    size_t size = (size_t)tern_datatype_size(dt), extent = (size_t)tern_datatype_extent(dt);
    if (in_bytes > count * size)
        in_bytes = count * size;
    if (size == extent) {
        if (in_bytes)
            memcpy(buf, in, in_bytes);
        return TERN_OK;
    }
    size_t v = pair_value_size(dt);
    for (size_t i = 0; i < count && (i + 1) * size <= in_bytes; i++) {
        const char *src = (const char *)in + i * size;
        char *dst = (char *)buf + i * extent;
        memcpy(dst, src, v);
        memcpy(dst + (v + sizeof(int) - 1) / sizeof(int) * sizeof(int), src + v, sizeof(int));
    }
    return TERN_OK;
}

MPI_Datatype tern_datatype_basic(MPI_Datatype dt)
{
    return tern_datatype_is_valid(dt) ? dt : MPI_DATATYPE_NULL;
}
