/* Attribute caching for every kind of object that has it (communicators,
 * datatypes; windows later): attribute keys (keyvals) and the list of
 * attributes an object holds. A keyval lives while the user holds it or an
 * attribute uses it, so freeing it leaves attributes (and their delete
 * callbacks) working. User callbacks return MPI error codes; the functions
 * here pass them through as ints. The kinds' own rooms (comm/attr.c,
 * datatype/dtype_attr.c) hold the lists and the MPI procedures. */
#ifndef TERN_CORE_RUNTIME_ATTR_H
#define TERN_CORE_RUNTIME_ATTR_H

#include "base/status.h"
#include <mpi.h>

typedef enum { TERN_ATTR_COMM = 1, TERN_ATTR_TYPE, TERN_ATTR_WIN } tern_attr_kind_t;

/* MPI handles are ints, so the copy and delete callbacks of every kind
 * (MPI_Comm_copy_attr_function, MPI_Type_copy_attr_function...) have this
 * one C type; the object is passed as its handle. */
typedef int tern_attr_copy_fn(int oldobj, int keyval, void *extra_state, void *attribute_val_in,
                              void *attribute_val_out, int *flag);
typedef int tern_attr_delete_fn(int obj, int keyval, void *attribute_val, void *extra_state);
_Static_assert(sizeof(MPI_Comm) == sizeof(int) && sizeof(MPI_Datatype) == sizeof(int) &&
                   sizeof(MPI_Win) == sizeof(int),
               "attribute callbacks take handles as ints");

typedef struct tern_attr {
    struct tern_attr *next;
    int keyval;
    void *value;
} tern_attr_t;

typedef struct {
    tern_attr_kind_t kind;
    tern_attr_copy_fn *copy_fn;
    tern_attr_delete_fn *delete_fn;
    void *extra_state;
    int refs;     /* the user's handle + attributes that use it */
    int user_freed;
} tern_keyval_t;

tern_status_t tern_keyval_new(tern_attr_kind_t kind, tern_attr_copy_fn *copy_fn,
                              tern_attr_delete_fn *delete_fn, void *extra_state, int *keyval_p);
/* A live keyval: one the user holds, or one the user freed that attributes
 * still use; NULL otherwise. */
tern_keyval_t *tern_keyval_lookup(int keyval);
/* A live keyval of this kind; NULL otherwise. */
tern_keyval_t *tern_keyval_of_kind(int keyval, tern_attr_kind_t kind);
/* TERN_ERR_KEYVAL when the user freed keyval: a freed keyval still serves
 * the attributes it has (MPI reference-counts keyvals) but takes no new one. */
tern_status_t tern_keyval_check_settable(int keyval);
void tern_keyval_free(int keyval);
/* MPI_*_free_keyval on a checked keyval: one of this kind (else
 * TERN_ERR_KEYVAL); frees it and sets *keyval to MPI_KEYVAL_INVALID. */
tern_status_t tern_keyval_free_of_kind(tern_attr_kind_t kind, int *keyval);

/* The attributes of one object (list, newest first; obj: its handle, for
 * the callbacks). Set replaces (the old value's delete callback runs
 * first); get finds; delete removes. Return an MPI code: MPI_SUCCESS or a
 * callback's error. Callbacks may call these on the same list (set, get,
 * delete any key): a delete callback runs with its attribute out of the
 * list (a failing one puts it back), a copy callback's object may change
 * under copy_all. */
int tern_attrs_set(tern_attr_t **list, int obj, int keyval, void *value);
int tern_attrs_get(tern_attr_t *const *list, int keyval, void **value_p, int *flag);
int tern_attrs_delete(tern_attr_t **list, int obj, int keyval, int *found);
/* Copy callbacks for every attribute of from onto to (the dup procedures). */
int tern_attrs_copy_all(tern_attr_t **from, int from_obj, tern_attr_t **to, int to_obj);
/* Delete callbacks for every attribute, newest first (the free procedures). */
int tern_attrs_delete_all(tern_attr_t **list, int obj);

#endif
