/* The datatype work that needs the status of a message (point-to-point's,
 * above the datatype core): MPI_Get_count and MPI_Get_count_c (chapter 3,
 * still written by hand), and MPI_Status_set_elements's write into the
 * status. The datatype procedures themselves are generated
 * (src/mpi/api/datatype.toml) over src/core/datatype/. */
#include "mpi/mpi_type.h"
#include "core/datatype/dtype_query.h"
#include "core/pt2pt/request.h"
#include "mpi/mpi_checks.h"

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

/* Whole elements of datatype in the message: its bytes over the type's size. */
static int get_count(const char *func, const MPI_Status *status, MPI_Datatype datatype,
                     tern_num_ref_t count)
{
    TERN_CHECK_INIT(func);
    int err;
    if ((err = tern_check_status(func, MPI_COMM_NULL, status)) ||
        (err = tern_check_committed_type(func, MPI_COMM_NULL, datatype, "datatype")) ||
        (err = tern_check_ptr(func, MPI_COMM_NULL, count.p, "count")))
        return err;
    return tern_mpi_result(MPI_COMM_NULL, func,
                           tern_dtype_get_count(datatype, tern_status_bytes(status), count));
}

TERN_PMPI_ALIAS(Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    return get_count("MPI_Get_count", status, datatype, TERN_NUM_REF(count));
}

TERN_PMPI_ALIAS(Get_count_c)
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return get_count("MPI_Get_count_c", status, datatype, TERN_NUM_REF(count));
}
