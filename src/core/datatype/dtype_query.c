/* The datatype procedures of MPI that ask about a type or let it go
 * (dtype_query.h). */
#include "core/datatype/dtype_query.h"

#include "core/datatype/dtype_attr.h"
#include "core/datatype/dtype_build.h"
#include "core/datatype/dtype_f90.h"
#include "core/datatype/dtype_internal.h"

#include <stdio.h>
#include <string.h>

int tern_dtype_exists(MPI_Datatype dt)
{
    return tern_datatype_is_predefined(dt) || tern_dtype_is_derived(dt);
}

tern_status_t tern_dtype_check_exists(MPI_Datatype dt, const char *name)
{
    if (__builtin_expect(tern_dtype_exists(dt), 1))
        return TERN_OK;
    if (dt == MPI_DATATYPE_NULL)
        return tern_status_detail(TERN_ERR_TYPE, "%s is MPI_DATATYPE_NULL", name);
    return tern_status_detail(TERN_ERR_TYPE, "%s 0x%x is not a datatype", name, (unsigned)dt);
}

tern_status_t tern_dtype_check_committed(MPI_Datatype dt, const char *name)
{
    if (__builtin_expect(tern_datatype_is_valid(dt), 1))
        return TERN_OK;
    if (tern_dtype_is_derived(dt))
        return tern_status_detail(TERN_ERR_TYPE,
                                  "%s 0x%x is not committed (call MPI_Type_commit first)", name,
                                  (unsigned)dt);
    return tern_dtype_check_exists(dt, name);
}

/* ------------------------------------------------------------------------ */
/* Free and names. */

tern_status_t tern_dtype_free(MPI_Datatype *dt)
{
    if (tern_datatype_is_predefined(*dt))
        return tern_status_detail(TERN_ERR_TYPE, "%s is predefined and cannot be freed",
                                  tern_datatype_name(*dt));
    if (tern_dtype_is_f90(*dt))
        return tern_status_detail(TERN_ERR_TYPE,
                                  "datatype 0x%x came from MPI_Type_create_f90_*: it is "
                                  "predefined and cannot be freed",
                                  (unsigned)*dt);
    /* The delete callbacks run now, at the user's free; a failing one
     * leaves the type as it was. */
    tern_status_t st = tern_type_delete_attrs(*dt);
    if (st != TERN_OK)
        return st;
    /* Pending operations and types built on it keep their own reference. */
    tern_datatype_release(*dt);
    *dt = MPI_DATATYPE_NULL;
    return TERN_OK;
}

/* MPI does not forbid renaming a predefined type (MPICH and Open MPI
 * allow it; mpi4py sets every type's name to itself). */
tern_status_t tern_dtype_set_name(MPI_Datatype dt, const char *name)
{
    if (tern_datatype_set_predefined_name(dt, name))
        return TERN_OK;
    tern_dtype_t *t = tern_dtype_get(dt);
    if (!t)
        return tern_status_detail(TERN_ERR_TYPE, "datatype 0x%x is not a datatype",
                                  (unsigned)dt);
    snprintf(t->name, sizeof t->name, "%s", name);
    return TERN_OK;
}

tern_status_t tern_dtype_get_name(MPI_Datatype dt, char *name, int *resultlen)
{
    /* MPI-4.1: the null handle has a name too. */
    const char *n = dt == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : tern_datatype_user_name(dt);
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", n ? n : "");
    *resultlen = (int)strlen(name);
    return TERN_OK;
}

/* ------------------------------------------------------------------------ */
/* Envelope and contents. */

/* The int forms (no large-count list) cannot describe a type a _c
 * constructor made: its counts are large counts, and an int form reporting
 * them as anything else would be decoded wrongly (MPI_ERR_TYPE). */
static tern_status_t need_large_form(MPI_Datatype dt, const tern_dtype_args_t *a, const char *form)
{
    return tern_status_detail(TERN_ERR_TYPE,
                              "datatype %s was made by a large-count constructor: its %d large "
                              "counts need %s_c",
                              tern_datatype_name(dt) ? tern_datatype_name(dt) : "(derived)",
                              a->nc, form);
}

tern_status_t tern_dtype_get_envelope(MPI_Datatype dt, tern_num_ref_t num_integers,
                                      tern_num_ref_t num_addresses, MPI_Count *num_large_counts,
                                      tern_num_ref_t num_datatypes, int *combiner)
{
    tern_dtype_args_t a;
    tern_dtype_envelope(dt, &a);
    if (!num_large_counts && a.nc)
        return need_large_form(dt, &a, "MPI_Type_get_envelope");
    tern_num_ref_set(num_integers, a.ni);
    tern_num_ref_set(num_addresses, a.na);
    if (num_large_counts)
        *num_large_counts = a.nc;
    tern_num_ref_set(num_datatypes, a.nd);
    *combiner = a.combiner;
    return TERN_OK;
}

tern_status_t tern_dtype_get_contents(MPI_Datatype dt, MPI_Count max_integers,
                                      MPI_Count max_addresses, MPI_Count max_large_counts,
                                      MPI_Count max_datatypes, int *integers,
                                      MPI_Aint *addresses, MPI_Count *large_counts,
                                      MPI_Datatype *datatypes)
{
    tern_dtype_args_t a;
    tern_dtype_envelope(dt, &a);
    if (a.combiner == MPI_COMBINER_NAMED)
        return tern_status_detail(TERN_ERR_TYPE, "%s is predefined: it has no contents",
                                  tern_datatype_name(dt));
    if (!large_counts && a.nc)
        return need_large_form(dt, &a, "MPI_Type_get_contents");
    if (max_integers < a.ni || max_addresses < a.na || max_large_counts < a.nc ||
        max_datatypes < a.nd)
        return tern_status_detail(TERN_ERR_ARG,
                                  "arrays too small: need %d integers, %d addresses, %d large "
                                  "counts, %d datatypes; got room for %lld, %lld, %lld, %lld",
                                  a.ni, a.na, a.nc, a.nd, (long long)max_integers,
                                  (long long)max_addresses, (long long)max_large_counts,
                                  (long long)max_datatypes);
    if (a.ni)
        memcpy(integers, a.ints, (size_t)a.ni * sizeof *integers);
    if (a.na)
        memcpy(addresses, a.aints, (size_t)a.na * sizeof *addresses);
    if (a.nc)
        memcpy(large_counts, a.counts, (size_t)a.nc * sizeof *large_counts);
    for (int i = 0; i < a.nd; i++) {
        datatypes[i] = a.types[i];
        /* The caller owns the derived handles it gets (MPI_Type_free). */
        tern_datatype_retain(datatypes[i]);
    }
    return TERN_OK;
}

/* ------------------------------------------------------------------------ */
/* Size, extents, addresses. */

/* A size past MPI_Count (a type over 2^63 bytes) is MPI_UNDEFINED, as an
 * int output's is past INT_MAX; never a wrapped negative value. */
static MPI_Count size_or_undefined(size_t s)
{
    return s > (size_t)INT64_MAX ? MPI_UNDEFINED : (MPI_Count)s;
}

/* A bound stuck at the limit of MPI_Aint (dtype_internal.h) is past it. */
static MPI_Count aint_or_undefined(MPI_Aint v)
{
    return v == TERN_AINT_MAX || v == TERN_AINT_MIN ? MPI_UNDEFINED : v;
}

tern_status_t tern_dtype_get_size(MPI_Datatype dt, tern_num_ref_t size)
{
    /* Predefined and committed types know their size; others are bound. */
    long s = tern_datatype_size(dt);
    tern_dtype_info_t info;
    if (s >= 0)
        tern_num_ref_set(size, s);
    else if (tern_dtype_info(dt, &info))
        tern_num_ref_set(size, size_or_undefined(info.size));
    else
        tern_num_ref_set(size, s);
    return TERN_OK;
}

tern_status_t tern_dtype_get_extent(MPI_Datatype dt, tern_num_ref_t lb, tern_num_ref_t extent)
{
    tern_dtype_info_t info;
    tern_dtype_info(dt, &info);
    tern_num_ref_set(lb, aint_or_undefined(info.lb));
    tern_num_ref_set(extent, aint_or_undefined(info.extent));
    return TERN_OK;
}

tern_status_t tern_dtype_get_true_extent(MPI_Datatype dt, tern_num_ref_t true_lb,
                                         tern_num_ref_t true_extent)
{
    tern_dtype_info_t info;
    tern_dtype_info(dt, &info);
    tern_num_ref_set(true_lb, aint_or_undefined(info.true_lb));
    tern_num_ref_set(true_extent, aint_or_undefined(info.true_extent));
    return TERN_OK;
}

tern_status_t tern_dtype_get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)(uintptr_t)location;
    return TERN_OK;
}

/* ------------------------------------------------------------------------ */
/* Counts of a received message: the status holds bytes of the packed
 * stream. */

tern_status_t tern_dtype_get_count(MPI_Datatype dt, size_t bytes, tern_num_ref_t count)
{
    size_t size = (size_t)tern_datatype_size(dt);
    if (size == 0)
        tern_num_ref_set(count, 0);
    else
        tern_num_ref_set(count, bytes % size ? MPI_UNDEFINED : (MPI_Count)(bytes / size));
    return TERN_OK;
}

tern_status_t tern_dtype_get_elements(MPI_Datatype dt, size_t bytes, tern_num_ref_t count)
{
    /* Bytes that end inside a basic element cannot have come from a
     * matching type signature: MPI_UNDEFINED (as Open MPI; MPI does not
     * require the check, but it costs nothing here). */
    long long e = tern_datatype_elements(dt, bytes);
    tern_num_ref_set(count, e < 0 ? MPI_UNDEFINED : (MPI_Count)e);
    return TERN_OK;
}

tern_status_t tern_dtype_elements_bytes(MPI_Datatype dt, MPI_Count count, size_t *bytes)
{
    /* count basic elements of dt's type map, whole copies of dt first: a
     * type that mixes basic types has them in the order of its map. */
    switch (tern_datatype_elements_bytes(dt, (unsigned long long)count, bytes)) {
    case 0:
        return TERN_OK;
    case -2:
        return tern_status_detail(TERN_ERR_COUNT,
                                  "count=%lld, but datatype 0x%x holds no basic elements",
                                  (long long)count, (unsigned)dt);
    case -3:
        return tern_status_detail(TERN_ERR_COUNT,
                                  "count=%lld basic elements of datatype 0x%x take more than "
                                  "2^63 bytes",
                                  (long long)count, (unsigned)dt);
    default:
        return tern_status_detail(TERN_ERR_TYPE, "datatype 0x%x is not a committed datatype",
                                  (unsigned)dt);
    }
}
