/* external32 (MPI 3.1, 13.5.2): big-endian, fixed sizes. Long and
 * unsigned long are 4 bytes there (8 natively on LP64): packing a value
 * that does not fit is a conversion error. Long double (IEEE quad in
 * external32, x87 extended here) is not supported. */
#include "core/datatype/dtype_build.h"
#include "core/datatype/dtype_internal.h"

#include <stdint.h>
#include <string.h>

/* Native component size, external component size, components. */
typedef struct {
    size_t native, ext, ncomp;
    int is_signed;
} ext_layout_t;

static int layout(MPI_Datatype dt, ext_layout_t *l)
{
    l->ncomp = 1;
    l->is_signed = 0;
    switch (dt) {
    case MPI_LONG:
        l->is_signed = 1;
        /* fall through */
    case MPI_UNSIGNED_LONG:
        l->native = sizeof(long);
        l->ext = 4;
        return 1;
    case MPI_LONG_DOUBLE: case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX:
    case MPI_LONG_DOUBLE_INT: case MPI_LB: case MPI_UB: case MPI_COMPLEX32:
        return 0;
    /* Leaves hold these as units of one component (tern_dtype_unit). */
    case MPI_2REAL: case MPI_FLOAT_INT: case MPI_2INT: case MPI_2INTEGER:
        l->native = l->ext = 4;
        return 1;
    case MPI_2DOUBLE_PRECISION:
        l->native = l->ext = 8;
        return 1;
    case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX: case MPI_COMPLEX8:
        l->native = l->ext = 4;
        l->ncomp = 2;
        return 1;
    case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16:
        l->native = l->ext = 8;
        l->ncomp = 2;
        return 1;
    default: {
        long s = tern_datatype_extent(dt);
        if (s <= 0 || !tern_datatype_is_predefined(dt) || !tern_datatype_is_contig(dt))
            return 0;
        l->native = l->ext = (size_t)s;
        return 1;
    }
    }
}

size_t tern_ext32_size(MPI_Datatype basic)
{
    ext_layout_t l;
    return layout(basic, &l) ? l.ext * l.ncomp : 0;
}

static void copy_big_endian(const unsigned char *in, unsigned char *out, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (size_t i = 0; i < n; i++)
        out[i] = in[n - 1 - i];
#else
    memcpy(out, in, n);
#endif
}

tern_status_t tern_ext32_convert(MPI_Datatype basic, const void *in, void *out, size_t n,
                                 int to_external)
{
    ext_layout_t l;
    if (!layout(basic, &l))
        return TERN_ERR_NOT_SUPPORTED;
    const unsigned char *src = in;
    unsigned char *dst = out;
    size_t src_step = to_external ? l.native : l.ext, dst_step = to_external ? l.ext : l.native;
    tern_status_t st = TERN_OK;
    for (size_t i = 0; i < n * l.ncomp; i++, src += src_step, dst += dst_step) {
        if (l.native == l.ext) {
            copy_big_endian(src, dst, l.native);
            continue;
        }
        /* long <-> 4-byte external. */
        if (to_external) {
            long v;
            memcpy(&v, src, sizeof v);
            if (l.is_signed ? (v < INT32_MIN || v > INT32_MAX) : ((unsigned long)v > UINT32_MAX))
                st = TERN_ERR_CONVERSION;
            uint32_t w = (uint32_t)v;
            copy_big_endian((const unsigned char *)&w, dst, 4);
        } else {
            uint32_t w;
            copy_big_endian(src, (unsigned char *)&w, 4);
            long v = l.is_signed ? (long)(int32_t)w : (long)w;
            memcpy(dst, &v, sizeof v);
        }
    }
    return st;
}

/* Bytes of one node in external32; 0 with *ok = 0 if a type has no form. */
static size_t node_ext_size(const tern_dtnode_t *n, int *ok)
{
    switch (n->kind) {
    case DTN_LEAF: {
        if (n->size == 0)
            return 0;
        size_t x = tern_ext32_size(n->basic);
        if (!x)
            *ok = 0;
        return x * n->n;
    }
    case DTN_REPEAT:
        return n->count * node_ext_size(n->child, ok);
    case DTN_BLOCKS: {
        size_t s = 0;
        for (size_t i = 0; i < n->nblocks; i++)
            s += n->blen[i] * node_ext_size(n->children[n->single_child ? 0 : i], ok);
        return s;
    }
    }
    return 0;
}

/* The tree of a valid type (predefined types through a temporary copy). */
static tern_dtnode_t *tree_of(MPI_Datatype dt, MPI_Aint *extent)
{
    if (!tern_datatype_is_valid(dt))
        return NULL;
    *extent = tern_datatype_extent(dt);
    return tern_dtn_of(dt);
}

tern_status_t tern_dtype_ext32_size(MPI_Datatype dt, size_t count, size_t *bytes)
{
    MPI_Aint extent;
    tern_dtnode_t *root = tree_of(dt, &extent);
    if (!root)
        return TERN_ERR_ARG;
    int ok = 1;
    size_t s = node_ext_size(root, &ok);
    tern_dtn_free(root);
    if (!ok)
        return TERN_ERR_NOT_SUPPORTED;
    *bytes = s * count;
    return TERN_OK;
}

static tern_status_t ext_walk(const void *buf, size_t count, MPI_Datatype dt, void *packed,
                              tern_dtw_op_t op)
{
    MPI_Aint extent;
    tern_dtnode_t *root = tree_of(dt, &extent);
    if (!root)
        return TERN_ERR_ARG;
    int ok = 1;
    node_ext_size(root, &ok);
    if (!ok) {
        tern_dtn_free(root);
        return TERN_ERR_NOT_SUPPORTED;
    }
    tern_dtwalk_t w = {.op = op, .pk = packed, .rem = root->size * count};
    tern_dtn_walk_count(root, count, extent, (uintptr_t)buf, 0, &w);
    tern_dtn_free(root);
    return w.status;
}

tern_status_t tern_dtype_ext32_pack(const void *buf, size_t count, MPI_Datatype dt, void *out)
{
    return ext_walk(buf, count, dt, out, DTW_EXT_PACK);
}

tern_status_t tern_dtype_ext32_unpack(const void *in, void *buf, size_t count, MPI_Datatype dt)
{
    return ext_walk(buf, count, dt, (void *)in, DTW_EXT_UNPACK);
}
