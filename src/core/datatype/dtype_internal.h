/* Derived datatypes inside the core: the loop description of a type and the
 * table of dynamic handles. Only src/core/datatype.c and dtype_*.c include
 * this; everyone else goes through core/datatype.h.
 *
 * A type is a tree of loop nodes; positions are byte offsets from the
 * element's origin (the user's buffer pointer), so a type map with lb != 0
 * needs no special case:
 *   LEAF    n basic elements of `basic`, contiguous at offset 0
 *   REPEAT  count copies of child, copy i at offset i * stride
 *   BLOCKS  block i: blen[i] copies of child (children[i], or children[0] for
 *           every block when single_child) at displ[i] + j * child->extent
 * Every node knows its packed size, so a walk can seek to any offset of the
 * packed stream in O(depth * log blocks): that offset is the resumable
 * cursor a transport uses to pack one fragment at a time. */
#ifndef TERN_CORE_DTYPE_INTERNAL_H
#define TERN_CORE_DTYPE_INTERNAL_H

#include "core/datatype/datatype.h"
#include "core/runtime/attr.h"
#include <stdint.h>

typedef enum { DTN_LEAF = 1, DTN_REPEAT, DTN_BLOCKS } tern_dtn_kind_t;

typedef struct tern_dtnode tern_dtnode_t;
struct tern_dtnode {
    tern_dtn_kind_t kind;
    size_t size;          /* packed bytes of one node */
    MPI_Aint extent;      /* stride when a BLOCKS parent repeats this node */
    MPI_Datatype basic;   /* the one predefined type inside, or MPI_DATATYPE_NULL */
    /* LEAF */
    size_t n;             /* elements */
    size_t esize;         /* bytes per element */
    /* REPEAT */
    size_t count;
    MPI_Aint stride;
    /* REPEAT: child; BLOCKS: children */
    tern_dtnode_t *child;
    size_t nblocks;
    int single_child;
    tern_dtnode_t **children;
    MPI_Aint *displ;
    size_t *blen;
    size_t *prefix;       /* packed bytes before block i (nblocks + 1 entries) */
};

/* Envelope and contents as given to the constructor (MPI_Type_get_contents). */
typedef struct {
    int combiner;
    int ni, na, nc, nd;
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    MPI_Datatype *types;
} tern_dtenv_t;

typedef struct {
    int refs;             /* user handle + types built on it + requests */
    int committed;
    MPI_Aint lb, ub;      /* extent = ub - lb */
    MPI_Aint true_lb, true_ub;
    size_t size;
    int contig;           /* count elements are one block at true_lb */
    size_t align;         /* largest alignment of its basic types (struct padding) */
    tern_dtnode_t *root;
    tern_dtenv_t env;
    char name[MPI_MAX_OBJECT_NAME];
    tern_attr_t *attrs;   /* cached attributes (dtype_attr.c), newest first */
} tern_dtype_t;

/* The derived type behind a handle (any state but freed), or NULL. */
tern_dtype_t *tern_dtype_get(MPI_Datatype dt);
/* The attribute list of a predefined or derived type; NULL for no type. */
tern_attr_t **tern_dtype_attr_list(MPI_Datatype dt);
/* Registers a new type (refs = 1, uncommitted); takes ownership. */
tern_status_t tern_dtype_register(tern_dtype_t *t, MPI_Datatype *out);

/* Bounds of any type (predefined or derived, committed or not). */
typedef struct {
    MPI_Aint lb, ub, true_lb, true_ub;
    size_t size, align;
} tern_dtbounds_t;
int tern_dtype_bounds(MPI_Datatype dt, tern_dtbounds_t *b);

/* Bytes of one basic element of a predefined type in a leaf: the pair types
 * without padding (MPI_2INT, MPI_FLOAT_INT, ...) count as two elements
 * (MPI_Get_elements), every other type as one. */
size_t tern_dtype_unit(MPI_Datatype basic);

/* Loop trees (dtype_loop.c). */
tern_dtnode_t *tern_dtn_of(MPI_Datatype dt);          /* deep copy of dt's tree */
tern_dtnode_t *tern_dtn_copy(const tern_dtnode_t *n);
void tern_dtn_free(tern_dtnode_t *n);
tern_dtnode_t *tern_dtn_leaf(MPI_Datatype basic, size_t esize, size_t n);
tern_dtnode_t *tern_dtn_repeat(size_t count, MPI_Aint stride, tern_dtnode_t *child,
                               MPI_Aint extent);
/* children: nblocks entries, or one when single_child. Takes ownership of
 * the arrays and children. */
tern_dtnode_t *tern_dtn_blocks(size_t nblocks, int single_child, tern_dtnode_t **children,
                               MPI_Aint *displ, size_t *blen, MPI_Aint extent);
/* Merges contiguous pieces (commit time). Returns the new root. */
tern_dtnode_t *tern_dtn_optimize(tern_dtnode_t *n);
/* 1 if the packed stream of one node is one block of memory; *first gets
 * the offset of its first byte. */
int tern_dtn_is_dense(const tern_dtnode_t *n, MPI_Aint *first);

/* Walk the packed range [skip, skip + len) of count elements of root at
 * base (an address; MPI_BOTTOM is 0). */
typedef enum {
    DTW_PACK,
    DTW_UNPACK,
    DTW_COUNT,
    DTW_ELEMS,
    DTW_EXT_PACK,
    DTW_EXT_UNPACK,
    DTW_SEGS
} tern_dtw_op_t;
typedef struct {
    tern_dtw_op_t op;
    char *pk;             /* packed-side cursor */
    size_t rem;           /* bytes still to walk */
    size_t elems;         /* DTW_COUNT: whole basic elements walked */
    int partial;          /* DTW_COUNT: the range ends inside a basic element */
    size_t want;          /* DTW_ELEMS: basic elements still to pass (stops at 0) */
    size_t bytes;         /* DTW_ELEMS: packed bytes of those passed */
    tern_status_t status; /* external32: a type it cannot convert; DTW_SEGS: no memory */
    struct tern_dt_seg *segs; /* DTW_SEGS: the pieces walked, adjacent ones merged */
    size_t nsegs, segs_cap;
} tern_dtwalk_t;
void tern_dtn_walk_count(const tern_dtnode_t *root, size_t count, MPI_Aint extent,
                         uintptr_t base, size_t skip, tern_dtwalk_t *w);

/* external32 (dtype_external32.c): bytes of one basic element in
 * external32, 0 if it has no external32 form. */
size_t tern_ext32_size(MPI_Datatype basic);
/* Converts n elements between native and external32 (big-endian). */
tern_status_t tern_ext32_convert(MPI_Datatype basic, const void *in, void *out, size_t n,
                                 int to_external);

/* Bounds and sizes of a type past what MPI_Aint or size_t holds (a huge
 * type is legal to build, only not to use) stick at the limit instead of
 * wrapping (undefined for MPI_Aint); the queries then answer MPI_UNDEFINED. */
#define TERN_AINT_MAX INT64_MAX
#define TERN_AINT_MIN INT64_MIN
static inline MPI_Aint tern_aint_add(MPI_Aint a, MPI_Aint b)
{
    MPI_Aint r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? TERN_AINT_MAX : TERN_AINT_MIN) : r;
}
static inline MPI_Aint tern_aint_sub(MPI_Aint a, MPI_Aint b)
{
    MPI_Aint r;
    return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? TERN_AINT_MAX : TERN_AINT_MIN) : r;
}
static inline MPI_Aint tern_aint_mul(MPI_Aint a, MPI_Aint b)
{
    MPI_Aint r;
    return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? TERN_AINT_MIN : TERN_AINT_MAX)
                                            : r;
}
static inline size_t tern_size_mul(size_t a, size_t b)
{
    size_t r;
    return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}
static inline size_t tern_size_add(size_t a, size_t b)
{
    size_t r;
    return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}

#endif
