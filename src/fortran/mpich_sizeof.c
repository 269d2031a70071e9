/* MPI_SIZEOF for programs built with MPICH's module mpi (libmpichfort.so.12
 * only). MPICH's generic MPI_SIZEOF is a set of module procedures of its
 * module mpi_sizeofs, one per intrinsic type and kind, scalar and array
 * (suffix v); a program calls them by gfortran's module names
 * (__mpi_sizeofs_MOD_mpi_sizeof_<suffix>) with the arguments (X, SIZE,
 * IERROR[, X's hidden length for CHARACTER]). X is never read: SIZE is the
 * size in bytes of one element of X's type and kind, gfortran's sizes as
 * Tern's Fortran datatypes have them (docs/design.md, "The MPICH ABI
 * face"). */
#include "fortran/fortran_support.h"

/* suffix, bytes */
#define MPICH_SIZEOFS(X)                                                                           \
    X(ch, 1) X(cx, 8) X(d, 8) X(i, 4) X(i1, 1) X(i2, 2) X(i8, 8) X(l, 4) X(r, 4)

#define SIZEOF_PROC(suffix, bytes)                                                                 \
    void mpich_sizeof_##suffix(const void *x, MPI_Fint *size, MPI_Fint *ierror)                    \
        __asm__("__mpi_sizeofs_MOD_mpi_sizeof_" #suffix);                                          \
    void mpich_sizeof_##suffix(const void *x, MPI_Fint *size, MPI_Fint *ierror)                    \
    {                                                                                              \
        (void)x;                                                                                   \
        *size = bytes;                                                                             \
        *ierror = MPI_SUCCESS;                                                                     \
    }                                                                                              \
    void mpich_sizeof_##suffix##v(const void *x, MPI_Fint *size, MPI_Fint *ierror)                 \
        __asm__("__mpi_sizeofs_MOD_mpi_sizeof_" #suffix "v");                                      \
    void mpich_sizeof_##suffix##v(const void *x, MPI_Fint *size, MPI_Fint *ierror)                 \
    {                                                                                              \
        mpich_sizeof_##suffix(x, size, ierror);                                                    \
    }

MPICH_SIZEOFS(SIZEOF_PROC)
