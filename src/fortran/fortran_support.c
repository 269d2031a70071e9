/* The sentinels' common blocks and the string conversions of the Fortran
 * bindings: see fortran_support.h. */
#include "fortran/fortran_support.h"

#include <string.h>

/* Defined here, so every program's COMMON binds to these and the wrappers
 * can compare addresses; aligned as gfortran aligns commons. */
#define F_COMMON __attribute__((aligned(16)))
#ifdef TERN_F_MPICH
F_COMMON tern_f_mpipriv1_t mpipriv1_;
F_COMMON tern_f_mpipriv2_t mpipriv2_;
F_COMMON tern_f_mpiprivc_t mpiprivc_;
F_COMMON MPI_Fint mpifcmb5_[1];
F_COMMON MPI_Fint mpifcmb9_[1];
#else
F_COMMON MPI_Fint tern_f_bottom_;
F_COMMON MPI_Fint tern_f_in_place_;
F_COMMON MPI_Fint tern_f_status_ignore_[MPI_F_STATUS_SIZE];
F_COMMON MPI_Fint tern_f_statuses_ignore_[MPI_F_STATUS_SIZE];
F_COMMON MPI_Fint tern_f_errcodes_ignore_[1];
F_COMMON MPI_Fint tern_f_unweighted_[1];
F_COMMON MPI_Fint tern_f_weights_empty_[1];
F_COMMON char tern_f_argv_null_[1];
F_COMMON char tern_f_argvs_null_[1];
#endif

char *tern_f_str_in(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

char *tern_f_str_in_trim(const char *s, size_t len)
{
    while (len > 0 && *s == ' ')
        s++, len--;
    return tern_f_str_in(s, len);
}

char *tern_f_str_buf(size_t len)
{
    return calloc((len > MPI_MAX_INFO_VAL ? len : MPI_MAX_INFO_VAL) + 1, 1);
}

void tern_f_str_out(char *s, size_t len, const char *c)
{
    if (!c)
        return;
    size_t n = strnlen(c, len);
    memcpy(s, c, n);
    memset(s + n, ' ', len - n);
}
