/* Datatypes in a file representation (dtype_filerep.h). */
#include "core/datatype/dtype_filerep.h"
#include "core/datatype/dtype_build.h"
#include "core/datatype/dtype_internal.h"

#include <stdint.h>
#include <stdlib.h>

tern_status_t tern_dtype_ext32_extent(MPI_Datatype basic, MPI_Aint *extent, void *arg)
{
    (void)arg;
    /* Per unit of a leaf (tern_ext32_size), times the units of one element. */
    size_t unit = tern_dtype_unit(basic), x = tern_ext32_size(basic);
    long size = tern_datatype_size(basic);
    if (!x || !unit || size <= 0)
        return tern_status_detail(TERN_ERR_NOT_SUPPORTED, "%s has no external32 form in Tern",
                                  tern_datatype_name(basic));
    *extent = (MPI_Aint)(x * ((size_t)size / unit));
    return TERN_OK;
}

/* ---- items and their bytes -------------------------------------------------- */

typedef struct {
    tern_dt_extent_fn fn;
    void *arg;
    tern_status_t st; /* the first failure of fn */
} rep_t;

/* File bytes of one unit of a leaf (0 with rep->st set on a failure). */
static size_t unit_bytes(rep_t *rep, const tern_dtnode_t *leaf)
{
    if (rep->st != TERN_OK)
        return 0;
    long size = leaf->basic == MPI_DATATYPE_NULL ? 0 : tern_datatype_size(leaf->basic);
    MPI_Aint ext = 0;
    if (size <= 0 || !leaf->esize) {
        rep->st = tern_status_detail(TERN_ERR_NOT_SUPPORTED, "a datatype whose elements are "
                                     "no basic type has no file representation");
        return 0;
    }
    if ((rep->st = rep->fn(leaf->basic, &ext, rep->arg)) != TERN_OK)
        return 0;
    size_t units = (size_t)size / leaf->esize;
    if (ext <= 0 || (size_t)ext % units) {
        rep->st = tern_status_detail(TERN_ERR_CONVERSION, "the file extent of %s is %ld bytes, "
                                     "not a positive multiple of its %zu data items",
                                     tern_datatype_name(leaf->basic), (long)ext, units);
        return 0;
    }
    return (size_t)ext / units;
}

static void span_add(tern_dt_span_t *s, const tern_dt_span_t *x, size_t times)
{
    s->items += times * x->items;
    s->file_bytes += times * x->file_bytes;
    s->native_bytes += times * x->native_bytes;
}

/* Items of one node and their bytes. */
static tern_dt_span_t stats(rep_t *rep, const tern_dtnode_t *n)
{
    tern_dt_span_t s = {0, 0, 0};
    switch (n->kind) {
    case DTN_LEAF:
        if (n->n) {
            size_t ub = unit_bytes(rep, n);
            s = (tern_dt_span_t){n->n, n->n * ub, n->size};
        }
        break;
    case DTN_REPEAT: {
        tern_dt_span_t c = stats(rep, n->child);
        span_add(&s, &c, n->count);
        break;
    }
    case DTN_BLOCKS:
        for (size_t i = 0; i < n->nblocks; i++) {
            tern_dt_span_t c = stats(rep, n->children[n->single_child ? 0 : i]);
            span_add(&s, &c, n->blen[i]);
        }
        break;
    }
    return s;
}

/* Adds to s the leading items of count copies of n whose file bytes fit
 * in *room (taken from it); 1 when all of them fit. */
static int prefix(rep_t *rep, const tern_dtnode_t *n, size_t count, size_t *room,
                  tern_dt_span_t *s)
{
    tern_dt_span_t one = stats(rep, n);
    if (rep->st != TERN_OK)
        return 0;
    size_t whole = one.file_bytes ? *room / one.file_bytes : count;
    if (whole >= count) {
        span_add(s, &one, count);
        *room -= count * one.file_bytes;
        return 1;
    }
    span_add(s, &one, whole);
    *room -= whole * one.file_bytes;
    /* Part of the next copy. */
    switch (n->kind) {
    case DTN_LEAF: {
        size_t ub = one.file_bytes / n->n, k = *room / ub;
        s->items += k;
        s->file_bytes += k * ub;
        s->native_bytes += k * n->esize;
        *room -= k * ub;
        break;
    }
    case DTN_REPEAT:
        prefix(rep, n->child, n->count, room, s);
        break;
    case DTN_BLOCKS:
        for (size_t i = 0; i < n->nblocks; i++)
            if (!prefix(rep, n->children[n->single_child ? 0 : i], n->blen[i], room, s))
                break;
        break;
    }
    return 0;
}

tern_status_t tern_dtype_file_span(MPI_Datatype dt, tern_dt_extent_fn fn, void *arg, size_t limit,
                                   tern_dt_span_t *span)
{
    *span = (tern_dt_span_t){0, 0, 0};
    if (!tern_datatype_is_valid(dt))
        return TERN_ERR_TYPE;
    tern_dtnode_t *root = tern_dtn_of(dt);
    if (!root)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a datatype's tree");
    rep_t rep = {fn, arg, TERN_OK};
    if (limit == SIZE_MAX)
        *span = stats(&rep, root);
    else
        prefix(&rep, root, 1, &limit, span);
    tern_dtn_free(root);
    return rep.st;
}

/* ---- the layout in the file --------------------------------------------- */

/* Internal types carry no envelope a program could ask for. */
static const tern_dtype_args_t no_args = {.combiner = MPI_COMBINER_CONTIGUOUS};

/* Reads an envelope's values in order: a _c form keeps its counts and
 * displacements in counts, an MPI-3 form in ints (element counts) and
 * aints (byte displacements); ndims, order, distributions... are ints in
 * both. */
typedef struct {
    const tern_dtype_args_t *a;
    int ic, ac, cc;
} reader_t;

static int next_int(reader_t *r)
{
    return r->ic < r->a->ni ? r->a->ints[r->ic++] : 0;
}

static MPI_Count next_num(reader_t *r, int bytes)
{
    if (r->a->nc)
        return r->cc < r->a->nc ? r->a->counts[r->cc++] : 0;
    if (bytes && r->a->na)
        return r->ac < r->a->na ? r->a->aints[r->ac++] : 0;
    return next_int(r);
}

static tern_status_t layout(MPI_Datatype dt, rep_t *rep, MPI_Datatype *out, int depth);

/* The extent of a layout built but not committed yet. */
static MPI_Aint extent_of(MPI_Datatype dt)
{
    tern_dtype_info_t info;
    return tern_dtype_info(dt, &info) ? info.extent : 0;
}

/* A predefined type: its items back to back. */
static tern_status_t layout_named(MPI_Datatype dt, rep_t *rep, MPI_Datatype *out)
{
    tern_dt_span_t s;
    tern_status_t st = tern_dtype_file_span(dt, rep->fn, rep->arg, SIZE_MAX, &s);
    if (st != TERN_OK)
        return st;
    return tern_dtype_build_vector(1, s.file_bytes, (MPI_Aint)s.file_bytes, MPI_BYTE, &no_args,
                                   out);
}

/* count blocks of old' (the layout of old): blen[i] (or one) copies at
 * displ[i], in bytes or (scaled) in extents of old'. */
static tern_status_t layout_blocks(reader_t *r, MPI_Datatype old, int one_blen, int bytes,
                                   rep_t *rep, MPI_Datatype *out, int depth)
{
    size_t n = (size_t)next_num(r, 0);
    size_t one = one_blen ? (size_t)next_num(r, 0) : 0;
    size_t *blen = malloc((n ? n : 1) * sizeof *blen);
    MPI_Aint *displ = malloc((n ? n : 1) * sizeof *displ);
    MPI_Datatype o = MPI_DATATYPE_NULL;
    tern_status_t st = blen && displ ? layout(old, rep, &o, depth + 1)
                                     : tern_status_detail(TERN_ERR_NOMEM, "out of memory for a "
                                                          "file layout");
    if (st == TERN_OK) {
        MPI_Aint ext = extent_of(o);
        for (size_t i = 0; i < n; i++)
            blen[i] = one_blen ? one : (size_t)next_num(r, 0);
        for (size_t i = 0; i < n; i++)
            displ[i] = bytes ? (MPI_Aint)next_num(r, 1) : (MPI_Aint)next_num(r, 0) * ext;
        st = tern_dtype_build_blocks(n, blen, displ, &o, 1, 0, &no_args, out);
    }
    if (o != MPI_DATATYPE_NULL)
        tern_datatype_release(o);
    free(blen);
    free(displ);
    return st;
}

static tern_status_t layout_struct(reader_t *r, rep_t *rep, MPI_Datatype *out, int depth)
{
    size_t n = (size_t)next_num(r, 0);
    size_t *blen = malloc((n ? n : 1) * sizeof *blen);
    MPI_Aint *displ = malloc((n ? n : 1) * sizeof *displ);
    MPI_Datatype *types = calloc(n ? n : 1, sizeof *types);
    tern_status_t st = blen && displ && types ? TERN_OK
                                              : tern_status_detail(TERN_ERR_NOMEM, "out of "
                                                                   "memory for a file layout");
    for (size_t i = 0; i < n; i++)
        types[i] = MPI_DATATYPE_NULL;
    for (size_t i = 0; st == TERN_OK && i < n; i++)
        blen[i] = (size_t)next_num(r, 0);
    for (size_t i = 0; st == TERN_OK && i < n; i++)
        displ[i] = (MPI_Aint)next_num(r, 1);
    for (size_t i = 0; st == TERN_OK && i < n; i++) {
        MPI_Datatype t = r->a->types[i];
        /* The bound markers stay markers. */
        if (t == MPI_LB || t == MPI_UB)
            types[i] = t;
        else
            st = layout(t, rep, &types[i], depth + 1);
    }
    if (st == TERN_OK)
        st = tern_dtype_build_blocks(n, blen, displ, types, 0, 0, &no_args, out);
    for (size_t i = 0; types && i < n; i++)
        if (types[i] != MPI_DATATYPE_NULL && types[i] != MPI_LB && types[i] != MPI_UB)
            tern_datatype_release(types[i]);
    free(blen);
    free(displ);
    free(types);
    return st;
}

/* Subarray and darray: their arguments count elements of old, so the
 * layout is the same constructor over old'. */
static tern_status_t layout_grid(reader_t *r, int darray, rep_t *rep, MPI_Datatype *out,
                                 int depth)
{
    int size = 0, rank = 0;
    if (darray) {
        size = next_int(r);
        rank = next_int(r);
    }
    (void)size;
    int nd = next_int(r);
    size_t n = nd > 0 ? (size_t)nd : 1;
    size_t *a = malloc(3 * n * sizeof *a);
    int *ia = malloc(3 * n * sizeof *ia);
    MPI_Datatype o = MPI_DATATYPE_NULL;
    tern_status_t st = a && ia ? layout(r->a->types[0], rep, &o, depth + 1)
                               : tern_status_detail(TERN_ERR_NOMEM, "out of memory for a file "
                                                    "layout");
    if (st == TERN_OK && !darray) {
        for (size_t k = 0; k < 3 * (size_t)nd; k++)
            a[k] = (size_t)next_num(r, 0);
        int order = next_int(r);
        st = tern_dtype_build_subarray(nd, a, a + n, a + 2 * n, order, o, &no_args, out);
    } else if (st == TERN_OK) {
        for (int k = 0; k < nd; k++)
            a[k] = (size_t)next_num(r, 0);
        for (size_t k = 0; k < 3 * (size_t)nd; k++)
            ia[k] = next_int(r);
        int order = next_int(r);
        st = tern_dtype_build_darray(rank, nd, a, ia, ia + n, ia + 2 * n, order, o, &no_args,
                                     out);
    }
    if (o != MPI_DATATYPE_NULL)
        tern_datatype_release(o);
    free(a);
    free(ia);
    return st;
}

static tern_status_t layout(MPI_Datatype dt, rep_t *rep, MPI_Datatype *out, int depth)
{
    tern_dtype_args_t a;
    if (depth > 64 || !tern_dtype_envelope(dt, &a))
        return tern_status_detail(TERN_ERR_TYPE, "datatype %d has no layout in the file", (int)dt);
    reader_t r = {.a = &a};
    switch (a.combiner) {
    case MPI_COMBINER_NAMED:
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
        return layout_named(dt, rep, out);
    case MPI_COMBINER_DUP:
        return layout(a.types[0], rep, out, depth + 1);
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_HVECTOR_INTEGER: {
        int contig = a.combiner == MPI_COMBINER_CONTIGUOUS;
        int bytes = a.combiner != MPI_COMBINER_VECTOR && !contig;
        size_t count = (size_t)next_num(&r, 0);
        size_t blen = contig ? 1 : (size_t)next_num(&r, 0);
        MPI_Count stride = contig ? 1 : next_num(&r, bytes);
        MPI_Datatype o = MPI_DATATYPE_NULL;
        tern_status_t st = layout(a.types[0], rep, &o, depth + 1);
        if (st == TERN_OK) {
            MPI_Aint ext = extent_of(o);
            st = tern_dtype_build_vector(count, blen, bytes ? (MPI_Aint)stride
                                                            : (MPI_Aint)stride * ext,
                                         o, &no_args, out);
            tern_datatype_release(o);
        }
        return st;
    }
    case MPI_COMBINER_INDEXED:
        return layout_blocks(&r, a.types[0], 0, 0, rep, out, depth);
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_HINDEXED_INTEGER:
        return layout_blocks(&r, a.types[0], 0, 1, rep, out, depth);
    case MPI_COMBINER_INDEXED_BLOCK:
        return layout_blocks(&r, a.types[0], 1, 0, rep, out, depth);
    case MPI_COMBINER_HINDEXED_BLOCK:
        return layout_blocks(&r, a.types[0], 1, 1, rep, out, depth);
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_STRUCT_INTEGER:
        return layout_struct(&r, rep, out, depth);
    case MPI_COMBINER_SUBARRAY:
        return layout_grid(&r, 0, rep, out, depth);
    case MPI_COMBINER_DARRAY:
        return layout_grid(&r, 1, rep, out, depth);
    case MPI_COMBINER_RESIZED: {
        MPI_Aint lb = (MPI_Aint)next_num(&r, 1), extent = (MPI_Aint)next_num(&r, 1);
        MPI_Datatype o = MPI_DATATYPE_NULL;
        tern_status_t st = layout(a.types[0], rep, &o, depth + 1);
        if (st == TERN_OK) {
            st = tern_dtype_build_resized(o, lb, extent, &no_args, out);
            tern_datatype_release(o);
        }
        return st;
    }
    }
    return tern_status_detail(TERN_ERR_NOT_SUPPORTED, "a datatype of combiner %d has no "
                              "layout in the file", a.combiner);
}

tern_status_t tern_dtype_file_layout(MPI_Datatype dt, tern_dt_extent_fn fn, void *arg,
                                     MPI_Datatype *out)
{
    rep_t rep = {fn, arg, TERN_OK};
    *out = MPI_DATATYPE_NULL;
    tern_status_t st = layout(dt, &rep, out, 0);
    if (st == TERN_OK && (st = tern_dtype_commit(*out)) != TERN_OK) {
        tern_datatype_release(*out);
        *out = MPI_DATATYPE_NULL;
    }
    return st;
}

/* ---- external32 over a range -------------------------------------------- */

tern_status_t tern_dtype_ext32_range(void *buf, size_t count, MPI_Datatype dt, size_t skip,
                                     size_t len, void *file, int to_external)
{
    if (!tern_datatype_is_valid(dt))
        return TERN_ERR_TYPE;
    if (len == 0)
        return TERN_OK;
    tern_dtnode_t *root = tern_dtn_of(dt);
    if (!root)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a datatype's tree");
    tern_dtwalk_t w = {.op = to_external ? DTW_EXT_PACK : DTW_EXT_UNPACK, .pk = file,
                       .rem = len};
    tern_dtn_walk_count(root, count, tern_datatype_extent(dt), (uintptr_t)buf, skip, &w);
    tern_dtn_free(root);
    return w.status;
}
