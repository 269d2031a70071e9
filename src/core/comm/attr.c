#include "core/comm/attr.h"
#include "core/runtime/handle_table.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>

#define KEYVAL_KIND 0x24000000u
static tern_handle_table_t keyvals = TERN_HANDLE_TABLE(KEYVAL_KIND, 16);

tern_status_t tern_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                                 MPI_Comm_delete_attr_function *delete_fn, void *extra_state,
                                 int *keyval_p)
{
    tern_keyval_t *k = malloc(sizeof *k);
    if (!k)
        return TERN_ERR_NOMEM;
    *k = (tern_keyval_t){.copy_fn = copy_fn, .delete_fn = delete_fn, .extra_state = extra_state,
                         .refs = 1};
    tern_status_t st = tern_handle_new(&keyvals, k, keyval_p);
    if (st != TERN_OK)
        free(k);
    return st;
}

/* Any live keyval, freed by the user or not. */
static tern_keyval_t *keyval_any(int keyval)
{
    return tern_handle_get(&keyvals, keyval);
}

tern_keyval_t *tern_keyval_lookup(int keyval)
{
    return keyval_any(keyval);
}

static void keyval_unref(int keyval)
{
    tern_keyval_t *k = keyval_any(keyval);
    if (k && --k->refs == 0) {
        tern_handle_release(&keyvals, keyval);
        free(k);
    }
}

void tern_keyval_free(int keyval)
{
    tern_keyval_t *k = keyval_any(keyval);
    /* Only the first free drops the user's reference: later ones, while
     * attributes keep the keyval alive (a delete callback that frees its
     * own keyval, say), change nothing, as in MPICH. */
    if (!k || k->user_freed)
        return;
    k->user_freed = 1;
    keyval_unref(keyval);
}

static tern_attr_t **find(tern_comm_t *c, int keyval)
{
    for (tern_attr_t **p = &c->attrs; *p; p = &(*p)->next)
        if ((*p)->keyval == keyval)
            return p;
    return NULL;
}

static int call_delete(tern_comm_t *c, tern_attr_t *a)
{
    tern_keyval_t *k = keyval_any(a->keyval);
    if (k && k->delete_fn)
        return k->delete_fn(c->handle, a->keyval, a->value, k->extra_state);
    return MPI_SUCCESS;
}

int tern_attr_set(tern_comm_t *c, int keyval, void *value)
{
    tern_attr_t **p = find(c, keyval);
    if (p) {
        int err = call_delete(c, *p);
        if (err != MPI_SUCCESS)
            return err;
        (*p)->value = value;
        return MPI_SUCCESS;
    }
    tern_attr_t *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    *a = (tern_attr_t){.next = c->attrs, .keyval = keyval, .value = value};
    c->attrs = a;
    keyval_any(keyval)->refs++;
    return MPI_SUCCESS;
}

int tern_attr_get(const tern_comm_t *c, int keyval, void **value_p, int *flag)
{
    for (const tern_attr_t *a = c->attrs; a; a = a->next)
        if (a->keyval == keyval) {
            *value_p = a->value;
            *flag = 1;
            return MPI_SUCCESS;
        }
    *flag = 0;
    return MPI_SUCCESS;
}

int tern_attr_delete(tern_comm_t *c, int keyval, int *found)
{
    tern_attr_t **p = find(c, keyval);
    *found = p != NULL;
    if (!p)
        return MPI_SUCCESS;
    tern_attr_t *a = *p;
    int err = call_delete(c, a);
    if (err != MPI_SUCCESS)
        return err;
    *p = a->next;
    free(a);
    keyval_unref(keyval);
    return MPI_SUCCESS;
}

int tern_attr_copy_all(tern_comm_t *from, tern_comm_t *to)
{
    /* Oldest first, so the copy keeps the same order. */
    int n = 0;
    for (tern_attr_t *a = from->attrs; a; a = a->next)
        n++;
    for (int i = n - 1; i >= 0; i--) {
        tern_attr_t *a = from->attrs;
        for (int j = 0; j < i; j++)
            a = a->next;
        tern_keyval_t *k = keyval_any(a->keyval);
        if (!k || !k->copy_fn)
            continue;
        void *out = NULL;
        int flag = 0;
        int err = k->copy_fn(from->handle, a->keyval, k->extra_state, a->value, &out, &flag);
        if (err != MPI_SUCCESS)
            return err;
        if (flag && (err = tern_attr_set(to, a->keyval, out)) != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

int tern_attr_delete_all(tern_comm_t *c)
{
    while (c->attrs) {
        int found;
        int err = tern_attr_delete(c, c->attrs->keyval, &found);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* The MPI attribute procedures on checked arguments (src/mpi/api/comm.toml). */

tern_status_t tern_keyval_release(int *keyval)
{
    tern_keyval_free(*keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return TERN_OK;
}

tern_status_t tern_comm_set_attr(tern_comm_t *c, int keyval, void *value)
{
    int err = tern_attr_set(c, keyval, value);
    if (err != MPI_SUCCESS)
        return tern_status_detail(TERN_ERR_CALLBACK,
                                  "the delete callback of the old value failed with code %d", err);
    return TERN_OK;
}

tern_status_t tern_comm_delete_attr(tern_comm_t *c, int keyval)
{
    int found;
    int err = tern_attr_delete(c, keyval, &found);
    if (err != MPI_SUCCESS)
        return tern_status_detail(TERN_ERR_CALLBACK, "the delete callback failed with code %d",
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
    static int universe, appnum, lastusedcode = MPI_ERR_LASTCODE;
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
        return 1;
    default:
        return 0;
    }
}
