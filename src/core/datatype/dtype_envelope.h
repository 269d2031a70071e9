/* The envelope a constructor records (MPI_Type_get_envelope / contents):
 * its arguments in order, each value in the list of the C type the caller
 * passed it as (dtype_nums.h): an MPI-3 form's counts are ints and its
 * byte displacements addresses, a _c form's are all large counts. Used by
 * the constructors (dtype_construct.c, dtype_grid.c). */
#ifndef TERN_CORE_DTYPE_ENVELOPE_H
#define TERN_CORE_DTYPE_ENVELOPE_H

#include "core/datatype/dtype_build.h"
#include "core/datatype/dtype_nums.h"

#include <stddef.h>

/* n values read from src, recorded in the list of C type dest. */
typedef struct {
    tern_ctype_t dest;
    tern_nums_t src;
    size_t n;
} tern_env_piece_t;
/* A scalar (an lvalue), an array of n, and n plain ints. */
#define TERN_ENV_NUM(num) ((tern_env_piece_t){(num).ctype, {&(num).v, TERN_CTYPE_COUNT}, 1})
#define TERN_ENV_NUMS(nums, n) ((tern_env_piece_t){(nums).ctype, (nums), (n)})
#define TERN_ENV_INTS(p, n) ((tern_env_piece_t){TERN_CTYPE_INT, {(p), TERN_CTYPE_INT}, (n)})

/* Fills *args with the combiner, the pieces in order and the ntypes types
 * (the lists are allocated: tern_env_free). TERN_ERR_COUNT when a list
 * would pass INT_MAX entries (the envelope counts are ints). */
tern_status_t tern_env_build(int combiner, const tern_env_piece_t *pieces, size_t npieces,
                             const MPI_Datatype *types, size_t ntypes, tern_dtype_args_t *args);
void tern_env_free(tern_dtype_args_t *args);

#endif
