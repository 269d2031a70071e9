/* The loop description of a datatype and the engine that walks it: pack,
 * unpack and element counting over any byte range of the packed stream. */
#include "core/datatype/datatype.h"
#include "core/datatype/dtype_internal.h"

#include <stdlib.h>
#include <string.h>

static tern_dtnode_t *node_new(tern_dtn_kind_t kind)
{
    tern_dtnode_t *n = calloc(1, sizeof *n);
    if (n)
        n->kind = kind;
    return n;
}

static MPI_Datatype merge_basic(MPI_Datatype a, MPI_Datatype b)
{
    return a == b ? a : MPI_DATATYPE_NULL;
}

tern_dtnode_t *tern_dtn_leaf(MPI_Datatype basic, size_t esize, size_t n)
{
    tern_dtnode_t *l = node_new(DTN_LEAF);
    if (!l)
        return NULL;
    l->basic = basic;
    l->esize = esize;
    l->n = n;
    l->size = esize * n;
    l->extent = (MPI_Aint)l->size;
    return l;
}

tern_dtnode_t *tern_dtn_repeat(size_t count, MPI_Aint stride, tern_dtnode_t *child,
                               MPI_Aint extent)
{
    if (!child)
        return NULL;
    tern_dtnode_t *r = node_new(DTN_REPEAT);
    if (!r) {
        tern_dtn_free(child);
        return NULL;
    }
    r->count = count;
    r->stride = stride;
    r->child = child;
    r->size = count * child->size;
    r->basic = child->basic;
    r->extent = extent;
    return r;
}

tern_dtnode_t *tern_dtn_blocks(size_t nblocks, int single_child, tern_dtnode_t **children,
                               MPI_Aint *displ, size_t *blen, MPI_Aint extent)
{
    tern_dtnode_t *b = node_new(DTN_BLOCKS);
    size_t *prefix = malloc((nblocks + 1) * sizeof *prefix);
    if (!b || !prefix) {
        free(b);
        free(prefix);
        for (size_t i = 0; i < (single_child ? 1 : nblocks); i++)
            tern_dtn_free(children[i]);
        free(children);
        free(displ);
        free(blen);
        return NULL;
    }
    b->nblocks = nblocks;
    b->single_child = single_child;
    b->children = children;
    b->displ = displ;
    b->blen = blen;
    b->prefix = prefix;
    b->extent = extent;
    prefix[0] = 0;
    int first = 1;
    for (size_t i = 0; i < nblocks; i++) {
        const tern_dtnode_t *c = children[single_child ? 0 : i];
        prefix[i + 1] = prefix[i] + blen[i] * c->size;
        if (blen[i] && c->size) {
            b->basic = first ? c->basic : merge_basic(b->basic, c->basic);
            first = 0;
        }
    }
    b->size = prefix[nblocks];
    return b;
}

void tern_dtn_free(tern_dtnode_t *n)
{
    if (!n)
        return;
    if (n->kind == DTN_REPEAT)
        tern_dtn_free(n->child);
    if (n->kind == DTN_BLOCKS) {
        for (size_t i = 0; i < (n->single_child ? 1 : n->nblocks); i++)
            tern_dtn_free(n->children[i]);
        free(n->children);
        free(n->displ);
        free(n->blen);
        free(n->prefix);
    }
    free(n);
}

tern_dtnode_t *tern_dtn_copy(const tern_dtnode_t *n)
{
    tern_dtnode_t *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *n;
    if (n->kind == DTN_REPEAT) {
        c->child = tern_dtn_copy(n->child);
        if (!c->child) {
            free(c);
            return NULL;
        }
    } else if (n->kind == DTN_BLOCKS) {
        size_t nc = n->single_child ? 1 : n->nblocks;
        c->children = calloc(nc ? nc : 1, sizeof *c->children);
        c->displ = malloc((n->nblocks ? n->nblocks : 1) * sizeof *c->displ);
        c->blen = malloc((n->nblocks ? n->nblocks : 1) * sizeof *c->blen);
        c->prefix = malloc((n->nblocks + 1) * sizeof *c->prefix);
        int ok = c->children && c->displ && c->blen && c->prefix;
        for (size_t i = 0; ok && i < nc; i++)
            ok = (c->children[i] = tern_dtn_copy(n->children[i])) != NULL;
        if (!ok) {
            c->kind = DTN_BLOCKS;
            c->single_child = 0;
            c->nblocks = nc; /* frees the children copied so far (NULLs are skipped) */
            tern_dtn_free(c);
            return NULL;
        }
        memcpy(c->displ, n->displ, n->nblocks * sizeof *c->displ);
        memcpy(c->blen, n->blen, n->nblocks * sizeof *c->blen);
        memcpy(c->prefix, n->prefix, (n->nblocks + 1) * sizeof *c->prefix);
    }
    return c;
}

/* ------------------------------------------------------------------------ */
/* Commit-time simplification: runs of contiguous data become one leaf, so
 * the walk does one memcpy per contiguous piece. */

int tern_dtn_is_dense(const tern_dtnode_t *n, MPI_Aint *first)
{
    switch (n->kind) {
    case DTN_LEAF:
        *first = 0;
        return 1;
    case DTN_REPEAT: {
        MPI_Aint f;
        if (n->count == 0 || n->child->size == 0) {
            *first = 0;
            return 1;
        }
        if (!tern_dtn_is_dense(n->child, &f))
            return 0;
        *first = f;
        return n->count == 1 || n->stride == (MPI_Aint)n->child->size;
    }
    case DTN_BLOCKS: {
        MPI_Aint next = 0;
        int started = 0;
        for (size_t i = 0; i < n->nblocks; i++) {
            const tern_dtnode_t *c = n->children[n->single_child ? 0 : i];
            MPI_Aint f;
            if (n->blen[i] == 0 || c->size == 0)
                continue;
            if (!tern_dtn_is_dense(c, &f))
                return 0;
            if (n->blen[i] > 1 && c->extent != (MPI_Aint)c->size)
                return 0;
            MPI_Aint start = n->displ[i] + f;
            if (started && start != next)
                return 0;
            if (!started)
                *first = start;
            started = 1;
            next = start + (MPI_Aint)(n->blen[i] * c->size);
        }
        if (!started)
            *first = 0;
        return 1;
    }
    }
    return 0;
}

/* A dense node of homogeneous basic type becomes a leaf at offset first;
 * the caller places it. */
static int leafable(const tern_dtnode_t *n, MPI_Aint *first)
{
    if (n->kind == DTN_LEAF || n->basic == MPI_DATATYPE_NULL || n->size == 0)
        return 0;
    if (!tern_dtn_is_dense(n, first))
        return 0;
    size_t es = tern_dtype_unit(n->basic);
    /* Pair types with padding keep their two-leaf shape (value, int). */
    return tern_datatype_is_contig(n->basic) && n->size % es == 0;
}

tern_dtnode_t *tern_dtn_optimize(tern_dtnode_t *n)
{
    if (n->kind == DTN_REPEAT) {
        n->child = tern_dtn_optimize(n->child);
        MPI_Aint first;
        if (n->child->kind == DTN_LEAF && leafable(n, &first) && first == 0) {
            tern_dtnode_t *leaf = n->child;
            leaf->n *= n->count;
            leaf->size = leaf->n * leaf->esize;
            leaf->extent = n->extent;
            n->child = NULL;
            free(n);
            return leaf;
        }
        return n;
    }
    if (n->kind == DTN_BLOCKS) {
        size_t nc = n->single_child ? 1 : n->nblocks;
        for (size_t i = 0; i < nc; i++)
            n->children[i] = tern_dtn_optimize(n->children[i]);
        MPI_Aint first;
        if (leafable(n, &first) && first == 0) {
            size_t es = tern_dtype_unit(n->basic);
            tern_dtnode_t *leaf = tern_dtn_leaf(n->basic, es, n->size / es);
            if (leaf) {
                leaf->extent = n->extent;
                tern_dtn_free(n);
                return leaf;
            }
        }
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* The walk. `base` is an address (uintptr_t, so MPI_BOTTOM plus absolute
 * displacements needs no pointer arithmetic on NULL). */

static void walk_piece(const tern_dtnode_t *leaf, uintptr_t addr, size_t skip, size_t k,
                       tern_dtwalk_t *w)
{
    switch (w->op) {
    case DTW_PACK:
        memcpy(w->pk, (const void *)(addr + skip), k);
        break;
    case DTW_UNPACK:
        memcpy((void *)(addr + skip), w->pk, k);
        break;
    case DTW_COUNT:
        w->elems += (skip + k) / leaf->esize - skip / leaf->esize;
        w->partial = (skip + k) % leaf->esize != 0;
        break;
    case DTW_ELEMS: {
        /* The walk starts at an element boundary and pieces end at leaf
         * ends, so skip is one too. */
        size_t n = k / leaf->esize;
        if (n < w->want) {
            w->want -= n;
            w->bytes += k;
        } else {
            w->bytes += w->want * leaf->esize;
            w->want = 0;
            w->rem = k; /* stops the walk (rem -= k below) */
        }
        break;
    }
    case DTW_SEGS: {
        MPI_Aint off = (MPI_Aint)(addr + skip);
        if (w->nsegs && w->segs[w->nsegs - 1].offset + (MPI_Aint)w->segs[w->nsegs - 1].len == off) {
            w->segs[w->nsegs - 1].len += k;
        } else {
            if (w->nsegs == w->segs_cap) {
                size_t cap = w->segs_cap ? 2 * w->segs_cap : 16;
                struct tern_dt_seg *g = realloc(w->segs, cap * sizeof *g);
                if (!g) {
                    w->status = TERN_ERR_NOMEM;
                    w->rem = 0;
                    return;
                }
                w->segs = g;
                w->segs_cap = cap;
            }
            w->segs[w->nsegs++] = (struct tern_dt_seg){off, k};
        }
        break;
    }
    case DTW_EXT_PACK:
    case DTW_EXT_UNPACK: {
        /* Whole elements only (external32 packs whole buffers). */
        size_t xs = tern_ext32_size(leaf->basic);
        size_t ne = k / leaf->esize;
        tern_status_t st = tern_ext32_convert(
            leaf->basic, w->op == DTW_EXT_PACK ? (const void *)(addr + skip) : w->pk,
            w->op == DTW_EXT_PACK ? (void *)w->pk : (void *)(addr + skip), ne,
            w->op == DTW_EXT_PACK);
        if (st != TERN_OK && w->status == TERN_OK)
            w->status = st;
        w->pk += ne * xs;
        w->rem -= k;
        return;
    }
    }
    if (w->op != DTW_COUNT && w->op != DTW_ELEMS)
        w->pk += k;
    w->rem -= k;
}

static void walk(const tern_dtnode_t *n, uintptr_t base, size_t skip, tern_dtwalk_t *w);

/* Basic elements of one node (what DTW_COUNT counts over its size). */
static size_t node_elems(const tern_dtnode_t *n)
{
    switch (n->kind) {
    case DTN_LEAF:
        return n->size / n->esize;
    case DTN_REPEAT:
        return n->count * node_elems(n->child);
    case DTN_BLOCKS: {
        size_t e = 0, one = n->single_child ? node_elems(n->children[0]) : 0;
        for (size_t b = 0; b < n->nblocks; b++)
            e += n->blen[b] * (n->single_child ? one : node_elems(n->children[b]));
        return e;
    }
    }
    return 0;
}

/* DTW_COUNT and DTW_ELEMS pass whole copies of a run without walking them
 * (a block of INT_MAX chars is one run of INT_MAX leaves): from copy *i,
 * at most count - *i copies. */
static void count_whole_copies(const tern_dtnode_t *child, size_t count, size_t *i,
                               tern_dtwalk_t *w)
{
    size_t cs = child->size, ce = node_elems(child), q = count - *i;
    if (w->op == DTW_COUNT) {
        if (q > w->rem / cs)
            q = w->rem / cs;
        w->elems += q * ce;
        w->rem -= q * cs;
        if (q)
            w->partial = 0;
    } else {
        if (ce == 0 || q > w->want / ce)
            q = ce ? w->want / ce : 0;
        w->want -= q * ce;
        w->bytes += q * cs;
        w->rem -= q * cs;
        if (w->want == 0)
            w->rem = 0;
    }
    *i += q;
}

/* count copies of child at base + i * stride, from packed offset skip. */
static void walk_run(const tern_dtnode_t *child, size_t count, MPI_Aint stride, uintptr_t base,
                     size_t skip, tern_dtwalk_t *w)
{
    size_t cs = child->size;
    if (cs == 0 || count == 0)
        return;
    size_t i = skip / cs;
    skip %= cs;
    if ((w->op == DTW_COUNT || w->op == DTW_ELEMS) && i < count && w->rem) {
        if (skip) {
            walk(child, base + (uintptr_t)((MPI_Aint)i * stride), skip, w);
            i++;
            skip = 0;
        }
        if (i < count && w->rem)
            count_whole_copies(child, count, &i, w);
        /* At most one copy is left to walk: the one the range ends in. */
    }
    if (child->kind == DTN_LEAF && (w->op == DTW_PACK || w->op == DTW_UNPACK)) {
        /* The hot loop of vectors: one memcpy per block. */
        for (; i < count && w->rem; i++) {
            size_t k = cs - skip;
            if (k > w->rem)
                k = w->rem;
            uintptr_t a = base + (uintptr_t)((MPI_Aint)i * stride) + skip;
            if (w->op == DTW_PACK)
                memcpy(w->pk, (const void *)a, k);
            else
                memcpy((void *)a, w->pk, k);
            w->pk += k;
            w->rem -= k;
            skip = 0;
        }
        return;
    }
    for (; i < count && w->rem; i++) {
        walk(child, base + (uintptr_t)((MPI_Aint)i * stride), skip, w);
        skip = 0;
    }
}

static void walk(const tern_dtnode_t *n, uintptr_t base, size_t skip, tern_dtwalk_t *w)
{
    switch (n->kind) {
    case DTN_LEAF: {
        size_t k = n->size - skip;
        if (k > w->rem)
            k = w->rem;
        if (k)
            walk_piece(n, base, skip, k, w);
        return;
    }
    case DTN_REPEAT:
        walk_run(n->child, n->count, n->stride, base, skip, w);
        return;
    case DTN_BLOCKS: {
        /* Binary search for the block holding packed offset skip. */
        size_t lo = 0, hi = n->nblocks;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (n->prefix[mid] <= skip)
                lo = mid;
            else
                hi = mid;
        }
        skip -= n->prefix[lo];
        for (size_t b = lo; b < n->nblocks && w->rem; b++) {
            const tern_dtnode_t *c = n->children[n->single_child ? 0 : b];
            walk_run(c, n->blen[b], c->extent, base + (uintptr_t)n->displ[b], skip, w);
            skip = 0;
        }
        return;
    }
    }
}

void tern_dtn_walk_count(const tern_dtnode_t *root, size_t count, MPI_Aint extent,
                         uintptr_t base, size_t skip, tern_dtwalk_t *w)
{
    walk_run(root, count, extent, base, skip, w);
}
