/* Communicator queries, predefined attributes, datatype sizes, barrier. */
#include "mpi/mpi_errors.h"
#include "core/coll.h"
#include "core/datatype.h"

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
