/* Constructors of derived datatypes: each builds the loop tree from copies
 * of its members' trees, computes the bounds and records the envelope. */
#include "core/datatype/dtype_build.h"
#include "core/datatype/dtype_attr.h"
#include "core/datatype/dtype_internal.h"

#include <stdlib.h>
#include <string.h>

/* Alignment of a predefined type: its size, or its component's. */
static size_t predefined_align(MPI_Datatype dt)
{
    switch (dt) {
    case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX: case MPI_2REAL:
    case MPI_FLOAT_INT: case MPI_2INT: case MPI_2INTEGER: case MPI_SHORT_INT: case MPI_COMPLEX8:
        return 4;
    case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX:
    case MPI_2DOUBLE_PRECISION: case MPI_DOUBLE_INT: case MPI_LONG_INT: case MPI_COMPLEX16:
        return 8;
    case MPI_COMPLEX32:
        return 16;
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX: case MPI_LONG_DOUBLE_INT:
        return 16;
    default: {
        long e = tern_datatype_extent(dt);
        return e > 0 ? (size_t)e : 1;
    }
    }
}

int tern_dtype_bounds(MPI_Datatype dt, tern_dtbounds_t *b)
{
    if (tern_datatype_is_predefined(dt)) {
        long e = tern_datatype_extent(dt);
        b->lb = b->true_lb = 0;
        b->ub = b->true_ub = e;
        b->size = (size_t)tern_datatype_size(dt);
        b->align = predefined_align(dt);
        return 1;
    }
    const tern_dtype_t *t = tern_dtype_get(dt);
    if (!t)
        return 0;
    b->lb = t->lb;
    b->ub = t->ub;
    b->true_lb = t->true_lb;
    b->true_ub = t->true_ub;
    b->size = t->size;
    b->align = t->align;
    return 1;
}

int tern_dtype_is_derived(MPI_Datatype dt) { return tern_dtype_get(dt) != NULL; }

int tern_dtype_is_committed(MPI_Datatype dt)
{
    const tern_dtype_t *t = tern_dtype_get(dt);
    return t && t->committed;
}

static void *dup_array(const void *src, size_t n, size_t elem)
{
    if (!n)
        return NULL;
    void *p = malloc(n * elem);
    if (p)
        memcpy(p, src, n * elem);
    return p;
}

/* Builds the type record around root (owned) and registers it. */
static tern_status_t finish(tern_dtnode_t *root, const tern_dtbounds_t *b,
                            const tern_dtype_args_t *args, MPI_Datatype *out)
{
    if (!root)
        return TERN_ERR_NOMEM;
    tern_dtype_t *t = calloc(1, sizeof *t);
    if (!t) {
        tern_dtn_free(root);
        return TERN_ERR_NOMEM;
    }
    t->root = root;
    t->lb = b->lb;
    t->ub = b->ub;
    t->true_lb = b->true_lb;
    t->true_ub = b->true_ub;
    t->size = b->size;
    t->align = b->align;
    root->extent = tern_aint_sub(b->ub, b->lb);
    t->env.combiner = args->combiner;
    t->env.ni = args->ni;
    t->env.na = args->na;
    t->env.nc = args->nc;
    t->env.nd = args->nd;
    t->env.ints = dup_array(args->ints, (size_t)args->ni, sizeof(int));
    t->env.aints = dup_array(args->aints, (size_t)args->na, sizeof(MPI_Aint));
    t->env.counts = dup_array(args->counts, (size_t)args->nc, sizeof(MPI_Count));
    t->env.types = dup_array(args->types, (size_t)args->nd, sizeof(MPI_Datatype));
    if ((args->ni && !t->env.ints) || (args->na && !t->env.aints) ||
        (args->nc && !t->env.counts) || (args->nd && !t->env.types)) {
        free(t->env.ints);
        free(t->env.aints);
        free(t->env.counts);
        free(t->env.types);
        tern_dtn_free(root);
        free(t);
        return TERN_ERR_NOMEM;
    }
    /* The members stay alive as long as this type can name them. */
    for (int i = 0; i < args->nd; i++)
        tern_datatype_retain(args->types[i]);
    tern_status_t st = tern_dtype_register(t, out);
    if (st != TERN_OK) {
        for (int i = 0; i < args->nd; i++)
            tern_datatype_release(args->types[i]);
        t->env.nd = 0;
        free(t->env.ints);
        free(t->env.aints);
        free(t->env.counts);
        free(t->env.types);
        tern_dtn_free(root);
        free(t);
    }
    return st;
}

/* Bounds of blen copies of a member (bounds m) placed at displ. */
static void add_block(tern_dtbounds_t *acc, int *any, const tern_dtbounds_t *m, size_t blen,
                      MPI_Aint displ)
{
    if (blen == 0)
        return;
    MPI_Aint ext = tern_aint_sub(m->ub, m->lb);
    MPI_Aint span = tern_aint_mul((MPI_Aint)(blen - 1), ext);
    MPI_Aint lo = span < 0 ? span : 0, hi = span > 0 ? span : 0;
    MPI_Aint lb = tern_aint_add(tern_aint_add(displ, lo), m->lb);
    MPI_Aint ub = tern_aint_add(tern_aint_add(displ, hi), m->ub);
    MPI_Aint tlb = tern_aint_add(tern_aint_add(displ, lo), m->true_lb);
    MPI_Aint tub = tern_aint_add(tern_aint_add(displ, hi), m->true_ub);
    if (!*any) {
        acc->lb = lb;
        acc->ub = ub;
        acc->true_lb = tlb;
        acc->true_ub = tub;
    } else {
        acc->lb = lb < acc->lb ? lb : acc->lb;
        acc->ub = ub > acc->ub ? ub : acc->ub;
        acc->true_lb = tlb < acc->true_lb ? tlb : acc->true_lb;
        acc->true_ub = tub > acc->true_ub ? tub : acc->true_ub;
    }
    acc->size = tern_size_add(acc->size, tern_size_mul(blen, m->size));
    if (m->align > acc->align)
        acc->align = m->align;
    *any = 1;
}

tern_status_t tern_dtype_build_vector(size_t count, size_t blen, MPI_Aint stride,
                                      MPI_Datatype old, const tern_dtype_args_t *args,
                                      MPI_Datatype *out)
{
    tern_dtbounds_t m, b = {0};
    if (!tern_dtype_bounds(old, &m))
        return TERN_ERR_ARG;
    int any = 0;
    /* The first and the last block bound the type. */
    if (count > 0) {
        add_block(&b, &any, &m, blen, 0);
        if (count > 1) {
            tern_dtbounds_t tmp = b;
            int any2 = 0;
            tern_dtbounds_t last = {0};
            add_block(&last, &any2, &m, blen, tern_aint_mul((MPI_Aint)(count - 1), stride));
            if (any2) {
                tmp.lb = last.lb < b.lb ? last.lb : b.lb;
                tmp.ub = last.ub > b.ub ? last.ub : b.ub;
                tmp.true_lb = last.true_lb < b.true_lb ? last.true_lb : b.true_lb;
                tmp.true_ub = last.true_ub > b.true_ub ? last.true_ub : b.true_ub;
            }
            tmp.size = tern_size_mul(count, tern_size_mul(blen, m.size));
            b = tmp;
        }
    }
    b.align = m.align;
    tern_dtnode_t *child = tern_dtn_of(old);
    if (!child)
        return TERN_ERR_NOMEM;
    MPI_Aint ext = tern_aint_sub(m.ub, m.lb);
    child->extent = ext;
    tern_dtnode_t *inner = tern_dtn_repeat(blen, ext, child, tern_aint_mul((MPI_Aint)blen, ext));
    tern_dtnode_t *root = tern_dtn_repeat(count, stride, inner, 0);
    return finish(root, &b, args, out);
}

tern_status_t tern_dtype_build_blocks(size_t n, const size_t *blen, const MPI_Aint *displ,
                                      const MPI_Datatype *types, int single_type,
                                      int pad_extent, const tern_dtype_args_t *args,
                                      MPI_Datatype *out)
{
    tern_dtbounds_t b = {0};
    int any = 0, have_lb = 0, have_ub = 0;
    MPI_Aint mark_lb = 0, mark_ub = 0;
    size_t nchildren = single_type ? 1 : n;
    tern_dtnode_t **children = calloc(nchildren ? nchildren : 1, sizeof *children);
    MPI_Aint *d = malloc((n ? n : 1) * sizeof *d);
    size_t *bl = malloc((n ? n : 1) * sizeof *bl);
    if (!children || !d || !bl) {
        free(children);
        free(d);
        free(bl);
        return TERN_ERR_NOMEM;
    }
    tern_status_t st = TERN_OK;
    for (size_t i = 0; i < n; i++) {
        MPI_Datatype t = types[single_type ? 0 : i];
        tern_dtbounds_t m;
        if (!tern_dtype_bounds(t, &m)) {
            st = TERN_ERR_ARG;
            break;
        }
        d[i] = displ[i];
        bl[i] = blen[i];
        /* The deprecated bound markers set lb / ub and carry no data. */
        if (t == MPI_LB || t == MPI_UB) {
            MPI_Aint *mark = t == MPI_LB ? &mark_lb : &mark_ub;
            int *have = t == MPI_LB ? &have_lb : &have_ub;
            if (!*have || (t == MPI_LB ? displ[i] < *mark : displ[i] > *mark))
                *mark = displ[i];
            *have = 1;
            bl[i] = 0;
        } else {
            add_block(&b, &any, &m, blen[i], displ[i]);
        }
        if (i < nchildren) {
            children[i] = tern_dtn_of(t);
            if (!children[i]) {
                st = TERN_ERR_NOMEM;
                break;
            }
            children[i]->extent = m.ub - m.lb;
        }
    }
    if (n == 0) {
        d[0] = 0;
        bl[0] = 0;
    }
    if (st != TERN_OK || (n == 0 && !(children[0] = tern_dtn_leaf(MPI_BYTE, 1, 0)))) {
        for (size_t i = 0; i < nchildren; i++)
            tern_dtn_free(children[i]);
        free(children);
        free(d);
        free(bl);
        return st != TERN_OK ? st : TERN_ERR_NOMEM;
    }
    if (have_lb)
        b.lb = mark_lb;
    if (have_ub)
        b.ub = mark_ub;
    if (!any && !have_lb && !have_ub)
        b.lb = b.ub = 0;
    /* A struct's extent is padded to its most aligned member, as a C
     * compiler pads the struct it describes. */
    if (pad_extent && !have_ub && b.align > 1) {
        MPI_Aint ext = b.ub - b.lb, a = (MPI_Aint)b.align;
        if (ext % a)
            b.ub += a - ext % a;
    }
    if (b.align == 0)
        b.align = 1;
    tern_dtnode_t *root = tern_dtn_blocks(n ? n : 1, single_type || n == 0, children, d, bl, 0);
    return finish(root, &b, args, out);
}

tern_status_t tern_dtype_build_grid(int ndims, const size_t *gsize, const size_t *nblk,
                                    size_t *const *start, size_t *const *len, int order,
                                    MPI_Datatype old, const tern_dtype_args_t *args,
                                    MPI_Datatype *out)
{
    tern_dtbounds_t m;
    if (!tern_dtype_bounds(old, &m))
        return TERN_ERR_ARG;
    MPI_Aint ext = m.ub - m.lb;
    tern_dtnode_t *node = tern_dtn_of(old);
    if (!node)
        return TERN_ERR_NOMEM;
    node->extent = ext;
    /* From the fastest-varying dimension out: each level repeats the level
     * inside it at that dimension's stride. */
    MPI_Aint stride = ext;
    size_t total = 1, size = m.size;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        size_t nb = nblk[d];
        tern_dtnode_t **ch = malloc(sizeof *ch);
        MPI_Aint *displ = malloc((nb ? nb : 1) * sizeof *displ);
        size_t *bl = malloc((nb ? nb : 1) * sizeof *bl);
        if (!ch || !displ || !bl) {
            free(ch);
            free(displ);
            free(bl);
            tern_dtn_free(node);
            return TERN_ERR_NOMEM;
        }
        node->extent = stride;
        ch[0] = node;
        size_t owned = 0;
        for (size_t j = 0; j < nb; j++) {
            displ[j] = (MPI_Aint)start[d][j] * stride;
            bl[j] = len[d][j];
            owned += len[d][j];
        }
        if (nb == 0)
            displ[0] = 0, bl[0] = 0;
        node = tern_dtn_blocks(nb ? nb : 1, 1, ch, displ, bl, 0);
        if (!node)
            return TERN_ERR_NOMEM;
        size *= owned;
        stride *= (MPI_Aint)gsize[d];
        total *= gsize[d];
    }
    tern_dtbounds_t b = {.lb = m.lb, .ub = m.lb + (MPI_Aint)total * ext, .size = size,
                         .align = m.align};
    /* True bounds: walk the first and last element actually owned. */
    b.true_lb = m.true_lb;
    b.true_ub = m.true_ub;
    if (size > 0) {
        MPI_Aint lo = 0, hi = 0, s = ext;
        for (int k = 0; k < ndims; k++) {
            int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
            size_t nb = nblk[d], j0 = 0, j1 = nb - 1;
            while (len[d][j0] == 0)
                j0++;
            while (len[d][j1] == 0)
                j1--;
            lo += (MPI_Aint)start[d][j0] * s;
            hi += (MPI_Aint)(start[d][j1] + len[d][j1] - 1) * s;
            s *= (MPI_Aint)gsize[d];
        }
        b.true_lb = lo + m.true_lb;
        b.true_ub = hi + m.true_ub;
    } else {
        b.true_lb = b.true_ub = 0;
    }
    return finish(node, &b, args, out);
}

tern_status_t tern_dtype_build_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                                       const tern_dtype_args_t *args, MPI_Datatype *out)
{
    tern_dtbounds_t b;
    if (!tern_dtype_bounds(old, &b))
        return TERN_ERR_ARG;
    b.lb = lb;
    b.ub = lb + extent;
    return finish(tern_dtn_of(old), &b, args, out);
}

tern_status_t tern_dtype_dup(MPI_Datatype old, MPI_Datatype *out)
{
    tern_dtbounds_t b;
    if (!tern_dtype_bounds(old, &b))
        return TERN_ERR_ARG;
    tern_dtype_args_t args = {.combiner = MPI_COMBINER_DUP, .nd = 1, .types = &old};
    tern_status_t st = finish(tern_dtn_of(old), &b, &args, out);
    if (st == TERN_OK && (tern_datatype_is_predefined(old) || tern_dtype_is_committed(old)))
        st = tern_dtype_commit(*out);
    if (st == TERN_OK && (st = tern_type_copy_attrs(old, *out)) != TERN_OK) {
        /* A copy callback failed: the new type goes, with what was copied
         * (their delete callbacks run; the recorded detail stays). */
        (void)tern_attrs_delete_all(tern_dtype_attr_list(*out), *out);
        tern_datatype_release(*out);
        *out = MPI_DATATYPE_NULL;
    }
    return st;
}

tern_status_t tern_dtype_build_named_like(MPI_Datatype basic, const tern_dtype_args_t *args,
                                          MPI_Datatype *out)
{
    tern_dtbounds_t b;
    if (!tern_datatype_is_predefined(basic) || !tern_dtype_bounds(basic, &b))
        return TERN_ERR_ARG;
    tern_status_t st = finish(tern_dtn_of(basic), &b, args, out);
    return st == TERN_OK ? tern_dtype_commit(*out) : st;
}

tern_status_t tern_dtype_commit(MPI_Datatype dt)
{
    tern_dtype_t *t = tern_dtype_get(dt);
    if (!t)
        return tern_datatype_is_predefined(dt) ? TERN_OK : TERN_ERR_ARG;
    if (t->committed)
        return TERN_OK;
    MPI_Aint extent = t->root->extent;
    t->root = tern_dtn_optimize(t->root);
    t->root->extent = extent;
    MPI_Aint first;
    t->contig = t->size == 0 ||
                (tern_dtn_is_dense(t->root, &first) && first == t->true_lb &&
                 (MPI_Aint)t->size == tern_aint_sub(t->ub, t->lb));
    t->committed = 1;
    return TERN_OK;
}

int tern_dtype_info(MPI_Datatype dt, tern_dtype_info_t *info)
{
    tern_dtbounds_t b;
    if (!tern_dtype_bounds(dt, &b))
        return 0;
    info->lb = b.lb;
    info->extent = tern_aint_sub(b.ub, b.lb);
    info->true_lb = b.true_lb;
    info->true_extent = tern_aint_sub(b.true_ub, b.true_lb);
    info->size = b.size;
    return 1;
}

int tern_dtype_envelope(MPI_Datatype dt, tern_dtype_args_t *args)
{
    memset(args, 0, sizeof *args);
    if (tern_datatype_is_predefined(dt)) {
        args->combiner = MPI_COMBINER_NAMED;
        return 1;
    }
    const tern_dtype_t *t = tern_dtype_get(dt);
    if (!t)
        return 0;
    args->combiner = t->env.combiner;
    args->ni = t->env.ni;
    args->na = t->env.na;
    args->nc = t->env.nc;
    args->nd = t->env.nd;
    args->ints = t->env.ints;
    args->aints = t->env.aints;
    args->counts = t->env.counts;
    args->types = t->env.types;
    return 1;
}
