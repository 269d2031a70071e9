/* Subarray and darray: which runs of each dimension of a global array a
 * type keeps, handed to tern_dtype_build_grid, and the constructors of MPI
 * that check the dimensions (they fit, distributions valid, the grid
 * matches size) and record the envelope. */
#include "core/datatype/dtype_build.h"
#include "core/datatype/dtype_construct.h"
#include "core/datatype/dtype_envelope.h"

#include <stdlib.h>

tern_status_t tern_dtype_build_subarray(int ndims, const size_t *sizes, const size_t *subsizes,
                                        const size_t *starts, int order, MPI_Datatype old,
                                        const tern_dtype_args_t *args, MPI_Datatype *out)
{
    size_t nblk[ndims], st[ndims], ln[ndims];
    size_t *stp[ndims], *lnp[ndims];
    for (int d = 0; d < ndims; d++) {
        nblk[d] = 1;
        st[d] = starts[d];
        ln[d] = subsizes[d];
        stp[d] = &st[d];
        lnp[d] = &ln[d];
    }
    return tern_dtype_build_grid(ndims, sizes, nblk, stp, lnp, order, old, args, out);
}

/* The runs of one dimension a process owns under a darray distribution. */
static int darray_dim(long long gsize, int distrib, int darg, int psize, int coord,
                      size_t **start, size_t **len, size_t *n)
{
    *n = 0;
    *start = *len = NULL;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        *start = malloc(sizeof **start);
        *len = malloc(sizeof **len);
        if (!*start || !*len)
            return 0;
        (*start)[0] = 0;
        (*len)[0] = (size_t)gsize;
        *n = 1;
        return 1;
    }
    long long blk;
    if (distrib == MPI_DISTRIBUTE_BLOCK)
        blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
    else
        blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    size_t cap = (size_t)(gsize / (blk * psize) + 1);
    *start = malloc(cap * sizeof **start);
    *len = malloc(cap * sizeof **len);
    if (!*start || !*len)
        return 0;
    long long step = distrib == MPI_DISTRIBUTE_BLOCK ? gsize + 1 : blk * psize;
    for (long long s = (long long)coord * blk; s < gsize && *n < cap; s += step) {
        long long l = gsize - s < blk ? gsize - s : blk;
        (*start)[*n] = (size_t)s;
        (*len)[*n] = (size_t)l;
        (*n)++;
    }
    return 1;
}

tern_status_t tern_dtype_build_darray(int rank, int ndims, const size_t *gsizes,
                                      const int *distribs, const int *dargs, const int *psizes,
                                      int order, MPI_Datatype old, const tern_dtype_args_t *args,
                                      MPI_Datatype *out)
{
    size_t nblk[ndims];
    size_t *st[ndims], *ln[ndims];
    int ok = 1, r = rank;
    /* Ranks are laid out row-major over psizes. */
    for (int d = ndims - 1; d >= 0; d--) {
        int coord = r % psizes[d];
        r /= psizes[d];
        ok &= darray_dim((long long)gsizes[d], distribs[d], dargs[d], psizes[d], coord, &st[d],
                         &ln[d], &nblk[d]);
    }
    tern_status_t s = TERN_ERR_NOMEM;
    if (ok)
        s = tern_dtype_build_grid(ndims, gsizes, nblk, st, ln, order, old, args, out);
    for (int d = 0; d < ndims; d++) {
        free(st[d]);
        free(ln[d]);
    }
    return s;
}

/* ------------------------------------------------------------------------ */
/* MPI_Type_create_subarray / darray (dtype_construct.h): the checks that
 * depend on the values, the envelope, then the grid above. */

tern_status_t tern_dtype_subarray(int ndims, tern_nums_t sizes, tern_nums_t subsizes,
                                  tern_nums_t starts, int order, MPI_Datatype oldtype,
                                  MPI_Datatype *newtype)
{
    size_t gsize[ndims], sub[ndims], st[ndims];
    for (int d = 0; d < ndims; d++) {
        MPI_Count g = tern_nums_at(sizes, d), s = tern_nums_at(subsizes, d);
        MPI_Count f = tern_nums_at(starts, d);
        if (g <= 0 || s <= 0 || s > g || f < 0 || f > g - s)
            return tern_status_detail(TERN_ERR_ARG,
                                      "dimension %d: size %lld, subsize %lld, start %lld do not "
                                      "fit (need 0 < subsize <= size and 0 <= start <= size - "
                                      "subsize)", d, (long long)g, (long long)s, (long long)f);
        gsize[d] = (size_t)g;
        sub[d] = (size_t)s;
        st[d] = (size_t)f;
    }
    size_t nd = (size_t)ndims;
    tern_env_piece_t env[] = {TERN_ENV_INTS(&ndims, 1), TERN_ENV_NUMS(sizes, nd),
                              TERN_ENV_NUMS(subsizes, nd), TERN_ENV_NUMS(starts, nd),
                              TERN_ENV_INTS(&order, 1)};
    tern_dtype_args_t args;
    tern_status_t s = tern_env_build(MPI_COMBINER_SUBARRAY, env, sizeof env / sizeof env[0],
                                     &oldtype, 1, &args);
    if (s == TERN_OK)
        s = tern_dtype_build_subarray(ndims, gsize, sub, st, order, oldtype, &args, newtype);
    tern_env_free(&args);
    return s;
}

/* Dimension d of a darray: a positive size, a distribution the standard
 * knows, and (block) enough blocks to cover it. */
static int darray_dim_valid(MPI_Count gsize, int distrib, int darg, int psize)
{
    if (gsize <= 0 || psize <= 0 || (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0))
        return 0;
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE: return psize == 1;
    case MPI_DISTRIBUTE_CYCLIC: return 1;
    case MPI_DISTRIBUTE_BLOCK:
        return darg == MPI_DISTRIBUTE_DFLT_DARG || (long long)darg * psize >= gsize;
    default: return 0;
    }
}

tern_status_t tern_dtype_darray(int size, int rank, int ndims, tern_nums_t gsizes,
                                const int *distribs, const int *dargs, const int *psizes,
                                int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (size <= 0 || rank < 0 || rank >= size)
        return tern_status_detail(TERN_ERR_ARG, "rank %d is not in a process grid of size %d",
                                  rank, size);
    size_t gs[ndims];
    long long grid = 1;
    for (int d = 0; d < ndims; d++) {
        MPI_Count g = tern_nums_at(gsizes, d);
        if (!darray_dim_valid(g, distribs[d], dargs[d], psizes[d]))
            return tern_status_detail(TERN_ERR_ARG,
                                      "dimension %d: gsize %lld, distrib %d, darg %d, psize %d "
                                      "are not a valid distribution", d, (long long)g,
                                      distribs[d], dargs[d], psizes[d]);
        gs[d] = (size_t)g;
        if (grid <= size)
            grid *= psizes[d];
    }
    if (grid != size)
        return tern_status_detail(TERN_ERR_ARG, "the process grid has %lld processes, size is %d",
                                  grid, size);
    size_t nd = (size_t)ndims;
    /* size, rank, ndims, gsizes, distribs, dargs, psizes, order */
    tern_env_piece_t env[] = {TERN_ENV_INTS(&size, 1), TERN_ENV_INTS(&rank, 1),
                              TERN_ENV_INTS(&ndims, 1), TERN_ENV_NUMS(gsizes, nd),
                              TERN_ENV_INTS(distribs, nd), TERN_ENV_INTS(dargs, nd),
                              TERN_ENV_INTS(psizes, nd), TERN_ENV_INTS(&order, 1)};
    tern_dtype_args_t args;
    tern_status_t s = tern_env_build(MPI_COMBINER_DARRAY, env, sizeof env / sizeof env[0],
                                     &oldtype, 1, &args);
    if (s == TERN_OK)
        s = tern_dtype_build_darray(rank, ndims, gs, distribs, dargs, psizes, order, oldtype,
                                    &args, newtype);
    tern_env_free(&args);
    return s;
}
