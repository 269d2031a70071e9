/* Integer arguments as the caller gave them. The MPI-3 forms of the
 * datatype procedures take int (and MPI_Aint for bytes), their large-count
 * _c forms MPI_Count: one core function serves both, reading the values as
 * MPI_Count and knowing the C type each came in (a constructor's envelope
 * records every value in the list of its C type, MPI_Type_get_envelope_c;
 * an int output that cannot hold a size or count gets MPI_UNDEFINED).
 * TERN_NUM / TERN_NUMS / TERN_NUM_REF pick the C type from the expression,
 * so a binding cannot mislabel it. */
#ifndef TERN_CORE_DTYPE_NUMS_H
#define TERN_CORE_DTYPE_NUMS_H

#include <limits.h>
#include <mpi.h>

typedef enum { TERN_CTYPE_INT, TERN_CTYPE_AINT, TERN_CTYPE_COUNT } tern_ctype_t;

#define TERN_CTYPE_OF(x) \
    _Generic((x), int: TERN_CTYPE_INT, MPI_Aint: TERN_CTYPE_AINT, MPI_Count: TERN_CTYPE_COUNT)

/* One value. */
typedef struct {
    MPI_Count v;
    tern_ctype_t ctype;
} tern_num_t;
#define TERN_NUM(x) ((tern_num_t){(MPI_Count)(x), TERN_CTYPE_OF(x)})

/* An array (read only). */
typedef struct {
    const void *p;
    tern_ctype_t ctype;
} tern_nums_t;
#define TERN_NUMS(p) ((tern_nums_t){(p), TERN_CTYPE_OF(*(p))})
/* No array (an optional one left out). */
#define TERN_NO_NUMS ((tern_nums_t){NULL, TERN_CTYPE_INT})

/* A value the callee writes back (an output, or a position it advances). */
typedef struct {
    void *p;
    tern_ctype_t ctype;
} tern_num_ref_t;
#define TERN_NUM_REF(p) ((tern_num_ref_t){(p), TERN_CTYPE_OF(*(p))})

static inline MPI_Count tern_nums_at(tern_nums_t a, MPI_Count i)
{
    switch (a.ctype) {
    case TERN_CTYPE_INT: return ((const int *)a.p)[i];
    case TERN_CTYPE_AINT: return ((const MPI_Aint *)a.p)[i];
    default: return ((const MPI_Count *)a.p)[i];
    }
}

static inline MPI_Count tern_num_ref_get(tern_num_ref_t r)
{
    return tern_nums_at((tern_nums_t){r.p, r.ctype}, 0);
}

/* Stores v; an int that cannot hold it gets MPI_UNDEFINED (the standard's
 * answer for a size or count too large for the int form). */
static inline void tern_num_ref_set(tern_num_ref_t r, MPI_Count v)
{
    switch (r.ctype) {
    case TERN_CTYPE_INT:
        *(int *)r.p = v > INT_MAX || v < INT_MIN ? MPI_UNDEFINED : (int)v;
        break;
    case TERN_CTYPE_AINT: *(MPI_Aint *)r.p = (MPI_Aint)v; break;
    default: *(MPI_Count *)r.p = v; break;
    }
}

#endif
