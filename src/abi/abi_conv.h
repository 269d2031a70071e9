/* libmpi_abi: the conversions between the MPI-5.0 standard ABI and libtern
 * (docs/design.md, "The standard ABI"). The generated entry points
 * (src/abi/gen/<chapter>.c) include this header only.
 *
 * Handles: a predefined ABI handle is a small integer (below
 * TERN_ABI_HANDLE_LIMIT) and indexes a table of libtern's handles; a user
 * handle of libtern (0x80000000 | kind | slot) travels in the ABI's pointer
 * as its own bits, zero-extended, so converting it costs a test. */
#ifndef TERN_ABI_CONV_H
#define TERN_ABI_CONV_H

#include <mpi_abi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abi/gen/abi_native.h"

#define TERN_ABI_STR(x) #x
#define TERN_ABI_ALIAS(name) _Pragma(TERN_ABI_STR(weak MPI_##name = PMPI_##name))
#define TERN_ABI_ALIASX(name) _Pragma(TERN_ABI_STR(weak MPIX_##name = PMPIX_##name))

#define TERN_ABI_HANDLE_LIMIT 0x400
#define TERN_ABI_NATIVE_INDEX 0x100
/* Arrays of handles and statuses up to this length convert on the stack. */
#define TERN_ABI_STACK 16
/* GCC (-O2, more so under the sanitizers) cannot see that a conversion
 * loop fills the stack array it then passes as a const argument (as
 * MPI_Request_get_status_all's requests) and warns that it may be used
 * uninitialized: a false alarm in every generated entry point of that
 * shape, so it is silenced for them alone (files including this header). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define TERN_ABI_NOMEM MPI_ERR_NO_MEM

_Static_assert(sizeof(MPI_Status) == 32, "the ABI's MPI_Status is 8 ints");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "a handle written late (MPI_Comm_idup) lands in the pointer's low half");

extern const int32_t tern_abi_h2n_table[TERN_ABI_HANDLE_LIMIT];
extern const uint16_t tern_abi_n2h_table[64][TERN_ABI_NATIVE_INDEX];
/* Error classes: the low 7 bits of a code on both sides (abi_tables.c). */
extern const uint8_t tern_abi_class_n2a[128];
extern const uint8_t tern_abi_class_a2n[128];

static inline int tern_abi_h2n(const void *h)
{
    uintptr_t v = (uintptr_t)h;
    /* -1 in the table: not a handle libtern has, invalid there. */
    return v < TERN_ABI_HANDLE_LIMIT ? tern_abi_h2n_table[v] : (int)(uint32_t)v;
}

/* libtern's pair types (MPI_FLOAT_INT...) have MPICH's values, which look
 * like user handles (0x8c000000 + 0..4): the table has them. */
#define TERN_ABI_PAIR_TYPES 5u
_Static_assert((uint32_t)TN_FLOAT_INT == 0x8c000000u && (uint32_t)TN_DOUBLE_INT == 0x8c000001u &&
                   (uint32_t)TN_LONG_INT == 0x8c000002u && (uint32_t)TN_SHORT_INT == 0x8c000003u &&
                   (uint32_t)TN_LONG_DOUBLE_INT == 0x8c000004u,
               "libtern's pair types");
static inline uintptr_t tern_abi_n2h(int n)
{
    uint32_t u = (uint32_t)n;
    if ((u & 0x80000000u) && u - 0x8c000000u >= TERN_ABI_PAIR_TYPES)
        return u;
    uint16_t a = tern_abi_n2h_table[(u >> 26) & 0x3f][u & 0xff];
    return a ? a : u;
}
/* The same for every kind but datatypes (no pair types there): a user
 * handle costs a test. */
static inline uintptr_t tern_abi_n2h_plain(int n)
{
    uint32_t u = (uint32_t)n;
    if (__builtin_expect((u & 0x80000000u) != 0, 1))
        return u;
    uint16_t a = tern_abi_n2h_table[(u >> 26) & 0x3f][u & 0xff];
    return a ? a : u;
}

#define TERN_ABI_KIND(H, T)                                                                \
    static inline int tern_abi_##H##_in(T h) { return tern_abi_h2n((const void *)h); }      \
    static inline T tern_abi_##H##_out(int n) { return (T)tern_abi_n2h_plain(n); }
TERN_ABI_KIND(Comm, MPI_Comm)
static inline int tern_abi_Type_in(MPI_Datatype h) { return tern_abi_h2n((const void *)h); }
static inline MPI_Datatype tern_abi_Type_out(int n) { return (MPI_Datatype)tern_abi_n2h(n); }
TERN_ABI_KIND(Group, MPI_Group)
TERN_ABI_KIND(Info, MPI_Info)
TERN_ABI_KIND(Errhandler, MPI_Errhandler)
TERN_ABI_KIND(Op, MPI_Op)
static inline int tern_abi_Request_in(MPI_Request h) { return tern_abi_h2n((const void *)h); }
/* A request comes back a user handle (MPI_Isend's) or a null (a
 * completed MPI_Waitall's): both before the table. libtern's copy here
 * writes the ABI's own null where it releases a request (mpi_request.c),
 * other paths libtern's. */
static inline MPI_Request tern_abi_Request_out(int n)
{
    uint32_t u = (uint32_t)n;
    if (__builtin_expect((u & 0x80000000u) != 0, 1))
        return (MPI_Request)(uintptr_t)u;
    if (u == (uint32_t)(uintptr_t)MPI_REQUEST_NULL || u == (uint32_t)TN_REQUEST_NULL)
        return MPI_REQUEST_NULL;
    return (MPI_Request)tern_abi_n2h_plain(n);
}
/* A request libtern writes (MPI_Isend's) is written in place: libtern's
 * int in the handle's low half (little-endian), made the whole handle
 * afterwards. A request MPI_Wait, MPI_Test, MPI_Request_free and MPI_Start
 * read and write is passed in place with no conversion at all: libtern's
 * copy here takes the ABI's null for its own and writes it back
 * (mpi_request.c), and a user handle is its own low half. */
typedef uint32_t __attribute__((may_alias)) tern_abi_u32;
static inline void tern_abi_Request_back(MPI_Request *r)
{
    if (r)
        *r = tern_abi_Request_out((int)*(const tern_abi_u32 *)r);
}
_Static_assert((uintptr_t)MPI_REQUEST_NULL == 0x180,
               "the ABI's null request, as src/mpi/mpi_request.c has it");
/* libtern's MPI_MESSAGE_NULL is MPI_REQUEST_NULL's value (MPICH's): the
 * shared table gives the request's, so a message converts it first. */
_Static_assert(TN_MESSAGE_NULL == TN_REQUEST_NULL, "libtern's null message and request");
static inline int tern_abi_Message_in(MPI_Message h) { return tern_abi_h2n((const void *)h); }
static inline MPI_Message tern_abi_Message_out(int n)
{
    return n == TN_MESSAGE_NULL ? MPI_MESSAGE_NULL : (MPI_Message)tern_abi_n2h(n);
}
TERN_ABI_KIND(Win, MPI_Win)
TERN_ABI_KIND(File, MPI_File)
TERN_ABI_KIND(Session, MPI_Session)

/* Ranks: MPI_ANY_SOURCE, MPI_PROC_NULL, MPI_ROOT differ (a permutation of
 * -1..-4, so a status converted both ways is unchanged). */
/* The negative values (the constants) convert out of line, so that a
 * plain rank or tag costs a sign test and a branch, no conditional move. */
__attribute__((cold, noinline)) int tern_abi_rank_neg_in(int v);
__attribute__((cold, noinline)) int tern_abi_tag_neg_in(int v);
static inline int tern_abi_rank_in(int v)
{
    return __builtin_expect(v >= 0, 1) ? v : tern_abi_rank_neg_in(v);
}
static inline int tern_abi_rank_out(int v)
{
    static const signed char t[5] = {0, MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT, -2};
    return v >= 0 || v < -4 ? v : t[-v];
}
_Static_assert(TN_PROC_NULL == -1 && TN_ANY_SOURCE == -2 && TN_ROOT == -3, "rank table");
_Static_assert(MPI_ANY_SOURCE == -1 && MPI_PROC_NULL == -3 && MPI_ROOT == -4, "rank table");

/* Tags: MPI_ANY_TAG is -2 in the ABI, -1 in libtern: the two swap. */
static inline int tern_abi_tag_in(int v)
{
    return __builtin_expect(v >= 0, 1) ? v : tern_abi_tag_neg_in(v);
}
static inline int tern_abi_tag_out(int v) { return (unsigned)v + 2u < 2u ? -3 - v : v; }
_Static_assert(MPI_ANY_TAG == -2 && TN_ANY_TAG == -1, "tag swap");

/* Error codes: class + 128 * slot on both sides (libtern's classes are
 * MPICH's numbers, below 128), the class converted by a permutation of
 * 0..127, so any value the program stores comes back unchanged. The ABI's
 * MPI_T_ERR_* are 1001..1018: the permutation takes libtern's to 105..122,
 * which a bare class (slot 0: the tools interface returns classes) turns
 * into 1001..1018. Values MPI_Add_error_class/code made (from 0x40000000)
 * are the same on both sides. */
#define TERN_ABI_T_ERR_LOW 105
#define TERN_ABI_T_ERR_N 18u
_Static_assert(MPI_T_ERR_CANNOT_INIT == 1001 && MPI_T_ERR_PVAR_NO_ATOMIC == 1018,
               "the ABI's MPI_T_ERR_*");
static inline int tern_abi_err_out(int v)
{
    if (__builtin_expect(v == 0, 1))
        return 0;
    if ((unsigned)v < 0x40000000u) {
        int a = tern_abi_class_n2a[v & 127] | (v & ~127);
        return (unsigned)(a - TERN_ABI_T_ERR_LOW) < TERN_ABI_T_ERR_N ? a + 896 : a;
    }
    return v;
}
static inline int tern_abi_err_in(int v)
{
    if ((unsigned)v < 0x40000000u && v) {
        if ((unsigned)(v - MPI_T_ERR_CANNOT_INIT) < TERN_ABI_T_ERR_N)
            v -= 896;
        return tern_abi_class_a2n[v & 127] | (v & ~127);
    }
    return v;
}

/* A handle libtern writes at completion (MPI_Comm_idup): its null, which
 * it writes while the call is pending, becomes the ABI's, atomically, so
 * that a completion on the progress thread that wrote the handle first
 * wins (libtern writes the int into the slot's low half, which the ABI's
 * null leaves as the only nonzero half). */
static inline void tern_abi_late_null(uintptr_t *slot, uint32_t native_null, uintptr_t abi_null)
{
    uintptr_t expected = native_null;
    __atomic_compare_exchange_n(slot, &expected, abi_null, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* The text of an error class the ABI names and libtern lacks
 * (MPI_ERR_ERRHANDLER...), NULL for any other value: MPI_Error_class and
 * MPI_Error_string answer for those in the layer (abi_tables.c). */
const char *tern_abi_class_text(int v);

/* The small integer constants (abi_tables.c). */
#define TERN_ABI_INTS(g) int tern_abi_##g##_in(int v); int tern_abi_##g##_out(int v);
TERN_ABI_INTS(thread)
TERN_ABI_INTS(cmp)
TERN_ABI_INTS(topo)
TERN_ABI_INTS(split)
TERN_ABI_INTS(combiner)
TERN_ABI_INTS(order)
TERN_ABI_INTS(distrib)
TERN_ABI_INTS(darg)
TERN_ABI_INTS(lock)
TERN_ABI_INTS(whence)
TERN_ABI_INTS(typeclass)
TERN_ABI_INTS(flavor)
TERN_ABI_INTS(model)
TERN_ABI_INTS(keyval)
TERN_ABI_INTS(amode)
TERN_ABI_INTS(assert)
TERN_ABI_INTS(tverb)
TERN_ABI_INTS(tbind)
TERN_ABI_INTS(tscope)
TERN_ABI_INTS(tclass)
TERN_ABI_INTS(tsafety)
TERN_ABI_INTS(tsource)

/* The tools interface's handles pass as they are: pointers on both sides
 * with the same special values. */
_Static_assert(sizeof(MPI_T_enum) == sizeof(TN_T_enum), "MPI_T handles are pointers");
#define TERN_ABI_T_SAME(a, b) _Static_assert((uintptr_t)(a) == (uintptr_t)(b), #a)
TERN_ABI_T_SAME(MPI_T_ENUM_NULL, 0);
TERN_ABI_T_SAME(MPI_T_CVAR_HANDLE_NULL, 0);
TERN_ABI_T_SAME(MPI_T_PVAR_HANDLE_NULL, 0);
TERN_ABI_T_SAME(MPI_T_PVAR_SESSION_NULL, 0);
TERN_ABI_T_SAME(MPI_T_PVAR_ALL_HANDLES, 1);
_Static_assert(sizeof(TN_T_cb_safety) == sizeof(int) && sizeof(TN_T_source_order) == sizeof(int),
               "libtern's MPI_T enums are ints");

/* Statuses: source, tag and error converted; libtern's count words kept in
 * MPI_internal. */
static inline void tern_abi_status_out(const TN_Status *n, MPI_Status *a)
{
    a->MPI_SOURCE = tern_abi_rank_out(n->MPI_SOURCE);
    a->MPI_TAG = tern_abi_tag_out(n->MPI_TAG);
    a->MPI_ERROR = tern_abi_err_out(n->MPI_ERROR);
    a->MPI_internal[0] = n->count_lo;
    a->MPI_internal[1] = n->count_hi_and_cancelled;
}
static inline void tern_abi_status_in(const MPI_Status *a, TN_Status *n)
{
    n->MPI_SOURCE = tern_abi_rank_in(a->MPI_SOURCE);
    n->MPI_TAG = tern_abi_tag_in(a->MPI_TAG);
    n->MPI_ERROR = tern_abi_err_in(a->MPI_ERROR);
    n->count_lo = a->MPI_internal[0];
    n->count_hi_and_cancelled = a->MPI_internal[1];
}
/* A status the call writes (MPI_Recv's): libtern writes its own status
 * into the ABI status' MPI_internal (5 ints), then the public fields are
 * converted from there; MPI_ERROR stays as the caller had it unless the
 * call sets it (MPI-4.1 3.2.5). MPI_internal[0..1] are libtern's count
 * words, as tern_abi_status_out leaves them. */
_Static_assert(sizeof(TN_Status) == 5 * sizeof(int), "libtern's status is 5 ints");
static inline TN_Status *tern_abi_status_slot(MPI_Status *a)
{
    if (!a)
        return TN_STATUS_IGNORE;
    TN_Status *n = (TN_Status *)(void *)a->MPI_internal;
    /* A call that writes nothing (MPI_Iprobe finding no message) leaves
     * the caller's fields as they were. */
    int source = a->MPI_SOURCE, tag = a->MPI_TAG;
    n->MPI_ERROR = tern_abi_err_in(a->MPI_ERROR);
    n->MPI_SOURCE = tern_abi_rank_in(source);
    n->MPI_TAG = tern_abi_tag_in(tag);
    return n;
}
static inline void tern_abi_status_fix(MPI_Status *a)
{
    const TN_Status *n = (const TN_Status *)(const void *)a->MPI_internal;
    int source = n->MPI_SOURCE, tag = n->MPI_TAG, error = n->MPI_ERROR;
    a->MPI_SOURCE = tern_abi_rank_out(source);
    a->MPI_TAG = tern_abi_tag_out(tag);
    a->MPI_ERROR = tern_abi_err_out(error);
}

/* Buffers for converted arrays: on the stack up to TERN_ABI_STACK. */
static inline int *tern_abi_ints(int *stack, int n)
{
    return n <= TERN_ABI_STACK ? stack : malloc((size_t)n * sizeof(int));
}
static inline TN_Status *tern_abi_statuses(TN_Status *stack, int n)
{
    return n <= TERN_ABI_STACK ? stack : malloc((size_t)n * sizeof(TN_Status));
}
static inline void tern_abi_free(void *p, void *stack)
{
    if (p != stack)
        free(p);
}

/* Pointer sentinels. */
static inline void *tern_abi_inplace_in(const void *p)
{
    return p == MPI_IN_PLACE ? TN_IN_PLACE : (void *)(uintptr_t)p;
}
static inline void *tern_abi_bufauto_in(const void *p)
{
    return p == MPI_BUFFER_AUTOMATIC ? TN_BUFFER_AUTOMATIC : (void *)(uintptr_t)p;
}
static inline void tern_abi_bufauto_out(int rc, void *buffer_addr)
{
    if (rc == 0 && buffer_addr && *(void **)buffer_addr == TN_BUFFER_AUTOMATIC)
        *(void **)buffer_addr = MPI_BUFFER_AUTOMATIC;
}
static inline int *tern_abi_weights_in(const int *w)
{
    return w == MPI_UNWEIGHTED ? TN_UNWEIGHTED
         : w == MPI_WEIGHTS_EMPTY ? TN_WEIGHTS_EMPTY : (int *)(uintptr_t)w;
}

/* Lengths the arguments do not carry (abi_callbacks.c). */
int tern_abi_peers(MPI_Comm comm);
int tern_abi_in_degree(MPI_Comm comm);
int tern_abi_out_degree(MPI_Comm comm);
int tern_abi_spawn_n(int root, MPI_Comm comm, int maxprocs);
int tern_abi_spawn_multiple_n(int root, MPI_Comm comm, int count, const int *maxprocs);
/* Predefined attributes whose values are constants; user ops freed. */
void tern_abi_comm_attr_out(int keyval, void *attribute_val, int *flag);
void tern_abi_win_attr_out(int keyval, void *attribute_val, int *flag);
void tern_abi_op_forget(MPI_Op op);
/* A datatype array a nonblocking or persistent call keeps: converted once
 * per distinct array and kept (NULL: no memory, or no array). */
const int *tern_abi_types_kept(const MPI_Datatype *types, int n);

#endif
