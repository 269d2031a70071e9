/* Datatypes: the predefined table, the handles of derived types, and the
 * contract of datatype.h for both. The loop engine is dtype_loop.c, the
 * constructors dtype_build.c. */
#include "core/datatype/datatype.h"
#include "core/datatype/dtype_internal.h"
#include "core/runtime/handle_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DT_LIST(X)                                                             \
    X(MPI_CHAR) X(MPI_SIGNED_CHAR) X(MPI_UNSIGNED_CHAR) X(MPI_BYTE) X(MPI_WCHAR)   \
    X(MPI_SHORT) X(MPI_UNSIGNED_SHORT) X(MPI_INT) X(MPI_UNSIGNED) X(MPI_LONG)      \
    X(MPI_UNSIGNED_LONG) X(MPI_LONG_LONG_INT) X(MPI_UNSIGNED_LONG_LONG)            \
    X(MPI_FLOAT) X(MPI_DOUBLE) X(MPI_LONG_DOUBLE) X(MPI_PACKED) X(MPI_C_BOOL)      \
    X(MPI_INT8_T) X(MPI_INT16_T) X(MPI_INT32_T) X(MPI_INT64_T) X(MPI_UINT8_T)      \
    X(MPI_UINT16_T) X(MPI_UINT32_T) X(MPI_UINT64_T) X(MPI_AINT) X(MPI_OFFSET)      \
    X(MPI_COUNT) X(MPI_C_COMPLEX) X(MPI_C_DOUBLE_COMPLEX)                          \
    X(MPI_C_LONG_DOUBLE_COMPLEX) X(MPI_CXX_BOOL) X(MPI_CXX_FLOAT_COMPLEX)          \
    X(MPI_CXX_DOUBLE_COMPLEX) X(MPI_CXX_LONG_DOUBLE_COMPLEX) X(MPI_FLOAT_INT)      \
    X(MPI_DOUBLE_INT) X(MPI_LONG_INT) X(MPI_2INT) X(MPI_SHORT_INT)                 \
    X(MPI_LONG_DOUBLE_INT) X(MPI_INTEGER) X(MPI_REAL) X(MPI_DOUBLE_PRECISION)      \
    X(MPI_LOGICAL) X(MPI_CHARACTER) X(MPI_COMPLEX) X(MPI_DOUBLE_COMPLEX)           \
    X(MPI_2INTEGER) X(MPI_2REAL) X(MPI_2DOUBLE_PRECISION) X(MPI_LB) X(MPI_UB)  \
    X(MPI_INTEGER1) X(MPI_INTEGER2) X(MPI_INTEGER4) X(MPI_INTEGER8) X(MPI_REAL4)   \
    X(MPI_REAL8) X(MPI_REAL16) X(MPI_COMPLEX8) X(MPI_COMPLEX16) X(MPI_COMPLEX32)

static const struct {
    MPI_Datatype handle;
    const char *name;
} predefined[] = {
#define DT_ENTRY(h) {h, #h},
    DT_LIST(DT_ENTRY)
#undef DT_ENTRY
};

#define DT_COUNT (sizeof predefined / sizeof predefined[0])

/* Predefined handles are MPICH's (include/mpi.h): 0x4c00SSII, and
 * 0x8c0000II for the pair types but MPI_2INT. A table by II and the top
 * bit gives the entry. */
enum {
#define DT_POS(h) DTI_##h,
    DT_LIST(DT_POS)
#undef DT_POS
};
#define DT_KEY(h) ((((uint32_t)(h) >> 23) & 0x100u) | ((uint32_t)(h) & 0xffu))
static const unsigned char by_key[512] = {
#define DT_BY_KEY(h) [DT_KEY(h)] = DTI_##h + 1,
    DT_LIST(DT_BY_KEY)
#undef DT_BY_KEY
};
/* The same table by handle, for the inline test of datatype.h. */
const uint32_t tern_dt_handle_by_key[512] = {
#define DT_HANDLE_BY_KEY(h) [DT_KEY(h)] = (uint32_t)(h),
    DT_LIST(DT_HANDLE_BY_KEY)
#undef DT_HANDLE_BY_KEY
};
/* The pair types' handles are of the dynamic form: derived types take
 * slots from here on. */
#define DT_PAIR_SLOTS 8

static int predefined_index(MPI_Datatype dt)
{
    uint32_t h = (uint32_t)dt;
    if ((h & 0xffff0000u) != 0x4c000000u && (h & 0xffffff00u) != 0x8c000000u)
        return -1;
    unsigned idx = by_key[DT_KEY(h)];
    if (idx < 1 || predefined[idx - 1].handle != dt)
        return -1;
    return (int)idx - 1;
}

/* ------------------------------------------------------------------------ */
/* Derived types: handles in the datatype handle table; a slot is reused
 * once nothing refers to its type. */

static tern_handle_table_t derived = TERN_HANDLE_TABLE_RESERVED(TERN_KIND_DATATYPE, 64, DT_PAIR_SLOTS);

tern_dtype_t *tern_dtype_get(MPI_Datatype dt)
{
    return tern_handle_get(&derived, dt);
}

/* Attributes of the predefined types (MPI allows caching on them too). */
static tern_attr_t *predefined_attrs[DT_COUNT];

tern_attr_t **tern_dtype_attr_list(MPI_Datatype dt)
{
    int idx = predefined_index(dt);
    if (idx >= 0)
        return &predefined_attrs[idx];
    tern_dtype_t *t = tern_dtype_get(dt);
    return t ? &t->attrs : NULL;
}

tern_status_t tern_dtype_register(tern_dtype_t *t, MPI_Datatype *out)
{
    t->refs = 1;
    return tern_handle_new(&derived, t, out);
}

static void dtype_destroy(MPI_Datatype dt, tern_dtype_t *t)
{
    tern_handle_release(&derived, dt);
    for (int i = 0; i < t->env.nd; i++)
        tern_datatype_release(t->env.types[i]);
    free(t->env.ints);
    free(t->env.aints);
    free(t->env.counts);
    free(t->env.types);
    tern_dtn_free(t->root);
    free(t);
}

void tern_datatype_retain(MPI_Datatype dt)
{
    tern_dtype_t *t = tern_dtype_get(dt);
    if (t)
        t->refs++;
}

void tern_datatype_release(MPI_Datatype dt)
{
    tern_dtype_t *t = tern_dtype_get(dt);
    if (t && --t->refs == 0)
        dtype_destroy(dt, t);
}

/* Committed derived type, or NULL. */
static const tern_dtype_t *committed(MPI_Datatype dt)
{
    const tern_dtype_t *t = tern_dtype_get(dt);
    return t && t->committed ? t : NULL;
}

/* ------------------------------------------------------------------------ */
/* The contract (datatype.h). */

int tern_datatype_is_predefined_any(MPI_Datatype dt) { return predefined_index(dt) >= 0; }

int tern_datatype_is_valid(MPI_Datatype dt)
{
    return predefined_index(dt) >= 0 || committed(dt) != NULL;
}

/* The pair types for MINLOC/MAXLOC: their extent is the C struct's, their
 * size (bytes of data) less when the struct has padding. */
struct dt_float_int { float v; int i; };
struct dt_double_int { double v; int i; };
struct dt_long_int { long v; int i; };
struct dt_short_int { short v; int i; };
struct dt_long_double_int { long double v; int i; };

static long predefined_extent(MPI_Datatype dt)
{
    switch (dt) {
    case MPI_FLOAT_INT: return (long)sizeof(struct dt_float_int);
    case MPI_DOUBLE_INT: return (long)sizeof(struct dt_double_int);
    case MPI_LONG_INT: return (long)sizeof(struct dt_long_int);
    case MPI_SHORT_INT: return (long)sizeof(struct dt_short_int);
    case MPI_LONG_DOUBLE_INT: return (long)sizeof(struct dt_long_double_int);
    default: return (long)(((uint32_t)dt >> 8) & 0xffu);
    }
}

static long predefined_size(MPI_Datatype dt)
{
    switch (dt) {
    case MPI_FLOAT_INT: return (long)(sizeof(float) + sizeof(int));
    case MPI_DOUBLE_INT: return (long)(sizeof(double) + sizeof(int));
    case MPI_LONG_INT: return (long)(sizeof(long) + sizeof(int));
    case MPI_SHORT_INT: return (long)(sizeof(short) + sizeof(int));
    case MPI_LONG_DOUBLE_INT: return (long)(sizeof(long double) + sizeof(int));
    default: return (long)(((uint32_t)dt >> 8) & 0xffu);
    }
}

long tern_datatype_extent(MPI_Datatype dt)
{
    if (predefined_index(dt) >= 0)
        return predefined_extent(dt);
    const tern_dtype_t *t = committed(dt);
    return t ? (long)(t->ub - t->lb) : -1;
}

long tern_datatype_size_any(MPI_Datatype dt)
{
    if (predefined_index(dt) >= 0)
        return predefined_size(dt);
    const tern_dtype_t *t = committed(dt);
    return t ? (long)t->size : -1;
}

/* Names users gave predefined types (MPI_Type_set_name); "" for none, when
 * the standard name stands. Messages keep the standard name. */
static char predefined_user_name[DT_COUNT][MPI_MAX_OBJECT_NAME];

int tern_datatype_set_predefined_name(MPI_Datatype dt, const char *name)
{
    int i = predefined_index(dt);
    if (i < 0)
        return 0;
    snprintf(predefined_user_name[i], sizeof predefined_user_name[i], "%s", name);
    return 1;
}

const char *tern_datatype_user_name(MPI_Datatype dt)
{
    int i = predefined_index(dt);
    if (i >= 0 && predefined_user_name[i][0])
        return predefined_user_name[i];
    return tern_datatype_name(dt);
}

const char *tern_datatype_name(MPI_Datatype dt)
{
    int i = predefined_index(dt);
    if (i >= 0)
        return predefined[i].name;
    const tern_dtype_t *t = tern_dtype_get(dt);
    return t ? t->name : NULL;
}

int tern_datatype_is_contig(MPI_Datatype dt)
{
    if (predefined_index(dt) >= 0)
        return predefined_size(dt) == tern_datatype_extent(dt);
    const tern_dtype_t *t = committed(dt);
    return t && t->contig;
}

MPI_Aint tern_datatype_true_lb(MPI_Datatype dt)
{
    const tern_dtype_t *t = committed(dt);
    return t ? t->true_lb : 0;
}

int tern_datatype_describe(MPI_Datatype dt, tern_dt_desc_t *d)
{
    if (predefined_index(dt) >= 0) {
        d->size = predefined_size(dt);
        d->extent = predefined_extent(dt);
        d->true_lb = 0;
        d->contig = d->size == d->extent;
        d->predefined = 1;
        return 1;
    }
    const tern_dtype_t *t = committed(dt);
    if (!t)
        return 0;
    d->size = (long)t->size;
    d->extent = (long)(t->ub - t->lb);
    d->true_lb = t->true_lb;
    d->contig = t->contig;
    d->predefined = 0;
    return 1;
}

size_t tern_datatype_packed_size(MPI_Datatype dt, size_t count)
{
    long sz = tern_datatype_size(dt);
    return sz < 0 ? 0 : (size_t)sz * count;
}

MPI_Datatype tern_datatype_basic(MPI_Datatype dt)
{
    if (predefined_index(dt) >= 0)
        return dt;
    const tern_dtype_t *t = committed(dt);
    return t && t->root ? t->root->basic : MPI_DATATYPE_NULL;
}

size_t tern_dtype_unit(MPI_Datatype basic)
{
    switch (basic) {
    case MPI_FLOAT_INT: case MPI_2INT: case MPI_2INTEGER: case MPI_2REAL:
        return 4;
    case MPI_2DOUBLE_PRECISION:
        return 8;
    default: {
        long s = tern_datatype_size(basic);
        return s > 0 ? (size_t)s : 1;
    }
    }
}

/* Loop tree of a predefined type: built once, kept for the process. */
static tern_dtnode_t *predefined_nodes[DT_COUNT];

static tern_dtnode_t *predefined_tree(MPI_Datatype dt)
{
    int i = predefined_index(dt);
    if (i < 0)
        return NULL;
    if (predefined_nodes[i])
        return predefined_nodes[i];
    size_t size = (size_t)predefined_size(dt);
    long extent = tern_datatype_extent(dt);
    tern_dtnode_t *n;
    if (size == (size_t)extent) {
        size_t unit = tern_dtype_unit(dt);
        n = tern_dtn_leaf(dt, unit, size / unit);
    } else {
        /* Pair type: the value, then the int at the next int boundary
         * (offsets 4, 8, 8, 4, 16 for float, double, long, short and long
         * double on LP64). */
        MPI_Datatype vt = dt == MPI_DOUBLE_INT ? MPI_DOUBLE
                          : dt == MPI_LONG_INT ? MPI_LONG
                          : dt == MPI_SHORT_INT ? MPI_SHORT
                                                : MPI_LONG_DOUBLE;
        size_t v = size - sizeof(int);
        tern_dtnode_t **ch = malloc(2 * sizeof *ch);
        MPI_Aint *displ = malloc(2 * sizeof *displ);
        size_t *blen = malloc(2 * sizeof *blen);
        if (!ch || !displ || !blen) {
            free(ch);
            free(displ);
            free(blen);
            return NULL;
        }
        ch[0] = tern_dtn_leaf(vt, v, 1);
        ch[1] = tern_dtn_leaf(MPI_INT, sizeof(int), 1);
        displ[0] = 0;
        displ[1] = (MPI_Aint)((v + sizeof(int) - 1) / sizeof(int) * sizeof(int));
        blen[0] = blen[1] = 1;
        if (!ch[0] || !ch[1]) {
            tern_dtn_free(ch[0]);
            tern_dtn_free(ch[1]);
            free(ch);
            free(displ);
            free(blen);
            return NULL;
        }
        n = tern_dtn_blocks(2, 0, ch, displ, blen, (MPI_Aint)extent);
        if (n)
            n->basic = dt; /* MINLOC/MAXLOC reduce the pair as one */
    }
    if (n)
        n->extent = (MPI_Aint)extent;
    predefined_nodes[i] = n;
    return n;
}

tern_dtnode_t *tern_dtn_of(MPI_Datatype dt)
{
    if (predefined_index(dt) >= 0) {
        tern_dtnode_t *n = predefined_tree(dt);
        return n ? tern_dtn_copy(n) : NULL;
    }
    const tern_dtype_t *t = tern_dtype_get(dt);
    return t ? tern_dtn_copy(t->root) : NULL;
}

/* The tree and extent of a valid type for a walk. */
static const tern_dtnode_t *walk_tree(MPI_Datatype dt, MPI_Aint *extent)
{
    *extent = 0;
    if (predefined_index(dt) >= 0) {
        *extent = tern_datatype_extent(dt);
        return predefined_tree(dt);
    }
    const tern_dtype_t *t = committed(dt);
    if (!t)
        return NULL;
    *extent = t->ub - t->lb;
    return t->root;
}

tern_status_t tern_datatype_pack_range(const void *buf, size_t count, MPI_Datatype dt,
                                       size_t offset, void *out, size_t len)
{
    if (!len)
        return TERN_OK;
    if (tern_datatype_is_contig(dt)) {
        memcpy(out, (const char *)buf + tern_datatype_true_lb(dt) + offset, len);
        return TERN_OK;
    }
    MPI_Aint extent;
    const tern_dtnode_t *root = walk_tree(dt, &extent);
    if (!root || offset + len > tern_datatype_packed_size(dt, count))
        return TERN_ERR_ARG;
    tern_dtwalk_t w = {.op = DTW_PACK, .pk = out, .rem = len};
    tern_dtn_walk_count(root, count, extent, (uintptr_t)buf, offset, &w);
    return TERN_OK;
}

tern_status_t tern_datatype_unpack_range(const void *in, size_t len, void *buf, size_t count,
                                         MPI_Datatype dt, size_t offset)
{
    if (!len)
        return TERN_OK;
    if (tern_datatype_is_contig(dt)) {
        memcpy((char *)buf + tern_datatype_true_lb(dt) + offset, in, len);
        return TERN_OK;
    }
    MPI_Aint extent;
    const tern_dtnode_t *root = walk_tree(dt, &extent);
    if (!root || offset + len > tern_datatype_packed_size(dt, count))
        return TERN_ERR_ARG;
    tern_dtwalk_t w = {.op = DTW_UNPACK, .pk = (char *)in, .rem = len};
    tern_dtn_walk_count(root, count, extent, (uintptr_t)buf, offset, &w);
    return TERN_OK;
}

tern_status_t tern_datatype_pack(const void *buf, size_t count, MPI_Datatype dt, void *out)
{
    if (!tern_datatype_is_valid(dt))
        return TERN_ERR_ARG;
    return tern_datatype_pack_range(buf, count, dt, 0, out, tern_datatype_packed_size(dt, count));
}

tern_status_t tern_datatype_unpack(const void *in, size_t in_bytes, void *buf, size_t count,
                                   MPI_Datatype dt)
{
    if (!tern_datatype_is_valid(dt))
        return TERN_ERR_ARG;
    size_t full = tern_datatype_packed_size(dt, count);
    if (in_bytes > full)
        in_bytes = full;
    if (tern_datatype_is_contig(dt))
        return tern_datatype_unpack_range(in, in_bytes, buf, count, dt, 0);
    /* Only whole basic elements are written from a short message. */
    MPI_Aint extent;
    const tern_dtnode_t *root = walk_tree(dt, &extent);
    tern_dtwalk_t w = {.op = DTW_UNPACK, .pk = (char *)in, .rem = in_bytes};
    tern_dtn_walk_count(root, count, extent, (uintptr_t)buf, 0, &w);
    return TERN_OK;
}

tern_status_t tern_datatype_flatten(size_t count, MPI_Datatype dt, tern_dt_seg_t **segs,
                                    size_t *nsegs)
{
    *segs = NULL;
    *nsegs = 0;
    size_t len = tern_datatype_packed_size(dt, count);
    if (!len)
        return TERN_OK;
    if (tern_datatype_is_contig(dt)) {
        if (!(*segs = malloc(sizeof **segs)))
            return TERN_ERR_NOMEM;
        (*segs)[0] = (tern_dt_seg_t){tern_datatype_true_lb(dt), len};
        *nsegs = 1;
        return TERN_OK;
    }
    MPI_Aint extent;
    const tern_dtnode_t *root = walk_tree(dt, &extent);
    if (!root)
        return TERN_ERR_ARG;
    tern_dtwalk_t w = {.op = DTW_SEGS, .rem = len};
    tern_dtn_walk_count(root, count, extent, 0, 0, &w);
    if (w.status != TERN_OK) {
        free(w.segs);
        return w.status;
    }
    *segs = w.segs;
    *nsegs = w.nsegs;
    return TERN_OK;
}

/* Basic elements of one element of dt (size bytes, tree root). */
static size_t elements_of_one(const tern_dtnode_t *root, MPI_Aint extent, size_t size)
{
    tern_dtwalk_t all = {.op = DTW_COUNT, .rem = size};
    tern_dtn_walk_count(root, 1, extent, 0, 0, &all);
    return all.elems;
}

long long tern_datatype_elements(MPI_Datatype dt, size_t bytes)
{
    MPI_Aint extent;
    const tern_dtnode_t *root = walk_tree(dt, &extent);
    long size = tern_datatype_size(dt);
    if (!root || size < 0)
        return -1;
    if (size == 0)
        return 0;
    /* Whole elements of dt, then the basic elements of the partial one. */
    size_t whole = bytes / (size_t)size;
    tern_dtwalk_t w = {.op = DTW_COUNT, .rem = bytes % (size_t)size};
    tern_dtn_walk_count(root, 1, extent, 0, 0, &w);
    if (w.partial)
        return -1;
    return (long long)(whole * elements_of_one(root, extent, (size_t)size) + w.elems);
}

int tern_datatype_elements_bytes(MPI_Datatype dt, unsigned long long count, size_t *bytes)
{
    MPI_Aint extent;
    const tern_dtnode_t *root = walk_tree(dt, &extent);
    long size = tern_datatype_size(dt);
    if (!root || size < 0)
        return -1;
    *bytes = 0;
    if (count == 0)
        return 0;
    size_t per = size ? elements_of_one(root, extent, (size_t)size) : 0;
    if (per == 0)
        return -2;
    /* Whole elements of dt, then the bytes of the first `part` basic
     * elements of one more. */
    unsigned long long whole = count / per, part = count % per;
    if (whole > (unsigned long long)INT64_MAX / (unsigned long long)size)
        return -3;
    tern_dtwalk_t w = {.op = DTW_ELEMS, .rem = (size_t)size, .want = (size_t)part};
    if (part)
        tern_dtn_walk_count(root, 1, extent, 0, 0, &w);
    unsigned long long b = whole * (unsigned long long)size;
    if (b > (unsigned long long)INT64_MAX - w.bytes)
        return -3;
    *bytes = (size_t)(b + w.bytes);
    return 0;
}
