/* MPI_Info objects: ordered (key, value) string pairs. Handles index a
 * table (0x9c000000 | index); MPI_INFO_ENV is a read-only predefined object
 * filled on first use (command, argv, maxprocs, host, arch, wdir,
 * thread_level). */
#ifndef TERN_CORE_INFO_H
#define TERN_CORE_INFO_H

#include "base/status.h"
#include <mpi.h>

typedef struct {
    int n, cap;
    char **keys, **vals;
    int read_only;
} tern_info_t;

/* Handle to object (MPI_INFO_ENV included); NULL if not live. */
tern_info_t *tern_info_lookup(MPI_Info handle);
tern_status_t tern_info_create(MPI_Info *handle_p);
tern_status_t tern_info_dup(MPI_Info src, MPI_Info *handle_p);
void tern_info_free(MPI_Info handle);

tern_status_t tern_info_set(tern_info_t *info, const char *key, const char *value);
/* Value of key, or NULL. */
const char *tern_info_get(const tern_info_t *info, const char *key);
/* 1 if the key was there. */
int tern_info_delete(tern_info_t *info, const char *key);

/* The MPI_Info_* operations, on arguments the MPI layer has checked. */
tern_status_t tern_info_get_value(const tern_info_t *info, const char *key, int valuelen,
                                  char *value, int *flag);
tern_status_t tern_info_get_valuelen(const tern_info_t *info, const char *key, int *valuelen,
                                     int *flag);
tern_status_t tern_info_get_nkeys(const tern_info_t *info, int *nkeys);
tern_status_t tern_info_get_nthkey(const tern_info_t *info, int n, char *key);
tern_status_t tern_info_delete_key(tern_info_t *info, const char *key);
/* MPI_Info_get_string: MPI's string rule (*buflen 0 asks for the length;
 * *buflen returns the length plus one). */
tern_status_t tern_info_get_string(const tern_info_t *info, const char *key, int *buflen,
                                   char *value, int *flag);
/* MPI_Info_create_env: a new info with MPI_INFO_ENV's keys (argv, when
 * given, supplies command and argv); callable before MPI runs. */
tern_status_t tern_info_create_env(int argc, char *const *argv, MPI_Info *info);
/* Frees *handle's object and sets it to MPI_INFO_NULL. */
tern_status_t tern_info_release(MPI_Info *handle);

#endif
