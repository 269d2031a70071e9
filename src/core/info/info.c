#include "core/info/info.h"
#include "core/runtime/handle_table.h"
#include "core/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>


static tern_handle_table_t infos = TERN_HANDLE_TABLE(TERN_KIND_INFO, 16);
static tern_info_t info_env;
static int info_env_ready;

static void info_clear(tern_info_t *info)
{
    for (int i = 0; i < info->n; i++) {
        free(info->keys[i]);
        free(info->vals[i]);
    }
    free(info->keys);
    free(info->vals);
    *info = (tern_info_t){0};
}

tern_status_t tern_info_set(tern_info_t *info, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return TERN_ERR_NOMEM;
    for (int i = 0; i < info->n; i++)
        if (strcmp(info->keys[i], key) == 0) {
            free(info->vals[i]);
            info->vals[i] = v;
            return TERN_OK;
        }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return TERN_ERR_NOMEM;
    }
    if (info->n == info->cap) {
        int cap = info->cap ? info->cap * 2 : 8;
        char **nk = realloc(info->keys, (size_t)cap * sizeof *nk);
        if (nk)
            info->keys = nk;
        char **nv = nk ? realloc(info->vals, (size_t)cap * sizeof *nv) : NULL;
        if (!nv) {
            free(k);
            free(v);
            return TERN_ERR_NOMEM;
        }
        info->vals = nv;
        info->cap = cap;
    }
    info->keys[info->n] = k;
    info->vals[info->n] = v;
    info->n++;
    return TERN_OK;
}

const char *tern_info_get(const tern_info_t *info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (strcmp(info->keys[i], key) == 0)
            return info->vals[i];
    return NULL;
}

int tern_info_delete(tern_info_t *info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (strcmp(info->keys[i], key) == 0) {
            free(info->keys[i]);
            free(info->vals[i]);
            memmove(info->keys + i, info->keys + i + 1, (size_t)(info->n - i - 1) * sizeof(char *));
            memmove(info->vals + i, info->vals + i + 1, (size_t)(info->n - i - 1) * sizeof(char *));
            info->n--;
            return 1;
        }
    return 0;
}

/* How this process was started (MPI-4.1 11.2.3): MPI_INFO_ENV's keys, and
 * MPI_Info_create_env's, which takes the command and its arguments from
 * argv when given (else from /proc/self/cmdline). Keys Tern cannot know
 * (soft, file: mpiexec passes neither) are left out. maxprocs comes from
 * the launcher (PMI_SIZE), else from the running job, so objects made
 * before MPI_Init and after it agree (MPICH's info/infocreateenv);
 * thread_level, the level granted, only in MPI_INFO_ENV (with_level). */
static void env_fill(tern_info_t *info, int argc, char *const *argv, int with_level)
{
    char buf[4096];
    if (argv && argc > 0 && argv[0]) {
        tern_info_set(info, "command", argv[0]);
        size_t n = 0;
        buf[0] = 0;
        for (int i = 1; i < argc && argv[i] && n < sizeof buf; i++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i > 1 ? " " : "", argv[i]);
        if (argc > 1)
            tern_info_set(info, "argv", buf);
    } else {
        FILE *f = fopen("/proc/self/cmdline", "r");
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            tern_info_set(info, "command", buf);
            /* Arguments after argv[0], separated by spaces. */
            size_t first = strlen(buf) + 1;
            for (size_t i = first; i + 1 < n; i++)
                if (buf[i] == 0)
                    buf[i] = ' ';
            if (first < n)
                tern_info_set(info, "argv", buf + first);
        }
    }
    const char *launched = getenv("PMI_SIZE");
    if (launched && *launched) {
        tern_info_set(info, "maxprocs", launched);
    } else if (tern_rt.active) {
        snprintf(buf, sizeof buf, "%d", tern_rt.size);
        tern_info_set(info, "maxprocs", buf);
    }
    if (tern_rt.processor_name[0])
        tern_info_set(info, "host", tern_rt.processor_name);
    else if (gethostname(buf, sizeof buf) == 0)
        tern_info_set(info, "host", buf);
    struct utsname u;
    if (uname(&u) == 0)
        tern_info_set(info, "arch", u.machine);
    if (getcwd(buf, sizeof buf))
        tern_info_set(info, "wdir", buf);
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                         "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    if (with_level && tern_rt.active && tern_rt.thread_level >= 0 && tern_rt.thread_level <= 3)
        tern_info_set(info, "thread_level", levels[tern_rt.thread_level]);
}

tern_info_t *tern_info_lookup(MPI_Info handle)
{
    if (handle == MPI_INFO_ENV) {
        if (!info_env_ready) {
            /* Kept once MPI runs; read before, it is made afresh (no
             * maxprocs yet). */
            info_clear(&info_env);
            env_fill(&info_env, 0, NULL, 1);
            info_env.read_only = 1;
            info_env_ready = tern_rt.active;
        }
        return &info_env;
    }
    return tern_handle_get(&infos, handle);
}

tern_status_t tern_info_create(MPI_Info *handle_p)
{
    tern_info_t *info = calloc(1, sizeof *info);
    if (!info)
        return TERN_ERR_NOMEM;
    tern_status_t st = tern_handle_new(&infos, info, handle_p);
    if (st != TERN_OK)
        free(info);
    return st;
}

tern_status_t tern_info_dup(MPI_Info src, MPI_Info *handle_p)
{
    tern_info_t *s = tern_info_lookup(src);
    if (!s)
        return TERN_ERR_ARG;
    MPI_Info h;
    tern_status_t st = tern_info_create(&h);
    if (st != TERN_OK)
        return st;
    tern_info_t *d = tern_info_lookup(h);
    for (int i = 0; i < s->n && st == TERN_OK; i++)
        st = tern_info_set(d, s->keys[i], s->vals[i]);
    if (st != TERN_OK) {
        tern_info_free(h);
        return st;
    }
    *handle_p = h;
    return TERN_OK;
}

static void free_info(void *obj)
{
    info_clear(obj);
    free(obj);
}

void tern_info_free(MPI_Info handle)
{
    tern_info_t *info = tern_info_lookup(handle);
    if (!info || info == &info_env)
        return;
    tern_handle_release(&infos, handle);
    free_info(info);
}

/* ------------------------------------------------------------------------ */
/* The MPI_Info_* operations on checked arguments (src/mpi/api/info.toml). */

tern_status_t tern_info_get_value(const tern_info_t *info, const char *key, int valuelen,
                                  char *value, int *flag)
{
    const char *v = tern_info_get(info, key);
    *flag = v != NULL;
    if (v) {
        /* At most valuelen characters plus the terminator (MPI-4.1, 10). */
        size_t n = strlen(v);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, v, n);
        value[n] = 0;
    }
    return TERN_OK;
}

tern_status_t tern_info_get_valuelen(const tern_info_t *info, const char *key, int *valuelen,
                                     int *flag)
{
    const char *v = tern_info_get(info, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return TERN_OK;
}

tern_status_t tern_info_get_nkeys(const tern_info_t *info, int *nkeys)
{
    *nkeys = info->n;
    return TERN_OK;
}

tern_status_t tern_info_get_nthkey(const tern_info_t *info, int n, char *key)
{
    if (n < 0 || n >= info->n)
        return tern_status_detail(TERN_ERR_ARG, "n=%d is out of range (the info has %d keys)",
                                  n, info->n);
    strcpy(key, info->keys[n]);
    return TERN_OK;
}

tern_status_t tern_info_delete_key(tern_info_t *info, const char *key)
{
    if (!tern_info_delete(info, key))
        return tern_status_detail(TERN_ERR_INFO_NOKEY, "no key \"%s\"", key);
    return TERN_OK;
}

tern_status_t tern_info_release(MPI_Info *handle)
{
    tern_info_free(*handle);
    *handle = MPI_INFO_NULL;
    return TERN_OK;
}

tern_status_t tern_info_create_env(int argc, char *const *argv, MPI_Info *info)
{
    MPI_Info h;
    tern_status_t st = tern_info_create(&h);
    if (st != TERN_OK)
        return st;
    env_fill(tern_info_lookup(h), argc, argv, 0);
    *info = h;
    return TERN_OK;
}

tern_status_t tern_info_get_string(const tern_info_t *info, const char *key, int *buflen,
                                   char *value, int *flag)
{
    if (*buflen < 0)
        return tern_status_detail(TERN_ERR_ARG, "buflen=%d is negative", *buflen);
    const char *v = tern_info_get(info, key);
    *flag = v != NULL;
    if (!v)
        return TERN_OK;
    /* MPI-4.0 10: at most *buflen - 1 characters and a NUL; *buflen 0
     * writes nothing (value may be NULL); *buflen returns the value's
     * length plus one either way. */
    int len = (int)strlen(v);
    if (*buflen > 0) {
        if (!value)
            return tern_status_detail(TERN_ERR_ARG, "value is NULL but buflen=%d", *buflen);
        snprintf(value, (size_t)*buflen, "%s", v);
    }
    *buflen = len + 1;
    return TERN_OK;
}
