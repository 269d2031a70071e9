/* The Fortran procedures whose form is not their C one plus IERROR:
 * MPI_INIT (no argc/argv), MPI_INFO_GET_STRING (BUFLEN without the
 * terminator), generalized requests whose callbacks are Fortran subroutines
 * (every argument by reference, IERROR last), MPI_PCONTROL (no IERROR).
 * Keyvals and attributes: fortran_attr.c. The PMPI names are the same
 * functions. */
#include "fortran/fortran_support.h"

void mpi_init_(MPI_Fint *ierror);
void mpi_init_(MPI_Fint *ierror)
{
    *ierror = MPI_Init(NULL, NULL);
}
TERN_F_BOTH(mpi_init, MPI_INIT, pmpi_init, PMPI_INIT)

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror);
void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    *ierror = MPI_Init_thread(NULL, NULL, *required, provided);
}
TERN_F_BOTH(mpi_init_thread, MPI_INIT_THREAD, pmpi_init_thread, PMPI_INIT_THREAD)

/* MPI_INFO_CREATE_ENV(INFO, IERROR): Fortran has no argc/argv to pass
 * (the standard's Fortran form), which C allows as 0/NULL. */
void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror);
void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierror)
{
    MPI_Info i = MPI_INFO_NULL;
    *ierror = MPI_Info_create_env(0, NULL, &i);
    if (*ierror == MPI_SUCCESS)
        *info = (MPI_Fint)i;
}
TERN_F_BOTH(mpi_info_create_env, MPI_INFO_CREATE_ENV, pmpi_info_create_env, PMPI_INFO_CREATE_ENV)

/* MPI_INFO_GET_STRING(INFO, KEY, BUFLEN, VALUE, FLAG, IERROR): Fortran's
 * BUFLEN counts characters without C's terminator, in (how many to write,
 * 0: none) and out (the value's length) (MPI-4.1 10: "In C, buflen
 * includes the required space for the null terminator"). */
void mpi_info_get_string_(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value,
                          MPI_Fint *flag, MPI_Fint *ierror, size_t key_len, size_t value_len);
void mpi_info_get_string_(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value,
                          MPI_Fint *flag, MPI_Fint *ierror, size_t key_len, size_t value_len)
{
    char *key_c = tern_f_str_in_trim(key, key_len);
    /* At most the Fortran string's length is written; a negative BUFLEN
     * goes to C as it is, to be refused there. */
    MPI_Fint want = *buflen;
    int c_len = want <= 0 ? want : (int)((size_t)want < value_len ? (size_t)want : value_len) + 1;
    char *value_c = c_len > 0 ? calloc((size_t)c_len, 1) : NULL;
    int found = 0;
    if (!key_c || (c_len > 0 && !value_c)) {
        *ierror = MPI_ERR_NO_MEM;
    } else {
        *ierror = MPI_Info_get_string(*info, key_c, &c_len, value_c, &found);
        if (*ierror == MPI_SUCCESS) {
            *flag = found != 0;
            if (found) {
                *buflen = c_len - 1;
                if (want > 0)
                    tern_f_str_out(value, value_len, value_c);
            }
        }
    }
    free(key_c);
    free(value_c);
}
TERN_F_BOTH(mpi_info_get_string, MPI_INFO_GET_STRING, pmpi_info_get_string, PMPI_INFO_GET_STRING)

/* MPI_PCONTROL(LEVEL): the only Fortran subroutine without IERROR (its C
 * form takes varargs, which Fortran cannot pass). */
void mpi_pcontrol_(MPI_Fint *level);
void mpi_pcontrol_(MPI_Fint *level)
{
    MPI_Pcontrol((int)*level);
}
TERN_F_BOTH(mpi_pcontrol, MPI_PCONTROL, pmpi_pcontrol, PMPI_PCONTROL)

/* ------------------------------------------------------------------------ */
/* Generalized requests with Fortran callbacks: query(extra_state, status,
 * ierror), free(extra_state, ierror), cancel(extra_state, complete, ierror),
 * the extra state an INTEGER(KIND=MPI_ADDRESS_KIND). As in MPICH, the
 * callbacks get the program's own variable (its address is kept), so what
 * they write there the program sees (MPICH's f77/pt2pt/greqf relies on it).
 * The record lives until the free callback has run. */

typedef void f_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void f_free_fn(MPI_Aint *extra, MPI_Fint *ierror);
typedef void f_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror);

typedef struct {
    f_query_fn *query;
    f_free_fn *free;
    f_cancel_fn *cancel;
    MPI_Aint *extra;
} f_grequest_t;

static int f_grequest_query(void *extra, MPI_Status *status)
{
    f_grequest_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(g->extra, (MPI_Fint *)(void *)status, &ierr);
    return ierr;
}

static int f_grequest_free(void *extra)
{
    f_grequest_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(g->extra, &ierr);
    free(g);
    return ierr;
}

static int f_grequest_cancel(void *extra, int complete)
{
    f_grequest_t *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, fcomplete = complete != 0;
    g->cancel(g->extra, &fcomplete, &ierr);
    return ierr;
}

void mpi_grequest_start_(f_query_fn *query, f_free_fn *free_fn, f_cancel_fn *cancel,
                         MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror);
void mpi_grequest_start_(f_query_fn *query, f_free_fn *free_fn, f_cancel_fn *cancel,
                         MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
    f_grequest_t *g = malloc(sizeof *g);
    if (!g) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    *g = (f_grequest_t){query, free_fn, cancel, extra};
    *ierror = MPI_Grequest_start(f_grequest_query, f_grequest_free, f_grequest_cancel, g, request);
    if (*ierror != MPI_SUCCESS)
        free(g);
}
TERN_F_BOTH(mpi_grequest_start, MPI_GREQUEST_START, pmpi_grequest_start, PMPI_GREQUEST_START)
