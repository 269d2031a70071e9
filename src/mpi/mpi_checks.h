/* The argument checks generated entry points (src/mpi/gen, tools/bindgen)
 * call, one per parameter kind, and the mapping of a core function's status
 * to the call's result. Each check returns MPI_SUCCESS or the error code
 * already raised through err_obj's error handler, with a message naming
 * the function and the argument. */
#ifndef TERN_MPI_CHECKS_H
#define TERN_MPI_CHECKS_H

#include "core/comm/attr.h"
#include "core/group/group.h"
#include "core/info/info.h"
#include "core/pt2pt/request.h"
#include "core/io/file.h"
#include "core/rma/window.h"
#include "mpi/mpi_errors.h"
#include "mpi/mpi_p2p.h"

/* MPI_ERR_ARG unless ptr is non-NULL. */
int tern_check_ptr(const char *func, int err_obj, const void *ptr, const char *name);
/* MPI_ERR_ARG when an array of n > 0 elements is NULL. */
int tern_check_array(const char *func, int err_obj, const void *array, long n,
                     const char *name);
/* MPI_ERR_GROUP unless g is a live group (MPI_GROUP_EMPTY included). */
int tern_check_group(const char *func, int err_obj, MPI_Group g, tern_group_t **g_p);
/* MPI_ERR_INFO unless handle is a live info object: MPI_INFO_ENV included
 * unless flags has TERN_INFO_WRITABLE (it is read-only); MPI_INFO_NULL
 * (*info_p = NULL) when flags has TERN_INFO_NULL_OK (hints). */
enum { TERN_INFO_WRITABLE = 1, TERN_INFO_NULL_OK = 2 };
int tern_check_info(const char *func, int err_obj, MPI_Info handle, int flags,
                    tern_info_t **info_p);
/* MPI_ERR_INFO_KEY / MPI_ERR_INFO_VALUE unless the string is non-NULL and
 * 1..MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL characters long. */
int tern_check_info_key(const char *func, int err_obj, const char *key);
int tern_check_info_value(const char *func, int err_obj, const char *value);
/* MPI_ERR_OP unless op is a live reduction operation (predefined or
 * user-defined). */
int tern_check_op(const char *func, int err_obj, MPI_Op op);
/* MPI_ERR_FILE unless fh is a live file. */
int tern_check_file(const char *func, int err_obj, MPI_File fh, tern_file_t **f_p);
/* A live window (MPI_ERR_WIN otherwise). Inline: every put, get and flush
 * checks one. */
__attribute__((cold)) int tern_check_win_failed(const char *func, int err_obj, MPI_Win win);
static inline int tern_check_win(const char *func, int err_obj, MPI_Win win, tern_win_t **w_p)
{
    if (__builtin_expect((*w_p = tern_win_lookup(win)) != NULL, 1))
        return MPI_SUCCESS;
    return tern_check_win_failed(func, err_obj, win);
}

/* MPI_ERR_KEYVAL unless keyval is a keyval the user holds or (unless
 * writable) a predefined one. */
int tern_check_keyval(const char *func, int err_obj, int keyval, int writable);

/* Datatypes. MPI_ERR_TYPE unless dt names a type, committed or not
 * (constructors and queries take uncommitted types); name: the argument. */
int tern_check_type(const char *func, int err_obj, MPI_Datatype dt, const char *name);
/* MPI_ERR_TYPE unless data can move with dt: predefined or committed (pack,
 * unpack, the counts of a status). */
int tern_check_committed_type_any(const char *func, int err_obj, MPI_Datatype dt,
                                  const char *name);
/* Inline for the common predefined types (one compare and one load), the
 * call for the others. */
static inline int tern_check_committed_type(const char *func, int err_obj, MPI_Datatype dt,
                                            const char *name)
{
    if (__builtin_expect(tern_datatype_is_plain(dt), 1))
        return MPI_SUCCESS;
    return tern_check_committed_type_any(func, err_obj, dt, name);
}
/* errclass unless n >= 0 (inline: counts are checked on fast paths). */
__attribute__((cold)) int tern_check_negative(const char *func, int err_obj, MPI_Count n,
                                              const char *name, int errclass);
static inline int tern_check_nonneg(const char *func, int err_obj, MPI_Count n,
                                    const char *name, int errclass)
{
    if (__builtin_expect(n >= 0, 1))
        return MPI_SUCCESS;
    return tern_check_negative(func, err_obj, n, name, errclass);
}
/* MPI_ERR_ARG unless order is MPI_ORDER_C or MPI_ORDER_FORTRAN. */
int tern_check_order(const char *func, int err_obj, int order);
/* MPI_ERR_ARG unless status is a status to read or write: not NULL, not
 * MPI_STATUS_IGNORE. */
int tern_check_status(const char *func, int err_obj, const MPI_Status *status);

/* MPI_SUCCESS for TERN_OK; otherwise raises the status's class on err_obj
 * with the core's detail text (tern_status_detail) or the status's own. */
static inline int tern_mpi_result(int err_obj, const char *func, tern_status_t st)
{
    if (__builtin_expect(st == TERN_OK, 1))
        return MPI_SUCCESS;
    return tern_mpi_raise(err_obj, func, st);
}

#endif
