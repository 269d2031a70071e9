/* Reduction operations: create, free, commutativity, MPI_Reduce_local. */
#include "mpi/mpi_errors.h"
#include "core/datatype/datatype.h"
#include "core/datatype/op.h"

#include <stdint.h>
#include <stdlib.h>

TERN_PMPI_ALIAS(Op_create)
int PMPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    static const char *const func = "MPI_Op_create";
    TERN_CHECK_INIT(func);
    if (!fn || !op)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "%s is NULL",
                              !fn ? "user_fn" : "op");
    tern_status_t st = tern_op_create(fn, commute, op);
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_NULL, st, func, "cannot create the op");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Op_free)
int PMPI_Op_free(MPI_Op *op)
{
    static const char *const func = "MPI_Op_free";
    TERN_CHECK_INIT(func);
    if (!op)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "op is NULL");
    if (tern_op_is_predefined(*op))
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_OP, func, "%s is predefined and cannot be freed",
                              tern_op_name(*op));
    if (tern_op_free(*op) != TERN_OK)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_OP, func, "invalid op handle 0x%x",
                              (unsigned)*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Op_commutative)
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    static const char *const func = "MPI_Op_commutative";
    TERN_CHECK_INIT(func);
    if (!tern_op_is_valid(op))
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_OP, func, "invalid op handle 0x%x",
                              (unsigned)op);
    if (!commute)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "commute is NULL");
    *commute = tern_op_is_commutative(op);
    return MPI_SUCCESS;
}

/* inoutbuf = inbuf op inoutbuf, locally. The kernels work on packed data:
 * non-contiguous types are packed, reduced and unpacked. */
TERN_PMPI_ALIAS(Reduce_local)
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype dt, MPI_Op op)
{
    static const char *const func = "MPI_Reduce_local";
    TERN_CHECK_INIT(func);
    size_t size;
    int err;
    if ((err = tern_check_count(func, MPI_COMM_NULL, count)) ||
        (err = tern_check_datatype(func, MPI_COMM_NULL, dt, &size)) ||
        (err = tern_check_buffer(func, MPI_COMM_NULL, inbuf, count, size)) ||
        (err = tern_check_buffer(func, MPI_COMM_NULL, inoutbuf, count, size)))
        return err;
    if (!tern_op_is_valid(op))
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_OP, func, "invalid op handle 0x%x",
                              (unsigned)op);
    if (!tern_op_allowed(op, dt)) {
        const char *tn = tern_datatype_name(dt);
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_OP, func, "%s is not defined for datatype %s",
                              tern_op_name(op), tn ? tn : "(derived)");
    }
    if (count == 0)
        return MPI_SUCCESS;
    tern_status_t st;
    if (tern_datatype_is_contig(dt)) {
        MPI_Aint lb = tern_datatype_true_lb(dt);
        st = tern_op_apply(op, dt, (const char *)inbuf + lb, (char *)inoutbuf + lb, (size_t)count);
    } else {
        size_t n = tern_datatype_packed_size(dt, (size_t)count);
        char *a = malloc(n), *b = malloc(n);
        st = a && b ? TERN_OK : TERN_ERR_NOMEM;
        if (st == TERN_OK)
            st = tern_datatype_pack(inbuf, (size_t)count, dt, a);
        if (st == TERN_OK)
            st = tern_datatype_pack(inoutbuf, (size_t)count, dt, b);
        if (st == TERN_OK)
            st = tern_op_apply(op, dt, a, b, (size_t)count);
        if (st == TERN_OK)
            st = tern_datatype_unpack(b, n, inoutbuf, (size_t)count, dt);
        free(a);
        free(b);
    }
    if (st != TERN_OK)
        return tern_mpi_status_error(MPI_COMM_NULL, st, func, "reduction failed");
    return MPI_SUCCESS;
}
