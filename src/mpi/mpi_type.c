/* Datatype entry points: constructors, commit/free, queries, pack/unpack
 * (native and external32), addresses, and the status counts that depend on
 * the type (Get_count, Get_elements). The engine is in src/core/datatype/. */
#include "mpi/mpi_errors.h"
#include "core/datatype/dtype_build.h"
#include "core/pt2pt/request.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Argument checks. */

/* Any existing type (predefined, or derived committed or not). */
static int check_type(const char *func, MPI_Datatype dt, const char *what)
{
    if (tern_datatype_is_predefined(dt) || tern_dtype_is_derived(dt))
        return MPI_SUCCESS;
    if (dt == MPI_DATATYPE_NULL)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, func, "%s is MPI_DATATYPE_NULL", what);
    return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, func, "%s 0x%x is not a datatype", what,
                          (unsigned)dt);
}

/* A type data can be moved with: predefined or committed. */
static int check_committed(const char *func, MPI_Comm comm, MPI_Datatype dt)
{
    if (tern_datatype_is_valid(dt))
        return MPI_SUCCESS;
    if (tern_dtype_is_derived(dt))
        return tern_mpi_error(comm, MPI_ERR_TYPE, func,
                              "datatype 0x%x is not committed (call MPI_Type_commit first)",
                              (unsigned)dt);
    return check_type(func, dt, "datatype");
}

static int check_new(const char *func, MPI_Datatype *newtype)
{
    if (!newtype)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "newtype is NULL");
    return MPI_SUCCESS;
}

static int check_count(const char *func, MPI_Count count, const char *what)
{
    if (count < 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, func, "%s=%lld is negative", what,
                              (long long)count);
    return MPI_SUCCESS;
}

static int check_blocklen(const char *func, MPI_Count blen, long long i)
{
    if (blen < 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                              "blocklength %lld (block %lld) is negative", (long long)blen, i);
    return MPI_SUCCESS;
}

static int check_array(const char *func, MPI_Count count, const void *a, const char *what)
{
    if (count > 0 && !a)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "%s is NULL", what);
    return MPI_SUCCESS;
}

static int build_result(const char *func, tern_status_t st)
{
    if (st == TERN_OK)
        return MPI_SUCCESS;
    return tern_mpi_status_error(MPI_COMM_NULL, st, func, "cannot create the datatype");
}

static MPI_Aint extent_of(MPI_Datatype dt)
{
    tern_dtype_info_t info;
    tern_dtype_info(dt, &info);
    return info.extent;
}

/* ------------------------------------------------------------------------ */
/* Constructors. */

static int vector_any(const char *func, MPI_Count count, MPI_Count blen, MPI_Aint stride_bytes,
                      MPI_Datatype old, MPI_Datatype *newtype, const tern_dtype_args_t *args)
{
    TERN_CHECK_INIT(func);
    int err;
    if ((err = check_count(func, count, "count")) || (err = check_blocklen(func, blen, 0)) ||
        (err = check_type(func, old, "oldtype")) || (err = check_new(func, newtype)))
        return err;
    return build_result(func, tern_dtype_build_vector((size_t)count, (size_t)blen, stride_bytes,
                                                      old, args, newtype));
}

TERN_PMPI_ALIAS(Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
{
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_CONTIGUOUS, .ni = 1, .ints = &count,
                           .nd = 1, .types = &old};
    if (count < 0)
        return check_count("MPI_Type_contiguous", count, "count");
    return vector_any("MPI_Type_contiguous", 1, count, 0, old, newtype, &a);
}

TERN_PMPI_ALIAS(Type_contiguous_c)
int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype old, MPI_Datatype *newtype)
{
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_CONTIGUOUS, .nc = 1, .counts = &count,
                           .nd = 1, .types = &old};
    if (count < 0)
        return check_count("MPI_Type_contiguous_c", count, "count");
    return vector_any("MPI_Type_contiguous_c", 1, count, 0, old, newtype, &a);
}

TERN_PMPI_ALIAS(Type_vector)
int PMPI_Type_vector(int count, int blen, int stride, MPI_Datatype old, MPI_Datatype *newtype)
{
    int ints[3] = {count, blen, stride};
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_VECTOR, .ni = 3, .ints = ints, .nd = 1,
                           .types = &old};
    MPI_Aint ext = tern_dtype_is_derived(old) || tern_datatype_is_predefined(old) ? extent_of(old) : 0;
    return vector_any("MPI_Type_vector", count, blen, (MPI_Aint)stride * ext, old, newtype, &a);
}

TERN_PMPI_ALIAS(Type_vector_c)
int PMPI_Type_vector_c(MPI_Count count, MPI_Count blen, MPI_Count stride, MPI_Datatype old,
                       MPI_Datatype *newtype)
{
    MPI_Count c[3] = {count, blen, stride};
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_VECTOR, .nc = 3, .counts = c, .nd = 1,
                           .types = &old};
    MPI_Aint ext = tern_dtype_is_derived(old) || tern_datatype_is_predefined(old) ? extent_of(old) : 0;
    return vector_any("MPI_Type_vector_c", count, blen, (MPI_Aint)stride * ext, old, newtype, &a);
}

TERN_PMPI_ALIAS(Type_create_hvector)
int PMPI_Type_create_hvector(int count, int blen, MPI_Aint stride, MPI_Datatype old,
                             MPI_Datatype *newtype)
{
    int ints[2] = {count, blen};
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_HVECTOR, .ni = 2, .ints = ints, .na = 1,
                           .aints = &stride, .nd = 1, .types = &old};
    return vector_any("MPI_Type_create_hvector", count, blen, stride, old, newtype, &a);
}

TERN_PMPI_ALIAS(Type_create_hvector_c)
int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blen, MPI_Count stride,
                               MPI_Datatype old, MPI_Datatype *newtype)
{
    MPI_Count c[3] = {count, blen, stride};
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_HVECTOR, .nc = 3, .counts = c, .nd = 1,
                           .types = &old};
    return vector_any("MPI_Type_create_hvector_c", count, blen, (MPI_Aint)stride, old, newtype,
                      &a);
}

/* An array argument as the caller gave it: int (the MPI-3 forms), MPI_Aint
 * (byte displacements) or MPI_Count (the large-count _c forms). */
typedef enum { ARR_INT, ARR_AINT, ARR_COUNT } arr_kind_t;
typedef struct {
    arr_kind_t kind;
    const void *p;
} arr_t;
#define ARR(kind, p) ((arr_t){(kind), (p)})

static MPI_Count arr_at(arr_t a, MPI_Count i)
{
    switch (a.kind) {
    case ARR_INT: return ((const int *)a.p)[i];
    case ARR_AINT: return ((const MPI_Aint *)a.p)[i];
    default: return ((const MPI_Count *)a.p)[i];
    }
}

/* Indexed family. One blocklength for all (blen0, the _block forms) or an
 * array of them (blens); displs in elements of the old type (scaled by its
 * extent) or in bytes. */
#define ONE_BLEN(blen0) ARR(ARR_COUNT, NULL), (blen0), 1
#define BLENS(kind, blens) ARR(kind, blens), 0, 0
static int blocks_any(const char *func, MPI_Count count, arr_t blens, MPI_Count blen0,
                      int one_blen, arr_t displs, int displs_in_elements,
                      const MPI_Datatype *types, int single_type, int pad, MPI_Datatype *newtype,
                      const tern_dtype_args_t *args)
{
    TERN_CHECK_INIT(func);
    int err;
    if ((err = check_count(func, count, "count")) || (err = check_new(func, newtype)) ||
        (err = check_array(func, count, types, "array_of_types")) ||
        (err = check_array(func, count, displs.p, "array_of_displacements")) ||
        (err = one_blen ? check_blocklen(func, blen0, 0)
                        : check_array(func, count, blens.p, "array_of_blocklengths")))
        return err;
    if (single_type && (err = check_type(func, types[0], "oldtype")))
        return err;
    for (MPI_Count i = 0; i < count; i++) {
        if (!single_type && (err = check_type(func, types[i], "array_of_types[i]")))
            return err;
        if (!one_blen && (err = check_blocklen(func, arr_at(blens, i), i)))
            return err;
    }
    if ((uint64_t)count > PTRDIFF_MAX / sizeof(MPI_Aint))
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_COUNT, func, "count %lld is too large",
                              (long long)count);
    size_t n = (size_t)count;
    size_t *bl = malloc((n ? n : 1) * sizeof *bl);
    MPI_Aint *d = malloc((n ? n : 1) * sizeof *d);
    if (!bl || !d) {
        free(bl);
        free(d);
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, func, "out of memory");
    }
    MPI_Aint ext = displs_in_elements ? extent_of(types[0]) : 1;
    for (size_t i = 0; i < n; i++) {
        bl[i] = (size_t)(one_blen ? blen0 : arr_at(blens, (MPI_Count)i));
        d[i] = (MPI_Aint)arr_at(displs, (MPI_Count)i) * ext;
    }
    tern_status_t st = tern_dtype_build_blocks(n, bl, d, types, single_type, pad, args, newtype);
    free(bl);
    free(d);
    return build_result(func, st);
}

/* Envelope integers: count, then the blocklengths, then int displacements. */
static int *pack_ints(int count, const int *blens, int nblens, const int *displs, int ndispls)
{
    int *ints = malloc((size_t)(1 + nblens + ndispls) * sizeof *ints);
    if (!ints)
        return NULL;
    ints[0] = count;
    if (nblens)
        memcpy(ints + 1, blens, (size_t)nblens * sizeof *ints);
    if (ndispls)
        memcpy(ints + 1 + nblens, displs, (size_t)ndispls * sizeof *ints);
    return ints;
}

#define NO_MEM(func) tern_mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, func, "out of memory")

TERN_PMPI_ALIAS(Type_indexed)
int PMPI_Type_indexed(int count, const int blens[], const int displs[], MPI_Datatype old,
                      MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_indexed";
    int n = count > 0 && blens && displs ? count : 0;
    int *ints = pack_ints(count, blens, n, displs, n);
    if (!ints)
        return NO_MEM(func);
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_INDEXED, .ni = 1 + 2 * n, .ints = ints,
                           .nd = 1, .types = &old};
    int err = blocks_any(func, count, BLENS(ARR_INT, blens), ARR(ARR_INT, displs), 1, &old, 1, 0,
                         newtype, &a);
    free(ints);
    return err;
}

TERN_PMPI_ALIAS(Type_create_hindexed)
int PMPI_Type_create_hindexed(int count, const int blens[], const MPI_Aint displs[],
                              MPI_Datatype old, MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_create_hindexed";
    int n = count > 0 && blens && displs ? count : 0;
    int *ints = pack_ints(count, blens, n, NULL, 0);
    if (!ints)
        return NO_MEM(func);
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_HINDEXED, .ni = 1 + n, .ints = ints,
                           .na = n, .aints = displs, .nd = 1, .types = &old};
    int err = blocks_any(func, count, BLENS(ARR_INT, blens), ARR(ARR_AINT, displs), 0, &old, 1,
                         0, newtype, &a);
    free(ints);
    return err;
}

TERN_PMPI_ALIAS(Type_create_indexed_block)
int PMPI_Type_create_indexed_block(int count, int blen, const int displs[], MPI_Datatype old,
                                   MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_create_indexed_block";
    int n = count > 0 && displs ? count : 0;
    int *ints = pack_ints(count, &blen, 1, displs, n);
    if (!ints)
        return NO_MEM(func);
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_INDEXED_BLOCK, .ni = 2 + n, .ints = ints,
                           .nd = 1, .types = &old};
    int err = blocks_any(func, count, ONE_BLEN(blen), ARR(ARR_INT, displs), 1, &old, 1,
                         0, newtype, &a);
    free(ints);
    return err;
}

TERN_PMPI_ALIAS(Type_create_hindexed_block)
int PMPI_Type_create_hindexed_block(int count, int blen, const MPI_Aint displs[],
                                    MPI_Datatype old, MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_create_hindexed_block";
    int ints[2] = {count, blen};
    int n = count > 0 && displs ? count : 0;
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_HINDEXED_BLOCK, .ni = 2, .ints = ints,
                           .na = n, .aints = displs, .nd = 1, .types = &old};
    return blocks_any(func, count, ONE_BLEN(blen), ARR(ARR_AINT, displs), 0, &old, 1, 0,
                      newtype, &a);
}

TERN_PMPI_ALIAS(Type_create_struct)
int PMPI_Type_create_struct(int count, const int blens[], const MPI_Aint displs[],
                            const MPI_Datatype types[], MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_create_struct";
    int n = count > 0 && blens && displs && types ? count : 0;
    int *ints = pack_ints(count, blens, n, NULL, 0);
    if (!ints)
        return NO_MEM(func);
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_STRUCT, .ni = 1 + n, .ints = ints, .na = n,
                           .aints = displs, .nd = n, .types = types};
    int err = blocks_any(func, count, BLENS(ARR_INT, blens), ARR(ARR_AINT, displs), 0, types, 0,
                         1, newtype, &a);
    free(ints);
    return err;
}

/* Envelope large counts of the indexed _c forms: count, then nb block
 * lengths, then nd displacements (MPI-4's layout for large counts). */
static MPI_Count *pack_counts(MPI_Count count, const MPI_Count *blens, MPI_Count nb,
                              const MPI_Count *displs, MPI_Count nd)
{
    MPI_Count *c = malloc((size_t)(1 + nb + nd) * sizeof *c);
    if (!c)
        return NULL;
    c[0] = count;
    if (nb)
        memcpy(c + 1, blens, (size_t)nb * sizeof *c);
    if (nd)
        memcpy(c + 1 + nb, displs, (size_t)nd * sizeof *c);
    return c;
}

TERN_PMPI_ALIAS(Type_indexed_c)
int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count blens[], const MPI_Count displs[],
                        MPI_Datatype old, MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_indexed_c";
    MPI_Count n = count > 0 && blens && displs ? count : 0;
    MPI_Count *c = pack_counts(count, blens, n, displs, n);
    if (!c)
        return NO_MEM(func);
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_INDEXED, .nc = (int)(1 + 2 * n), .counts = c,
                           .nd = 1, .types = &old};
    int err = blocks_any(func, count, BLENS(ARR_COUNT, blens), ARR(ARR_COUNT, displs), 1, &old,
                         1, 0, newtype, &a);
    free(c);
    return err;
}

TERN_PMPI_ALIAS(Type_create_hindexed_c)
int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count blens[],
                                const MPI_Count displs[], MPI_Datatype old,
                                MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_create_hindexed_c";
    MPI_Count n = count > 0 && blens && displs ? count : 0;
    MPI_Count *c = pack_counts(count, blens, n, displs, n);
    if (!c)
        return NO_MEM(func);
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_HINDEXED, .nc = (int)(1 + 2 * n),
                           .counts = c, .nd = 1, .types = &old};
    int err = blocks_any(func, count, BLENS(ARR_COUNT, blens), ARR(ARR_COUNT, displs), 0, &old,
                         1, 0, newtype, &a);
    free(c);
    return err;
}

TERN_PMPI_ALIAS(Type_create_indexed_block_c)
int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blen, const MPI_Count displs[],
                                     MPI_Datatype old, MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_create_indexed_block_c";
    MPI_Count n = count > 0 && displs ? count : 0;
    MPI_Count *c = pack_counts(count, &blen, 1, displs, n);
    if (!c)
        return NO_MEM(func);
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_INDEXED_BLOCK, .nc = (int)(2 + n),
                           .counts = c, .nd = 1, .types = &old};
    int err = blocks_any(func, count, ONE_BLEN(blen), ARR(ARR_COUNT, displs), 1,
                         &old, 1, 0, newtype, &a);
    free(c);
    return err;
}

TERN_PMPI_ALIAS(Type_create_hindexed_block_c)
int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blen, const MPI_Count displs[],
                                      MPI_Datatype old, MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_create_hindexed_block_c";
    MPI_Count n = count > 0 && displs ? count : 0;
    MPI_Count *c = pack_counts(count, &blen, 1, displs, n);
    if (!c)
        return NO_MEM(func);
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_HINDEXED_BLOCK, .nc = (int)(2 + n),
                           .counts = c, .nd = 1, .types = &old};
    int err = blocks_any(func, count, ONE_BLEN(blen), ARR(ARR_COUNT, displs), 0,
                         &old, 1, 0, newtype, &a);
    free(c);
    return err;
}

TERN_PMPI_ALIAS(Type_create_struct_c)
int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count blens[], const MPI_Count displs[],
                              const MPI_Datatype types[], MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_create_struct_c";
    MPI_Count n = count > 0 && blens && displs && types ? count : 0;
    MPI_Count *c = pack_counts(count, blens, n, displs, n);
    if (!c)
        return NO_MEM(func);
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_STRUCT, .nc = (int)(1 + 2 * n), .counts = c,
                           .nd = (int)n, .types = types};
    int err = blocks_any(func, count, BLENS(ARR_COUNT, blens), ARR(ARR_COUNT, displs), 0, types,
                         0, 1, newtype, &a);
    free(c);
    return err;
}

/* Subarray: sizes, subsizes and starts as int (MPI-3) or MPI_Count (_c);
 * the envelope keeps them as the caller gave them (the _c form's in the
 * large counts, with ndims and order as integers). */
static int subarray_any(const char *func, int ndims, arr_t sizes, arr_t subsizes, arr_t starts,
                        int order, MPI_Datatype old, MPI_Datatype *newtype)
{
    TERN_CHECK_INIT(func);
    int err;
    if (ndims <= 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_DIMS, func, "ndims=%d must be positive",
                              ndims);
    if ((err = check_array(func, ndims, sizes.p, "array_of_sizes")) ||
        (err = check_array(func, ndims, subsizes.p, "array_of_subsizes")) ||
        (err = check_array(func, ndims, starts.p, "array_of_starts")) ||
        (err = check_type(func, old, "oldtype")) || (err = check_new(func, newtype)))
        return err;
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                              "order=%d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    for (int d = 0; d < ndims; d++) {
        MPI_Count sz = arr_at(sizes, d), sub = arr_at(subsizes, d), st = arr_at(starts, d);
        if (sz <= 0 || sub <= 0 || sub > sz || st < 0 || st > sz - sub)
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                                  "dimension %d: size %lld, subsize %lld, start %lld do not fit "
                                  "(need 0 < subsize <= size and 0 <= start <= size - subsize)",
                                  d, (long long)sz, (long long)sub, (long long)st);
    }
    size_t gsize[ndims], sub[ndims], st[ndims];
    for (int d = 0; d < ndims; d++) {
        gsize[d] = (size_t)arr_at(sizes, d);
        sub[d] = (size_t)arr_at(subsizes, d);
        st[d] = (size_t)arr_at(starts, d);
    }
    int large = sizes.kind == ARR_COUNT;
    size_t nd = (size_t)ndims;
    int *ints = malloc((large ? 2 : 3 * nd + 2) * sizeof *ints);
    MPI_Count *counts = large ? malloc(3 * nd * sizeof *counts) : NULL;
    if (!ints || (large && !counts)) {
        free(ints);
        free(counts);
        return NO_MEM(func);
    }
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_SUBARRAY, .ints = ints, .nd = 1,
                           .types = &old};
    ints[0] = ndims;
    if (large) {
        memcpy(counts, sizes.p, nd * sizeof *counts);
        memcpy(counts + nd, subsizes.p, nd * sizeof *counts);
        memcpy(counts + 2 * nd, starts.p, nd * sizeof *counts);
        ints[1] = order;
        a.ni = 2;
        a.nc = 3 * ndims;
        a.counts = counts;
    } else {
        memcpy(ints + 1, sizes.p, nd * sizeof *ints);
        memcpy(ints + 1 + nd, subsizes.p, nd * sizeof *ints);
        memcpy(ints + 1 + 2 * nd, starts.p, nd * sizeof *ints);
        ints[1 + 3 * nd] = order;
        a.ni = 3 * ndims + 2;
    }
    tern_status_t s = tern_dtype_build_subarray(ndims, gsize, sub, st, order, old, &a, newtype);
    free(ints);
    free(counts);
    return build_result(func, s);
}

TERN_PMPI_ALIAS(Type_create_subarray)
int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                              const int starts[], int order, MPI_Datatype old,
                              MPI_Datatype *newtype)
{
    return subarray_any("MPI_Type_create_subarray", ndims, ARR(ARR_INT, sizes),
                        ARR(ARR_INT, subsizes), ARR(ARR_INT, starts), order, old, newtype);
}

TERN_PMPI_ALIAS(Type_create_subarray_c)
int PMPI_Type_create_subarray_c(int ndims, const MPI_Count sizes[], const MPI_Count subsizes[],
                                const MPI_Count starts[], int order, MPI_Datatype old,
                                MPI_Datatype *newtype)
{
    return subarray_any("MPI_Type_create_subarray_c", ndims, ARR(ARR_COUNT, sizes),
                        ARR(ARR_COUNT, subsizes), ARR(ARR_COUNT, starts), order, old, newtype);
}

/* Darray: gsizes as int (MPI-3) or MPI_Count (_c; the envelope then keeps
 * them in the large counts and the rest as integers). */
static int darray_any(const char *func, int size, int rank, int ndims, arr_t gsizes,
                      const int distribs[], const int dargs[], const int psizes[], int order,
                      MPI_Datatype old, MPI_Datatype *newtype)
{
    TERN_CHECK_INIT(func);
    int err;
    if (size <= 0 || rank < 0 || rank >= size)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                              "rank %d is not in a process grid of size %d", rank, size);
    if (ndims <= 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_DIMS, func, "ndims=%d must be positive",
                              ndims);
    if ((err = check_array(func, ndims, gsizes.p, "array_of_gsizes")) ||
        (err = check_array(func, ndims, distribs, "array_of_distribs")) ||
        (err = check_array(func, ndims, dargs, "array_of_dargs")) ||
        (err = check_array(func, ndims, psizes, "array_of_psizes")) ||
        (err = check_type(func, old, "oldtype")) || (err = check_new(func, newtype)))
        return err;
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                              "order=%d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    long prod = 1;
    for (int d = 0; d < ndims; d++) {
        long long g = arr_at(gsizes, d);
        int ok = g > 0 && psizes[d] > 0 &&
                 (distribs[d] == MPI_DISTRIBUTE_NONE ? psizes[d] == 1
                  : distribs[d] == MPI_DISTRIBUTE_BLOCK || distribs[d] == MPI_DISTRIBUTE_CYCLIC) &&
                 (dargs[d] == MPI_DISTRIBUTE_DFLT_DARG || dargs[d] > 0);
        if (ok && distribs[d] == MPI_DISTRIBUTE_BLOCK && dargs[d] != MPI_DISTRIBUTE_DFLT_DARG)
            ok = (long long)dargs[d] * psizes[d] >= g;
        if (!ok)
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                                  "dimension %d: gsize %lld, distrib %d, darg %d, psize %d are "
                                  "not a valid distribution", d, g, distribs[d], dargs[d],
                                  psizes[d]);
        prod *= psizes[d];
    }
    if (prod != size)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                              "the process grid has %ld processes, size is %d", prod, size);
    size_t gs[ndims];
    for (int d = 0; d < ndims; d++)
        gs[d] = (size_t)arr_at(gsizes, d);
    int large = gsizes.kind == ARR_COUNT;
    size_t nd = (size_t)ndims, ni = large ? 3 * nd + 4 : 4 * nd + 4;
    int *ints = malloc(ni * sizeof *ints);
    MPI_Count *counts = large ? malloc(nd * sizeof *counts) : NULL;
    tern_status_t s = TERN_ERR_NOMEM;
    if (ints && (!large || counts)) {
        /* size, rank, ndims, [gsizes], distribs, dargs, psizes, order */
        int *p = ints;
        *p++ = size;
        *p++ = rank;
        *p++ = ndims;
        if (large) {
            memcpy(counts, gsizes.p, nd * sizeof *counts);
        } else {
            memcpy(p, gsizes.p, nd * sizeof *ints);
            p += nd;
        }
        memcpy(p, distribs, nd * sizeof *ints);
        memcpy(p + nd, dargs, nd * sizeof *ints);
        memcpy(p + 2 * nd, psizes, nd * sizeof *ints);
        p[3 * nd] = order;
        tern_dtype_args_t a = {.combiner = MPI_COMBINER_DARRAY, .ni = (int)ni, .ints = ints,
                               .nc = large ? ndims : 0, .counts = counts, .nd = 1,
                               .types = &old};
        s = tern_dtype_build_darray(rank, ndims, gs, distribs, dargs, psizes, order, old, &a,
                                    newtype);
    }
    free(ints);
    free(counts);
    return build_result(func, s);
}

TERN_PMPI_ALIAS(Type_create_darray)
int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[],
                            const int distribs[], const int dargs[], const int psizes[],
                            int order, MPI_Datatype old, MPI_Datatype *newtype)
{
    return darray_any("MPI_Type_create_darray", size, rank, ndims, ARR(ARR_INT, gsizes),
                      distribs, dargs, psizes, order, old, newtype);
}

TERN_PMPI_ALIAS(Type_create_darray_c)
int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count gsizes[],
                              const int distribs[], const int dargs[], const int psizes[],
                              int order, MPI_Datatype old, MPI_Datatype *newtype)
{
    return darray_any("MPI_Type_create_darray_c", size, rank, ndims, ARR(ARR_COUNT, gsizes),
                      distribs, dargs, psizes, order, old, newtype);
}

static int resized_any(const char *func, MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                       MPI_Datatype *newtype, const tern_dtype_args_t *a)
{
    TERN_CHECK_INIT(func);
    int err;
    if ((err = check_type(func, old, "oldtype")) || (err = check_new(func, newtype)))
        return err;
    return build_result(func, tern_dtype_build_resized(old, lb, extent, a, newtype));
}

TERN_PMPI_ALIAS(Type_create_resized)
int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    MPI_Aint aints[2] = {lb, extent};
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_RESIZED, .na = 2, .aints = aints, .nd = 1,
                           .types = &old};
    return resized_any("MPI_Type_create_resized", old, lb, extent, newtype, &a);
}

TERN_PMPI_ALIAS(Type_create_resized_c)
int PMPI_Type_create_resized_c(MPI_Datatype old, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
{
    MPI_Count c[2] = {lb, extent};
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_RESIZED, .nc = 2, .counts = c, .nd = 1,
                           .types = &old};
    return resized_any("MPI_Type_create_resized_c", old, (MPI_Aint)lb, (MPI_Aint)extent,
                       newtype, &a);
}

TERN_PMPI_ALIAS(Type_dup)
int PMPI_Type_dup(MPI_Datatype old, MPI_Datatype *newtype)
{
    static const char *const func = "MPI_Type_dup";
    TERN_CHECK_INIT(func);
    int err;
    if ((err = check_type(func, old, "oldtype")) || (err = check_new(func, newtype)))
        return err;
    return build_result(func, tern_dtype_dup(old, newtype));
}

/* ------------------------------------------------------------------------ */
/* Commit, free, names. */

TERN_PMPI_ALIAS(Type_commit)
int PMPI_Type_commit(MPI_Datatype *dt)
{
    static const char *const func = "MPI_Type_commit";
    TERN_CHECK_INIT(func);
    if (!dt)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "datatype is NULL");
    int err = check_type(func, *dt, "datatype");
    if (err || tern_datatype_is_predefined(*dt))
        return err;
    return build_result(func, tern_dtype_commit(*dt));
}

TERN_PMPI_ALIAS(Type_free)
int PMPI_Type_free(MPI_Datatype *dt)
{
    static const char *const func = "MPI_Type_free";
    TERN_CHECK_INIT(func);
    if (!dt)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "datatype is NULL");
    int err = check_type(func, *dt, "datatype");
    if (err)
        return err;
    if (tern_datatype_is_predefined(*dt))
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, func,
                              "%s is predefined and cannot be freed",
                              tern_datatype_name(*dt));
    /* Pending operations and types built on it keep their own reference. */
    tern_datatype_release(*dt);
    *dt = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Type_set_name)
int PMPI_Type_set_name(MPI_Datatype dt, const char *name)
{
    static const char *const func = "MPI_Type_set_name";
    TERN_CHECK_INIT(func);
    int err = check_type(func, dt, "datatype");
    if (err)
        return err;
    if (!name)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "type_name is NULL");
    if (!tern_dtype_set_name(dt, name))
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, func,
                              "the name of predefined %s cannot change", tern_datatype_name(dt));
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Type_get_name)
int PMPI_Type_get_name(MPI_Datatype dt, char *name, int *resultlen)
{
    static const char *const func = "MPI_Type_get_name";
    TERN_CHECK_INIT(func);
    int err = check_type(func, dt, "datatype");
    if (err)
        return err;
    if (!name || !resultlen)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "%s is NULL",
                              !name ? "type_name" : "resultlen");
    const char *n = tern_datatype_name(dt);
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", n ? n : "");
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Envelope and contents. */

TERN_PMPI_ALIAS(Type_get_envelope)
int PMPI_Type_get_envelope(MPI_Datatype dt, int *ni, int *na, int *nd, int *combiner)
{
    static const char *const func = "MPI_Type_get_envelope";
    TERN_CHECK_INIT(func);
    int err = check_type(func, dt, "datatype");
    if (err)
        return err;
    if (!ni || !na || !nd || !combiner)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "an output argument is NULL");
    tern_dtype_args_t a;
    tern_dtype_envelope(dt, &a);
    /* Large-count constructors recorded MPI_Count values: an int-sized
     * envelope reports them as addresses (both are 64-bit here). */
    *ni = a.ni;
    *na = a.na + a.nc;
    *nd = a.nd;
    *combiner = a.combiner;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Type_get_contents)
int PMPI_Type_get_contents(MPI_Datatype dt, int max_ints, int max_addrs, int max_types,
                           int ints[], MPI_Aint addrs[], MPI_Datatype types[])
{
    static const char *const func = "MPI_Type_get_contents";
    TERN_CHECK_INIT(func);
    int err = check_type(func, dt, "datatype");
    if (err)
        return err;
    tern_dtype_args_t a;
    tern_dtype_envelope(dt, &a);
    if (a.combiner == MPI_COMBINER_NAMED)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, func,
                              "%s is predefined: it has no contents", tern_datatype_name(dt));
    if (max_ints < a.ni || max_addrs < a.na + a.nc || max_types < a.nd)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                              "arrays too small: need %d integers, %d addresses, %d datatypes",
                              a.ni, a.na + a.nc, a.nd);
    if ((a.ni && !ints) || (a.na + a.nc && !addrs) || (a.nd && !types))
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "an output array is NULL");
    if (a.ni)
        memcpy(ints, a.ints, (size_t)a.ni * sizeof *ints);
    for (int i = 0; i < a.na; i++)
        addrs[i] = a.aints[i];
    for (int i = 0; i < a.nc; i++)
        addrs[a.na + i] = (MPI_Aint)a.counts[i];
    for (int i = 0; i < a.nd; i++) {
        types[i] = a.types[i];
        /* The caller owns the derived handles it gets (MPI_Type_free). */
        tern_datatype_retain(types[i]);
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Size and extent. */

static int info_of(const char *func, MPI_Datatype dt, tern_dtype_info_t *info, const void *p1,
                   const void *p2)
{
    TERN_CHECK_INIT(func);
    int err = check_type(func, dt, "datatype");
    if (err)
        return err;
    if (!p1 || !p2)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "an output argument is NULL");
    tern_dtype_info(dt, info);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Type_size)
int PMPI_Type_size(MPI_Datatype dt, int *size)
{
    tern_dtype_info_t i;
    int err = info_of("MPI_Type_size", dt, &i, size, size);
    if (!err)
        *size = i.size > INT_MAX ? MPI_UNDEFINED : (int)i.size;
    return err;
}

TERN_PMPI_ALIAS(Type_size_x)
int PMPI_Type_size_x(MPI_Datatype dt, MPI_Count *size)
{
    tern_dtype_info_t i;
    int err = info_of("MPI_Type_size_x", dt, &i, size, size);
    if (!err)
        *size = (MPI_Count)i.size;
    return err;
}

TERN_PMPI_ALIAS(Type_size_c)
int PMPI_Type_size_c(MPI_Datatype dt, MPI_Count *size)
{
    tern_dtype_info_t i;
    int err = info_of("MPI_Type_size_c", dt, &i, size, size);
    if (!err)
        *size = (MPI_Count)i.size;
    return err;
}

TERN_PMPI_ALIAS(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
    tern_dtype_info_t i;
    int err = info_of("MPI_Type_get_extent", dt, &i, lb, extent);
    if (!err)
        *lb = i.lb, *extent = i.extent;
    return err;
}

#define EXTENT_X(Name, name_str, field_lb, field_ext)                                  \
    TERN_PMPI_ALIAS(Name)                                                              \
    int PMPI_##Name(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)                 \
    {                                                                                  \
        tern_dtype_info_t i;                                                           \
        int err = info_of(name_str, dt, &i, lb, extent);                               \
        if (!err)                                                                      \
            *lb = (MPI_Count)i.field_lb, *extent = (MPI_Count)i.field_ext;             \
        return err;                                                                    \
    }

EXTENT_X(Type_get_extent_x, "MPI_Type_get_extent_x", lb, extent)
EXTENT_X(Type_get_extent_c, "MPI_Type_get_extent_c", lb, extent)
EXTENT_X(Type_get_true_extent_x, "MPI_Type_get_true_extent_x", true_lb, true_extent)
EXTENT_X(Type_get_true_extent_c, "MPI_Type_get_true_extent_c", true_lb, true_extent)

TERN_PMPI_ALIAS(Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype dt, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    tern_dtype_info_t i;
    int err = info_of("MPI_Type_get_true_extent", dt, &i, true_lb, true_extent);
    if (!err)
        *true_lb = i.true_lb, *true_extent = i.true_extent;
    return err;
}

/* ------------------------------------------------------------------------ */
/* Addresses. */

TERN_PMPI_ALIAS(Get_address)
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    if (!address)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_address", "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Aint_add)
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

TERN_PMPI_ALIAS(Aint_diff)
MPI_Aint PMPI_Aint_diff(MPI_Aint a, MPI_Aint b)
{
    return (MPI_Aint)((uintptr_t)a - (uintptr_t)b);
}

/* ------------------------------------------------------------------------ */
/* Pack and unpack (native). Positions are byte offsets into the packed
 * buffer, advanced by what was packed. */

static int pack_any(const char *func, const void *inbuf, MPI_Count incount, MPI_Datatype dt,
                    void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    int err;
    if ((err = tern_check_comm(func, comm, &c)) || (err = check_count(func, incount, "incount")) ||
        (err = check_count(func, outsize, "outsize")) ||
        (err = check_committed(func, comm, dt)))
        return err;
    if (!position)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "position is NULL");
    size_t need = tern_datatype_packed_size(dt, (size_t)incount);
    if (*position < 0 || *position > outsize || (size_t)(outsize - *position) < need)
        return tern_mpi_error(comm, MPI_ERR_TRUNCATE, func,
                              "no room: %zu bytes to pack at position %lld of a %lld-byte buffer",
                              need, (long long)*position, (long long)outsize);
    if (need && !outbuf)
        return tern_mpi_error(comm, MPI_ERR_BUFFER, func, "outbuf is NULL");
    tern_status_t st = tern_datatype_pack(inbuf, (size_t)incount, dt, (char *)outbuf + *position);
    if (st != TERN_OK)
        return tern_mpi_status_error(comm, st, func, "pack failed");
    *position += (MPI_Count)need;
    return MPI_SUCCESS;
}

static int unpack_any(const char *func, const void *inbuf, MPI_Count insize,
                      MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype dt,
                      MPI_Comm comm)
{
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    int err;
    if ((err = tern_check_comm(func, comm, &c)) ||
        (err = check_count(func, outcount, "outcount")) ||
        (err = check_count(func, insize, "insize")) || (err = check_committed(func, comm, dt)))
        return err;
    if (!position)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "position is NULL");
    size_t need = tern_datatype_packed_size(dt, (size_t)outcount);
    if (*position < 0 || *position > insize || (size_t)(insize - *position) < need)
        return tern_mpi_error(comm, MPI_ERR_TRUNCATE, func,
                              "%zu bytes to unpack at position %lld of a %lld-byte buffer", need,
                              (long long)*position, (long long)insize);
    if (need && !inbuf)
        return tern_mpi_error(comm, MPI_ERR_BUFFER, func, "inbuf is NULL");
    tern_status_t st = tern_datatype_unpack((const char *)inbuf + *position, need, outbuf,
                                            (size_t)outcount, dt);
    if (st != TERN_OK)
        return tern_mpi_status_error(comm, st, func, "unpack failed");
    *position += (MPI_Count)need;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Pack)
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    if (!position)
        return tern_mpi_error(comm, MPI_ERR_ARG, "MPI_Pack", "position is NULL");
    MPI_Count pos = *position;
    int err = pack_any("MPI_Pack", inbuf, incount, dt, outbuf, outsize, &pos, comm);
    if (!err)
        *position = (int)pos;
    return err;
}

TERN_PMPI_ALIAS(Pack_c)
int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype dt, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    return pack_any("MPI_Pack_c", inbuf, incount, dt, outbuf, outsize, position, comm);
}

TERN_PMPI_ALIAS(Unpack)
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype dt, MPI_Comm comm)
{
    if (!position)
        return tern_mpi_error(comm, MPI_ERR_ARG, "MPI_Unpack", "position is NULL");
    MPI_Count pos = *position;
    int err = unpack_any("MPI_Unpack", inbuf, insize, &pos, outbuf, outcount, dt, comm);
    if (!err)
        *position = (int)pos;
    return err;
}

TERN_PMPI_ALIAS(Unpack_c)
int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype dt, MPI_Comm comm)
{
    return unpack_any("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, dt, comm);
}

static int pack_size_any(const char *func, MPI_Count incount, MPI_Datatype dt, MPI_Comm comm,
                         MPI_Count *size)
{
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    int err;
    if ((err = tern_check_comm(func, comm, &c)) || (err = check_count(func, incount, "incount")) ||
        (err = check_committed(func, comm, dt)))
        return err;
    if (!size)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "size is NULL");
    *size = (MPI_Count)tern_datatype_packed_size(dt, (size_t)incount);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Pack_size)
int PMPI_Pack_size(int incount, MPI_Datatype dt, MPI_Comm comm, int *size)
{
    MPI_Count s;
    int err = pack_size_any("MPI_Pack_size", incount, dt, comm, size ? &s : NULL);
    if (!err)
        *size = s > INT_MAX ? MPI_UNDEFINED : (int)s;
    return err;
}

TERN_PMPI_ALIAS(Pack_size_c)
int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype dt, MPI_Comm comm, MPI_Count *size)
{
    return pack_size_any("MPI_Pack_size_c", incount, dt, comm, size);
}

/* ------------------------------------------------------------------------ */
/* external32. */

static int check_datarep(const char *func, const char *datarep)
{
    if (!datarep || strcmp(datarep, "external32") != 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_DATAREP, func,
                              "data representation \"%s\" is not supported (only \"external32\")",
                              datarep ? datarep : "(null)");
    return MPI_SUCCESS;
}

static int ext32_size(const char *func, MPI_Datatype dt, size_t count, size_t *bytes)
{
    tern_status_t st = tern_dtype_ext32_size(dt, count, bytes);
    if (st == TERN_ERR_NOT_SUPPORTED)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_CONVERSION, func,
                              "datatype 0x%x holds a type with no external32 form here "
                              "(long double)", (unsigned)dt);
    return st == TERN_OK ? MPI_SUCCESS : tern_mpi_status_error(MPI_COMM_NULL, st, func, "failed");
}

static int pack_external_size_any(const char *func, const char *datarep, MPI_Count incount,
                                  MPI_Datatype dt, MPI_Count *size)
{
    TERN_CHECK_INIT(func);
    int err;
    size_t bytes;
    if ((err = check_datarep(func, datarep)) || (err = check_count(func, incount, "incount")) ||
        (err = check_committed(func, MPI_COMM_NULL, dt)))
        return err;
    if (!size)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "size is NULL");
    if ((err = ext32_size(func, dt, (size_t)incount, &bytes)))
        return err;
    *size = (MPI_Count)bytes;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Pack_external_size)
int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype dt, MPI_Aint *size)
{
    MPI_Count s;
    int err = pack_external_size_any("MPI_Pack_external_size", datarep, incount, dt,
                                     size ? &s : NULL);
    if (!err)
        *size = (MPI_Aint)s;
    return err;
}

TERN_PMPI_ALIAS(Pack_external_size_c)
int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype dt,
                              MPI_Count *size)
{
    return pack_external_size_any("MPI_Pack_external_size_c", datarep, incount, dt, size);
}

static int pack_external_any(const char *func, const char *datarep, const void *inbuf,
                             MPI_Count incount, MPI_Datatype dt, void *outbuf, MPI_Count outsize,
                             MPI_Count *position)
{
    TERN_CHECK_INIT(func);
    int err;
    size_t need;
    if ((err = check_datarep(func, datarep)) || (err = check_count(func, incount, "incount")) ||
        (err = check_committed(func, MPI_COMM_NULL, dt)))
        return err;
    if (!position)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "position is NULL");
    if ((err = ext32_size(func, dt, (size_t)incount, &need)))
        return err;
    if (*position < 0 || *position > outsize || (size_t)(outsize - *position) < need)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_TRUNCATE, func,
                              "no room: %zu bytes to pack at position %lld of a %lld-byte buffer",
                              need, (long long)*position, (long long)outsize);
    tern_status_t st = tern_dtype_ext32_pack(inbuf, (size_t)incount, dt, (char *)outbuf + *position);
    if (st == TERN_ERR_TRUNCATE)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_CONVERSION, func,
                              "a long value does not fit the 4 bytes of external32");
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_NULL, st, func, "pack failed");
    *position += (MPI_Count)need;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Pack_external)
int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype dt,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    static const char *const func = "MPI_Pack_external";
    if (!position)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "position is NULL");
    MPI_Count pos = *position;
    int err = pack_external_any(func, datarep, inbuf, incount, dt, outbuf, outsize, &pos);
    if (!err)
        *position = (MPI_Aint)pos;
    return err;
}

TERN_PMPI_ALIAS(Pack_external_c)
int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                         MPI_Datatype dt, void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    return pack_external_any("MPI_Pack_external_c", datarep, inbuf, incount, dt, outbuf, outsize,
                             position);
}

static int unpack_external_any(const char *func, const char *datarep, const void *inbuf,
                               MPI_Count insize, MPI_Count *position, void *outbuf,
                               MPI_Count outcount, MPI_Datatype dt)
{
    TERN_CHECK_INIT(func);
    int err;
    size_t need;
    if ((err = check_datarep(func, datarep)) || (err = check_count(func, outcount, "outcount")) ||
        (err = check_committed(func, MPI_COMM_NULL, dt)))
        return err;
    if (!position)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "position is NULL");
    if ((err = ext32_size(func, dt, (size_t)outcount, &need)))
        return err;
    if (*position < 0 || *position > insize || (size_t)(insize - *position) < need)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_TRUNCATE, func,
                              "%zu bytes to unpack at position %lld of a %lld-byte buffer", need,
                              (long long)*position, (long long)insize);
    tern_status_t st =
        tern_dtype_ext32_unpack((const char *)inbuf + *position, outbuf, (size_t)outcount, dt);
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_NULL, st, func, "unpack failed");
    *position += (MPI_Count)need;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Unpack_external)
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype dt)
{
    static const char *const func = "MPI_Unpack_external";
    if (!position)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "position is NULL");
    MPI_Count pos = *position;
    int err = unpack_external_any(func, datarep, inbuf, insize, &pos, outbuf, outcount, dt);
    if (!err)
        *position = (MPI_Aint)pos;
    return err;
}

TERN_PMPI_ALIAS(Unpack_external_c)
int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount, MPI_Datatype dt)
{
    return unpack_external_any("MPI_Unpack_external_c", datarep, inbuf, insize, position, outbuf,
                               outcount, dt);
}

/* ------------------------------------------------------------------------ */
/* Counts in a status: the status holds bytes of the packed stream. */

static int status_count(const char *func, const MPI_Status *status, MPI_Datatype dt,
                        const void *out, int elements, MPI_Count *n)
{
    TERN_CHECK_INIT(func);
    if (!status || status == MPI_STATUS_IGNORE)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                              "status is NULL or MPI_STATUS_IGNORE");
    if (!out)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "count is NULL");
    int err = check_committed(func, MPI_COMM_NULL, dt);
    if (err)
        return err;
    size_t bytes = tern_status_bytes(status);
    size_t size = (size_t)tern_datatype_size(dt);
    if (!elements) {
        /* Whole elements of dt. */
        if (size == 0)
            *n = 0;
        else
            *n = bytes % size ? MPI_UNDEFINED : (MPI_Count)(bytes / size);
        return MPI_SUCCESS;
    }
    /* A predefined type ending inside an element has no count (as in
     * MPICH); a derived one counts the whole basic elements it holds. */
    if (tern_datatype_is_predefined(dt) && size && bytes % size) {
        *n = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    long long e = tern_datatype_elements(dt, bytes);
    *n = e < 0 ? MPI_UNDEFINED : (MPI_Count)e;
    return MPI_SUCCESS;
}

#define INT_COUNT(v) ((v) > INT_MAX ? MPI_UNDEFINED : (int)(v))

TERN_PMPI_ALIAS(Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    MPI_Count n = 0;
    int err = status_count("MPI_Get_count", status, dt, count, 0, &n);
    if (!err)
        *count = INT_COUNT(n);
    return err;
}

TERN_PMPI_ALIAS(Get_count_c)
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
    return status_count("MPI_Get_count_c", status, dt, count, 0, count);
}

TERN_PMPI_ALIAS(Get_elements)
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    MPI_Count n = 0;
    int err = status_count("MPI_Get_elements", status, dt, count, 1, &n);
    if (!err)
        *count = INT_COUNT(n);
    return err;
}

TERN_PMPI_ALIAS(Get_elements_x)
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
    return status_count("MPI_Get_elements_x", status, dt, count, 1, count);
}

TERN_PMPI_ALIAS(Get_elements_c)
int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
    return status_count("MPI_Get_elements_c", status, dt, count, 1, count);
}

TERN_PMPI_ALIAS(Status_set_elements)
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype dt, int count)
{
    static const char *const func = "MPI_Status_set_elements";
    TERN_CHECK_INIT(func);
    int err = check_committed(func, MPI_COMM_NULL, dt);
    if (err)
        return err;
    if (!status || status == MPI_STATUS_IGNORE || count < 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "status is NULL or count < 0");
    /* count basic elements: of dt itself when predefined, else of the one
     * basic type dt is made of. */
    MPI_Datatype basic = tern_datatype_is_predefined(dt) ? dt : tern_datatype_basic(dt);
    if (basic == MPI_DATATYPE_NULL)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, func,
                              "datatype 0x%x mixes basic types: elements have no single size",
                              (unsigned)dt);
    int cancelled = status->count_hi_and_cancelled & 1;
    tern_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR,
                    (size_t)tern_datatype_size(basic) * (size_t)count, cancelled);
    return MPI_SUCCESS;
}
