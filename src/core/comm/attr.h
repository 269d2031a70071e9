/* Attribute keys (keyvals) and the attributes hung on communicators. A
 * keyval lives while the user holds it or an attribute uses it, so freeing
 * it leaves attributes (and their delete callbacks) working. User callbacks
 * return MPI error codes; the functions here pass them through as ints. */
#ifndef TERN_CORE_ATTR_H
#define TERN_CORE_ATTR_H

#include "base/status.h"
#include "core/comm/comm.h"
#include <mpi.h>

typedef struct {
    MPI_Comm_copy_attr_function *copy_fn;
    MPI_Comm_delete_attr_function *delete_fn;
    void *extra_state;
    int refs;     /* the user's handle + attributes that use it */
    int user_freed;
} tern_keyval_t;

tern_status_t tern_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                                 MPI_Comm_delete_attr_function *delete_fn, void *extra_state,
                                 int *keyval_p);
/* A live keyval: one the user holds, or one the user freed that
 * attributes still use (MPI reference-counts keyvals, so such a keyval can
 * still delete its attributes); NULL otherwise. */
tern_keyval_t *tern_keyval_lookup(int keyval);
/* Marks the keyval freed by the user (once; a second free is a no-op). */
void tern_keyval_free(int keyval);

/* Sets (replacing: the old value's delete callback runs first), finds,
 * deletes. Return an MPI code: MPI_SUCCESS or a callback's error. */
int tern_attr_set(tern_comm_t *c, int keyval, void *value);
int tern_attr_get(const tern_comm_t *c, int keyval, void **value_p, int *flag);
int tern_attr_delete(tern_comm_t *c, int keyval, int *found);
/* Copy callbacks for every attribute of from onto to (Comm_dup). */
int tern_attr_copy_all(tern_comm_t *from, tern_comm_t *to);
/* Delete callbacks for every attribute, newest first (Comm_free). */
int tern_attr_delete_all(tern_comm_t *c);

/* The MPI attribute procedures, on checked arguments: a keyval the user
 * holds (get: or a predefined one). A failing user callback is
 * TERN_ERR_CALLBACK with its code in the detail. */
int tern_keyval_is_predefined(int keyval);
/* Frees *keyval and sets it to MPI_KEYVAL_INVALID. */
tern_status_t tern_keyval_release(int *keyval);
tern_status_t tern_comm_set_attr(tern_comm_t *c, int keyval, void *value);
tern_status_t tern_comm_delete_attr(tern_comm_t *c, int keyval);
tern_status_t tern_comm_get_attr(const tern_comm_t *c, int keyval, void *attribute_val, int *flag);

#endif
