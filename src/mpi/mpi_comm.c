/* Communicator queries, predefined attributes, datatype sizes, barrier. */
#include "mpi/mpi_errors.h"
#include "core/coll.h"
#include "core/datatype.h"

TERN_PMPI_ALIAS(Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    static const char *const func = "MPI_Comm_rank";
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    int err = tern_check_comm(func, comm, &c);
    if (err)
        return err;
    if (!rank)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "rank is NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_size)
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    static const char *const func = "MPI_Comm_size";
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    int err = tern_check_comm(func, comm, &c);
    if (err)
        return err;
    if (!size)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "size is NULL");
    *size = c->size;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Type_size)
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    static const char *const func = "MPI_Type_size";
    TERN_CHECK_INIT(func);
    size_t sz;
    int err = tern_check_datatype(func, MPI_COMM_NULL, datatype, &sz);
    if (err)
        return err;
    if (!size)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "size is NULL");
    *size = (int)tern_datatype_size(datatype);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Type_size_x)
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    static const char *const func = "MPI_Type_size_x";
    TERN_CHECK_INIT(func);
    size_t sz;
    int err = tern_check_datatype(func, MPI_COMM_NULL, datatype, &sz);
    if (err)
        return err;
    if (!size)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "size is NULL");
    *size = (MPI_Count)tern_datatype_size(datatype);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    static const char *const func = "MPI_Type_get_extent";
    TERN_CHECK_INIT(func);
    size_t sz;
    int err = tern_check_datatype(func, MPI_COMM_NULL, datatype, &sz);
    if (err)
        return err;
    if (!lb || !extent)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "%s is NULL", !lb ? "lb" : "extent");
    *lb = 0;
    *extent = (MPI_Aint)sz;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
    static const char *const func = "MPI_Barrier";
    TERN_CHECK_INIT(func);
    tern_comm_t *c;
    int err = tern_check_comm(func, comm, &c);
    if (err)
        return err;
    tern_status_t st = tern_coll_barrier(c);
    if (st != TERN_OK)
        return tern_mpi_status_error(comm, st, func, "barrier failed");
    return MPI_SUCCESS;
}
