/* Argument checks by parameter kind (mpi_checks.h). */
#include "mpi/mpi_checks.h"
#include "core/datatype/op.h"
#include "core/datatype/dtype_query.h"

#include <string.h>

int tern_check_ptr(const char *func, int err_obj, const void *ptr, const char *name)
{
    if (__builtin_expect(ptr != NULL, 1))
        return MPI_SUCCESS;
    return tern_mpi_error(err_obj, MPI_ERR_ARG, func, "%s is NULL", name);
}

int tern_check_array(const char *func, int err_obj, const void *array, long n,
                     const char *name)
{
    if (__builtin_expect(array != NULL || n <= 0, 1))
        return MPI_SUCCESS;
    return tern_mpi_error(err_obj, MPI_ERR_ARG, func, "%s is NULL (%ld elements)", name, n);
}

int tern_check_group(const char *func, int err_obj, MPI_Group g, tern_group_t **g_p)
{
    tern_group_t *grp = tern_group_lookup(g);
    if (__builtin_expect(!grp, 0)) {
        if (g == MPI_GROUP_NULL)
            return tern_mpi_error(err_obj, MPI_ERR_GROUP, func, "group is MPI_GROUP_NULL");
        return tern_mpi_error(err_obj, MPI_ERR_GROUP, func, "invalid group handle 0x%x",
                              (unsigned)g);
    }
    *g_p = grp;
    return MPI_SUCCESS;
}

int tern_check_info(const char *func, int err_obj, MPI_Info handle, int flags,
                    tern_info_t **info_p)
{
    tern_info_t *info = tern_info_lookup(handle);
    if (!info && handle == MPI_INFO_NULL && (flags & TERN_INFO_NULL_OK)) {
        *info_p = NULL;
        return MPI_SUCCESS;
    }
    if (!info) {
        if (handle == MPI_INFO_NULL)
            return tern_mpi_error(err_obj, MPI_ERR_INFO, func, "info is MPI_INFO_NULL");
        return tern_mpi_error(err_obj, MPI_ERR_INFO, func, "invalid info handle 0x%x",
                              (unsigned)handle);
    }
    if ((flags & TERN_INFO_WRITABLE) && info->read_only)
        return tern_mpi_error(err_obj, MPI_ERR_INFO, func, "MPI_INFO_ENV is read-only");
    *info_p = info;
    return MPI_SUCCESS;
}

/* A string of 1..max characters, else an error of class errclass. */
static int check_string(const char *func, int err_obj, const char *s, size_t max,
                        int errclass, const char *name)
{
    if (!s)
        return tern_mpi_error(err_obj, errclass, func, "%s is NULL", name);
    size_t n = strnlen(s, max + 1);
    if (n == 0 || n > max)
        return tern_mpi_error(err_obj, errclass, func, "%s of %s%zu characters (must be 1..%zu)",
                              name, n > max ? "more than " : "", n > max ? max : n, max);
    return MPI_SUCCESS;
}

int tern_check_info_key(const char *func, int err_obj, const char *key)
{
    return check_string(func, err_obj, key, MPI_MAX_INFO_KEY, MPI_ERR_INFO_KEY, "key");
}

int tern_check_info_value(const char *func, int err_obj, const char *value)
{
    return check_string(func, err_obj, value, MPI_MAX_INFO_VAL, MPI_ERR_INFO_VALUE, "value");
}

int tern_check_keyval(const char *func, int err_obj, int keyval, int writable)
{
    if (__builtin_expect(tern_keyval_lookup(keyval) != NULL, 1))
        return MPI_SUCCESS;
    if (tern_keyval_is_predefined(keyval)) {
        if (!writable)
            return MPI_SUCCESS;
        return tern_mpi_error(err_obj, MPI_ERR_KEYVAL, func,
                              "keyval 0x%x is predefined and read-only", (unsigned)keyval);
    }
    if (keyval == MPI_KEYVAL_INVALID)
        return tern_mpi_error(err_obj, MPI_ERR_KEYVAL, func, "keyval is MPI_KEYVAL_INVALID");
    return tern_mpi_error(err_obj, MPI_ERR_KEYVAL, func, "invalid keyval 0x%x", (unsigned)keyval);
}

int tern_check_op(const char *func, int err_obj, MPI_Op op)
{
    if (__builtin_expect(tern_op_is_valid(op), 1))
        return MPI_SUCCESS;
    return tern_mpi_error(err_obj, MPI_ERR_OP, func,
                          op == MPI_OP_NULL ? "op is MPI_OP_NULL" : "invalid op handle 0x%x",
                          (unsigned)op);
}

int tern_check_win_failed(const char *func, int err_obj, MPI_Win win)
{
    return tern_mpi_error(err_obj, MPI_ERR_WIN, func,
                          win == MPI_WIN_NULL ? "win is MPI_WIN_NULL" : "invalid window 0x%x",
                          (unsigned)win);
}

int tern_check_file(const char *func, int err_obj, MPI_File fh, tern_file_t **f_p)
{
    if (__builtin_expect((*f_p = tern_file_lookup(fh)) != NULL, 1))
        return MPI_SUCCESS;
    return tern_mpi_error(err_obj, MPI_ERR_FILE, func,
                          fh == MPI_FILE_NULL ? "fh is MPI_FILE_NULL" : "invalid file 0x%x",
                          (unsigned)fh);
}

int tern_check_type(const char *func, int err_obj, MPI_Datatype dt, const char *name)
{
    if (__builtin_expect(tern_dtype_exists(dt), 1))
        return MPI_SUCCESS;
    return tern_mpi_result(err_obj, func, tern_dtype_check_exists(dt, name));
}

int tern_check_committed_type_any(const char *func, int err_obj, MPI_Datatype dt,
                                  const char *name)
{
    if (__builtin_expect(tern_datatype_is_valid(dt), 1))
        return MPI_SUCCESS;
    return tern_mpi_result(err_obj, func, tern_dtype_check_committed(dt, name));
}

int tern_check_negative(const char *func, int err_obj, MPI_Count n, const char *name,
                        int errclass)
{
    return tern_mpi_error(err_obj, errclass, func, "%s=%lld is negative", name, (long long)n);
}

int tern_check_order(const char *func, int err_obj, int order)
{
    if (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN)
        return MPI_SUCCESS;
    return tern_mpi_error(err_obj, MPI_ERR_ARG, func,
                          "order=%d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
}

int tern_check_status(const char *func, int err_obj, const MPI_Status *status)
{
    if (__builtin_expect(status && status != MPI_STATUS_IGNORE, 1))
        return MPI_SUCCESS;
    return tern_mpi_error(err_obj, MPI_ERR_ARG, func, "status is %s",
                          status ? "MPI_STATUS_IGNORE" : "NULL");
}
