/* Attributes from Fortran: keyvals whose copy/delete callbacks are Fortran
 * subroutines, the predefined callbacks with Fortran's conventions
 * (MPI_COMM_DUP_FN...), and attribute values.
 *
 * A value Fortran sets is an integer, and MPI-4.1 19.3.7 says C reads it
 * through a pointer to MPI's storage of it (Example 19.16: "value points to
 * internal MPI storage and *value == 7"), while Fortran reads back the
 * integer and reads a value C set as the pointer's address. So a Fortran
 * set stores a box (an MPI_Aint, malloc'ed) as the C value, and the boxes
 * are remembered: a Fortran get of a box gives its integer, of anything
 * else the address. A Fortran keyval's trampolines unbox for the Fortran
 * callbacks (a copy makes a new box) and free a box when its attribute
 * goes; a box under a C keyval lives to the end (C callbacks may have
 * copied the pointer). */
#include "fortran/fortran_support.h"

#include <pthread.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* The boxes: a hash set of their addresses. */

#define BOX_BUCKETS 256

typedef struct f_box {
    MPI_Aint value;
    struct f_box *next;
} f_box_t;

static f_box_t *boxes[BOX_BUCKETS];
static pthread_mutex_t boxes_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned box_bucket(const void *p)
{
    return (unsigned)(((uintptr_t)p >> 4) % BOX_BUCKETS);
}

static f_box_t *box_new(MPI_Aint value)
{
    f_box_t *b = malloc(sizeof *b);
    if (!b)
        return NULL;
    b->value = value;
    pthread_mutex_lock(&boxes_lock);
    unsigned h = box_bucket(b);
    b->next = boxes[h];
    boxes[h] = b;
    pthread_mutex_unlock(&boxes_lock);
    return b;
}

/* Whether v is a live box; *value its integer if so. */
static int box_find(const void *v, MPI_Aint *value)
{
    int found = 0;
    pthread_mutex_lock(&boxes_lock);
    for (f_box_t *b = boxes[box_bucket(v)]; b; b = b->next)
        if ((const void *)b == v) {
            *value = b->value;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&boxes_lock);
    return found;
}

static void box_free(void *v)
{
    pthread_mutex_lock(&boxes_lock);
    for (f_box_t **p = &boxes[box_bucket(v)]; *p; p = &(*p)->next)
        if ((void *)*p == v) {
            f_box_t *b = *p;
            *p = b->next;
            free(b);
            break;
        }
    pthread_mutex_unlock(&boxes_lock);
}

/* The integer Fortran sees for the C value v: a box's, else the address. */
static MPI_Aint f_value(void *v)
{
    MPI_Aint x;
    return box_find(v, &x) ? x : (MPI_Aint)v;
}

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
 * are ints. The Fortran callbacks see integers; what a copy makes is a
 * value Fortran set (a new box). */
static int f_copy(int old, int keyval, void *extra, void *in, void *out, int *flag)
{
    f_keyval_t *k = extra;
    MPI_Fint fold = old, fkey = keyval, fflag = 0, ierr = MPI_SUCCESS;
    MPI_Aint result = 0;
    if (k->ints) {
        MPI_Fint e = (MPI_Fint)k->extra, vin = (MPI_Fint)f_value(in), vout = 0;
        ((f_copy_int_fn *)(void *)k->copy)(&fold, &fkey, &e, &vin, &vout, &fflag, &ierr);
        result = vout;
    } else {
        MPI_Aint vin = f_value(in), vout = 0;
        ((f_copy_fn *)(void *)k->copy)(&fold, &fkey, &k->extra, &vin, &vout, &fflag, &ierr);
        result = vout;
    }
    *flag = fflag != 0;
    if (ierr == MPI_SUCCESS && *flag) {
        f_box_t *b = box_new(result);
        if (!b)
            return MPI_ERR_NO_MEM;
        *(void **)out = b;
    }
    return ierr;
}

static int f_delete(int obj, int keyval, void *val, void *extra)
{
    f_keyval_t *k = extra;
    MPI_Fint fobj = obj, fkey = keyval, ierr = MPI_SUCCESS;
    if (k->ints) {
        MPI_Fint e = (MPI_Fint)k->extra, v = (MPI_Fint)f_value(val);
        ((f_delete_int_fn *)(void *)k->del)(&fobj, &fkey, &v, &e, &ierr);
    } else {
        MPI_Aint v = f_value(val);
        ((f_delete_fn *)(void *)k->del)(&fobj, &fkey, &v, &k->extra, &ierr);
    }
    /* A delete that fails leaves the attribute (MPI-4.1 7.7.2). */
    if (ierr == MPI_SUCCESS)
        box_free(val);
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
/* Attribute values: Fortran sets a box, and gets a box's integer or a C
 * value's address. The predefined communicator attributes hold a pointer to
 * a C int: Fortran gets the int. */

static MPI_Aint f_attr_value(int keyval, void *v)
{
    switch (keyval) {
    case MPI_TAG_UB: case MPI_HOST: case MPI_IO: case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE: case MPI_LASTUSEDCODE: case MPI_APPNUM:
        return v ? *(int *)v : 0;
    default:
        return f_value(v);
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
        return f_value(v);
    }
}

/* MPI_<KIND>_GET_ATTR of every handle kind (all handles are ints): get is
 * the C procedure, value turns what it found into Fortran's integer (NULL:
 * f_value), written as an MPI_Aint or (MPI-1's MPI_ATTR_GET) an INTEGER. */
typedef int c_get_attr_fn(int obj, int keyval, void *value, int *flag);

static void f_get_attr(c_get_attr_fn *get, MPI_Aint (*value)(int, void *), MPI_Fint obj,
                       MPI_Fint keyval, void *val, int fint, MPI_Fint *flag, MPI_Fint *ierror)
{
    void *v = NULL;
    int found = 0;
    keyval = tern_f_keyval(keyval);
    *ierror = get(obj, keyval, &v, &found);
    if (*ierror == MPI_SUCCESS) {
        *flag = found != 0;
        if (found) {
            MPI_Aint x = value ? value(keyval, v) : f_value(v);
            if (fint)
                *(MPI_Fint *)val = (MPI_Fint)x;
            else
                *(MPI_Aint *)val = x;
        }
    }
}

/* MPI_<KIND>_SET_ATTR: the value in a new box. A value it replaces went
 * to the keyval's delete callback (a Fortran keyval's freed its box). */
typedef int c_set_attr_fn(int obj, int keyval, void *value);

static void f_set_attr(c_set_attr_fn *set, MPI_Fint obj, MPI_Fint keyval, MPI_Aint value,
                       MPI_Fint *ierror)
{
    f_box_t *b = box_new(value);
    if (!b) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    *ierror = set(obj, tern_f_keyval(keyval), b);
    if (*ierror != MPI_SUCCESS)
        box_free(b);
}

void mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror)
{
    f_set_attr(MPI_Comm_set_attr, *comm, *keyval, *val, ierror);
}
TERN_F_BOTH(mpi_comm_set_attr, MPI_COMM_SET_ATTR, pmpi_comm_set_attr, PMPI_COMM_SET_ATTR)

void mpi_type_set_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void mpi_type_set_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror)
{
    f_set_attr(MPI_Type_set_attr, *type, *keyval, *val, ierror);
}
TERN_F_BOTH(mpi_type_set_attr, MPI_TYPE_SET_ATTR, pmpi_type_set_attr, PMPI_TYPE_SET_ATTR)

void mpi_win_set_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror);
void mpi_win_set_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierror)
{
    f_set_attr(MPI_Win_set_attr, *win, *keyval, *val, ierror);
}
TERN_F_BOTH(mpi_win_set_attr, MPI_WIN_SET_ATTR, pmpi_win_set_attr, PMPI_WIN_SET_ATTR)

/* MPI-1's, with an INTEGER value. */
void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierror);
void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierror)
{
    f_set_attr(MPI_Attr_put, *comm, *keyval, *val, ierror);
}
TERN_F_BOTH(mpi_attr_put, MPI_ATTR_PUT, pmpi_attr_put, PMPI_ATTR_PUT)

void mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                        MPI_Fint *ierror);
void mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                        MPI_Fint *ierror)
{
    f_get_attr(MPI_Comm_get_attr, f_attr_value, *comm, *keyval, val, 0, flag, ierror);
}
TERN_F_BOTH(mpi_comm_get_attr, MPI_COMM_GET_ATTR, pmpi_comm_get_attr, PMPI_COMM_GET_ATTR)

void mpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                        MPI_Fint *ierror);
void mpi_type_get_attr_(MPI_Fint *type, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                        MPI_Fint *ierror)
{
    f_get_attr(MPI_Type_get_attr, NULL, *type, *keyval, val, 0, flag, ierror);
}
TERN_F_BOTH(mpi_type_get_attr, MPI_TYPE_GET_ATTR, pmpi_type_get_attr, PMPI_TYPE_GET_ATTR)

void mpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                       MPI_Fint *ierror);
void mpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,
                       MPI_Fint *ierror)
{
    f_get_attr(MPI_Win_get_attr, f_win_attr_value, *win, *keyval, val, 0, flag, ierror);
}
TERN_F_BOTH(mpi_win_get_attr, MPI_WIN_GET_ATTR, pmpi_win_get_attr, PMPI_WIN_GET_ATTR)

void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag,
                   MPI_Fint *ierror);
void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag,
                   MPI_Fint *ierror)
{
    f_get_attr(MPI_Attr_get, f_attr_value, *comm, *keyval, val, 1, flag, ierror);
}
TERN_F_BOTH(mpi_attr_get, MPI_ATTR_GET, pmpi_attr_get, PMPI_ATTR_GET)
