/* Subarray and darray: which runs of each dimension of a global array a
 * type keeps, handed to tern_dtype_build_grid. The MPI layer has checked
 * the arguments (dimensions fit, distributions valid, grid matches size). */
#include "core/datatype/dtype_build.h"

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
