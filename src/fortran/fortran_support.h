/* What the Fortran bindings (libmpifort) share: the sentinels of mpif.h and
 * module mpi, and the conversions of choice buffers, statuses and strings.
 * Fortran passes every argument by reference; a handle, a status array
 * and a LOGICAL (gfortran: .TRUE. is 1) are C's values and layouts, so
 * most arguments need no conversion (docs/design.md, "Fortran bindings"). */
#ifndef TERN_FORTRAN_SUPPORT_H
#define TERN_FORTRAN_SUPPORT_H

#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

#define TERN_F_HIDDEN __attribute__((visibility("hidden")))

/* The common blocks of the sentinels (gfortran names /TERN_F_BOTTOM/
 * tern_f_bottom_); the sizes are mpif.h's (tools/bindgen/fortran.py). */
extern MPI_Fint tern_f_bottom_, tern_f_in_place_;
extern MPI_Fint tern_f_status_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint tern_f_statuses_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint tern_f_errcodes_ignore_[1], tern_f_unweighted_[1], tern_f_weights_empty_[1];
extern char tern_f_argv_null_[1], tern_f_argvs_null_[1];

/* A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become C's. */
static inline void *tern_f_buf(void *buf)
{
    if (buf == &tern_f_bottom_)
        return MPI_BOTTOM;
    if (buf == &tern_f_in_place_)
        return MPI_IN_PLACE;
    return buf;
}

static inline MPI_Status *tern_f_status(MPI_Fint *status)
{
    return status == tern_f_status_ignore_ ? MPI_STATUS_IGNORE : (MPI_Status *)(void *)status;
}

static inline MPI_Status *tern_f_statuses(MPI_Fint *statuses)
{
    return statuses == tern_f_statuses_ignore_ || statuses == tern_f_status_ignore_
               ? MPI_STATUSES_IGNORE
               : (MPI_Status *)(void *)statuses;
}

static inline MPI_Fint *tern_f_errcodes(MPI_Fint *codes)
{
    return codes == tern_f_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : codes;
}

static inline const int *tern_f_weights(const MPI_Fint *weights)
{
    if (weights == tern_f_unweighted_)
        return MPI_UNWEIGHTED;
    if (weights == tern_f_weights_empty_)
        return MPI_WEIGHTS_EMPTY;
    return weights;
}

/* A Fortran string in: its trailing blanks dropped, NUL-terminated, in
 * memory the caller frees (NULL when there is none). */
TERN_F_HIDDEN char *tern_f_str_in(const char *s, size_t len);
/* The same without leading blanks either (info keys and values). */
TERN_F_HIDDEN char *tern_f_str_in_trim(const char *s, size_t len);
/* Room for a C string out: len bytes, at least MPI_MAX_INFO_VAL (the
 * longest string a procedure writes), zeroed. */
TERN_F_HIDDEN char *tern_f_str_buf(size_t len);
/* The C string c into the Fortran string s of len characters, blank-padded
 * (cut at len). Nothing when c is NULL. */
TERN_F_HIDDEN void tern_f_str_out(char *s, size_t len, const char *c);

/* The other manglings of a gfortran name (name_): name__ (g77, f2c), name
 * and NAME, all the same function. */
#define TERN_F_ALIASES(lower, upper)                                                               \
    __asm__(".globl " #lower "__\n.set " #lower "__, " #lower "_\n"                                \
            ".globl " #lower "\n.set " #lower ", " #lower "_\n"                                    \
            ".globl " #upper "\n.set " #upper ", " #lower "_\n");

/* Both names of a hand-written procedure (pmpi_x_ is mpi_x_), each with
 * its other manglings. */
#define TERN_F_BOTH(lower, upper, plower, pupper)                                                  \
    TERN_F_ALIASES(lower, upper)                                                                   \
    __asm__(".globl " #plower "_\n.set " #plower "_, " #lower "_\n");                              \
    TERN_F_ALIASES(plower, pupper)

#endif
