/* The predefined conversion functions of data representations
 * (MPI_Register_datarep, MPI-5.0 14.5.3): functions of the API, as the
 * attribute callbacks are (mpi_attr_callbacks.c); their prototypes are
 * generated. They mean "no conversion": the entry points of
 * MPI_Register_datarep(_c) pass the core NULL for them and the data moves
 * as it is in memory (core/io/io_datarep.h), so Tern never calls them; a
 * program that calls one directly converts nothing. */
#include <mpi.h>

int MPI_CONVERSION_FN_NULL(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                           MPI_Offset position, void *extra_state)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position;
    (void)extra_state;
    return MPI_SUCCESS;
}

int MPI_CONVERSION_FN_NULL_C(void *userbuf, MPI_Datatype datatype, MPI_Count count,
                             void *filebuf, MPI_Offset position, void *extra_state)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position;
    (void)extra_state;
    return MPI_SUCCESS;
}
