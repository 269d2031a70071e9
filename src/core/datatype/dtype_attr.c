#include "core/datatype/dtype_attr.h"
#include "core/datatype/dtype_internal.h"
#include "core/runtime/attr.h"

tern_status_t tern_type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
                                      MPI_Type_delete_attr_function *delete_fn, int *keyval_p,
                                      void *extra_state)
{
    return tern_keyval_new(TERN_ATTR_TYPE, copy_fn, delete_fn, extra_state, keyval_p);
}

tern_status_t tern_type_free_keyval(int *keyval)
{
    return tern_keyval_free_of_kind(TERN_ATTR_TYPE, keyval);
}

static tern_status_t check_kind(int keyval)
{
    if (tern_keyval_of_kind(keyval, TERN_ATTR_TYPE))
        return TERN_OK;
    return tern_status_detail(TERN_ERR_KEYVAL, "keyval 0x%x is not a datatype keyval",
                              (unsigned)keyval);
}

tern_status_t tern_type_set_attr(MPI_Datatype dt, int keyval, void *value)
{
    tern_status_t st = check_kind(keyval);
    if (st != TERN_OK)
        return st;
    if ((st = tern_keyval_check_settable(keyval)) != TERN_OK)
        return st;
    int err = tern_attrs_set(tern_dtype_attr_list(dt), dt, keyval, value);
    if (err != MPI_SUCCESS)
        return tern_status_callback(err,
                                  "the delete callback of the old value failed with code %d", err);
    return TERN_OK;
}

tern_status_t tern_type_get_attr(MPI_Datatype dt, int keyval, void *attribute_val, int *flag)
{
    tern_status_t st = check_kind(keyval);
    if (st != TERN_OK)
        return st;
    void *value;
    tern_attrs_get(tern_dtype_attr_list(dt), keyval, &value, flag);
    if (*flag)
        *(void **)attribute_val = value;
    return TERN_OK;
}

tern_status_t tern_type_delete_attr(MPI_Datatype dt, int keyval)
{
    tern_status_t st = check_kind(keyval);
    if (st != TERN_OK)
        return st;
    int found;
    int err = tern_attrs_delete(tern_dtype_attr_list(dt), dt, keyval, &found);
    if (err != MPI_SUCCESS)
        return tern_status_callback(err, "the delete callback failed with code %d",
                                  err);
    if (!found)
        return tern_status_detail(TERN_ERR_KEYVAL, "no attribute for keyval 0x%x on this datatype",
                                  (unsigned)keyval);
    return TERN_OK;
}

tern_status_t tern_type_copy_attrs(MPI_Datatype old, MPI_Datatype new_type)
{
    int err = tern_attrs_copy_all(tern_dtype_attr_list(old), old, tern_dtype_attr_list(new_type),
                                  new_type);
    if (err != MPI_SUCCESS)
        return tern_status_callback(err,
                                  "an attribute copy callback failed with code %d", err);
    return TERN_OK;
}

tern_status_t tern_type_delete_attrs(MPI_Datatype dt)
{
    int err = tern_attrs_delete_all(tern_dtype_attr_list(dt), dt);
    if (err != MPI_SUCCESS)
        return tern_status_callback(err,
                                  "an attribute delete callback failed with code %d", err);
    return TERN_OK;
}
