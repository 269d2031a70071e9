/* The MPICH ABI face: what libmpich.so.12 adds to Tern's objects so that a
 * binary built with MPICH (Debian's mpicc.mpich, libhdf5-mpich...) runs
 * on Tern unchanged (docs/design.md, "The MPICH ABI face").
 *
 * Tern's mpi.h has MPICH's handle values, constants and MPI_Status layout
 * (tests/abi_mpich/abi_compare.py checks it), so every procedure is
 * Tern's own entry point but these:
 *  - MPI_File is a pointer in MPICH (MPI_FILE_NULL is 0): the procedures
 *    that write a file handle (open, close, f2c) write 8 bytes, and those
 *    that accept MPI_FILE_NULL (the default file error handler, c2f) map 0
 *    to Tern's MPI_FILE_NULL. Tern's entry points for them are
 *    tern_face_PMPI_File_* with weak MPI_/PMPI_ aliases
 *    (tools/bindgen/checks.py, ABI_FACE_REPLACED), which the definitions
 *    here replace in this library. A file handle passed by value is read
 *    as the int in its low half, as x86-64 and AArch64 pass it.
 *  - MPI_Get_version says MPICH 4.0.2's level, 4.0: its binaries were
 *    compiled against MPI_VERSION 4 / MPI_SUBVERSION 0 and may compare
 *    (MPICH's own suite does); libtern and libmpi_abi say 5.0.
 *  - MPICH 4.0's MPIX_ names of procedures Tern has under MPI-4.1's names,
 *    and MPI-1's MPI_Type_hvector/hindexed (MPICH still has them);
 *  - the data symbols MPICH's mpi.h refers to (MPI_UNWEIGHTED,
 *    MPI_F_STATUS_IGNORE...), holding Tern's values, and MPIR_Dup_fn
 *    (MPICH's MPI_DUP_FN, MPI_COMM_DUP_FN...).
 *  - the three hooks of MPICH's C++ binding (MPII_*, at the end).
 * MPICH's null callbacks (MPI_COMM_NULL_COPY_FN...) are NULL pointers,
 * which Tern's attribute code already takes as "none". */
#include <mpi.h>

#include "core/datatype/op.h"
#include "core/runtime/attr.h"
#include "mpi/mpi_errors.h"

#include <stdint.h>
#include <stdlib.h>

typedef uintptr_t mpich_file_t; /* MPICH's MPI_File: an address, MPI_FILE_NULL 0 */

int tern_face_PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                              MPI_File *fh);
int tern_face_PMPI_File_close(MPI_File *fh);
MPI_File tern_face_PMPI_File_f2c(MPI_Fint file);
MPI_Fint tern_face_PMPI_File_c2f(MPI_File file);
int tern_face_PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler);
int tern_face_PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler);
int tern_face_PMPI_File_call_errhandler(MPI_File fh, int errorcode);
int tern_face_PMPI_Get_version(int *version, int *subversion);

static MPI_File to_tern(mpich_file_t f)
{
    return f ? (MPI_File)(uint32_t)f : MPI_FILE_NULL;
}

static mpich_file_t to_mpich(MPI_File f)
{
    return f == MPI_FILE_NULL ? 0 : (mpich_file_t)(uint32_t)f;
}

/* Each face procedure is defined under a C name of its own and exported
 * under the PMPI_ name (an asm label: mpi.h declares the names with
 * Tern's int MPI_File) and the MPI_ name (an alias), both strong: they
 * replace the weak aliases of Tern's entry point. */
#define FACE(ret, name, params)                                                                    \
    ret face_##name params __asm__("P" #name);                                                     \
    ret face_mpi_##name params __asm__(#name) __attribute__((alias("P" #name)));                   \
    ret face_##name params

FACE(int, MPI_File_open,
     (MPI_Comm comm, const char *filename, int amode, MPI_Info info, mpich_file_t *fh))
{
    MPI_File f = MPI_FILE_NULL;
    int err = tern_face_PMPI_File_open(comm, filename, amode, info, fh ? &f : NULL);
    if (fh)
        *fh = to_mpich(f);
    return err;
}

FACE(int, MPI_File_close, (mpich_file_t *fh))
{
    if (!fh)
        return tern_face_PMPI_File_close(NULL);
    MPI_File f = to_tern(*fh);
    int err = tern_face_PMPI_File_close(&f);
    *fh = to_mpich(f);
    return err;
}

FACE(mpich_file_t, MPI_File_f2c, (MPI_Fint file))
{
    return to_mpich(tern_face_PMPI_File_f2c(file));
}

/* The MPI level of MPICH 4.0.2's mpi.h, which the face's binaries were
 * built with; errors (a NULL argument) as libtern reports them. */
FACE(int, MPI_Get_version, (int *version, int *subversion))
{
    int err = tern_face_PMPI_Get_version(version, subversion);
    if (err == MPI_SUCCESS) {
        *version = 4;
        *subversion = 0;
    }
    return err;
}

FACE(MPI_Fint, MPI_File_c2f, (mpich_file_t file))
{
    return tern_face_PMPI_File_c2f(to_tern(file));
}

FACE(int, MPI_File_set_errhandler, (mpich_file_t file, MPI_Errhandler errhandler))
{
    return tern_face_PMPI_File_set_errhandler(to_tern(file), errhandler);
}

FACE(int, MPI_File_get_errhandler, (mpich_file_t file, MPI_Errhandler *errhandler))
{
    return tern_face_PMPI_File_get_errhandler(to_tern(file), errhandler);
}

FACE(int, MPI_File_call_errhandler, (mpich_file_t fh, int errorcode))
{
    return tern_face_PMPI_File_call_errhandler(to_tern(fh), errorcode);
}

/* MPICH 4.0's names for MPI-4.1's MPI_Remove_error_class/code/string
 * (its test suite's errhan/adderr calls them), with their PMPIX_ twins:
 * errors raised there name the MPI-4.1 procedure. */
#define RENAMED(mpix, pmpi)                                                                        \
    int face_##mpix(int x) __asm__("P" #mpix);                                                     \
    int face_mpi_##mpix(int x) __asm__(#mpix) __attribute__((alias("P" #mpix)));                   \
    int face_##mpix(int x) { return pmpi(x); }
RENAMED(MPIX_Delete_error_class, PMPI_Remove_error_class)
RENAMED(MPIX_Delete_error_code, PMPI_Remove_error_code)
RENAMED(MPIX_Delete_error_string, PMPI_Remove_error_string)

/* MPI-1's MPI_Type_hvector and MPI_Type_hindexed, removed in MPI-3.0 but
 * still in MPICH's library (its test suite's harness, dtpools, calls
 * them): in C they were MPI_Type_create_hvector/hindexed under older names
 * (same arguments, combiner MPI_COMBINER_HVECTOR/HINDEXED). */
int face_type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype) __asm__("PMPI_Type_hvector");
int face_mpi_type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                          MPI_Datatype *newtype) __asm__("MPI_Type_hvector")
    __attribute__((alias("PMPI_Type_hvector")));
int face_type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

int face_type_hindexed(int count, int *blocklengths, MPI_Aint *displacements,
                       MPI_Datatype oldtype, MPI_Datatype *newtype) __asm__("PMPI_Type_hindexed");
int face_mpi_type_hindexed(int count, int *blocklengths, MPI_Aint *displacements,
                           MPI_Datatype oldtype, MPI_Datatype *newtype)
    __asm__("MPI_Type_hindexed") __attribute__((alias("PMPI_Type_hindexed")));
int face_type_hindexed(int count, int *blocklengths, MPI_Aint *displacements,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype);
}

/* MPICH's MPI_DUP_FN (and MPI_COMM_DUP_FN, MPI_TYPE_DUP_FN, MPI_WIN_DUP_FN):
 * the attribute's value is copied. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag);
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* The data symbols of MPICH's mpi.h, with Tern's values. */
#define DATA(type, cname, sym) type cname __asm__(sym)
DATA(int *const, face_unweighted, "MPI_UNWEIGHTED") = MPI_UNWEIGHTED;
DATA(int *const, face_weights_empty, "MPI_WEIGHTS_EMPTY") = MPI_WEIGHTS_EMPTY;
DATA(int, face_c_unweighted, "MPIR_C_MPI_UNWEIGHTED");
DATA(int, face_c_weights_empty, "MPIR_C_MPI_WEIGHTS_EMPTY");
/* Fortran's MPI_STATUS(ES)_IGNORE seen from C: addresses no status has. */
static MPI_Fint f_status_ignore[MPI_F_STATUS_SIZE], f_statuses_ignore[MPI_F_STATUS_SIZE];
DATA(MPI_Fint *, face_f_status_ignore, "MPI_F_STATUS_IGNORE") = f_status_ignore;
DATA(MPI_Fint *, face_f_statuses_ignore, "MPI_F_STATUSES_IGNORE") = f_statuses_ignore;
DATA(MPI_F08_status, face_f08_status_obj, "MPIR_F08_MPI_STATUS_IGNORE_OBJ");
MPI_F08_status face_f08_statuses_obj[1] __asm__("MPIR_F08_MPI_STATUSES_IGNORE_OBJ");
DATA(MPI_F08_status *, face_f08_status_ignore, "MPI_F08_STATUS_IGNORE") = &face_f08_status_obj;
DATA(MPI_F08_status *, face_f08_statuses_ignore, "MPI_F08_STATUSES_IGNORE") =
    face_f08_statuses_obj;
DATA(int, face_f08_in_place, "MPIR_F08_MPI_IN_PLACE");
DATA(int, face_f08_bottom, "MPIR_F08_MPI_BOTTOM");

/* MPICH's C++ binding (libmpichcxx.so.12, which a program using MPI::
 * links) is MPICH's own library over libmpich.so.12's MPI_ procedures and
 * three hooks that let it call the program's C++ callbacks: after creating
 * a user op, error handler or keyval with the C procedure, it gives the C
 * function of its own that calls a C++ one (MPICH 4.0's src/binding/cxx).
 * With them here, MPICH's libmpichcxx.so.12 runs on Tern unchanged
 * (docs/design.md, "The MPICH ABI face"). */
/* Reductions: apply calls opcall(in, inout, len, datatype, fn). */
void MPII_Op_set_cxx(MPI_Op op, void (*opcall)(void));
void MPII_Op_set_cxx(MPI_Op op, void (*opcall)(void))
{
    tern_op_set_invoker(op, (tern_op_invoker_fn *)opcall);
}

/* Error handlers: errcall(kind, &handle, &code, fn), kind 0 for a
 * communicator, 1 a file (the handle an 8-byte MPI_File), 2 a window. */
typedef void mpich_errcall_fn(int kind, int *handle, int *code, void (*fn)(void));
static mpich_errcall_fn *face_errcall;

static void face_eh_invoke(int kind, int *obj, int *code, void (*fn)(void))
{
    int k = kind == TERN_EH_FOR_FILE ? 1 : kind == TERN_EH_FOR_WIN ? 2 : 0;
    face_errcall(k, obj, code, fn);
}

void MPII_Errhandler_set_cxx(MPI_Errhandler errhand, void (*errcall)(void));
void MPII_Errhandler_set_cxx(MPI_Errhandler errhand, void (*errcall)(void))
{
    face_errcall = (mpich_errcall_fn *)errcall; /* one per process, as in MPICH */
    tern_errhandler_set_invoker(errhand, face_eh_invoke);
}

/* Keyvals: the copy and delete callbacks go through proxies that take the
 * user's function, the object's handle and MPICH's kind of attribute value
 * (MPIR_ATTR_PTR, 0: C's void *, which every value Tern keeps is). The
 * keyval's callbacks become ones that call the proxies, its extra state a
 * record of both (kept for the life of the process: attributes may outlive
 * their keyval). */
typedef int mpich_copy_proxy_fn(tern_attr_copy_fn *user_function, int handle, int keyval,
                                void *extra_state, int attrib_type, void *attrib,
                                void **attrib_copy, int *flag);
typedef int mpich_delete_proxy_fn(tern_attr_delete_fn *user_function, int handle, int keyval,
                                  int attrib_type, void *attrib, void *extra_state);
typedef struct {
    tern_attr_copy_fn *copy;
    tern_attr_delete_fn *del;
    void *extra;
    mpich_copy_proxy_fn *copy_proxy;
    mpich_delete_proxy_fn *delete_proxy;
} face_keyval_t;
enum { MPIR_ATTR_PTR = 0 };

static int face_copy(int oldobj, int keyval, void *extra_state, void *in, void *out, int *flag)
{
    face_keyval_t *k = extra_state;
    if (!k->copy) { /* MPI_*_NULL_COPY_FN */
        *flag = 0;
        return MPI_SUCCESS;
    }
    return k->copy_proxy(k->copy, oldobj, keyval, k->extra, MPIR_ATTR_PTR, in, out, flag);
}

static int face_delete(int obj, int keyval, void *value, void *extra_state)
{
    face_keyval_t *k = extra_state;
    if (!k->del) /* MPI_*_NULL_DELETE_FN */
        return MPI_SUCCESS;
    return k->delete_proxy(k->del, obj, keyval, MPIR_ATTR_PTR, value, k->extra);
}

void MPII_Keyval_set_proxy(int keyval, mpich_copy_proxy_fn *copy_proxy,
                           mpich_delete_proxy_fn *delete_proxy);
void MPII_Keyval_set_proxy(int keyval, mpich_copy_proxy_fn *copy_proxy,
                           mpich_delete_proxy_fn *delete_proxy)
{
    tern_keyval_t *kv = tern_keyval_lookup(keyval);
    face_keyval_t *k;
    if (!kv || !copy_proxy || !delete_proxy || kv->copy_fn == face_copy ||
        !(k = malloc(sizeof *k)))
        return;
    *k = (face_keyval_t){kv->copy_fn, kv->delete_fn, kv->extra_state, copy_proxy, delete_proxy};
    kv->extra_state = k;
    kv->copy_fn = face_copy;
    kv->delete_fn = face_delete;
}
