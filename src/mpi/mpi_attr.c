/* Communicator attributes: keyvals with copy/delete callbacks, and the
 * predefined attributes (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
 * MPI_UNIVERSE_SIZE, MPI_APPNUM), which are read-only. */
#include "core/comm/attr.h"
#include "mpi/mpi_errors.h"

int MPI_COMM_NULL_COPY_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                          void *attribute_val_in, void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)comm_keyval, (void)extra_state, (void)attribute_val_in;
    (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_COMM_DUP_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state, void *attribute_val_in,
                    void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)comm_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_COMM_NULL_DELETE_FN(MPI_Comm comm, int comm_keyval, void *attribute_val, void *extra_state)
{
    (void)comm, (void)comm_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

static int is_predefined(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB: case MPI_HOST: case MPI_IO: case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE: case MPI_LASTUSEDCODE: case MPI_APPNUM:
        return 1;
    default:
        return 0;
    }
}

static int bad_keyval(const char *func, MPI_Comm comm, int keyval)
{
    if (is_predefined(keyval))
        return tern_mpi_error(comm, MPI_ERR_KEYVAL, func,
                              "keyval 0x%x is predefined and read-only", (unsigned)keyval);
    if (keyval == MPI_KEYVAL_INVALID)
        return tern_mpi_error(comm, MPI_ERR_KEYVAL, func, "keyval is MPI_KEYVAL_INVALID");
    return tern_mpi_error(comm, MPI_ERR_KEYVAL, func, "invalid keyval 0x%x", (unsigned)keyval);
}

TERN_PMPI_ALIAS(Comm_create_keyval)
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    static const char *const func = "MPI_Comm_create_keyval";
    TERN_CHECK_INIT(func);
    if (!comm_keyval)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "comm_keyval is NULL");
    tern_status_t st =
        tern_keyval_create(comm_copy_attr_fn, comm_delete_attr_fn, extra_state, comm_keyval);
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_NULL, st, func, "cannot create the keyval");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_free_keyval)
int PMPI_Comm_free_keyval(int *comm_keyval)
{
    static const char *const func = "MPI_Comm_free_keyval";
    TERN_CHECK_INIT(func);
    if (!comm_keyval)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "comm_keyval is NULL");
    if (!tern_keyval_lookup(*comm_keyval))
        return bad_keyval(func, MPI_COMM_NULL, *comm_keyval);
    tern_keyval_free(*comm_keyval);
    *comm_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_set_attr)
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    static const char *const func = "MPI_Comm_set_attr";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (err)
        return err;
    if (!tern_keyval_lookup(comm_keyval))
        return bad_keyval(func, comm, comm_keyval);
    err = tern_attr_set(c, comm_keyval, attribute_val);
    if (err != MPI_SUCCESS)
        return tern_mpi_error(comm, MPI_ERR_OTHER, func,
                              "the delete callback of the old value failed with code %d", err);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_delete_attr)
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    static const char *const func = "MPI_Comm_delete_attr";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (err)
        return err;
    if (!tern_keyval_lookup(comm_keyval))
        return bad_keyval(func, comm, comm_keyval);
    int found;
    err = tern_attr_delete(c, comm_keyval, &found);
    if (err != MPI_SUCCESS)
        return tern_mpi_error(comm, MPI_ERR_OTHER, func,
                              "the delete callback failed with code %d", err);
    if (!found)
        return tern_mpi_error(comm, MPI_ERR_KEYVAL, func,
                              "no attribute for keyval 0x%x on this communicator",
                              (unsigned)comm_keyval);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    static const char *const func = "MPI_Comm_get_attr";
    /* Values of the predefined attributes live here; callers get pointers. */
    static int tag_ub = TERN_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0;
    static int universe, appnum, lastusedcode = MPI_ERR_LASTCODE;
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (err)
        return err;
    if (!attribute_val || !flag)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "%s is NULL",
                              !flag ? "flag" : "attribute_val");
    int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_UNIVERSE_SIZE: universe = tern_rt.universe_size; v = &universe; break;
    case MPI_APPNUM: appnum = tern_rt.appnum; v = &appnum; break;
    case MPI_LASTUSEDCODE: v = &lastusedcode; break;
    default: {
        if (!tern_keyval_lookup(keyval))
            return bad_keyval(func, comm, keyval);
        void *value;
        tern_attr_get(c, keyval, &value, flag);
        if (*flag)
            *(void **)attribute_val = value;
        return MPI_SUCCESS;
    }
    }
    *(int **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

/* MPI-1 names: the same operations (the callback types are identical). */

int MPI_NULL_COPY_FN(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag)
{
    return MPI_COMM_NULL_COPY_FN(oldcomm, keyval, extra_state, attribute_val_in,
                                 attribute_val_out, flag);
}

int MPI_DUP_FN(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
               void *attribute_val_out, int *flag)
{
    return MPI_COMM_DUP_FN(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out,
                           flag);
}

int MPI_NULL_DELETE_FN(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state)
{
    return MPI_COMM_NULL_DELETE_FN(comm, keyval, attribute_val, extra_state);
}

TERN_PMPI_ALIAS(Keyval_create)
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

TERN_PMPI_ALIAS(Keyval_free)
int PMPI_Keyval_free(int *keyval)
{
    return PMPI_Comm_free_keyval(keyval);
}

TERN_PMPI_ALIAS(Attr_put)
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

TERN_PMPI_ALIAS(Attr_get)
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

TERN_PMPI_ALIAS(Attr_delete)
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return PMPI_Comm_delete_attr(comm, keyval);
}
