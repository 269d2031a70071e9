/* Attributes cached on windows (over runtime/attr.c) and the predefined
 * window attributes. */
#include "core/rma/window.h"

tern_status_t tern_win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                                     MPI_Win_delete_attr_function *delete_fn, void *extra_state,
                                     int *keyval)
{
    return tern_keyval_new(TERN_ATTR_WIN, copy_fn, delete_fn, extra_state, keyval);
}

tern_status_t tern_win_free_keyval(int *keyval)
{
    return tern_keyval_free_of_kind(TERN_ATTR_WIN, keyval);
}

static int predefined(int keyval)
{
    return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
           keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

static tern_status_t check_kind(int keyval)
{
    if (tern_keyval_of_kind(keyval, TERN_ATTR_WIN))
        return TERN_OK;
    return tern_status_detail(TERN_ERR_KEYVAL, "keyval 0x%x is not a window keyval",
                              (unsigned)keyval);
}

tern_status_t tern_win_set_attr(tern_win_t *w, int keyval, void *value)
{
    tern_status_t st = check_kind(keyval);
    if (st == TERN_OK)
        st = tern_keyval_check_settable(keyval);
    if (st != TERN_OK)
        return st;
    int err = tern_attrs_set(&w->attrs, w->handle, keyval, value);
    if (err != MPI_SUCCESS)
        return tern_status_detail(TERN_ERR_CALLBACK,
                                  "the delete callback of the old value failed with code %d", err);
    return TERN_OK;
}

tern_status_t tern_win_get_attr(tern_win_t *w, int keyval, void *value, int *flag)
{
    /* The predefined ones: pointers to values the window keeps (the base
     * itself for MPI_WIN_BASE). */
    static int model = MPI_WIN_UNIFIED;
    void *v = NULL;
    if (predefined(keyval)) {
        switch (keyval) {
        case MPI_WIN_BASE: v = w->base; break;
        case MPI_WIN_SIZE: v = &w->win_size; break;
        case MPI_WIN_DISP_UNIT: v = &w->disp_unit; break;
        case MPI_WIN_CREATE_FLAVOR: v = &w->flavor; break;
        default: v = &model; break;
        }
        *(void **)value = v;
        *flag = 1;
        return TERN_OK;
    }
    tern_status_t st = check_kind(keyval);
    if (st != TERN_OK)
        return st;
    tern_attrs_get(&w->attrs, keyval, &v, flag);
    if (*flag)
        *(void **)value = v;
    return TERN_OK;
}

tern_status_t tern_win_delete_attr(tern_win_t *w, int keyval)
{
    tern_status_t st = check_kind(keyval);
    if (st != TERN_OK)
        return st;
    int found;
    int err = tern_attrs_delete(&w->attrs, w->handle, keyval, &found);
    if (err != MPI_SUCCESS)
        return tern_status_detail(TERN_ERR_CALLBACK, "the delete callback failed with code %d",
                                  err);
    if (!found)
        return tern_status_detail(TERN_ERR_KEYVAL, "no attribute for keyval 0x%x on this window",
                                  (unsigned)keyval);
    return TERN_OK;
}
