/* MPI_Status_set_elements's write into the status (point-to-point's, above
 * the datatype core). The datatype procedures themselves are generated
 * (src/mpi/api/datatype.toml) over src/core/datatype/. */
#include "mpi/mpi_type.h"
#include "core/datatype/dtype_query.h"
#include "core/pt2pt/request.h"

tern_status_t tern_mpi_status_set_elements(MPI_Status *status, MPI_Datatype datatype,
                                           MPI_Count count)
{
    size_t bytes;
    tern_status_t st = tern_dtype_elements_bytes(datatype, count, &bytes);
    if (st == TERN_OK)
        tern_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR, bytes,
                        status->count_hi_and_cancelled & 1);
    return st;
}
