/* A non-commutative reduction for the collective tests: affine maps
 * x -> a x + b (mod 2^32), composed "first then second". Associative but
 * not commutative, so only rank order gives the expected map. The
 * element is two unsigned ints (MPI_Type_contiguous(2, MPI_UNSIGNED)). */
#ifndef TERN_TESTS_COLL_AFFINE_OP_H
#define TERN_TESTS_COLL_AFFINE_OP_H

#include <mpi.h>
#include <stddef.h>

typedef struct {
    unsigned a, b;
} affine_t;

/* The MPI_User_function: inout = in then inout. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    affine_t *u = in, *v = inout;
    for (int i = 0; i < *len; i++) {
        affine_t w = {u[i].a * v[i].a, u[i].b * v[i].a + v[i].b};
        v[i] = w;
    }
}

/* Rank q's element i. */
static inline affine_t affine_of(int q, size_t i)
{
    return (affine_t){2u * (unsigned)q + 3u + (unsigned)i, (unsigned)q + 7u * (unsigned)i + 1u};
}

#endif
