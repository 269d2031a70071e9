/* The datatype constructors of MPI but subarray and darray
 * (dtype_construct.h): each reads its arguments in whatever C type the
 * binding had, records the envelope and builds the loop tree
 * (dtype_build.c). */
#include "core/datatype/dtype_construct.h"
#include "core/datatype/dtype_envelope.h"
#include "core/datatype/dtype_query.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Extent of an existing type, committed or not. */
static MPI_Aint extent_of(MPI_Datatype dt)
{
    tern_dtype_info_t info;
    return tern_dtype_info(dt, &info) ? info.extent : 0;
}

/* count blocks of blen copies of old, stride bytes apart. */
static tern_status_t build_vector(int combiner, const tern_env_piece_t *env, size_t nenv,
                                  MPI_Count count, MPI_Count blen, MPI_Aint stride,
                                  MPI_Datatype old, MPI_Datatype *newtype)
{
    tern_dtype_args_t args;
    tern_status_t st = tern_env_build(combiner, env, nenv, &old, 1, &args);
    if (st == TERN_OK)
        st = tern_dtype_build_vector((size_t)count, (size_t)blen, stride, old, &args, newtype);
    tern_env_free(&args);
    return st;
}

tern_status_t tern_dtype_contiguous(tern_num_t count, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    tern_env_piece_t env[] = {TERN_ENV_NUM(count)};
    return build_vector(MPI_COMBINER_CONTIGUOUS, env, LEN(env), 1, count.v, 0, oldtype, newtype);
}

tern_status_t tern_dtype_vector(tern_num_t count, tern_num_t blocklength, tern_num_t stride,
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    tern_env_piece_t env[] = {TERN_ENV_NUM(count), TERN_ENV_NUM(blocklength),
                              TERN_ENV_NUM(stride)};
    return build_vector(MPI_COMBINER_VECTOR, env, LEN(env), count.v, blocklength.v,
                        (MPI_Aint)stride.v * extent_of(oldtype), oldtype, newtype);
}

tern_status_t tern_dtype_hvector(tern_num_t count, tern_num_t blocklength, tern_num_t stride,
                                 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    tern_env_piece_t env[] = {TERN_ENV_NUM(count), TERN_ENV_NUM(blocklength),
                              TERN_ENV_NUM(stride)};
    return build_vector(MPI_COMBINER_HVECTOR, env, LEN(env), count.v, blocklength.v,
                        (MPI_Aint)stride.v, oldtype, newtype);
}

/* The indexed family and struct: block i holds blocklength i (blens, or
 * one_blen for every block when blens.p is NULL) copies of its type at
 * displacement i, in bytes or in extents of the (single) type. */
typedef struct {
    int combiner;
    tern_num_t count;
    tern_nums_t blens;
    tern_num_t one_blen;
    tern_nums_t displs;
    int displs_in_extents;
    const MPI_Datatype *types; /* count members (struct) or one */
    int is_struct;
} blocks_t;

/* What depends on the values: block lengths, and a struct's member types. */
static tern_status_t check_blocks(const blocks_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        MPI_Count blen = b->blens.p ? tern_nums_at(b->blens, (MPI_Count)i) : 0;
        if (blen < 0)
            return tern_status_detail(TERN_ERR_ARG, "array_of_blocklengths[%zu]=%lld is negative",
                                      i, (long long)blen);
        if (b->is_struct && !tern_dtype_exists(b->types[i])) {
            char name[48];
            snprintf(name, sizeof name, "array_of_types[%zu]", i);
            return tern_dtype_check_exists(b->types[i], name);
        }
    }
    return TERN_OK;
}

static tern_status_t build_blocks(const blocks_t *b, MPI_Datatype *newtype)
{
    if ((uint64_t)b->count.v > PTRDIFF_MAX / sizeof(MPI_Aint))
        return tern_status_detail(TERN_ERR_COUNT, "count=%lld is too large",
                                  (long long)b->count.v);
    size_t n = (size_t)b->count.v;
    tern_status_t st = check_blocks(b, n);
    if (st != TERN_OK)
        return st;
    tern_env_piece_t env[3] = {TERN_ENV_NUM(b->count),
                               b->blens.p ? TERN_ENV_NUMS(b->blens, n) : TERN_ENV_NUM(b->one_blen),
                               TERN_ENV_NUMS(b->displs, n)};
    tern_dtype_args_t args;
    st = tern_env_build(b->combiner, env, LEN(env), b->types, b->is_struct ? n : 1, &args);
    size_t *bl = malloc((n ? n : 1) * sizeof *bl);
    MPI_Aint *d = malloc((n ? n : 1) * sizeof *d);
    if (st == TERN_OK && (!bl || !d))
        st = tern_status_detail(TERN_ERR_NOMEM, "out of memory for %zu blocks", n);
    if (st == TERN_OK) {
        MPI_Aint unit = b->displs_in_extents ? extent_of(b->types[0]) : 1;
        for (size_t i = 0; i < n; i++) {
            bl[i] = (size_t)(b->blens.p ? tern_nums_at(b->blens, (MPI_Count)i) : b->one_blen.v);
            d[i] = (MPI_Aint)tern_nums_at(b->displs, (MPI_Count)i) * unit;
        }
        st = tern_dtype_build_blocks(n, bl, d, b->types, !b->is_struct, b->is_struct, &args,
                                     newtype);
    }
    free(bl);
    free(d);
    tern_env_free(&args);
    return st;
}

tern_status_t tern_dtype_indexed(tern_num_t count, tern_nums_t blocklengths,
                                 tern_nums_t displacements, MPI_Datatype oldtype,
                                 MPI_Datatype *newtype)
{
    blocks_t b = {.combiner = MPI_COMBINER_INDEXED, .count = count, .blens = blocklengths,
                  .displs = displacements, .displs_in_extents = 1, .types = &oldtype};
    return build_blocks(&b, newtype);
}

tern_status_t tern_dtype_hindexed(tern_num_t count, tern_nums_t blocklengths,
                                  tern_nums_t displacements, MPI_Datatype oldtype,
                                  MPI_Datatype *newtype)
{
    blocks_t b = {.combiner = MPI_COMBINER_HINDEXED, .count = count, .blens = blocklengths,
                  .displs = displacements, .types = &oldtype};
    return build_blocks(&b, newtype);
}

tern_status_t tern_dtype_indexed_block(tern_num_t count, tern_num_t blocklength,
                                       tern_nums_t displacements, MPI_Datatype oldtype,
                                       MPI_Datatype *newtype)
{
    blocks_t b = {.combiner = MPI_COMBINER_INDEXED_BLOCK, .count = count,
                  .one_blen = blocklength, .displs = displacements, .displs_in_extents = 1,
                  .types = &oldtype};
    return build_blocks(&b, newtype);
}

tern_status_t tern_dtype_hindexed_block(tern_num_t count, tern_num_t blocklength,
                                        tern_nums_t displacements, MPI_Datatype oldtype,
                                        MPI_Datatype *newtype)
{
    blocks_t b = {.combiner = MPI_COMBINER_HINDEXED_BLOCK, .count = count,
                  .one_blen = blocklength, .displs = displacements, .types = &oldtype};
    return build_blocks(&b, newtype);
}

tern_status_t tern_dtype_struct(tern_num_t count, tern_nums_t blocklengths,
                                tern_nums_t displacements, const MPI_Datatype *types,
                                MPI_Datatype *newtype)
{
    blocks_t b = {.combiner = MPI_COMBINER_STRUCT, .count = count, .blens = blocklengths,
                  .displs = displacements, .types = types, .is_struct = 1};
    return build_blocks(&b, newtype);
}

tern_status_t tern_dtype_resized(MPI_Datatype oldtype, tern_num_t lb, tern_num_t extent,
                                 MPI_Datatype *newtype)
{
    tern_env_piece_t env[] = {TERN_ENV_NUM(lb), TERN_ENV_NUM(extent)};
    tern_dtype_args_t args;
    tern_status_t st = tern_env_build(MPI_COMBINER_RESIZED, env, LEN(env), &oldtype, 1, &args);
    if (st == TERN_OK)
        st = tern_dtype_build_resized(oldtype, (MPI_Aint)lb.v, (MPI_Aint)extent.v, &args,
                                      newtype);
    tern_env_free(&args);
    return st;
}
