#include "core/runtime/attr.h"
#include "core/runtime/handle_table.h"

#include <stdlib.h>

static tern_handle_table_t keyvals = TERN_HANDLE_TABLE(TERN_KIND_KEYVAL, 16);

tern_status_t tern_keyval_new(tern_attr_kind_t kind, tern_attr_copy_fn *copy_fn,
                              tern_attr_delete_fn *delete_fn, void *extra_state, int *keyval_p)
{
    tern_keyval_t *k = malloc(sizeof *k);
    if (!k)
        return TERN_ERR_NOMEM;
    *k = (tern_keyval_t){.kind = kind, .copy_fn = copy_fn, .delete_fn = delete_fn,
                         .extra_state = extra_state, .refs = 1};
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
    /* A keyval the user freed still serves the attributes that use it:
     * MPI reference-counts keyvals. */
    return keyval_any(keyval);
}

tern_status_t tern_keyval_check_settable(int keyval)
{
    const tern_keyval_t *k = tern_keyval_lookup(keyval);
    if (k && k->user_freed)
        return tern_status_detail(TERN_ERR_KEYVAL, "keyval 0x%x was freed", (unsigned)keyval);
    return TERN_OK;
}

tern_keyval_t *tern_keyval_of_kind(int keyval, tern_attr_kind_t kind)
{
    tern_keyval_t *k = tern_keyval_lookup(keyval);
    return k && k->kind == kind ? k : NULL;
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

static const char *const kind_name[] = {
    [TERN_ATTR_COMM] = "communicator", [TERN_ATTR_TYPE] = "datatype", [TERN_ATTR_WIN] = "window"};

tern_status_t tern_keyval_free_of_kind(tern_attr_kind_t kind, int *keyval)
{
    tern_keyval_t *k = tern_keyval_lookup(*keyval);
    if (k && k->kind != kind)
        return tern_status_detail(TERN_ERR_KEYVAL, "keyval 0x%x is a %s keyval, not a %s one",
                                  (unsigned)*keyval, kind_name[k->kind], kind_name[kind]);
    tern_keyval_free(*keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return TERN_OK;
}

static tern_attr_t **find(tern_attr_t **list, int keyval)
{
    for (tern_attr_t **p = list; *p; p = &(*p)->next)
        if ((*p)->keyval == keyval)
            return p;
    return NULL;
}

static int call_delete(int obj, tern_attr_t *a)
{
    tern_keyval_t *k = keyval_any(a->keyval);
    if (k && k->delete_fn)
        return k->delete_fn(obj, a->keyval, a->value, k->extra_state);
    return MPI_SUCCESS;
}

int tern_attrs_set(tern_attr_t **list, int obj, int keyval, void *value)
{
    tern_attr_t **p = find(list, keyval);
    if (p) {
        int err = call_delete(obj, *p);
        if (err != MPI_SUCCESS)
            return err;
        (*p)->value = value;
        return MPI_SUCCESS;
    }
    tern_attr_t *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    *a = (tern_attr_t){.next = *list, .keyval = keyval, .value = value};
    *list = a;
    keyval_any(keyval)->refs++;
    return MPI_SUCCESS;
}

int tern_attrs_get(tern_attr_t *const *list, int keyval, void **value_p, int *flag)
{
    for (const tern_attr_t *a = *list; a; a = a->next)
        if (a->keyval == keyval) {
            *value_p = a->value;
            *flag = 1;
            return MPI_SUCCESS;
        }
    *flag = 0;
    return MPI_SUCCESS;
}

int tern_attrs_delete(tern_attr_t **list, int obj, int keyval, int *found)
{
    tern_attr_t **p = find(list, keyval);
    *found = p != NULL;
    if (!p)
        return MPI_SUCCESS;
    tern_attr_t *a = *p;
    int err = call_delete(obj, a);
    if (err != MPI_SUCCESS)
        return err;
    *p = a->next;
    free(a);
    keyval_unref(keyval);
    return MPI_SUCCESS;
}

int tern_attrs_copy_all(tern_attr_t **from, int from_obj, tern_attr_t **to, int to_obj)
{
    /* Oldest first, so the copy keeps the same order. */
    int n = 0;
    for (tern_attr_t *a = *from; a; a = a->next)
        n++;
    for (int i = n - 1; i >= 0; i--) {
        tern_attr_t *a = *from;
        for (int j = 0; j < i; j++)
            a = a->next;
        tern_keyval_t *k = keyval_any(a->keyval);
        if (!k || !k->copy_fn)
            continue;
        void *out = NULL;
        int flag = 0;
        int err = k->copy_fn(from_obj, a->keyval, k->extra_state, a->value, &out, &flag);
        if (err != MPI_SUCCESS)
            return err;
        if (flag && (err = tern_attrs_set(to, to_obj, a->keyval, out)) != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

int tern_attrs_delete_all(tern_attr_t **list, int obj)
{
    while (*list) {
        int found;
        int err = tern_attrs_delete(list, obj, (*list)->keyval, &found);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}
