/* Parameterized Fortran types and the MINLOC/MAXLOC pairs: see dtype_f90.h. */
#include "core/datatype/dtype_f90.h"

#include "core/datatype/dtype_build.h"
#include "core/datatype/dtype_internal.h"

#include <float.h>
#include <pthread.h>

/* gfortran's kinds on the platforms Tern builds for: the range and
 * precision its SELECTED_*_KIND compare against, and the predefined type
 * with the same layout. The 10-byte REAL is x87's extended format, C's
 * long double there. */
typedef struct {
    int precision, range;
    MPI_Datatype real, complex;
} real_kind_t;

static const real_kind_t real_kinds[] = {
    {6, 37, MPI_REAL4, MPI_COMPLEX8},
    {15, 307, MPI_REAL8, MPI_COMPLEX16},
#if LDBL_MANT_DIG == 64
    {18, 4931, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX},
#endif
    {33, 4931, MPI_REAL16, MPI_COMPLEX32},
};

static const struct {
    int range;
    MPI_Datatype type;
} int_kinds[] = {{2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8}};

/* The types made so far; they live as long as the process (the standard
 * calls them predefined: never freed). */
#define F90_CACHE_MAX 64
static struct {
    int combiner, p, r;
    MPI_Datatype type;
} cache[F90_CACHE_MAX];
static int ncached;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *combiner_proc(int combiner)
{
    return combiner == MPI_COMBINER_F90_INTEGER ? "MPI_Type_create_f90_integer"
           : combiner == MPI_COMBINER_F90_REAL  ? "MPI_Type_create_f90_real"
                                                : "MPI_Type_create_f90_complex";
}

/* The predefined type the kind maps to, or MPI_DATATYPE_NULL. */
static MPI_Datatype kind_of(int combiner, int p, int r)
{
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        for (size_t i = 0; i < sizeof int_kinds / sizeof int_kinds[0]; i++)
            if (r <= int_kinds[i].range)
                return int_kinds[i].type;
        return MPI_DATATYPE_NULL;
    }
    for (size_t i = 0; i < sizeof real_kinds / sizeof real_kinds[0]; i++)
        if ((p == MPI_UNDEFINED || p <= real_kinds[i].precision) &&
            (r == MPI_UNDEFINED || r <= real_kinds[i].range))
            return combiner == MPI_COMBINER_F90_REAL ? real_kinds[i].real
                                                     : real_kinds[i].complex;
    return MPI_DATATYPE_NULL;
}

tern_status_t tern_dtype_create_f90(int combiner, int p, int r, MPI_Datatype *newtype)
{
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        p = 0;
        if (r == MPI_UNDEFINED)
            return tern_status_detail(TERN_ERR_ARG, "%s: r is MPI_UNDEFINED",
                                      combiner_proc(combiner));
    } else if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
        return tern_status_detail(TERN_ERR_ARG, "%s: p and r are both MPI_UNDEFINED",
                                  combiner_proc(combiner));
    }
    MPI_Datatype basic = kind_of(combiner, p, r);
    if (basic == MPI_DATATYPE_NULL) {
        if (combiner == MPI_COMBINER_F90_INTEGER)
            return tern_status_detail(TERN_ERR_ARG, "%s: no INTEGER kind has a range of %d",
                                      combiner_proc(combiner), r);
        return tern_status_detail(TERN_ERR_ARG,
                                  "%s: no %s kind has precision %d and range %d",
                                  combiner_proc(combiner),
                                  combiner == MPI_COMBINER_F90_REAL ? "REAL" : "COMPLEX", p, r);
    }
    tern_status_t st = TERN_OK;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < ncached; i++)
        if (cache[i].combiner == combiner && cache[i].p == p && cache[i].r == r) {
            *newtype = cache[i].type;
            goto out;
        }
    if (ncached == F90_CACHE_MAX) {
        st = tern_status_detail(TERN_ERR_LIMIT, "%s: %d distinct (p, r) pairs are the most",
                                combiner_proc(combiner), F90_CACHE_MAX);
        goto out;
    }
    int ints[2] = {p, r};
    tern_dtype_args_t args = {.combiner = combiner};
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        args.ni = 1;
        args.ints = &ints[1];
    } else {
        args.ni = 2;
        args.ints = ints;
    }
    st = tern_dtype_build_named_like(basic, &args, newtype);
    if (st == TERN_OK) {
        cache[ncached].combiner = combiner;
        cache[ncached].p = p;
        cache[ncached].r = r;
        cache[ncached++].type = *newtype;
    }
out:
    pthread_mutex_unlock(&cache_lock);
    return st;
}

int tern_dtype_is_f90(MPI_Datatype dt)
{
    const tern_dtype_t *t = tern_dtype_get(dt);
    return t && (t->env.combiner == MPI_COMBINER_F90_INTEGER ||
                 t->env.combiner == MPI_COMBINER_F90_REAL ||
                 t->env.combiner == MPI_COMBINER_F90_COMPLEX);
}

tern_status_t tern_dtype_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                                     MPI_Datatype *pair_type)
{
    static const struct {
        MPI_Datatype value, index, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
    };
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].value == value_type && pairs[i].index == index_type)
            *pair_type = pairs[i].pair;
    return TERN_OK;
}
