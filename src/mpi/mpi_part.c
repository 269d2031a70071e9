#include "mpi/mpi_part.h"
#include "mpi/mpi_errors.h"
#include "mpi/mpi_p2p.h"

#include <limits.h>

int tern_check_part(const char *func, const void *buf, int partitions, MPI_Count count,
                    MPI_Datatype dt, int peer, int tag, MPI_Comm comm, int is_send,
                    tern_comm_t **c_p)
{
    tern_dt_desc_t d;
    /* The one-pass check of a send: communicator, count, type, buffer, and
     * a peer and tag that are not wildcards. */
    int err = tern_check_p2p(func, buf, count > INT_MAX ? INT_MAX : (int)count, dt, peer, tag,
                             comm, 1, c_p, &d);
    if (err && !is_send && (peer == MPI_ANY_SOURCE || tag == MPI_ANY_TAG) && tern_comm_lookup(comm))
        return tern_mpi_error(comm, peer == MPI_ANY_SOURCE ? MPI_ERR_RANK : MPI_ERR_TAG, func,
                              "%s is not allowed in a partitioned receive",
                              peer == MPI_ANY_SOURCE ? "MPI_ANY_SOURCE" : "MPI_ANY_TAG");
    if (err)
        return err;
    if (partitions < 0)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "partitions=%d is negative", partitions);
    if (count < 0)
        return tern_mpi_error(comm, MPI_ERR_COUNT, func, "count=%lld is negative",
                              (long long)count);
    if (count > INT_MAX)
        return tern_mpi_error(comm, MPI_ERR_COUNT, func,
                              "count=%lld elements per partition exceeds %d", (long long)count,
                              INT_MAX);
    return MPI_SUCCESS;
}
