/* Predefined reduction kernels and user-defined operations. */
#include "core/datatype/op.h"
#include "core/datatype/datatype.h"
#include "core/runtime/handle_table.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Predefined ops are 0x580000II, II = 1..14 in include/mpi.h order. */
enum { OP_MAX = 1, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_BAND, OP_LOR, OP_BOR, OP_LXOR, OP_BXOR,
       OP_MINLOC, OP_MAXLOC, OP_REPLACE, OP_NO_OP, OP_N_PREDEFINED = OP_NO_OP };

static const char *const op_names[] = {
    "", "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND", "MPI_LOR",
    "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};

/* User ops: a table indexed by the handle's low bits. */
typedef struct {
    MPI_User_function *fn;      /* MPI_Op_create's, or */
    MPI_User_function_c *fn_c;  /* MPI_Op_create_c's (MPI_Count lengths) */
    tern_op_invoker_fn *invoke; /* NULL: fn is called directly */
    int commute;
    int refs;          /* the handle's, plus pending collectives' */
    int handle_freed;  /* MPI_Op_free called: the handle is invalid */
} user_op_t;
static tern_handle_table_t user_ops = TERN_HANDLE_TABLE(TERN_KIND_OP, 16);

static int predefined_index(MPI_Op op)
{
    uint32_t h = (uint32_t)op;
    if ((h & 0xffffff00u) != (uint32_t)(TERN_HANDLE_PREDEFINED | TERN_KIND_OP))
        return -1;
    unsigned i = h & 0xffu;
    return i >= 1 && i <= OP_N_PREDEFINED ? (int)i : -1;
}

/* The op object, as long as something holds it (the handle may be freed
 * while a nonblocking collective still reduces with it). */
static user_op_t *user_op(MPI_Op op)
{
    return tern_handle_get(&user_ops, op);
}

/* Drops one reference; the last one frees the op and its handle. */
static void user_op_unref(MPI_Op op, user_op_t *u)
{
    if (--u->refs == 0) {
        tern_handle_release(&user_ops, op);
        free(u);
    }
}

int tern_op_is_predefined(MPI_Op op) { return predefined_index(op) > 0; }
int tern_op_is_valid(MPI_Op op)
{
    if (predefined_index(op) > 0) /* no handle-table lookup on the reductions' path */
        return 1;
    user_op_t *u = user_op(op);
    return u && !u->handle_freed;
}

void tern_op_retain(MPI_Op op)
{
    user_op_t *u = user_op(op);
    if (u)
        u->refs++;
}

void tern_op_release(MPI_Op op)
{
    user_op_t *u = user_op(op);
    if (u)
        user_op_unref(op, u);
}

int tern_op_is_commutative(MPI_Op op)
{
    user_op_t *u = user_op(op);
    return u ? u->commute : 1;
}

const char *tern_op_name(MPI_Op op)
{
    int i = predefined_index(op);
    if (i > 0)
        return op_names[i];
    return user_op(op) ? "user-defined op" : "invalid op";
}

/* ---- kernels ---------------------------------------------------------- */

typedef void (*kernel_fn)(const void *in, void *inout, size_t n);

/* Element-wise kernel; unaligned-safe is not needed: packed data of one
 * basic type keeps the type's alignment when the buffer is malloc'ed or
 * the user's. */
#define KERNEL(name, T, expr)                                                  \
    static void name(const void *in_, void *inout_, size_t n)                  \
    {                                                                          \
        const T *a = in_;                                                      \
        T *b = inout_;                                                         \
        for (size_t i = 0; i < n; i++)                                         \
            b[i] = (expr);                                                     \
    }

#define K_MAX(T, s) KERNEL(max_##s, T, a[i] > b[i] ? a[i] : b[i])
#define K_MIN(T, s) KERNEL(min_##s, T, a[i] < b[i] ? a[i] : b[i])
#define K_SUM(T, s) KERNEL(sum_##s, T, a[i] + b[i])
#define K_PROD(T, s) KERNEL(prod_##s, T, a[i] * b[i])
#define K_LAND(T, s) KERNEL(land_##s, T, (T)((a[i] != 0) && (b[i] != 0)))
#define K_LOR(T, s) KERNEL(lor_##s, T, (T)((a[i] != 0) || (b[i] != 0)))
#define K_LXOR(T, s) KERNEL(lxor_##s, T, (T)((a[i] != 0) != (b[i] != 0)))
#define K_BAND(T, s) KERNEL(band_##s, T, (T)(a[i] & b[i]))
#define K_BOR(T, s) KERNEL(bor_##s, T, (T)(a[i] | b[i]))
#define K_BXOR(T, s) KERNEL(bxor_##s, T, (T)(a[i] ^ b[i]))

/* Integer sums and products wrap (two's complement) instead of being
 * undefined on overflow: compute them in unsigned long long. */
#define K_ISUM(T, s) KERNEL(sum_##s, T, (T)((unsigned long long)a[i] + (unsigned long long)b[i]))
#define K_IPROD(T, s) KERNEL(prod_##s, T, (T)((unsigned long long)a[i] * (unsigned long long)b[i]))

/* C integers: every op but MINLOC/MAXLOC. */
#define INT_KERNELS(T, s)                                                      \
    K_MAX(T, s) K_MIN(T, s) K_ISUM(T, s) K_IPROD(T, s) K_LAND(T, s) K_LOR(T, s) \
        K_LXOR(T, s) K_BAND(T, s) K_BOR(T, s) K_BXOR(T, s)
#define FLOAT_KERNELS(T, s) K_MAX(T, s) K_MIN(T, s) K_SUM(T, s) K_PROD(T, s)
#define COMPLEX_KERNELS(T, s) K_SUM(T, s) K_PROD(T, s)
#define LOGICAL_KERNELS(T, s) K_LAND(T, s) K_LOR(T, s) K_LXOR(T, s)

/* MPI_CHAR is text to MPI, but MPICH and Open MPI reduce it as the C
 * integer type char (signed or not as the compiler has it), and programs
 * (the OSU benchmarks) rely on it. */
INT_KERNELS(char, char)
INT_KERNELS(signed char, schar)
INT_KERNELS(unsigned char, uchar)
INT_KERNELS(short, short)
INT_KERNELS(unsigned short, ushort)
INT_KERNELS(int, int)
INT_KERNELS(unsigned, uint)
INT_KERNELS(long, long)
INT_KERNELS(unsigned long, ulong)
INT_KERNELS(long long, llong)
INT_KERNELS(unsigned long long, ullong)
FLOAT_KERNELS(float, float)
FLOAT_KERNELS(double, double)
FLOAT_KERNELS(long double, ldouble)
COMPLEX_KERNELS(float _Complex, cfloat)
COMPLEX_KERNELS(double _Complex, cdouble)
COMPLEX_KERNELS(long double _Complex, cldouble)
LOGICAL_KERNELS(bool, cbool)
K_BAND(unsigned char, byte)
K_BOR(unsigned char, byte)
K_BXOR(unsigned char, byte)

/* MINLOC/MAXLOC on packed pairs (value, then index; no padding, so fields
 * may be unaligned: copy through locals). Ties keep the smaller index. */
#define LOC_KERNEL(name, V, I, cmp)                                            \
    static void name(const void *in_, void *inout_, size_t n)                  \
    {                                                                          \
        const char *a = in_;                                                   \
        char *b = inout_;                                                      \
        const size_t esz = sizeof(V) + sizeof(I);                              \
        for (size_t i = 0; i < n; i++, a += esz, b += esz) {                   \
            V av, bv;                                                          \
            I ai, bi;                                                          \
            memcpy(&av, a, sizeof av);                                         \
            memcpy(&bv, b, sizeof bv);                                         \
            memcpy(&ai, a + sizeof(V), sizeof ai);                             \
            memcpy(&bi, b + sizeof(V), sizeof bi);                             \
            if (av cmp bv || (av == bv && ai < bi))                            \
                memcpy(b, a, esz);                                             \
        }                                                                      \
    }
#define LOC_KERNELS(V, I, s) LOC_KERNEL(minloc_##s, V, I, <) LOC_KERNEL(maxloc_##s, V, I, >)
LOC_KERNELS(float, int, float_int)
LOC_KERNELS(double, int, double_int)
LOC_KERNELS(long, int, long_int)
LOC_KERNELS(int, int, int_int)
LOC_KERNELS(short, int, short_int)
LOC_KERNELS(long double, int, ldouble_int)
LOC_KERNELS(float, float, float_float)
LOC_KERNELS(double, double, double_double)

/* The kernels of one type, by op index; NULL where MPI forbids the pair. */
typedef struct {
    kernel_fn f[OP_N_PREDEFINED + 1];
} kernels_t;

#define INT_ROW(s)                                                             \
    {{NULL, max_##s, min_##s, sum_##s, prod_##s, land_##s, band_##s, lor_##s, bor_##s,        \
      lxor_##s, bxor_##s, NULL, NULL, NULL, NULL}}
#define FLOAT_ROW(s) {{NULL, max_##s, min_##s, sum_##s, prod_##s}}
#define COMPLEX_ROW(s) {{NULL, NULL, NULL, sum_##s, prod_##s}}
#define LOGICAL_ROW(s)                                                         \
    {{NULL, NULL, NULL, NULL, NULL, land_##s, NULL, lor_##s, NULL, lxor_##s}}
#define BYTE_ROW {{NULL, NULL, NULL, NULL, NULL, NULL, band_byte, NULL, bor_byte, NULL, bxor_byte}}
#define LOC_ROW(s)                                                             \
    {{NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, minloc_##s, maxloc_##s}}

static const kernels_t k_char = INT_ROW(char), k_schar = INT_ROW(schar), k_uchar = INT_ROW(uchar),
                       k_short = INT_ROW(short), k_ushort = INT_ROW(ushort), k_int = INT_ROW(int),
                       k_uint = INT_ROW(uint), k_long = INT_ROW(long), k_ulong = INT_ROW(ulong),
                       k_llong = INT_ROW(llong), k_ullong = INT_ROW(ullong),
                       k_float = FLOAT_ROW(float), k_double = FLOAT_ROW(double),
                       k_ldouble = FLOAT_ROW(ldouble), k_cfloat = COMPLEX_ROW(cfloat),
                       k_cdouble = COMPLEX_ROW(cdouble), k_cldouble = COMPLEX_ROW(cldouble),
                       k_bool = LOGICAL_ROW(cbool), k_logical = LOGICAL_ROW(int),
                       k_byte = BYTE_ROW, k_float_int = LOC_ROW(float_int),
                       k_double_int = LOC_ROW(double_int), k_long_int = LOC_ROW(long_int),
                       k_int_int = LOC_ROW(int_int), k_short_int = LOC_ROW(short_int),
                       k_ldouble_int = LOC_ROW(ldouble_int), k_float_float = LOC_ROW(float_float),
                       k_double_double = LOC_ROW(double_double);

_Static_assert(sizeof(intptr_t) == sizeof(long) && sizeof(MPI_Offset) == sizeof(long long),
               "MPI_AINT is long and MPI_OFFSET/MPI_COUNT long long on this ABI");
_Static_assert(sizeof(bool) == 1, "MPI_C_BOOL and MPI_CXX_BOOL are one byte");

static const kernels_t *kernels_of(MPI_Datatype dt)
{
    switch (dt) {
    case MPI_CHAR: return &k_char;
    case MPI_SIGNED_CHAR: case MPI_INT8_T: case MPI_INTEGER1: return &k_schar;
    case MPI_UNSIGNED_CHAR: case MPI_UINT8_T: return &k_uchar;
    case MPI_SHORT: case MPI_INT16_T: case MPI_INTEGER2: return &k_short;
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: return &k_ushort;
    case MPI_INT: case MPI_INT32_T: case MPI_INTEGER: case MPI_INTEGER4: return &k_int;
    case MPI_UNSIGNED: case MPI_UINT32_T: return &k_uint;
    case MPI_LONG: case MPI_AINT: return &k_long;
    case MPI_UNSIGNED_LONG: return &k_ulong;
    case MPI_LONG_LONG_INT: case MPI_INT64_T: case MPI_INTEGER8: case MPI_OFFSET: case MPI_COUNT: return &k_llong;
    case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: return &k_ullong;
    case MPI_FLOAT: case MPI_REAL: case MPI_REAL4: return &k_float;
    case MPI_DOUBLE: case MPI_DOUBLE_PRECISION: case MPI_REAL8: return &k_double;
    case MPI_LONG_DOUBLE: return &k_ldouble;
    case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX: case MPI_COMPLEX:
    case MPI_COMPLEX8: return &k_cfloat;
    case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16: return &k_cdouble;
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX: return &k_cldouble;
    case MPI_C_BOOL: case MPI_CXX_BOOL: return &k_bool;
    case MPI_LOGICAL: return &k_logical;
    case MPI_BYTE: return &k_byte;
    case MPI_FLOAT_INT: return &k_float_int;
    case MPI_DOUBLE_INT: return &k_double_int;
    case MPI_LONG_INT: return &k_long_int;
    case MPI_2INT: case MPI_2INTEGER: return &k_int_int;
    case MPI_SHORT_INT: return &k_short_int;
    case MPI_LONG_DOUBLE_INT: return &k_ldouble_int;
    case MPI_2REAL: return &k_float_float;
    case MPI_2DOUBLE_PRECISION: return &k_double_double;
    default: return NULL;
    }
}

/* The kernel of a predefined op on dt's basic type (dt itself when
 * predefined), or NULL. */
static kernel_fn kernel_of_basic(MPI_Op op, MPI_Datatype basic)
{
    int i = predefined_index(op);
    const kernels_t *k = basic == MPI_DATATYPE_NULL ? NULL : kernels_of(basic);
    return i > 0 && k ? k->f[i] : NULL;
}

static kernel_fn kernel(MPI_Op op, MPI_Datatype dt)
{
    return kernel_of_basic(op, tern_datatype_basic(dt));
}

int tern_op_allowed(MPI_Op op, MPI_Datatype dt)
{
    if (predefined_index(op) > 0) /* no handle-table lookup for a predefined op */
        return kernel(op, dt) != NULL;
    return user_op(op) != NULL;
}

/* Calls the user's function on len elements: an MPI_Count length for
 * MPI_Op_create_c's, else an int one, so very long vectors go in slices of
 * INT_MAX elements. */
static void call_user(user_op_t *u, const void *in, void *inout, size_t count, size_t esz,
                      MPI_Datatype *d)
{
    if (u->fn_c) {
        MPI_Count len = (MPI_Count)count;
        u->fn_c((void *)(uintptr_t)in, inout, &len, d);
        return;
    }
    while (count) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        if (u->invoke)
            u->invoke(in, inout, len, *d, u->fn);
        else
            u->fn((void *)(uintptr_t)in, inout, &len, d);
        in = (const char *)in + (size_t)len * esz;
        inout = (char *)inout + (size_t)len * esz;
        count -= (size_t)len;
    }
}

/* A user function sees the user's layout: reduce contiguous data in place,
 * otherwise unpack both operands, call it, pack the result. */
static tern_status_t apply_user(user_op_t *u, MPI_Datatype dt, const void *in, void *inout,
                                size_t count)
{
    size_t esz = tern_datatype_packed_size(dt, 1);
    MPI_Datatype d = dt;
    if (tern_datatype_is_contig(dt)) {
        MPI_Aint lb = tern_datatype_true_lb(dt);
        call_user(u, (const char *)in - lb, (char *)inout - lb, count, esz, &d);
        return TERN_OK;
    }
    size_t ext = (size_t)tern_datatype_extent(dt);
    size_t chunk = count < 4096 ? count : 4096;
    char *a = malloc(chunk * ext), *b = malloc(chunk * ext);
    if (!a || !b) {
        free(a);
        free(b);
        return TERN_ERR_NOMEM;
    }
    MPI_Aint lb = tern_datatype_true_lb(dt);
    tern_status_t st = TERN_OK;
    while (count && st == TERN_OK) {
        size_t n = count < chunk ? count : chunk;
        memset(a, 0, n * ext);
        memset(b, 0, n * ext);
        st = tern_datatype_unpack(in, n * esz, a - lb, n, dt);
        if (st == TERN_OK)
            st = tern_datatype_unpack(inout, n * esz, b - lb, n, dt);
        if (st == TERN_OK) {
            call_user(u, a - lb, b - lb, n, esz, &d);
            st = tern_datatype_pack(b - lb, n, dt, inout);
        }
        in = (const char *)in + n * esz;
        inout = (char *)inout + n * esz;
        count -= n;
    }
    free(a);
    free(b);
    return st;
}

tern_status_t tern_op_apply(MPI_Op op, MPI_Datatype dt, const void *in, void *inout, size_t count)
{
    if (count == 0)
        return TERN_OK;
    user_op_t *u = user_op(op);
    if (u)
        return apply_user(u, dt, in, inout, count);
    MPI_Datatype basic = tern_datatype_basic(dt);
    kernel_fn f = kernel_of_basic(op, basic);
    if (!f)
        return TERN_ERR_ARG;
    /* Derived types reduce as their basic elements (a predefined type is
     * its own basic type: no sizes to look up on the collectives' path). */
    size_t n = basic == dt ? count
                           : count * tern_datatype_packed_size(dt, 1) /
                                 tern_datatype_packed_size(basic, 1);
    f(in, inout, n);
    return TERN_OK;
}

tern_status_t tern_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute,
                             MPI_Op *op_p)
{
    user_op_t *u = malloc(sizeof *u);
    if (!u)
        return TERN_ERR_NOMEM;
    *u = (user_op_t){fn, fn_c, NULL, commute ? 1 : 0, 1, 0};
    tern_status_t st = tern_handle_new(&user_ops, u, op_p);
    if (st != TERN_OK)
        free(u);
    return st;
}

tern_status_t tern_op_free(MPI_Op *op_p)
{
    MPI_Op op = *op_p;
    if (tern_op_is_predefined(op))
        return tern_status_detail(TERN_ERR_OP, "%s is predefined and cannot be freed",
                                  tern_op_name(op));
    user_op_t *u = user_op(op);
    if (!u || u->handle_freed)
        return tern_status_detail(TERN_ERR_OP, "invalid op handle 0x%x", (unsigned)op);
    u->handle_freed = 1;
    user_op_unref(op, u);
    *op_p = MPI_OP_NULL;
    return TERN_OK;
}

int tern_op_set_invoker(MPI_Op op, tern_op_invoker_fn *invoke)
{
    user_op_t *u = user_op(op);
    if (!u || !u->fn)
        return -1;
    u->invoke = invoke;
    return 0;
}

tern_status_t tern_op_commutative(MPI_Op op, int *commute)
{
    *commute = tern_op_is_commutative(op);
    return TERN_OK;
}

/* The kernels work on packed data: non-contiguous types are packed,
 * reduced and unpacked. */
tern_status_t tern_op_reduce_local(const void *inbuf, void *inoutbuf, size_t count,
                                   MPI_Datatype dt, MPI_Op op)
{
    if (count == 0)
        return TERN_OK;
    if (tern_datatype_is_contig(dt)) {
        MPI_Aint lb = tern_datatype_true_lb(dt);
        return tern_op_apply(op, dt, (const char *)inbuf + lb, (char *)inoutbuf + lb, count);
    }
    size_t n = tern_datatype_packed_size(dt, count);
    char *in = malloc(n), *inout = malloc(n);
    tern_status_t st = in && inout ? TERN_OK : TERN_ERR_NOMEM;
    if (st == TERN_OK)
        st = tern_datatype_pack(inbuf, count, dt, in);
    if (st == TERN_OK)
        st = tern_datatype_pack(inoutbuf, count, dt, inout);
    if (st == TERN_OK)
        st = tern_op_apply(op, dt, in, inout, count);
    if (st == TERN_OK)
        st = tern_datatype_unpack(inout, n, inoutbuf, count, dt);
    free(in);
    free(inout);
    return st;
}
