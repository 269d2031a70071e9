/* Reduction operations: the predefined ones on every type MPI allows them
 * for (MINLOC/MAXLOC on the pair types), and user-defined ones.
 *
 * Kernels work on packed data (datatype.h): n elements of the basic type
 * back to back, no padding, so the collectives can reduce whatever the
 * user's layout was. inout[i] = in[i] op inout[i]: `in` is the operand
 * from the lower ranks, which matters for non-commutative user ops. */
#ifndef TERN_CORE_OP_H
#define TERN_CORE_OP_H

#include "base/status.h"
#include <mpi.h>
#include <stddef.h>

/* 1 if op is a live operation handle (predefined or user-defined). */
int tern_op_is_valid(MPI_Op op);
int tern_op_is_predefined(MPI_Op op);
/* 1 if the operation is commutative. */
int tern_op_is_commutative(MPI_Op op);
/* Name for messages ("MPI_SUM", "user-defined op"). */
const char *tern_op_name(MPI_Op op);
/* 1 if op may reduce data of type dt (user ops: any type; predefined: the
 * combinations of MPI-4 section 6.9.2; MPI_REPLACE and MPI_NO_OP: none, they
 * are for one-sided accumulates only). */
int tern_op_allowed(MPI_Op op, MPI_Datatype dt);

/* inout = in op inout over count elements of dt, both packed. */
tern_status_t tern_op_apply(MPI_Op op, MPI_Datatype dt, const void *in, void *inout, size_t count);

void tern_op_retain(MPI_Op op);
void tern_op_release(MPI_Op op);

/* The reduction-operation procedures, on arguments the MPI layer checked
 * (pointers non-NULL, op handles live). */
/* One of fn (MPI_Op_create) and fn_c (MPI_Op_create_c) is non-NULL. */
tern_status_t tern_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute,
                             MPI_Op *op_p);
/* Frees the handle and sets *op_p to MPI_OP_NULL; TERN_ERR_OP for a
 * predefined op. The operation lives on while pending collectives hold it
 * (retain/release; no-ops for predefined ops). */
tern_status_t tern_op_free(MPI_Op *op_p);
/* A user op whose function another language's binding calls: apply gives
 * invoke the function with its arguments by value (MPICH's C++ binding,
 * MPII_Op_set_cxx on the MPICH ABI face). 0 on a live user op. */
typedef void tern_op_invoker_fn(const void *in, void *inout, int len, MPI_Datatype dt,
                                MPI_User_function *fn);
int tern_op_set_invoker(MPI_Op op, tern_op_invoker_fn *invoke);
tern_status_t tern_op_commutative(MPI_Op op, int *commute);
/* inoutbuf = inbuf op inoutbuf over count elements of dt in the user's
 * layout (MPI_Reduce_local; op allowed on dt). */
tern_status_t tern_op_reduce_local(const void *inbuf, void *inoutbuf, size_t count,
                                   MPI_Datatype dt, MPI_Op op);

#endif
