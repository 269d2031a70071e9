/* The envelope of a constructor, sorted by C type (dtype_envelope.h). */
#include "core/datatype/dtype_envelope.h"

#include <stdlib.h>

tern_status_t tern_env_build(int combiner, const tern_env_piece_t *pieces, size_t npieces,
                             const MPI_Datatype *types, size_t ntypes, tern_dtype_args_t *args)
{
    *args = (tern_dtype_args_t){.combiner = combiner, .types = types};
    size_t len[3] = {0, 0, 0};
    for (size_t i = 0; i < npieces; i++)
        len[pieces[i].dest] += pieces[i].n;
    for (int c = 0; c < 3; c++)
        if (len[c] > INT_MAX)
            return tern_status_detail(TERN_ERR_COUNT,
                                      "%zu values are too many to record (at most %d)", len[c],
                                      INT_MAX);
    if (ntypes > INT_MAX)
        return tern_status_detail(TERN_ERR_COUNT, "%zu datatypes are too many (at most %d)",
                                  ntypes, INT_MAX);
    int *ints = len[TERN_CTYPE_INT] ? malloc(len[TERN_CTYPE_INT] * sizeof *ints) : NULL;
    MPI_Aint *aints = len[TERN_CTYPE_AINT] ? malloc(len[TERN_CTYPE_AINT] * sizeof *aints) : NULL;
    MPI_Count *counts =
        len[TERN_CTYPE_COUNT] ? malloc(len[TERN_CTYPE_COUNT] * sizeof *counts) : NULL;
    args->ints = ints;
    args->aints = aints;
    args->counts = counts;
    if ((len[TERN_CTYPE_INT] && !ints) || (len[TERN_CTYPE_AINT] && !aints) ||
        (len[TERN_CTYPE_COUNT] && !counts)) {
        tern_env_free(args);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the type's envelope");
    }
    for (size_t i = 0; i < npieces; i++) {
        const tern_env_piece_t *p = &pieces[i];
        for (size_t j = 0; j < p->n; j++) {
            MPI_Count v = tern_nums_at(p->src, (MPI_Count)j);
            switch (p->dest) {
            case TERN_CTYPE_INT: ints[args->ni++] = (int)v; break;
            case TERN_CTYPE_AINT: aints[args->na++] = (MPI_Aint)v; break;
            default: counts[args->nc++] = v; break;
            }
        }
    }
    args->nd = (int)ntypes;
    return TERN_OK;
}

void tern_env_free(tern_dtype_args_t *args)
{
    free((void *)args->ints);
    free((void *)args->aints);
    free((void *)args->counts);
    args->ints = NULL;
    args->aints = NULL;
    args->counts = NULL;
}
