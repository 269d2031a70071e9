/* MPI_Info objects. Keys are at most MPI_MAX_INFO_KEY characters, values
 * MPI_MAX_INFO_VAL; MPI_INFO_ENV is read-only. */
#include "core/comm/info.h"
#include "mpi/mpi_errors.h"

#include <string.h>

static int check_info(const char *func, MPI_Info handle, int writable, tern_info_t **info_p)
{
    tern_info_t *info = tern_info_lookup(handle);
    if (!info) {
        if (handle == MPI_INFO_NULL)
            return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_INFO, func, "info is MPI_INFO_NULL");
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_INFO, func, "invalid info handle 0x%x",
                              (unsigned)handle);
    }
    if (writable && info->read_only)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_INFO, func, "MPI_INFO_ENV is read-only");
    *info_p = info;
    return MPI_SUCCESS;
}

static int check_key(const char *func, const char *key)
{
    if (!key)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_INFO_KEY, func, "key is NULL");
    size_t n = strlen(key);
    if (n == 0 || n > MPI_MAX_INFO_KEY)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_INFO_KEY, func,
                              "key of %zu characters (must be 1..%d)", n, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Info_create)
int PMPI_Info_create(MPI_Info *info)
{
    static const char *const func = "MPI_Info_create";
    TERN_CHECK_INIT(func);
    if (!info)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "info is NULL");
    tern_status_t st = tern_info_create(info);
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_NULL, st, func, "cannot create the info");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Info_set)
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char *const func = "MPI_Info_set";
    TERN_CHECK_INIT(func);
    tern_info_t *in = NULL;
    int err = check_info(func, info, 1, &in);
    if (!err)
        err = check_key(func, key);
    if (err)
        return err;
    if (!value)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, func, "value is NULL");
    size_t n = strlen(value);
    if (n == 0 || n > MPI_MAX_INFO_VAL)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, func,
                              "value of %zu characters (must be 1..%d)", n, MPI_MAX_INFO_VAL);
    tern_status_t st = tern_info_set(in, key, value);
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_NULL, st, func, "cannot store the value");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Info_get)
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    static const char *const func = "MPI_Info_get";
    TERN_CHECK_INIT(func);
    tern_info_t *in = NULL;
    int err = check_info(func, info, 0, &in);
    if (!err)
        err = check_key(func, key);
    if (err)
        return err;
    if (valuelen < 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "valuelen=%d is negative",
                              valuelen);
    if (!value || !flag)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "%s is NULL",
                              !value ? "value" : "flag");
    const char *v = tern_info_get(in, key);
    *flag = v != NULL;
    if (v) {
        /* At most valuelen characters plus the terminator (MPI 3.1, 9). */
        size_t n = strlen(v);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, v, n);
        value[n] = 0;
    }
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Info_get_valuelen)
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    static const char *const func = "MPI_Info_get_valuelen";
    TERN_CHECK_INIT(func);
    tern_info_t *in = NULL;
    int err = check_info(func, info, 0, &in);
    if (!err)
        err = check_key(func, key);
    if (err)
        return err;
    if (!valuelen || !flag)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "%s is NULL",
                              !valuelen ? "valuelen" : "flag");
    const char *v = tern_info_get(in, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Info_get_nkeys)
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    static const char *const func = "MPI_Info_get_nkeys";
    TERN_CHECK_INIT(func);
    tern_info_t *in = NULL;
    int err = check_info(func, info, 0, &in);
    if (err)
        return err;
    if (!nkeys)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "nkeys is NULL");
    *nkeys = in->n;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Info_get_nthkey)
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    static const char *const func = "MPI_Info_get_nthkey";
    TERN_CHECK_INIT(func);
    tern_info_t *in = NULL;
    int err = check_info(func, info, 0, &in);
    if (err)
        return err;
    if (!key)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "key is NULL");
    if (n < 0 || n >= in->n)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func,
                              "n=%d is out of range (the info has %d keys)", n, in->n);
    strcpy(key, in->keys[n]);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Info_delete)
int PMPI_Info_delete(MPI_Info info, const char *key)
{
    static const char *const func = "MPI_Info_delete";
    TERN_CHECK_INIT(func);
    tern_info_t *in = NULL;
    int err = check_info(func, info, 1, &in);
    if (!err)
        err = check_key(func, key);
    if (err)
        return err;
    if (!tern_info_delete(in, key))
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_INFO_NOKEY, func, "no key \"%s\"", key);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Info_dup)
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    static const char *const func = "MPI_Info_dup";
    TERN_CHECK_INIT(func);
    tern_info_t *in = NULL;
    int err = check_info(func, info, 0, &in);
    if (err)
        return err;
    if (!newinfo)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "newinfo is NULL");
    tern_status_t st = tern_info_dup(info, newinfo);
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_NULL, st, func, "cannot copy the info");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Info_free)
int PMPI_Info_free(MPI_Info *info)
{
    static const char *const func = "MPI_Info_free";
    TERN_CHECK_INIT(func);
    if (!info)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "info is NULL");
    tern_info_t *in = NULL;
    int err = check_info(func, *info, 1, &in);
    if (err)
        return err;
    tern_info_free(*info);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
