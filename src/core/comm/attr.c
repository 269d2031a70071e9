#include "core/comm/attr.h"
#include "core/runtime/runtime.h"
#include "core/runtime/user_errors.h"

#include <stdlib.h>

tern_status_t tern_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                                 MPI_Comm_delete_attr_function *delete_fn, void *extra_state,
                                 int *keyval_p)
{
    return tern_keyval_new(TERN_ATTR_COMM, copy_fn, delete_fn, extra_state, keyval_p);
}

int tern_attr_set(tern_comm_t *c, int keyval, void *value)
{
    return tern_attrs_set(&c->attrs, c->handle, keyval, value);
}

int tern_attr_get(const tern_comm_t *c, int keyval, void **value_p, int *flag)
{
    return tern_attrs_get(&c->attrs, keyval, value_p, flag);
}

int tern_attr_delete(tern_comm_t *c, int keyval, int *found)
{
    return tern_attrs_delete(&c->attrs, c->handle, keyval, found);
}

int tern_attr_copy_all(tern_comm_t *from, tern_comm_t *to)
{
    return tern_attrs_copy_all(&from->attrs, from->handle, &to->attrs, to->handle);
}

int tern_attr_delete_all(tern_comm_t *c)
{
    return tern_attrs_delete_all(&c->attrs, c->handle);
}

/* ------------------------------------------------------------------------ */
/* The MPI attribute procedures on checked arguments (src/mpi/api/comm.toml). */

tern_status_t tern_keyval_release(int *keyval)
{
    return tern_keyval_free_of_kind(TERN_ATTR_COMM, keyval);
}

/* A user keyval of another kind (a datatype's) is not a communicator's. */
static tern_status_t check_kind(int keyval)
{
    if (tern_keyval_of_kind(keyval, TERN_ATTR_COMM) || tern_keyval_is_predefined(keyval))
        return TERN_OK;
    return tern_status_detail(TERN_ERR_KEYVAL, "keyval 0x%x is not a communicator keyval",
                              (unsigned)keyval);
}

tern_status_t tern_comm_set_attr(tern_comm_t *c, int keyval, void *value)
{
    tern_status_t st = check_kind(keyval);
    if (st != TERN_OK)
        return st;
    if ((st = tern_keyval_check_settable(keyval)) != TERN_OK)
        return st;
    int err = tern_attr_set(c, keyval, value);
    if (err != MPI_SUCCESS)
        return tern_status_callback(err,
                                  "the delete callback of the old value failed with code %d", err);
    return TERN_OK;
}

tern_status_t tern_comm_delete_attr(tern_comm_t *c, int keyval)
{
    tern_status_t st = check_kind(keyval);
    if (st != TERN_OK)
        return st;
    int found;
    int err = tern_attr_delete(c, keyval, &found);
    if (err != MPI_SUCCESS)
        return tern_status_callback(err, "the delete callback failed with code %d",
                                  err);
    if (!found)
        return tern_status_detail(TERN_ERR_KEYVAL,
                                  "no attribute for keyval 0x%x on this communicator",
                                  (unsigned)keyval);
    return TERN_OK;
}

tern_status_t tern_comm_get_attr(const tern_comm_t *c, int keyval, void *attribute_val, int *flag)
{
    /* Values of the predefined attributes live here; callers get pointers. */
    static int tag_ub = TERN_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0;
    static int universe, appnum, lastusedcode;
    int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_UNIVERSE_SIZE: universe = tern_rt.universe_size; v = &universe; break;
    case MPI_APPNUM: appnum = tern_rt.appnum; v = &appnum; break;
    case MPI_LASTUSEDCODE: lastusedcode = tern_user_error_last(); v = &lastusedcode; break;
    default: {
        tern_status_t st = check_kind(keyval);
        if (st != TERN_OK)
            return st;
        void *value;
        tern_attr_get(c, keyval, &value, flag);
        if (*flag)
            *(void **)attribute_val = value;
        return TERN_OK;
    }
    }
    *(int **)attribute_val = v;
    *flag = 1;
    return TERN_OK;
}

int tern_keyval_is_predefined(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB: case MPI_HOST: case MPI_IO: case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE: case MPI_LASTUSEDCODE: case MPI_APPNUM:
    /* The window attributes (core/rma/win_attr.c). */
    case MPI_WIN_BASE: case MPI_WIN_SIZE: case MPI_WIN_DISP_UNIT: case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL:
        return 1;
    default:
        return 0;
    }
}
