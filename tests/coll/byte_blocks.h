/* Blocks of n bytes for the block-collective tests: one element of a
 * type, contiguous or strided (every other byte of 2n, a derived type),
 * and where byte i of block q lies in a buffer of such blocks. */
#ifndef TERN_TESTS_COLL_BYTE_BLOCKS_H
#define TERN_TESTS_COLL_BYTE_BLOCKS_H

#include <mpi.h>
#include <stddef.h>

static MPI_Datatype block_type(size_t n, int strided)
{
    MPI_Datatype t;
    if (strided) { /* extent 2n: blocks follow each other */
        MPI_Datatype v;
        MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n), &t);
        MPI_Type_free(&v);
    } else
        MPI_Type_contiguous((int)n, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

static unsigned char *at(unsigned char *buf, size_t n, int strided, int q, size_t i)
{
    return strided ? buf + 2 * ((size_t)q * n + i) : buf + (size_t)q * n + i;
}

#endif
