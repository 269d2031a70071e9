/* The Fortran procedures whose form is not their C one plus IERROR:
 * MPI_INIT (no argc/argv), keyvals and generalized requests whose callbacks
 * are Fortran subroutines (every argument by reference, the attribute an
 * INTEGER(KIND=MPI_ADDRESS_KIND) value, IERROR last), attribute values
 * (Fortran holds the integer, not a pointer), and the predefined callbacks
 * with Fortran's conventions (MPI_COMM_DUP_FN...), MPI_PCONTROL (no IERROR).
 * The PMPI names are the
 * same functions. */
#include "fortran/fortran_support.h"

#include <pthread.h>

void mpi_init_(MPI_Fint *ierror);
void mpi_init_(MPI_Fint *ierror)
{
    *ierror = MPI_Init(NULL, NULL);
}
TERN_F_BOTH(mpi_init, MPI_INIT, pmpi_init, PMPI_INIT)

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror);
void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    *ierror = MPI_Init_thread(NULL, NULL, *required, provided);
}
TERN_F_BOTH(mpi_init_thread, MPI_INIT_THREAD, pmpi_init_thread, PMPI_INIT_THREAD)

/* MPI_INFO_CREATE_ENV(INFO, IERROR): Fortran has no argc/argv to pass
 * (the standard's Fortran form), which C allows as 0/NULL. */
void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror);
void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info i = MPI_INFO_NULL;
    *ierror = MPI_Info_create_env(0, NULL, &i);
    if (*ierror == MPI_SUCCESS)
        *info = (MPI_Fint)i;
}
TERN_F_BOTH(mpi_info_create_env, MPI_INFO_CREATE_ENV, pmpi_info_create_env, PMPI_INFO_CREATE_ENV)

/* MPI_INFO_GET_STRING(INFO, KEY, BUFLEN, VALUE, FLAG, IERROR): Fortran's
 * BUFLEN counts characters without C's terminator, in (how many to write,
 * 0: none) and out (the value's length) (MPI-4.1 10: "In C, buflen
 * includes the required space for the null terminator"). */
void mpi_info_get_string_(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value,
                          MPI_Fint *flag, MPI_Fint *ierror, size_t key_len, size_t value_len);
void mpi_info_get_string_(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value,
                          MPI_Fint *flag, MPI_Fint *ierror, size_t key_len, size_t value_len)
{
    char *key_c = tern_f_str_in_trim(key, key_len);
    /* At most the Fortran string's length is written; a negative BUFLEN
     * goes to C as it is, to be refused there. */
    MPI_Fint want = *buflen;
    int c_len = want <= 0 ? want : (int)((size_t)want < value_len ? (size_t)want : value_len) + 1;
    char *value_c = c_len > 0 ? calloc((size_t)c_len, 1) : NULL;
    int found = 0;
    if (!key_c || (c_len > 0 && !value_c)) {
        *ierror = MPI_ERR_NO_MEM;
    } else {
        *ierror = MPI_Info_get_string(*info, key_c, &c_len, value_c, &found);
        if (*ierror == MPI_SUCCESS) {
            *flag = found != 0;
            if (found) {
                *buflen = c_len - 1;
                if (want > 0)
                    tern_f_str_out(value, value_len, value_c);
            }
        }
    }
    free(key_c);
    free(value_c);
}
TERN_F_BOTH(mpi_info_get_string, MPI_INFO_GET_STRING, pmpi_info_get_string, PMPI_INFO_GET_STRING)

/* MPI_PCONTROL(LEVEL): the only Fortran subroutine without IERROR (its C
 * form takes varargs, which Fortran cannot pass). */
void mpi_pcontrol_(MPI_Fint *level);
void mpi_pcontrol_(MPI_Fint *level)
{
    MPI_Pcontrol((int)*level);
}
TERN_F_BOTH(mpi_pcontrol, MPI_PCONTROL, pmpi_pcontrol, PMPI_PCONTROL)

/* ------------------------------------------------------------------------ */
/* Keyvals with Fortran callbacks: the C keyval's extra state is a record of
 * the Fortran subroutines and the program's extra state; trampolines call
 * them by reference. MPI_KEYVAL_CREATE (MPI-1) passes INTEGERs. */

typedef void f_copy_fn(MPI_Fint *old, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
                       MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void f_delete_fn(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Aint *extra,
                         MPI_Fint *ierror);
typedef void f_copy_int_fn(MPI_Fint *old, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in,
                           MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror);
typedef void f_delete_int_fn(MPI_Fint *obj, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *extra,
                             MPI_Fint *ierror);

typedef struct f_keyval {
    void (*copy)(void);
    void (*del)(void);
    MPI_Aint extra;
    int ints; /* MPI_KEYVAL_CREATE: INTEGER extra state and values */
    struct f_keyval *next;
} f_keyval_t;

/* Every record stays reachable (a keyval's callbacks may run until the
 * last attribute goes, after MPI_Keyval_free). */
static f_keyval_t *f_keyvals;
static pthread_mutex_t f_keyvals_lock = PTHREAD_MUTEX_INITIALIZER;

static f_keyval_t *f_keyval_new(void (*copy)(void), void (*del)(void), MPI_Aint extra, int ints)
{
    f_keyval_t *k = malloc(sizeof *k);
    if (!k)
        return NULL;
    *k = (f_keyval_t){copy, del, extra, ints, NULL};
    pthread_mutex_lock(&f_keyvals_lock);
    k->next = f_keyvals;
    f_keyvals = k;
    pthread_mutex_unlock(&f_keyvals_lock);
    return k;
}

/* One trampoline serves communicators, datatypes and windows: all handles
 * are ints. */
static int f_copy(int old, int keyval, void *extra, void *in, void *out, int *flag)
{
    f_keyval_t *k = extra;
    MPI_Fint fold = old, fkey = keyval, fflag = 0, ierr = MPI_SUCCESS;
    if (k->ints) {
        MPI_Fint e = (MPI_Fint)k->extra, vin = (MPI_Fint)(MPI_Aint)in, vout = 0;
        ((f_copy_int_fn *)(void *)k->copy)(&fold, &fkey, &e, &vin, &vout, &fflag, &ierr);
        *(void **)out = (void *)(MPI_Aint)vout;
    } else {
        MPI_Aint vin = (MPI_Aint)in, vout = 0;
        ((f_copy_fn *)(void *)k->copy)(&fold, &fkey, &k->extra, &vin, &vout, &fflag, &ierr);
        *(void **)out = (void *)vout;
    }
    *flag = fflag != 0;
    return ierr;
}

static int f_delete(int obj, int keyval, void *val, void *extra)
{
    f_keyval_t *k = extra;
    MPI_Fint fobj = obj, fkey = keyval, ierr = MPI_SUCCESS;
    if (k->ints) {
        MPI_Fint e = (MPI_Fint)k->extra, v = (MPI_Fint)(MPI_Aint)val;
        ((f_delete_int_fn *)(void *)k->del)(&fobj, &fkey, &v, &e, &ierr);
    } else {
        MPI_Aint v = (MPI_Aint)val;
        ((f_delete_fn *)(void *)k->del)(&fobj, &fkey, &v, &k->extra, &ierr);
    }
    return ierr;
}

void mpi_comm_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,
                             MPI_Aint *extra, MPI_Fint *ierror);
void mpi_comm_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,
                             MPI_Aint *extra, MPI_Fint *ierror)
{
    f_keyval_t *k = f_keyval_new(copy, del, *extra, 0);
    *ierror = k ? MPI_Comm_create_keyval(f_copy, f_delete, keyval, k) : MPI_ERR_NO_MEM;
}
TERN_F_BOTH(mpi_comm_create_keyval, MPI_COMM_CREATE_KEYVAL, pmpi_comm_create_keyval,
            PMPI_COMM_CREATE_KEYVAL)

void mpi_type_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,
                             MPI_Aint *extra, MPI_Fint *ierror);
void mpi_type_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,
                             MPI_Aint *extra, MPI_Fint *ierror)
{
    f_keyval_t *k = f_keyval_new(copy, del, *extra, 0);
    *ierror = k ? MPI_Type_create_keyval(f_copy, f_delete, keyval, k) : MPI_ERR_NO_MEM;
}
TERN_F_BOTH(mpi_type_create_keyval, MPI_TYPE_CREATE_KEYVAL, pmpi_type_create_keyval,
            PMPI_TYPE_CREATE_KEYVAL)

void mpi_win_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,
                            MPI_Aint *extra, MPI_Fint *ierror);
void mpi_win_create_keyval_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,
                            MPI_Aint *extra, MPI_Fint *ierror)
{
    f_keyval_t *k = f_keyval_new(copy, del, *extra, 0);
    *ierror = k ? MPI_Win_create_keyval(f_copy, f_delete, keyval, k) : MPI_ERR_NO_MEM;
}
TERN_F_BOTH(mpi_win_create_keyval, MPI_WIN_CREATE_KEYVAL, pmpi_win_create_keyval,
            PMPI_WIN_CREATE_KEYVAL)

void mpi_keyval_create_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Fint *extra,
                        MPI_Fint *ierror);
void mpi_keyval_create_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Fint *extra,
                        MPI_Fint *ierror)
{
    f_keyval_t *k = f_keyval_new(copy, del, *extra, 1);
    *ierror = k ? MPI_Keyval_create(f_copy, f_delete, keyval, k) : MPI_ERR_NO_MEM;
}
TERN_F_BOTH(mpi_keyval_create, MPI_KEYVAL_CREATE, pmpi_keyval_create, PMPI_KEYVAL_CREATE)

/* The predefined callbacks, as Fortran subroutines (the C ones, of the same
 * names in upper case, have C's conventions: only the gfortran and g77
 * manglings here). */
#define TERN_F_LOWER_ALIASES(lower) __asm__(".globl " #lower "__\n.set " #lower "__, " #lower "_\n");

void mpi_comm_null_copy_fn_(MPI_Fint *old, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
                            MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_comm_null_copy_fn_(MPI_Fint *old, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
                            MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)old, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    *ierror = MPI_SUCCESS;
}
TERN_F_LOWER_ALIASES(mpi_comm_null_copy_fn)
__asm__(".globl mpi_type_null_copy_fn_\n.set mpi_type_null_copy_fn_, mpi_comm_null_copy_fn_\n");
TERN_F_LOWER_ALIASES(mpi_type_null_copy_fn)
__asm__(".globl mpi_win_null_copy_fn_\n.set mpi_win_null_copy_fn_, mpi_comm_null_copy_fn_\n");
TERN_F_LOWER_ALIASES(mpi_win_null_copy_fn)

void mpi_comm_dup_fn_(MPI_Fint *old, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
                      MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_comm_dup_fn_(MPI_Fint *old, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in,
                      MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)old, (void)keyval, (void)extra;
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}
TERN_F_LOWER_ALIASES(mpi_comm_dup_fn)
__asm__(".globl mpi_type_dup_fn_\n.set mpi_type_dup_fn_, mpi_comm_dup_fn_\n");
TERN_F_LOWER_ALIASES(mpi_type_dup_fn)
__asm__(".globl mpi_win_dup_fn_\n.set mpi_win_dup_fn_, mpi_comm_dup_fn_\n");
TERN_F_LOWER_ALIASES(mpi_win_dup_fn)

void mpi_comm_null_delete_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Aint *extra,
                              MPI_Fint *ierror);
void mpi_comm_null_delete_fn_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Aint *extra,
                              MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)val, (void)extra;
    *ierror = MPI_SUCCESS;
}
TERN_F_LOWER_ALIASES(mpi_comm_null_delete_fn)
__asm__(".globl mpi_type_null_delete_fn_\n.set mpi_type_null_delete_fn_, mpi_comm_null_delete_fn_\n"
        ".globl mpi_null_delete_fn_\n.set mpi_null_delete_fn_, mpi_comm_null_delete_fn_\n");
TERN_F_LOWER_ALIASES(mpi_type_null_delete_fn)
__asm__(".globl mpi_win_null_delete_fn_\n.set mpi_win_null_delete_fn_, mpi_comm_null_delete_fn_\n");
TERN_F_LOWER_ALIASES(mpi_win_null_delete_fn)
TERN_F_LOWER_ALIASES(mpi_null_delete_fn)

/* MPI-1's, with INTEGER values. */
void mpi_null_copy_fn_(MPI_Fint *old, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in,
                       MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror);
void mpi_null_copy_fn_(MPI_Fint *old, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in,
                       MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)old, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    *ierror = MPI_SUCCESS;
}
TERN_F_LOWER_ALIASES(mpi_null_copy_fn)

void mpi_dup_fn_(MPI_Fint *old, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out,
                 MPI_Fint *flag, MPI_Fint *ierror);
void mpi_dup_fn_(MPI_Fint *old, MPI_Fint *keyval, MPI_Fint *extra, MPI_Fint *in, MPI_Fint *out,
                 MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)old, (void)keyval, (void)extra;
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}
TERN_F_LOWER_ALIASES(mpi_dup_fn)

/* ------------------------------------------------------------------------ */
/* Attribute values: Fortran sets and gets the integer. The predefined
 * communicator attributes hold a pointer to a C int: Fortran gets the int. */

static MPI_Aint f_attr_value(int keyval, void *v)
{
    switch (keyval) {
    case MPI_TAG_UB: case MPI_HOST: case MPI_IO: case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE: case MPI_LASTUSEDCODE: case MPI_APPNUM:
        return v ? *(int *)v : 0;
    default:
        return (MPI_Aint)v;
    }
}

/* The predefined window attributes: MPI_WIN_BASE is the address itself,
 * MPI_WIN_SIZE points to an MPI_Aint, the others to a C int. */
static MPI_Aint f_win_attr_value(int keyval, void *v)
{
    switch (keyval) {
    case MPI_WIN_SIZE:
        return v ? *(MPI_Aint *)v : 0;
    case MPI_WIN_DISP_UNIT: case MPI_WIN_CREATE_FLAVOR: case MPI_WIN_MODEL:
        return v ? *(int *)v : 0;
    default:
        return (MPI_Aint)v;
    }
}

/* MPI_<KIND>_GET_ATTR of every handle kind (all handles are ints): get is
 * the C procedure, value turns what it found into Fortran's integer (NULL:
 * the pointer's value itself). */
typedef int c_get_attr_fn(int obj, int keyval, void *value, int *flag);

static void f_get_attr(c_get_attr_fn *get, MPI_Aint (*value)(int, void *), MPI_Fint obj,
                       MPI_Fint keyval, MPI_Aint *val, MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    int found = 0;
    *ierror = get(obj, keyval, &v, &found);
    if (*ierror == MPI_SUCCESS) {
        *flag = found != 0;
        if (found)
            *val = value ? value(keyval, v) : (MPI_Aint)v;
    }
}

void mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                        MPI_Fint *ierror);
void mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                        MPI_Fint *ierror)
{
    f_get_attr(MPI_Comm_get_attr, f_attr_value, *comm, *keyval, val, flag, ierror);
}
TERN_F_BOTH(mpi_comm_get_attr, MPI_COMM_GET_ATTR, pmpi_comm_get_attr, PMPI_COMM_GET_ATTR)

void mpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                        MPI_Fint *ierror);
void mpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                        MPI_Fint *ierror)
{
    f_get_attr(MPI_Type_get_attr, NULL, *type, *keyval, val, flag, ierror);
}
TERN_F_BOTH(mpi_type_get_attr, MPI_TYPE_GET_ATTR, pmpi_type_get_attr, PMPI_TYPE_GET_ATTR)

void mpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                       MPI_Fint *ierror);
void mpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                       MPI_Fint *ierror)
{
    f_get_attr(MPI_Win_get_attr, f_win_attr_value, *win, *keyval, val, flag, ierror);
}
TERN_F_BOTH(mpi_win_get_attr, MPI_WIN_GET_ATTR, pmpi_win_get_attr, PMPI_WIN_GET_ATTR)

void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag,
                   MPI_Fint *ierror);
void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag,
                   MPI_Fint *ierror)
{
    void *v = NULL;
    int found = 0;
    *ierror = MPI_Attr_get(*comm, *keyval, &v, &found);
    if (*ierror == MPI_SUCCESS) {
        *flag = found != 0;
        if (found)
            *val = (MPI_Fint)f_attr_value(*keyval, v);
    }
}
TERN_F_BOTH(mpi_attr_get, MPI_ATTR_GET, pmpi_attr_get, PMPI_ATTR_GET)

/* ------------------------------------------------------------------------ */
/* Generalized requests with Fortran callbacks: query(extra_state, status,
 * ierror), free(extra_state, ierror), cancel(extra_state, complete, ierror),
 * the extra state an INTEGER(KIND=MPI_ADDRESS_KIND). As in MPICH, the
 * callbacks get the program's own variable (its address is kept), so what
 * they write there the program sees (MPICH's f77/pt2pt/greqf relies on it).
 * The record lives until the free callback has run. */

typedef void f_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void f_free_fn(MPI_Aint *extra, MPI_Fint *ierror);
typedef void f_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror);

typedef struct {
    f_query_fn *query;
    f_free_fn *free;
    f_cancel_fn *cancel;
    MPI_Aint *extra;
} f_grequest_t;

static int f_grequest_query(void *extra, MPI_Status *status)
{
    f_grequest_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(g->extra, (MPI_Fint *)(void *)status, &ierr);
    return ierr;
}

static int f_grequest_free(void *extra)
{
    f_grequest_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(g->extra, &ierr);
    free(g);
    return ierr;
}

static int f_grequest_cancel(void *extra, int complete)
{
    f_grequest_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, fcomplete = complete != 0;
    g->cancel(g->extra, &fcomplete, &ierr);
    return ierr;
}

void mpi_grequest_start_(f_query_fn *query, f_free_fn *free_fn, f_cancel_fn *cancel,
                         MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror);
void mpi_grequest_start_(f_query_fn *query, f_free_fn *free_fn, f_cancel_fn *cancel,
                         MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
    f_grequest_t *g = malloc(sizeof *g);
    if (!g) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    *g = (f_grequest_t){query, free_fn, cancel, extra};
    *ierror = MPI_Grequest_start(f_grequest_query, f_grequest_free, f_grequest_cancel, g, request);
    if (*ierror != MPI_SUCCESS)
        free(g);
}
TERN_F_BOTH(mpi_grequest_start, MPI_GREQUEST_START, pmpi_grequest_start, PMPI_GREQUEST_START)
