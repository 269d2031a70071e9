/* Tern's standard-ABI tests: programs built against mpi_abi.h (the
 * MPI-5.0 ABI's <mpi.h>) and run on libmpi_abi.so.1. CHECK fails the
 * program with the line and the values. */
#ifndef TERN_ABI_TEST_H
#define TERN_ABI_TEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef MPI_ABI_VERSION
#error "built against libtern's mpi.h, not the ABI's"
#endif

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
        }                                                                                  \
    } while (0)
#define CHECK_OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

#endif
