/* Attributes cached on datatypes (MPI_Type_create_keyval and the other
 * datatype attribute procedures), over the attribute caching of every kind
 * of object (core/runtime/attr.h), on arguments the MPI layer has checked.
 * A keyval of another kind (a communicator's), or a predefined one, is
 * TERN_ERR_KEYVAL; a failing user callback is TERN_ERR_CALLBACK with its
 * code in the detail. */
#ifndef TERN_CORE_DTYPE_ATTR_H
#define TERN_CORE_DTYPE_ATTR_H

#include "base/status.h"
#include <mpi.h>

tern_status_t tern_type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
                                      MPI_Type_delete_attr_function *delete_fn, int *keyval_p,
                                      void *extra_state);
tern_status_t tern_type_free_keyval(int *keyval);
tern_status_t tern_type_set_attr(MPI_Datatype dt, int keyval, void *value);
tern_status_t tern_type_get_attr(MPI_Datatype dt, int keyval, void *attribute_val, int *flag);
tern_status_t tern_type_delete_attr(MPI_Datatype dt, int keyval);

/* MPI_Type_dup: the copy callbacks of old's attributes onto new. */
tern_status_t tern_type_copy_attrs(MPI_Datatype old, MPI_Datatype new_type);
/* MPI_Type_free: the delete callbacks of every attribute of dt. */
tern_status_t tern_type_delete_attrs(MPI_Datatype dt);

#endif
