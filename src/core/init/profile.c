/* The profile of a job: start, pause, and the gathering and writing of
 * profile.json at MPI_Finalize (profile.h; the format: docs/design.md,
 * "Profile of a job").
 *
 * Each process sends world rank 0 one record of fixed length (its four
 * rows, its time in MPI, its calls and bytes per collective algorithm)
 * and the text of its per-procedure table ("name count ns" lines, padded
 * to the longest process's), in two gathers on MPI_COMM_WORLD. */
#include "core/init/profile.h"
#include "core/coll/coll.h"
#include "core/comm/comm.h"
#include "core/dynamic/comm_dynamic.h"
#include "core/runtime/api_lock.h"
#include "core/runtime/runtime.h"
#include "base/config.h"
#include "base/log.h"
#include "base/profile.h"
#include "base/pvars.h"
#include "pmi/pmi.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int started;

void tern_profile_begin(void)
{
    const char *dir = tern_knob_str(TERN_KNOB_PROFILE);
    if (!dir || !dir[0] || started)
        return;
    /* A spawned job inherits the variable: it would write over its
     * parents' profile; the parents' job is the one profiled. */
    MPI_Comm parent = MPI_COMM_NULL;
    if (tern_comm_get_parent(&parent) == TERN_OK && parent != MPI_COMM_NULL)
        return;
    /* Every process must record, or MPI_Finalize's gathers would miss
     * one: a process that cannot ends the job here. */
    if (!tern_profile_start(tern_rt.size)) {
        tern_error("TERN_PROFILE: no memory for the profile's records");
        tern_pmi_abort(1, "TERN_PROFILE: out of memory");
    }
    started = 1;
    tern_api_profile_calls(1);
}

tern_status_t tern_profile_pcontrol(int level)
{
    if (started) {
        tern_profile_pause(level == 0);
        tern_api_profile_calls(level != 0);
    }
    return TERN_OK;
}

/* The per-procedure table as text, "name count ns" lines (malloc'd). */
static char *calls_text(size_t *len_p)
{
    size_t cap = 4096, len = 0;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    t[0] = 0;
    for (size_t i = 0; i < tern_profile_call_slots(); i++) {
        uint64_t count, ns;
        const char *name = tern_profile_call_at(i, &count, &ns);
        if (!name)
            continue;
        if (cap - len < 128 + strlen(name)) {
            char *nt = realloc(t, cap *= 2);
            if (!nt) {
                free(t);
                return NULL;
            }
            t = nt;
        }
        len += (size_t)snprintf(t + len, cap - len, "%s %" PRIu64 " %" PRIu64 "\n", name, count, ns);
    }
    *len_p = len;
    return t;
}

typedef struct {
    char name[64];
    uint64_t *v; /* count[n], then ns[n] */
} merged_t;

/* Adds rank r's table (text) to the merged list; 0 when out of memory. */
static int merge_calls(const char *text, size_t len, int r, int n, merged_t **list_p,
                       size_t *count_p)
{
    const char *p = text, *end = text + len;
    while (p < end && *p) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        char name[64];
        uint64_t count, ns;
        char line[192];
        size_t ll = (size_t)(nl - p) < sizeof line - 1 ? (size_t)(nl - p) : sizeof line - 1;
        memcpy(line, p, ll);
        line[ll] = 0;
        p = nl + 1;
        if (sscanf(line, "%63s %" SCNu64 " %" SCNu64, name, &count, &ns) != 3)
            continue;
        size_t i = 0;
        while (i < *count_p && strcmp((*list_p)[i].name, name) != 0)
            i++;
        if (i == *count_p) {
            merged_t *nl2 = realloc(*list_p, (i + 1) * sizeof *nl2);
            if (!nl2)
                return 0;
            *list_p = nl2;
            nl2[i].v = calloc((size_t)n * 2, sizeof(uint64_t));
            if (!nl2[i].v)
                return 0;
            snprintf(nl2[i].name, sizeof nl2[i].name, "%s", name);
            (*count_p)++;
        }
        (*list_p)[i].v[r] += count;
        (*list_p)[i].v[n + r] += ns;
    }
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const merged_t *)a)->name, ((const merged_t *)b)->name);
}

static void put_row(FILE *f, const uint64_t *v, size_t stride, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu64, i ? ", " : "", v[(size_t)i * stride]);
    fputc(']', f);
}

static void put_seconds(FILE *f, const uint64_t *v, size_t stride, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.9f", i ? ", " : "", (double)v[(size_t)i * stride] * 1e-9);
    fputc(']', f);
}

/* rows[(size_t)r * reclen + ...]: each rank's record. */
static void put_matrix(FILE *f, const char *key, const uint64_t *rec, size_t reclen, int n,
                       int bytes_row, int msgs_row)
{
    fprintf(f, "  \"%s\": {\n    \"bytes\": [", key);
    for (int r = 0; r < n; r++) {
        fprintf(f, "%s\n      ", r ? "," : "");
        put_row(f, rec + (size_t)r * reclen + (size_t)bytes_row * (size_t)n, 1, n);
    }
    fprintf(f, "\n    ],\n    \"messages\": [");
    for (int r = 0; r < n; r++) {
        fprintf(f, "%s\n      ", r ? "," : "");
        put_row(f, rec + (size_t)r * reclen + (size_t)msgs_row * (size_t)n, 1, n);
    }
    fprintf(f, "\n    ]\n  },\n");
}

static void write_json(FILE *f, const uint64_t *rec, size_t reclen, int n, size_t n_algo,
                       merged_t *calls, size_t n_calls)
{
    size_t t_at = 4 * (size_t)n, coll_at = t_at + 1;
    fprintf(f, "{\n  \"version\": 1,\n  \"ranks\": %d,\n", n);
    put_matrix(f, "p2p", rec, reclen, n, TERN_PROFILE_P2P_BYTES, TERN_PROFILE_P2P_MSGS);
    put_matrix(f, "all", rec, reclen, n, TERN_PROFILE_ALL_BYTES, TERN_PROFILE_ALL_MSGS);
    fprintf(f, "  \"time_in_mpi_s\": ");
    put_seconds(f, rec + t_at, reclen, n);
    fprintf(f, ",\n  \"calls\": {");
    qsort(calls, n_calls, sizeof *calls, by_name);
    for (size_t i = 0; i < n_calls; i++) {
        fprintf(f, "%s\n    \"%s\": {\"count\": ", i ? "," : "", calls[i].name);
        put_row(f, calls[i].v, 1, n);
        fprintf(f, ", \"time_s\": ");
        put_seconds(f, calls[i].v + n, 1, n);
        fputc('}', f);
    }
    fprintf(f, "\n  },\n  \"collectives\": [");
    size_t n_all;
    const tern_coll_algo_t *al = tern_coll_algorithms(&n_all);
    int first = 1;
    for (size_t a = 0; a < n_algo && a < n_all; a++) {
        uint64_t count = 0, bytes = 0;
        for (int r = 0; r < n; r++) {
            count += rec[(size_t)r * reclen + coll_at + a];
            bytes += rec[(size_t)r * reclen + coll_at + n_algo + a];
        }
        if (!count)
            continue;
        fprintf(f, "%s\n    {\"name\": \"%s\", \"algorithm\": \"%s\", \"count\": %" PRIu64
                   ", \"bytes\": %" PRIu64 ",\n     \"per_rank\": {\"count\": ",
                first ? "" : ",", tern_coll_kind_name(al[a].kind), al[a].name, count, bytes);
        put_row(f, rec + coll_at + a, reclen, n);
        fprintf(f, ", \"bytes\": ");
        put_row(f, rec + coll_at + n_algo + a, reclen, n);
        fprintf(f, "}}");
        first = 0;
    }
    fprintf(f, "\n  ]\n}\n");
}

/* mkdir -p. */
static int make_dir(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static void write_file(const char *dir, const uint64_t *rec, size_t reclen, int n, size_t n_algo,
                       merged_t *calls, size_t n_calls)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/profile.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = make_dir(dir) == 0 ? fopen(tmp, "w") : NULL;
    if (!f) {
        tern_warn_always("TERN_PROFILE: cannot write %s: %s", path, strerror(errno));
        return;
    }
    write_json(f, rec, reclen, n, n_algo, calls, n_calls);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        tern_warn_always("TERN_PROFILE: cannot write %s: %s", path, strerror(errno));
}

/* World rank 0: merges every rank's calls and writes the file. */
static void write_profile(const uint64_t *all, size_t reclen, int n, size_t n_algo,
                          const char *texts, size_t text_len)
{
    merged_t *calls = NULL;
    size_t n_calls = 0;
    int ok = 1;
    for (int r = 0; r < n && ok; r++)
        ok = merge_calls(texts + (size_t)r * text_len, text_len, r, n, &calls, &n_calls);
    if (ok)
        write_file(tern_knob_str(TERN_KNOB_PROFILE), all, reclen, n, n_algo, calls, n_calls);
    else
        tern_warn_always("TERN_PROFILE: out of memory merging the profile; none is written");
    for (size_t i = 0; i < n_calls; i++)
        free(calls[i].v);
    free(calls);
}

/* The gathers need every process: one that cannot take part ends the job. */
_Noreturn static void out_of_memory(void)
{
    tern_error("TERN_PROFILE: out of memory gathering the profile at MPI_Finalize");
    tern_pmi_abort(1, "TERN_PROFILE: out of memory");
}

void tern_profile_end(void)
{
    if (!started)
        return;
    started = 0;
    tern_profile_pause(1);
    tern_api_profile_calls(0);
    tern_comm_t *world = tern_comm_lookup(MPI_COMM_WORLD);
    int n = tern_rt.size, me = world->rank;
    size_t n_algo;
    (void)tern_coll_algorithms(&n_algo);
    size_t reclen = 4 * (size_t)n + 1 + 2 * n_algo;
    uint64_t *rec = calloc(reclen, sizeof *rec);
    size_t text_len = 0;
    char *text = calls_text(&text_len);
    if (!rec || !text)
        out_of_memory();
    for (int i = 0; i < 4; i++)
        memcpy(rec + (size_t)i * (size_t)n, tern_profile_rows[i], (size_t)n * sizeof *rec);
    for (size_t i = 0; i < tern_profile_call_slots(); i++) {
        uint64_t count, ns;
        if (tern_profile_call_at(i, &count, &ns))
            rec[4 * (size_t)n] += ns;
    }
    for (size_t a = 0; a < n_algo && a < TERN_PVAR_COLL_MAX; a++) {
        rec[4 * (size_t)n + 1 + a] = tern_profile_coll[a];
        rec[4 * (size_t)n + 1 + n_algo + a] = tern_profile_coll[TERN_PVAR_COLL_MAX + a];
    }
    /* The texts go padded to the longest. */
    uint64_t mine = text_len + 1, longest = 0;
    tern_status_t st = tern_coll_allreduce(world, &mine, &longest, 1, MPI_UINT64_T, MPI_MAX, NULL, 0);
    if (st == TERN_OK && longest < mine)
        st = TERN_ERR_INTERNAL;
    char *pad = st == TERN_OK ? calloc(longest, 1) : NULL;
    uint64_t *all = me == 0 ? calloc((size_t)n * reclen, sizeof *all) : NULL;
    char *texts = me == 0 && st == TERN_OK ? calloc((size_t)n, longest) : NULL;
    if ((st == TERN_OK && !pad) || (me == 0 && (!all || (st == TERN_OK && !texts))))
        out_of_memory();
    if (st == TERN_OK) {
        memcpy(pad, text, text_len);
        st = tern_coll_gather(world, rec, reclen, MPI_UINT64_T, all, reclen, MPI_UINT64_T, 0,
                              NULL, 0);
    }
    if (st == TERN_OK)
        st = tern_coll_gather(world, pad, longest, MPI_CHAR, texts, longest, MPI_CHAR, 0, NULL, 0);
    if (me == 0) {
        if (st != TERN_OK)
            tern_warn_always("TERN_PROFILE: gathering the profile failed (%s); none is written",
                      tern_status_string(st));
        else
            write_profile(all, reclen, n, n_algo, texts, longest);
    }
    free(all);
    free(texts);
    free(pad);
    free(text);
    free(rec);
}
