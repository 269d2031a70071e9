/* What the Fortran bindings (libmpifort) share: the sentinels of mpif.h and
 * module mpi, and the conversions of choice buffers, statuses and strings.
 * Fortran passes every argument by reference; a handle, a status array
 * and a LOGICAL (gfortran: .TRUE. is 1) are C's values and layouts, so
 * most arguments need no conversion (docs/design.md, "Fortran bindings"). */
#ifndef TERN_FORTRAN_SUPPORT_H
#define TERN_FORTRAN_SUPPORT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define TERN_F_HIDDEN __attribute__((visibility("hidden")))

/* The common blocks of the sentinels. Tern's own (libmpifort): gfortran
 * names /TERN_F_BOTTOM/ tern_f_bottom_, the sizes are mpif.h's
 * (tools/bindgen/fortran.py). MPICH's (libmpichfort.so.12, built with
 * TERN_F_MPICH): MPICH 4.0's mpif.h and module mpi put them in five blocks,
 * /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE(5); /MPIPRIV2/
 * MPI_STATUSES_IGNORE(5,1), MPI_ERRCODES_IGNORE(1); /MPIPRIVC/
 * MPI_ARGVS_NULL(1,1), MPI_ARGV_NULL(1) (CHARACTER*1); /MPIFCMB5/
 * MPI_UNWEIGHTED; /MPIFCMB9/ MPI_WEIGHTS_EMPTY (docs/design.md, "The MPICH
 * ABI face"). Either way the library defines them and a program's COMMON
 * binds to the same storage, so an address compare finds a sentinel. */
#ifdef TERN_F_MPICH
typedef struct {
    MPI_Fint bottom, in_place, status_ignore[MPI_F_STATUS_SIZE];
} tern_f_mpipriv1_t;
typedef struct {
    MPI_Fint statuses_ignore[MPI_F_STATUS_SIZE], errcodes_ignore[1];
} tern_f_mpipriv2_t;
typedef struct {
    char argvs_null[1], argv_null[1];
} tern_f_mpiprivc_t;
extern tern_f_mpipriv1_t mpipriv1_;
extern tern_f_mpipriv2_t mpipriv2_;
extern tern_f_mpiprivc_t mpiprivc_;
extern MPI_Fint mpifcmb5_[1], mpifcmb9_[1];
#define tern_f_bottom_ (mpipriv1_.bottom)
#define tern_f_in_place_ (mpipriv1_.in_place)
#define tern_f_status_ignore_ (mpipriv1_.status_ignore)
#define tern_f_statuses_ignore_ (mpipriv2_.statuses_ignore)
#define tern_f_errcodes_ignore_ (mpipriv2_.errcodes_ignore)
#define tern_f_argvs_null_ (mpiprivc_.argvs_null)
#define tern_f_argv_null_ (mpiprivc_.argv_null)
#define tern_f_unweighted_ mpifcmb5_
#define tern_f_weights_empty_ mpifcmb9_
#else
extern MPI_Fint tern_f_bottom_, tern_f_in_place_;
extern MPI_Fint tern_f_status_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint tern_f_statuses_ignore_[MPI_F_STATUS_SIZE];
extern MPI_Fint tern_f_errcodes_ignore_[1], tern_f_unweighted_[1], tern_f_weights_empty_[1];
extern char tern_f_argv_null_[1], tern_f_argvs_null_[1];
#endif

/* A file handle written by the C call (MPI_FILE_OPEN, MPI_FILE_CLOSE) goes
 * through a C MPI_File of the library's own width: libmpich.so.12's is
 * MPICH's, an 8-byte pointer whose MPI_FILE_NULL is 0, which is also
 * MPICH's Fortran MPI_FILE_NULL; Tern's own is the int itself. */
#ifdef TERN_F_MPICH
typedef uintptr_t tern_f_file_t;
#define TERN_F_FILE_IN(f) ((tern_f_file_t)(uint32_t)(f))
#define TERN_F_FILE_OUT(c) ((MPI_Fint)(uint32_t)(c))
#else
typedef MPI_File tern_f_file_t;
#define TERN_F_FILE_IN(f) ((MPI_File)(f))
#define TERN_F_FILE_OUT(c) ((MPI_Fint)(c))
#endif

/* A keyval from Fortran. MPICH's Fortran names each predefined attribute by
 * its C keyval + 1 (MPI_TAG_UB is 0x64400002 in its mpif.h, 0x64400001 in
 * mpi.h); every other keyval is the C one. */
#ifdef TERN_F_MPICH
static inline int tern_f_keyval(MPI_Fint k)
{
    switch (k - 1) {
    case MPI_TAG_UB: case MPI_HOST: case MPI_IO: case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE: case MPI_LASTUSEDCODE: case MPI_APPNUM:
    case MPI_WIN_BASE: case MPI_WIN_SIZE: case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR: case MPI_WIN_MODEL:
        return k - 1;
    default:
        return k;
    }
}
#else
static inline int tern_f_keyval(MPI_Fint k)
{
    return k;
}
#endif

#ifdef TERN_F_MPICH
/* MPICH's module mpi_f08 names its sentinels by these C symbols
 * (libmpich.so.12 defines them, src/mpich/mpich_abi.c; a program binds
 * them by copy relocation, so their addresses are the program's). */
extern MPI_Fint MPIR_F08_MPI_BOTTOM, MPIR_F08_MPI_IN_PLACE;
extern MPI_F08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ, MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1];
/* The others are variables of its module mpi_f08_link_constants, which
 * libmpichfort.so.12 defines under gfortran's names
 * (gen/mpich/f08_modules.c); a program binds them by copy relocation too. */
#define TERN_F08_LINK(name) __asm__("__mpi_f08_link_constants_MOD_mpi_" #name)
extern char tern_mpich_f08_argv_null[1] TERN_F08_LINK(argv_null);
extern char tern_mpich_f08_argvs_null[1] TERN_F08_LINK(argvs_null);
extern MPI_Fint tern_mpich_f08_errcodes_ignore[1] TERN_F08_LINK(errcodes_ignore);
extern MPI_Fint tern_mpich_f08_unweighted[1] TERN_F08_LINK(unweighted);
extern MPI_Fint tern_mpich_f08_weights_empty[1] TERN_F08_LINK(weights_empty);
/* Its MPI_CONVERSION_FN_NULL(_C), module procedures of mpi_f08_callbacks. */
void tern_mpich_mpi_conversion_fn_null(void) __asm__("__mpi_f08_callbacks_MOD_mpi_conversion_fn_null");
void tern_mpich_mpi_conversion_fn_null_c(void)
    __asm__("__mpi_f08_callbacks_MOD_mpi_conversion_fn_null_c");
#define TERN_F08_IS(p, sym) ((void *)(p) == (void *)&(sym))
#define TERN_F08_CONV(fn)                                                                          \
    ((fn) == tern_mpich_mpi_conversion_fn_null || (fn) == tern_mpich_mpi_conversion_fn_null_c      \
         ? NULL                                                                                    \
         : (fn))
#else
#define TERN_F08_CONV(fn) (fn)
#define TERN_F08_IS(p, sym) 0
#endif

/* A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become C's. */
static inline void *tern_f_buf(void *buf)
{
    if (buf == &tern_f_bottom_ || TERN_F08_IS(buf, MPIR_F08_MPI_BOTTOM))
        return MPI_BOTTOM;
    if (buf == &tern_f_in_place_ || TERN_F08_IS(buf, MPIR_F08_MPI_IN_PLACE))
        return MPI_IN_PLACE;
    return buf;
}

static inline MPI_Status *tern_f_status(MPI_Fint *status)
{
    return status == tern_f_status_ignore_ ||
                   TERN_F08_IS(status, MPIR_F08_MPI_STATUS_IGNORE_OBJ)
               ? MPI_STATUS_IGNORE
               : (MPI_Status *)(void *)status;
}

static inline MPI_Status *tern_f_statuses(MPI_Fint *statuses)
{
    return statuses == tern_f_statuses_ignore_ || statuses == tern_f_status_ignore_ ||
                   TERN_F08_IS(statuses, MPIR_F08_MPI_STATUSES_IGNORE_OBJ) ||
                   TERN_F08_IS(statuses, MPIR_F08_MPI_STATUS_IGNORE_OBJ)
               ? MPI_STATUSES_IGNORE
               : (MPI_Status *)(void *)statuses;
}

static inline MPI_Fint *tern_f_errcodes(MPI_Fint *codes)
{
    return codes == tern_f_errcodes_ignore_ || TERN_F08_IS(codes, tern_mpich_f08_errcodes_ignore)
               ? MPI_ERRCODES_IGNORE
               : codes;
}

/* MPI_ARGV_NULL, MPI_ARGVS_NULL (fortran_spawn.c). */
static inline int tern_f_argv_null(const char *argv)
{
    return argv == tern_f_argv_null_ || TERN_F08_IS(argv, tern_mpich_f08_argv_null);
}

static inline int tern_f_argvs_null(const char *argvs)
{
    return argvs == tern_f_argvs_null_ || TERN_F08_IS(argvs, tern_mpich_f08_argvs_null);
}

static inline const int *tern_f_weights(const MPI_Fint *weights)
{
    if (weights == tern_f_unweighted_ || TERN_F08_IS(weights, tern_mpich_f08_unweighted))
        return MPI_UNWEIGHTED;
    if (weights == tern_f_weights_empty_ || TERN_F08_IS(weights, tern_mpich_f08_weights_empty))
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
