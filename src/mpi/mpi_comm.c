/* Communicator queries, predefined attributes, datatype sizes, barrier. */
#include "mpi/mpi_errors.h"
#include "core/coll/coll.h"
#include "core/datatype/datatype.h"

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
