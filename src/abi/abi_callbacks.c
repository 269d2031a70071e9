/* libmpi_abi: the procedures that take callbacks, written by hand
 * (tools/bindgen/abi_std.py: MANUAL). Each wraps the program's function in
 * one of libtern's calling convention, so the program sees ABI handles,
 * statuses and error codes; and the lengths the generated entry points ask
 * for. */
#include "abi/abi_conv.h"

#include <pthread.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Lengths of arrays the arguments do not carry. */

int tern_abi_peers(MPI_Comm comm)
{
    int c = tern_abi_Comm_in(comm), inter = 0, n = 0;
    if (tern_native_PMPI_Comm_test_inter(c, &inter))
        return 0;
    if ((inter ? tern_native_PMPI_Comm_remote_size(c, &n) : tern_native_PMPI_Comm_size(c, &n)))
        return 0;
    return n;
}

static void degrees(MPI_Comm comm, int *in, int *out)
{
    int c = tern_abi_Comm_in(comm), topo = TN_UNDEFINED, w;
    *in = *out = 0;
    if (tern_native_PMPI_Topo_test(c, &topo))
        return;
    if (topo == TN_DIST_GRAPH) {
        tern_native_PMPI_Dist_graph_neighbors_count(c, in, out, &w);
    } else if (topo == TN_GRAPH) {
        int rank;
        if (!tern_native_PMPI_Comm_rank(c, &rank) &&
            !tern_native_PMPI_Graph_neighbors_count(c, rank, in))
            *out = *in;
    } else if (topo == TN_CART) {
        int nd;
        if (!tern_native_PMPI_Cartdim_get(c, &nd))
            *in = *out = 2 * nd;
    }
}

int tern_abi_in_degree(MPI_Comm comm)
{
    int in, out;
    degrees(comm, &in, &out);
    return in;
}

int tern_abi_out_degree(MPI_Comm comm)
{
    int in, out;
    degrees(comm, &in, &out);
    return out;
}

/* The error codes of a spawn: maxprocs of them, known at the root. */
int tern_abi_spawn_n(int root, MPI_Comm comm, int maxprocs)
{
    int rank = -1;
    tern_native_PMPI_Comm_rank(tern_abi_Comm_in(comm), &rank);
    return rank == root && maxprocs > 0 ? maxprocs : 0;
}

int tern_abi_spawn_multiple_n(int root, MPI_Comm comm, int count, const int *maxprocs)
{
    int rank = -1, n = 0;
    tern_native_PMPI_Comm_rank(tern_abi_Comm_in(comm), &rank);
    if (rank != root || !maxprocs)
        return 0;
    for (int i = 0; i < count; i++)
        n += maxprocs[i] > 0 ? maxprocs[i] : 0;
    return n;
}

/* ------------------------------------------------------------------------ */
/* Predefined attributes whose values are constants of their own: the value
 * is converted into a copy the library keeps (one per attribute). */

static int attr_host, attr_io, attr_lastcode, attr_flavor, attr_model;

static void attr_convert(void *attribute_val, int *slot, int v)
{
    *slot = v;
    *(int **)attribute_val = slot;
}

void tern_abi_comm_attr_out(int keyval, void *attribute_val, int *flag)
{
    if (!flag || !*flag || !attribute_val)
        return;
    /* Only these attributes hold a pointer to an int of libtern's. */
    if (keyval == MPI_HOST)
        attr_convert(attribute_val, &attr_host, tern_abi_rank_out(**(int **)attribute_val));
    else if (keyval == MPI_IO)
        attr_convert(attribute_val, &attr_io, tern_abi_rank_out(**(int **)attribute_val));
    else if (keyval == MPI_LASTUSEDCODE)
        attr_convert(attribute_val, &attr_lastcode, tern_abi_err_out(**(int **)attribute_val));
}

void tern_abi_win_attr_out(int keyval, void *attribute_val, int *flag)
{
    if (!flag || !*flag || !attribute_val)
        return;
    if (keyval == MPI_WIN_CREATE_FLAVOR)
        attr_convert(attribute_val, &attr_flavor, tern_abi_flavor_out(**(int **)attribute_val));
    else if (keyval == MPI_WIN_MODEL)
        attr_convert(attribute_val, &attr_model, tern_abi_model_out(**(int **)attribute_val));
}

/* ------------------------------------------------------------------------ */
/* User reduction operations: libtern's op calls a function without a
 * context, so each live ABI op has a trampoline of its own, one of
 * TERN_ABI_OPS; MPI_Op_free gives it back. */

#define TERN_ABI_OPS 64
static struct {
    MPI_User_function *fn;
    MPI_User_function_c *fn_c;
    MPI_Op op; /* NULL: free */
} abi_ops[TERN_ABI_OPS];

static void op_call(int i, void *in, void *inout, int *len, TN_Datatype *dt)
{
    MPI_Datatype t = tern_abi_Type_out(*dt);
    abi_ops[i].fn(in, inout, len, &t);
}

static void op_call_c(int i, void *in, void *inout, TN_Count *len, TN_Datatype *dt)
{
    MPI_Datatype t = tern_abi_Type_out(*dt);
    MPI_Count n = *len;
    abi_ops[i].fn_c(in, inout, &n, &t);
}

#define OP_TRAMP(n, i)                                                                     \
    static void op_t##n(void *a, void *b, int *l, TN_Datatype *d) { op_call(i, a, b, l, d); } \
    static void op_tc##n(void *a, void *b, TN_Count *l, TN_Datatype *d)                    \
    {                                                                                      \
        op_call_c(i, a, b, l, d);                                                          \
    }
/* Trampolines k0..k7 serve slots 8 * (k - 1) .. 8 * (k - 1) + 7. */
#define OP_TRAMP8(k)                                                                       \
    OP_TRAMP(k##0, 8 * (k - 1)) OP_TRAMP(k##1, 8 * (k - 1) + 1)                            \
    OP_TRAMP(k##2, 8 * (k - 1) + 2) OP_TRAMP(k##3, 8 * (k - 1) + 3)                        \
    OP_TRAMP(k##4, 8 * (k - 1) + 4) OP_TRAMP(k##5, 8 * (k - 1) + 5)                        \
    OP_TRAMP(k##6, 8 * (k - 1) + 6) OP_TRAMP(k##7, 8 * (k - 1) + 7)
OP_TRAMP8(1) OP_TRAMP8(2) OP_TRAMP8(3) OP_TRAMP8(4) OP_TRAMP8(5) OP_TRAMP8(6) OP_TRAMP8(7)
OP_TRAMP8(8)
#define OP_REF8(p, i) p##i##0, p##i##1, p##i##2, p##i##3, p##i##4, p##i##5, p##i##6, p##i##7
static TN_User_function *const op_tramps[TERN_ABI_OPS] = {
    OP_REF8(op_t, 1), OP_REF8(op_t, 2), OP_REF8(op_t, 3), OP_REF8(op_t, 4),
    OP_REF8(op_t, 5), OP_REF8(op_t, 6), OP_REF8(op_t, 7), OP_REF8(op_t, 8)};
static TN_User_function_c *const op_tramps_c[TERN_ABI_OPS] = {
    OP_REF8(op_tc, 1), OP_REF8(op_tc, 2), OP_REF8(op_tc, 3), OP_REF8(op_tc, 4),
    OP_REF8(op_tc, 5), OP_REF8(op_tc, 6), OP_REF8(op_tc, 7), OP_REF8(op_tc, 8)};

/* The slots are taken and given back outside libtern's lock: their own. */
static pthread_mutex_t abi_ops_lock = PTHREAD_MUTEX_INITIALIZER;

static int op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int big, int commute,
                     MPI_Op *op)
{
    int i = 0;
    pthread_mutex_lock(&abi_ops_lock);
    while (i < TERN_ABI_OPS && abi_ops[i].op)
        i++;
    if (i < TERN_ABI_OPS && op && (fn || fn_c))
        abi_ops[i].op = MPI_OP_NULL; /* taken (not NULL) until the op exists */
    pthread_mutex_unlock(&abi_ops_lock);
    if (!op || (!fn && !fn_c)) {
        /* libtern words the error (a NULL argument) through the handler. */
        int n;
        return tern_abi_err_out(big ? tern_native_PMPI_Op_create_c(NULL, commute, op ? &n : NULL)
                                    : tern_native_PMPI_Op_create(NULL, commute, op ? &n : NULL));
    }
    if (i == TERN_ABI_OPS) { /* more than TERN_ABI_OPS live user operations */
        tern_native_PMPI_Comm_call_errhandler(TN_COMM_WORLD, TN_ERR_INTERN);
        return MPI_ERR_INTERN;
    }
    int n;
    int rc = fn_c ? tern_native_PMPI_Op_create_c(op_tramps_c[i], commute, &n)
                  : tern_native_PMPI_Op_create(op_tramps[i], commute, &n);
    pthread_mutex_lock(&abi_ops_lock);
    if (rc == 0) {
        abi_ops[i].fn = fn;
        abi_ops[i].fn_c = fn_c;
        abi_ops[i].op = tern_abi_Op_out(n);
        *op = abi_ops[i].op;
    } else {
        abi_ops[i].op = NULL;
    }
    pthread_mutex_unlock(&abi_ops_lock);
    return tern_abi_err_out(rc);
}

void tern_abi_op_forget(MPI_Op op)
{
    pthread_mutex_lock(&abi_ops_lock);
    for (int i = 0; i < TERN_ABI_OPS; i++)
        if (abi_ops[i].op == op)
            abi_ops[i].op = NULL;
    pthread_mutex_unlock(&abi_ops_lock);
}

TERN_ABI_ALIAS(Op_create)
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create(user_fn, NULL, 0, commute, op);
}

TERN_ABI_ALIAS(Op_create_c)
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create(NULL, user_fn, 1, commute, op);
}

/* ------------------------------------------------------------------------ */
/* Error handlers: libtern's user handlers are 64 slots, the slot in the
 * handle; the program's function is kept by slot, and one trampoline per
 * kind of object finds it from the object's handler. */

#define TERN_ABI_EH 64
static void (*abi_eh[TERN_ABI_EH])(void);

static int eh_slot(TN_Errhandler e)
{
    unsigned i = (unsigned)e & 0xffffu;
    return ((unsigned)e & 0x80000000u) && i < TERN_ABI_EH ? (int)i : -1;
}

#define EH_KIND(K, TNK)                                                                    \
    static void eh_##K(TNK *obj, int *code, ...)                                           \
    {                                                                                      \
        TN_Errhandler e;                                                                   \
        if (tern_native_PMPI_##K##_get_errhandler(*obj, &e))                               \
            return;                                                                        \
        int i = eh_slot(e);                                                                \
        tern_native_PMPI_Errhandler_free(&e);                                              \
        if (i < 0 || !abi_eh[i])                                                           \
            return;                                                                        \
        MPI_##K a = tern_abi_##K##_out(*obj);                                              \
        int c = tern_abi_err_out(*code);                                                   \
        ((MPI_##K##_errhandler_function *)(void (*)(void))abi_eh[i])(&a, &c);              \
    }                                                                                      \
    TERN_ABI_ALIAS(K##_create_errhandler)                                                  \
    int PMPI_##K##_create_errhandler(MPI_##K##_errhandler_function *fn, MPI_Errhandler *eh) \
    {                                                                                      \
        TN_Errhandler n;                                                                   \
        int rc = tern_native_PMPI_##K##_create_errhandler(fn ? eh_##K : NULL,              \
                                                          eh ? &n : NULL);                 \
        if (rc == 0) {                                                                     \
            int i = eh_slot(n);                                                            \
            if (i >= 0)                                                                    \
                abi_eh[i] = (void (*)(void))fn;                                            \
            *eh = tern_abi_Errhandler_out(n);                                              \
        }                                                                                  \
        return tern_abi_err_out(rc);                                                       \
    }
EH_KIND(Comm, TN_Comm)
EH_KIND(Win, TN_Win)
EH_KIND(File, TN_File)
EH_KIND(Session, TN_Session)

/* ------------------------------------------------------------------------ */
/* Attribute keyvals: the program's callbacks and extra_state travel in
 * libtern's extra_state (kept for the life of the process: attributes may
 * outlive their keyval). MPI_*_NULL_COPY_FN and MPI_*_DUP_FN are 0 and 1. */

typedef struct {
    void (*copy)(void);
    void (*del)(void);
    void *extra;
} abi_keyval_t;

#define KV_COPY(NAME, TNK, ABIK, OUT)                                                      \
    static int NAME(TNK old, int keyval, void *ex, void *in, void *out, int *flag)         \
    {                                                                                      \
        abi_keyval_t *k = ex;                                                              \
        if ((uintptr_t)k->copy <= 1) {                                                     \
            *flag = (int)(uintptr_t)k->copy;                                               \
            if (*flag)                                                                     \
                *(void **)out = in;                                                        \
            return 0;                                                                      \
        }                                                                                  \
        typedef int fn_t(ABIK, int, void *, void *, void *, int *);                        \
        return tern_abi_err_in(((fn_t *)k->copy)(OUT(old), keyval, k->extra, in, out, flag)); \
    }
#define KV_DEL(NAME, TNK, ABIK, OUT)                                                       \
    static int NAME(TNK obj, int keyval, void *val, void *ex)                              \
    {                                                                                      \
        abi_keyval_t *k = ex;                                                              \
        if (!k->del)                                                                       \
            return 0;                                                                      \
        typedef int fn_t(ABIK, int, void *, void *);                                       \
        return tern_abi_err_in(((fn_t *)k->del)(OUT(obj), keyval, val, k->extra));         \
    }
KV_COPY(kv_copy_comm, TN_Comm, MPI_Comm, tern_abi_Comm_out)
KV_DEL(kv_del_comm, TN_Comm, MPI_Comm, tern_abi_Comm_out)
KV_COPY(kv_copy_type, TN_Datatype, MPI_Datatype, tern_abi_Type_out)
KV_DEL(kv_del_type, TN_Datatype, MPI_Datatype, tern_abi_Type_out)
KV_COPY(kv_copy_win, TN_Win, MPI_Win, tern_abi_Win_out)
KV_DEL(kv_del_win, TN_Win, MPI_Win, tern_abi_Win_out)

/* Every keyval's wrapper, kept for the life of the process (libtern does
 * not say when a keyval's last attribute goes, so none is freed): on one
 * list, reachable, newest first. */
static struct keyval_node {
    struct keyval_node *next;
    abi_keyval_t k;
} *keyvals;

static abi_keyval_t *keyval_new(void (*copy)(void), void (*del)(void), void *extra)
{
    struct keyval_node *n = malloc(sizeof *n);
    if (!n)
        return NULL;
    n->k = (abi_keyval_t){copy, del, extra};
    pthread_mutex_lock(&abi_ops_lock);
    n->next = keyvals;
    keyvals = n;
    pthread_mutex_unlock(&abi_ops_lock);
    return &n->k;
}

#define KV_CREATE(FN, NATIVE, CT, DT, COPY, DEL)                                           \
    TERN_ABI_ALIAS(FN)                                                                     \
    int PMPI_##FN(CT *copy_fn, DT *delete_fn, int *keyval, void *extra_state)              \
    {                                                                                      \
        abi_keyval_t *k = keyval_new((void (*)(void))copy_fn, (void (*)(void))delete_fn,   \
                                     extra_state);                                         \
        if (!k)                                                                            \
            return MPI_ERR_NO_MEM;                                                         \
        /* A failed create's wrapper stays on the list, unused. */                        \
        int rc = tern_native_PMPI_##NATIVE(COPY, DEL, keyval, k);                          \
        return tern_abi_err_out(rc);                                                       \
    }
KV_CREATE(Comm_create_keyval, Comm_create_keyval, MPI_Comm_copy_attr_function,
          MPI_Comm_delete_attr_function, kv_copy_comm, kv_del_comm)
KV_CREATE(Keyval_create, Comm_create_keyval, MPI_Copy_function, MPI_Delete_function,
          kv_copy_comm, kv_del_comm)
KV_CREATE(Type_create_keyval, Type_create_keyval, MPI_Type_copy_attr_function,
          MPI_Type_delete_attr_function, kv_copy_type, kv_del_type)
KV_CREATE(Win_create_keyval, Win_create_keyval, MPI_Win_copy_attr_function,
          MPI_Win_delete_attr_function, kv_copy_win, kv_del_win)

/* ------------------------------------------------------------------------ */
/* Generalized requests: the three callbacks and extra_state in one block,
 * freed after the free callback. */

typedef struct {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
} abi_greq_t;

static int greq_query(void *ex, TN_Status *s)
{
    abi_greq_t *g = ex;
    MPI_Status a;
    tern_abi_status_out(s, &a);
    int rc = g->query(g->extra, &a);
    tern_abi_status_in(&a, s);
    return tern_abi_err_in(rc);
}

static int greq_free(void *ex)
{
    abi_greq_t *g = ex;
    int rc = g->free_fn(g->extra);
    free(g);
    return tern_abi_err_in(rc);
}

static int greq_cancel(void *ex, int complete)
{
    abi_greq_t *g = ex;
    return tern_abi_err_in(g->cancel(g->extra, complete));
}

TERN_ABI_ALIAS(Grequest_start)
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    abi_greq_t *g = NULL;
    if (query_fn && free_fn && cancel_fn) {
        if (!(g = malloc(sizeof *g)))
            return MPI_ERR_NO_MEM;
        *g = (abi_greq_t){query_fn, free_fn, cancel_fn, extra_state};
    }
    TN_Request n;
    int rc = tern_native_PMPI_Grequest_start(g ? greq_query : NULL, g ? greq_free : NULL,
                                             g ? greq_cancel : NULL, g, request ? &n : NULL);
    if (rc == 0)
        *request = tern_abi_Request_out(n);
    else
        free(g);
    return tern_abi_err_out(rc);
}

/* ------------------------------------------------------------------------ */
/* Data representations: the conversion functions see ABI datatypes. A
 * representation lives as long as the process, so does its block. */

typedef struct {
    MPI_Datarep_conversion_function *read, *write;
    MPI_Datarep_conversion_function_c *read_c, *write_c;
    MPI_Datarep_extent_function *extent;
    void *extra;
} abi_datarep_t;

static int dr_read(void *ub, TN_Datatype t, int n, void *fb, TN_Offset pos, void *ex)
{
    abi_datarep_t *r = ex;
    return tern_abi_err_in(r->read(ub, tern_abi_Type_out(t), n, fb, pos, r->extra));
}
static int dr_write(void *ub, TN_Datatype t, int n, void *fb, TN_Offset pos, void *ex)
{
    abi_datarep_t *r = ex;
    return tern_abi_err_in(r->write(ub, tern_abi_Type_out(t), n, fb, pos, r->extra));
}
static int dr_read_c(void *ub, TN_Datatype t, TN_Count n, void *fb, TN_Offset pos, void *ex)
{
    abi_datarep_t *r = ex;
    return tern_abi_err_in(r->read_c(ub, tern_abi_Type_out(t), n, fb, pos, r->extra));
}
static int dr_write_c(void *ub, TN_Datatype t, TN_Count n, void *fb, TN_Offset pos, void *ex)
{
    abi_datarep_t *r = ex;
    return tern_abi_err_in(r->write_c(ub, tern_abi_Type_out(t), n, fb, pos, r->extra));
}
static int dr_extent(TN_Datatype t, TN_Aint *extent, void *ex)
{
    abi_datarep_t *r = ex;
    MPI_Aint e = 0;
    int rc = r->extent(tern_abi_Type_out(t), &e, r->extra);
    *extent = e;
    return tern_abi_err_in(rc);
}

TERN_ABI_ALIAS(Register_datarep)
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    abi_datarep_t *r = malloc(sizeof *r);
    if (!r)
        return MPI_ERR_NO_MEM;
    *r = (abi_datarep_t){.read = read_conversion_fn, .write = write_conversion_fn,
                         .extent = dtype_file_extent_fn, .extra = extra_state};
    int rc = tern_native_PMPI_Register_datarep(
        datarep, read_conversion_fn ? dr_read : tern_native_MPI_CONVERSION_FN_NULL,
        write_conversion_fn ? dr_write : tern_native_MPI_CONVERSION_FN_NULL,
        dtype_file_extent_fn ? dr_extent : NULL, r);
    if (rc)
        free(r);
    return tern_abi_err_out(rc);
}

TERN_ABI_ALIAS(Register_datarep_c)
int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    abi_datarep_t *r = malloc(sizeof *r);
    if (!r)
        return MPI_ERR_NO_MEM;
    *r = (abi_datarep_t){.read_c = read_conversion_fn, .write_c = write_conversion_fn,
                         .extent = dtype_file_extent_fn, .extra = extra_state};
    int rc = tern_native_PMPI_Register_datarep_c(
        datarep, read_conversion_fn ? dr_read_c : tern_native_MPI_CONVERSION_FN_NULL_C,
        write_conversion_fn ? dr_write_c : tern_native_MPI_CONVERSION_FN_NULL_C,
        dtype_file_extent_fn ? dr_extent : NULL, r);
    if (rc)
        free(r);
    return tern_abi_err_out(rc);
}

/* ------------------------------------------------------------------------ */
/* The ABI's version: this library implements the MPI-5.0 ABI, 1.0
 * (libtern's own answer stays -1.-1: its handles are integers). */

TERN_ABI_ALIAS(Abi_get_version)
int PMPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    int rc = tern_native_PMPI_Abi_get_version(abi_major, abi_minor);
    if (rc == 0) {
        *abi_major = MPI_ABI_VERSION;
        *abi_minor = MPI_ABI_SUBVERSION;
    }
    return tern_abi_err_out(rc);
}

/* ------------------------------------------------------------------------ */
/* Datatype decoding: the datatypes returned, and the constants among the
 * integers of a subarray or darray (order, distributions, default
 * distribution arguments). */

static void contents_ints(int combiner, int *ints, int ni, TN_Count *big, int nbig, int c_form)
{
    if (combiner == TN_COMBINER_SUBARRAY) {
        int nd = ni > 0 ? ints[0] : 0;
        int at = c_form ? 1 : 3 * nd + 1;
        if (at < ni)
            ints[at] = tern_abi_order_out(ints[at]);
    } else if (combiner == TN_COMBINER_DARRAY) {
        int nd = ni > 2 ? ints[2] : 0;
        /* int form: size, rank, ndims, gsizes, distribs, dargs, psizes, order;
         * _c: size, rank, ndims, distribs, psizes, order (gsizes, dargs large). */
        int dist = c_form ? 3 : 3 + nd, order = c_form ? 3 + 2 * nd : 3 + 4 * nd;
        for (int i = 0; i < nd && dist + i < ni; i++)
            ints[dist + i] = tern_abi_distrib_out(ints[dist + i]);
        if (!c_form)
            for (int i = 0; i < nd && 3 + 2 * nd + i < ni; i++)
                ints[3 + 2 * nd + i] = tern_abi_darg_out(ints[3 + 2 * nd + i]);
        else
            for (int i = 0; i < nd && nd + i < nbig; i++)
                if (big[nd + i] == TN_DISTRIBUTE_DFLT_DARG)
                    big[nd + i] = MPI_DISTRIBUTE_DFLT_DARG;
        if (order < ni)
            ints[order] = tern_abi_order_out(ints[order]);
    }
}

TERN_ABI_ALIAS(Type_get_contents)
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int *array_of_integers,
                           MPI_Aint *array_of_addresses, MPI_Datatype *array_of_datatypes)
{
    int s[TERN_ABI_STACK];
    int *n = array_of_datatypes ? tern_abi_ints(s, max_datatypes) : NULL;
    if (array_of_datatypes && !n)
        return MPI_ERR_NO_MEM;
    int t = tern_abi_Type_in(datatype);
    int rc = tern_native_PMPI_Type_get_contents(t, max_integers, max_addresses, max_datatypes,
                                                array_of_integers, array_of_addresses, n);
    if (rc == 0) {
        int ni, na, nd, comb;
        tern_native_PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
        for (int i = 0; i < nd && i < max_datatypes; i++)
            array_of_datatypes[i] = tern_abi_Type_out(n[i]);
        contents_ints(comb, array_of_integers, ni < max_integers ? ni : max_integers, NULL, 0, 0);
    }
    if (n)
        tern_abi_free(n, s);
    return tern_abi_err_out(rc);
}

TERN_ABI_ALIAS(Type_get_contents_c)
int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                             MPI_Count max_addresses, MPI_Count max_large_counts,
                             MPI_Count max_datatypes, int *array_of_integers,
                             MPI_Aint *array_of_addresses, MPI_Count *array_of_large_counts,
                             MPI_Datatype *array_of_datatypes)
{
    int s[TERN_ABI_STACK];
    int nmax = max_datatypes > 0x7fffffff ? 0x7fffffff : (int)max_datatypes;
    int *n = array_of_datatypes ? tern_abi_ints(s, nmax) : NULL;
    if (array_of_datatypes && !n)
        return MPI_ERR_NO_MEM;
    int t = tern_abi_Type_in(datatype);
    int rc = tern_native_PMPI_Type_get_contents_c(t, max_integers, max_addresses,
                                                  max_large_counts, max_datatypes,
                                                  array_of_integers, array_of_addresses,
                                                  (TN_Count *)array_of_large_counts, n);
    if (rc == 0) {
        TN_Count ni, na, nl, nd;
        int comb;
        tern_native_PMPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb);
        for (TN_Count i = 0; i < nd && i < max_datatypes; i++)
            array_of_datatypes[i] = tern_abi_Type_out(n[i]);
        contents_ints(comb, array_of_integers, (int)(ni < max_integers ? ni : max_integers),
                      (TN_Count *)array_of_large_counts,
                      (int)(nl < max_large_counts ? nl : max_large_counts), 1);
    }
    if (n)
        tern_abi_free(n, s);
    return tern_abi_err_out(rc);
}

/* ------------------------------------------------------------------------ */
/* Arrays of datatypes that libtern keeps until a nonblocking or persistent
 * call completes or is freed (MPI_Ialltoallw, MPI_Alltoallw_init, the
 * neighbourhood forms): their libtern form must outlive the call, and the
 * layer does not see the request end. Each distinct converted array is kept
 * once, for the life of the process, shared by every call that passes the
 * same handles (programs pass the same few arrays). */

typedef struct kept_ints {
    struct kept_ints *next;
    int n;
    int v[];
} kept_ints_t;

static kept_ints_t *kept_head;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

const int *tern_abi_types_kept(const MPI_Datatype *types, int n)
{
    if (!types || n <= 0)
        return NULL;
    int s[TERN_ABI_STACK];
    int *tmp = tern_abi_ints(s, n);
    if (!tmp)
        return NULL;
    for (int i = 0; i < n; i++)
        tmp[i] = tern_abi_Type_in(types[i]);
    const int *found = NULL;
    pthread_mutex_lock(&kept_lock);
    for (kept_ints_t *k = kept_head; k && !found; k = k->next)
        if (k->n == n && memcmp(k->v, tmp, (size_t)n * sizeof(int)) == 0)
            found = k->v;
    if (!found) {
        kept_ints_t *k = malloc(sizeof *k + (size_t)n * sizeof(int));
        if (k) {
            k->n = n;
            memcpy(k->v, tmp, (size_t)n * sizeof(int));
            k->next = kept_head;
            kept_head = k;
            found = k->v;
        }
    }
    pthread_mutex_unlock(&kept_lock);
    tern_abi_free(tmp, s);
    return found;
}

/* The rank and tag constants (abi_conv.h keeps a plain value inline). */
int tern_abi_rank_neg_in(int v)
{
    static const signed char t[5] = {0, TN_ANY_SOURCE, -4, TN_PROC_NULL, TN_ROOT};
    return v < -4 ? v : t[-v];
}

int tern_abi_tag_neg_in(int v) { return v < -2 ? v : -3 - v; }
