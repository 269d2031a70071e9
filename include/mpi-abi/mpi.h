/* Tern: `#include <mpi.h>` for programs built for the MPI-5.0 standard ABI
 * (mpicc -mpi-abi, mpicc_abi put this directory first): the ABI's header,
 * whose library is libmpi_abi.so.1. */
#include <mpi_abi.h>
