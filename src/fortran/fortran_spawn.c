/* MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE from Fortran: the argument
 * lists are CHARACTER arrays of one fixed length, blank-padded, each list
 * ended by a blank entry (MPI-4.1 11.8.2); in spawn_multiple's
 * ARRAY_OF_ARGV(COUNT, *) command i's arguments are the row
 * ARRAY_OF_ARGV(i, 1), ARRAY_OF_ARGV(i, 2)... They become C's
 * NULL-terminated argv (trailing blanks dropped) at the root, the only rank
 * that reads them; MPI_ARGV_NULL, MPI_ARGVS_NULL and MPI_ERRCODES_IGNORE
 * are the common blocks of fortran_support.c. */
#include "fortran/fortran_support.h"

#include <stdlib.h>
#include <string.h>

static int blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ')
            return 0;
    return 1;
}

static void free_argv(char **argv)
{
    if (!argv)
        return;
    for (char **a = argv; *a; a++)
        free(*a);
    free(argv);
}

/* The C argv of the list whose k-th entry is at first + k * step * len
 * (len characters each), up to its first blank entry; NULL when out of
 * memory (*nomem set). */
static char **argv_in(const char *first, size_t step, size_t len, int *nomem)
{
    size_t n = 0;
    while (len > 0 && !blank(first + n * step * len, len))
        n++;
    char **argv = calloc(n + 1, sizeof *argv);
    if (!argv) {
        *nomem = 1;
        return NULL;
    }
    for (size_t k = 0; k < n; k++)
        if (!(argv[k] = tern_f_str_in(first + k * step * len, len))) {
            free_argv(argv);
            *nomem = 1;
            return NULL;
        }
    return argv;
}

/* 1 when this process is the root of comm (only it reads the lists); 0
 * also when comm or root are not valid: the C procedure reports those. */
static int at_root(MPI_Fint comm, MPI_Fint root)
{
    int rank = -1, flag = 0;
    MPI_Initialized(&flag);
    if (!flag || MPI_Comm_test_inter((MPI_Comm)comm, &flag) != MPI_SUCCESS || flag)
        return 0;
    return MPI_Comm_rank((MPI_Comm)comm, &rank) == MPI_SUCCESS && rank == root;
}

void mpi_comm_spawn_(const char *command, const char *argv, MPI_Fint *maxprocs, MPI_Fint *info,
                     MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
                     MPI_Fint *ierror, size_t command_len, size_t argv_len);
void mpi_comm_spawn_(const char *command, const char *argv, MPI_Fint *maxprocs, MPI_Fint *info,
                     MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
                     MPI_Fint *ierror, size_t command_len, size_t argv_len)
{
    int nomem = 0;
    char *c_command = tern_f_str_in(command, command_len);
    char **c_argv = NULL;
    if (!tern_f_argv_null(argv) && at_root(*comm, *root))
        c_argv = argv_in(argv, 1, argv_len, &nomem);
    if (!c_command || nomem) {
        *ierror = MPI_ERR_NO_MEM;
    } else {
        MPI_Comm ic = MPI_COMM_NULL;
        *ierror = MPI_Comm_spawn(c_command, c_argv, *maxprocs, (MPI_Info)*info, *root,
                                 (MPI_Comm)*comm, &ic, tern_f_errcodes(errcodes));
        if (*ierror == MPI_SUCCESS)
            *intercomm = (MPI_Fint)ic;
    }
    free(c_command);
    free_argv(c_argv);
}

void mpi_comm_spawn_multiple_(MPI_Fint *count, const char *commands, const char *argvs,
                              MPI_Fint *maxprocs, MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm,
                              MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror,
                              size_t commands_len, size_t argvs_len);
void mpi_comm_spawn_multiple_(MPI_Fint *count, const char *commands, const char *argvs,
                              MPI_Fint *maxprocs, MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm,
                              MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror,
                              size_t commands_len, size_t argvs_len)
{
    int n = at_root(*comm, *root) && *count > 0 ? *count : 0, nomem = 0;
    char **c_commands = n ? calloc((size_t)n, sizeof *c_commands) : NULL;
    char ***c_argvs = n && !tern_f_argvs_null(argvs) ? calloc((size_t)n, sizeof *c_argvs) : NULL;
    nomem = n && (!c_commands || (!tern_f_argvs_null(argvs) && !c_argvs));
    for (int i = 0; i < n && !nomem; i++) {
        if (!(c_commands[i] = tern_f_str_in(commands + (size_t)i * commands_len, commands_len)))
            nomem = 1;
        /* Column-major: ARRAY_OF_ARGV(i, k) is k * count entries past (i, 1). */
        else if (c_argvs)
            c_argvs[i] = argv_in(argvs + (size_t)i * argvs_len, (size_t)n, argvs_len, &nomem);
    }
    if (nomem) {
        *ierror = MPI_ERR_NO_MEM;
    } else {
        MPI_Comm ic = MPI_COMM_NULL;
        *ierror = MPI_Comm_spawn_multiple(*count, c_commands, c_argvs, maxprocs,
                                          (MPI_Info *)infos, *root, (MPI_Comm)*comm, &ic,
                                          tern_f_errcodes(errcodes));
        if (*ierror == MPI_SUCCESS)
            *intercomm = (MPI_Fint)ic;
    }
    for (int i = 0; i < n; i++) {
        if (c_commands)
            free(c_commands[i]);
        if (c_argvs)
            free_argv(c_argvs[i]);
    }
    free(c_commands);
    free(c_argvs);
}

TERN_F_BOTH(mpi_comm_spawn, MPI_COMM_SPAWN, pmpi_comm_spawn, PMPI_COMM_SPAWN)
TERN_F_BOTH(mpi_comm_spawn_multiple, MPI_COMM_SPAWN_MULTIPLE, pmpi_comm_spawn_multiple,
            PMPI_COMM_SPAWN_MULTIPLE)
