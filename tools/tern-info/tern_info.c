/* tern-info: what this Tern build is and what it would do here.
 *
 * Prints the Tern and MPI versions, the build configuration, the transports
 * compiled in, whether Cross Memory Attach (process_vm_readv) works on this
 * machine, the hardware hwloc sees, the procedures implemented per chapter,
 * the collective algorithms and their selection table, and every runtime
 * knob (TERN_*) with its default, its current value and its documentation;
 * --json: all of it as one JSON object. */
#include "base/config.h"
#include "core/coll/coll.h"
#include "transport/transport.h"
#include "tern_info_build.h"
#include "coverage.h"

#include <mpi.h>

#include <errno.h>
#include <hwloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TERN_INFO_VERSION
#error "TERN_INFO_VERSION must be defined by the build"
#endif

typedef struct {
    int usable;           /* 1 yes, 0 no */
    char reason[128];     /* why not, when not */
    char ptrace_scope[32]; /* Yama's setting, or "absent" */
} cma_result_t;

typedef struct {
    int ok;
    int cores;
    int pus;
    int numa_nodes;
    int packages;
} hw_result_t;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: tern-info [--knobs] [--mpit] [--coverage[=missing]] [--json] [--help]\n"
            "                 [--version]\n"
            "Describes this Tern build and the machine it runs on.\n"
            "  --knobs    list only the runtime knobs (TERN_* environment variables)\n"
            "  --mpit     list what the MPI tools interface shows, read through it: its\n"
            "             categories with their control variables (and values),\n"
            "             performance variables and events\n"
            "  --coverage the MPI-5.0 procedures implemented, per chapter (=missing: name\n"
            "             the missing ones)\n"
            "  --json     print as JSON\n"
            "  --version  print only the Tern version\n"
            "  --help     this text\n");
}

/* --mpit: everything through MPI_T itself, so the listing and a tool
 * see one source of truth. */
static const char *pvar_class_name(int c)
{
    static const char *const names[] = {"state", "level", "size", "percentage", "highwatermark",
                                        "lowwatermark", "counter", "aggregate", "timer", "generic"};
    return c >= 0 && c < 10 ? names[c] : "?";
}

static int print_mpit(void)
{
    int provided, ncat;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS ||
        MPI_T_category_get_num(&ncat) != MPI_SUCCESS)
        return 1;
    char name[256], desc[2048], value[1024];
    for (int c = 0; c < ncat; c++) {
        int nl = sizeof name, dl = sizeof desc, nc, np, nsub, ne;
        MPI_T_category_get_info(c, name, &nl, desc, &dl, &nc, &np, &nsub);
        MPI_T_category_get_num_events(c, &ne);
        printf("category %s: %s (%d control, %d performance variables, %d events)\n", name, desc,
               nc, np, ne);
        int *idx = malloc(sizeof *idx * (size_t)(nc + np + ne + 1));
        if (!idx)
            return 1;
        MPI_T_category_get_cvars(c, nc, idx);
        for (int i = 0; i < nc; i++) {
            int scope, count;
            MPI_Datatype dt;
            MPI_T_enum et;
            nl = sizeof name;
            MPI_T_cvar_get_info(idx[i], name, &nl, NULL, &dt, &et, NULL, NULL, NULL, &scope);
            MPI_T_cvar_handle h;
            MPI_T_cvar_handle_alloc(idx[i], NULL, &h, &count);
            if (dt == MPI_CHAR) {
                MPI_T_cvar_read(h, value);
            } else if (dt == MPI_INT) {
                int v = 0, len = sizeof value;
                MPI_T_cvar_read(h, &v);
                if (et == MPI_T_ENUM_NULL || MPI_T_enum_get_item(et, v, &v, value, &len))
                    snprintf(value, sizeof value, "%d", v);
            } else {
                unsigned long long v = 0;
                MPI_T_cvar_read(h, &v);
                snprintf(value, sizeof value, "%llu", v);
            }
            MPI_T_cvar_handle_free(&h);
            printf("  cvar %-3d %-34s = %s%s\n", idx[i], name, value,
                   scope == MPI_T_SCOPE_READONLY ? "" : "  (writable)");
        }
        MPI_T_category_get_pvars(c, np, idx);
        for (int i = 0; i < np; i++) {
            int cls;
            nl = sizeof name;
            dl = sizeof desc;
            MPI_T_pvar_get_info(idx[i], name, &nl, NULL, &cls, NULL, NULL, desc, &dl, NULL, NULL,
                                NULL, NULL);
            printf("  pvar %-3d %-34s %-13s %s\n", idx[i], name, pvar_class_name(cls), desc);
        }
        MPI_T_category_get_events(c, ne, idx);
        for (int i = 0; i < ne; i++) {
            nl = sizeof name;
            dl = sizeof desc;
            MPI_T_event_get_info(idx[i], name, &nl, NULL, NULL, NULL, NULL, NULL, NULL, desc, &dl,
                                 NULL);
            printf("  event %-2d %-34s %s\n", idx[i], name, desc);
        }
        free(idx);
    }
    MPI_T_finalize();
    return 0;
}

static void read_ptrace_scope(char *buf, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f == NULL) {
        snprintf(buf, len, "absent");
        return;
    }
    int v;
    if (fscanf(f, "%d", &v) == 1)
        snprintf(buf, len, "%d", v);
    else
        snprintf(buf, len, "unreadable");
    fclose(f);
}

/* The test the shm transport depends on: a process that is not our ancestor
 * (here our child, standing in for a sibling rank) reads a word of our memory
 * with process_vm_readv after we declared any process a permitted tracer, as
 * the transport does. */
static void probe_cma(cma_result_t *r)
{
    static volatile uint64_t word = 0x7465726e2d636d61ull; /* "tern-cma" */
    int fds[2];

    read_ptrace_scope(r->ptrace_scope, sizeof r->ptrace_scope);
    r->usable = 0;
    snprintf(r->reason, sizeof r->reason, "probe failed");
#if defined(PR_SET_PTRACER) && defined(PR_SET_PTRACER_ANY)
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    if (pipe(fds) != 0) {
        snprintf(r->reason, sizeof r->reason, "pipe: %s", strerror(errno));
        return;
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        snprintf(r->reason, sizeof r->reason, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (child == 0) {
        close(fds[0]);
        uint64_t got = 0;
        struct iovec local = {&got, sizeof got};
        struct iovec remote = {(void *)&word, sizeof word};
        int err = 0;
        ssize_t n = process_vm_readv(parent, &local, 1, &remote, 1, 0);
        if (n < 0)
            err = errno;
        else if (n != (ssize_t)sizeof got || got != word)
            err = -1; /* read the wrong data */
        ssize_t w = write(fds[1], &err, sizeof err);
        _exit(w == (ssize_t)sizeof err ? 0 : 1);
    }
    close(fds[1]);
    int err;
    ssize_t n;
    do {
        n = read(fds[0], &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    close(fds[0]);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof err) {
        snprintf(r->reason, sizeof r->reason, "probe process did not report");
    } else if (err == 0) {
        r->usable = 1;
        r->reason[0] = 0;
    } else if (err < 0) {
        snprintf(r->reason, sizeof r->reason, "process_vm_readv returned wrong data");
    } else {
        snprintf(r->reason, sizeof r->reason, "process_vm_readv: %s (errno %d)", strerror(err), err);
    }
}

static void probe_hw(hw_result_t *h)
{
    hwloc_topology_t topo;
    memset(h, 0, sizeof *h);
    if (hwloc_topology_init(&topo) != 0)
        return;
    if (hwloc_topology_load(topo) == 0) {
        h->ok = 1;
        h->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        h->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        h->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        h->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    }
    hwloc_topology_destroy(topo);
}

/* ---- text output ---------------------------------------------------- */

static void print_knobs_text(void)
{
    const tern_knob_t *knobs = tern_knob_table();
    printf("Runtime knobs (environment variables):\n");
    for (int id = 0; id < TERN_KNOB_N; id++) {
        const tern_knob_t *k = &knobs[id];
        char allowed[300];
        tern_knob_allowed((tern_knob_id_t)id, allowed, sizeof allowed);
        const char *bad = tern_knob_rejected((tern_knob_id_t)id);
        printf("  %s=%s  (%s, default %s%s)\n", k->name, tern_knob_value((tern_knob_id_t)id)->text,
               tern_knob_type_name(k->type), k->default_value,
               tern_knob_from_env((tern_knob_id_t)id) && !bad ? "; set in the environment" : "");
        /* The line MPI_Init would end the job with. */
        if (bad)
            printf("      INVALID in the environment: %s=%s: must be %s\n", k->name, bad, allowed);
        printf("      allowed: %s\n", allowed);
        printf("      %s\n", k->doc);
    }
}

static void print_text(const cma_result_t *cma, const hw_result_t *hw)
{
    printf("Tern %s\n", TERN_INFO_VERSION);
    printf("  MPI standard:    %d.%d\n", MPI_VERSION, MPI_SUBVERSION);
    /* The level MPI_Init_thread grants when asked (docs/design.md, "Threads"). */
    printf("  thread support:  MPI_THREAD_MULTIPLE (one global lock)\n");
    printf("Build:\n");
    printf("  build type:      %s\n", TERN_INFO_BUILD_TYPE);
    printf("  C compiler:      %s\n", TERN_INFO_C_COMPILER);
    printf("  C flags:         %s\n", TERN_INFO_C_FLAGS);
    printf("  sanitizers:      %s\n", TERN_INFO_SANITIZE == 1   ? "on (address, undefined)"
                                    : TERN_INFO_SANITIZE == 2 ? "on (thread)"
                                                              : "off");
    printf("  hwloc:           %s\n", TERN_INFO_HWLOC_VERSION);
    printf("  install prefix:  %s\n", TERN_INFO_PREFIX);
    printf("Transports compiled in (in order of preference):");
    for (size_t i = 0; tern_tl_all[i] != NULL; i++)
        printf(" %s", tern_tl_all[i]->name);
    printf("\n");
    printf("This machine:\n");
    if (hw->ok)
        printf("  hardware:        %d package(s), %d core(s), %d hardware thread(s), %d NUMA node(s)\n",
               hw->packages, hw->cores, hw->pus, hw->numa_nodes);
    else
        printf("  hardware:        hwloc could not load the topology\n");
    if (cma->usable)
        printf("  CMA (process_vm_readv): yes\n");
    else
        printf("  CMA (process_vm_readv): no, %s\n", cma->reason);
    printf("  Yama ptrace_scope:      %s\n", cma->ptrace_scope);
    tern_coll_print_table(stdout);
    print_knobs_text();
}

/* ---- JSON output ---------------------------------------------------- */

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (c < 0x20)
                printf("\\u%04x", c);
            else
                putchar(c);
        }
    }
    putchar('"');
}

static void print_knobs_json(const char *indent)
{
    const tern_knob_t *knobs = tern_knob_table();
    printf("[\n");
    for (int id = 0; id < TERN_KNOB_N; id++) {
        const tern_knob_t *k = &knobs[id];
        char allowed[300];
        tern_knob_allowed((tern_knob_id_t)id, allowed, sizeof allowed);
        const char *bad = tern_knob_rejected((tern_knob_id_t)id);
        printf("%s  {\"name\": ", indent);
        json_str(k->name);
        printf(", \"type\": ");
        json_str(tern_knob_type_name(k->type));
        if (k->type <= TERN_KNOB_T_POW2)
            printf(", \"min\": %lld, \"max\": %lld", (long long)k->min, (long long)k->max);
        printf(", \"words\": ");
        json_str(k->words);
        printf(", \"allowed\": ");
        json_str(allowed);
        printf(", \"default\": ");
        json_str(k->default_value);
        printf(", \"current\": ");
        json_str(tern_knob_value((tern_knob_id_t)id)->text);
        printf(", \"set\": %s, \"rejected\": ", tern_knob_from_env((tern_knob_id_t)id) ? "true" : "false");
        if (bad)
            json_str(bad);
        else
            printf("null");
        printf(", \"doc\": ");
        json_str(k->doc);
        printf("}%s\n", id + 1 < TERN_KNOB_N ? "," : "");
    }
    printf("%s]", indent);
}

/* "max_procs": 0 and "max_bytes": SIZE_MAX (any) are null. */
static void print_coll_json(void)
{
    size_t n;
    const char *source;
    const tern_coll_row_t *rows = tern_coll_table(&n, &source);
    printf("{\"table_source\": ");
    json_str(source);
    printf(",\n    \"table\": [\n");
    for (size_t i = 0; i < n; i++) {
        printf("      {\"collective\": ");
        json_str(tern_coll_kind_name(rows[i].kind));
        if (rows[i].max_procs)
            printf(", \"max_procs\": %d", rows[i].max_procs);
        else
            printf(", \"max_procs\": null");
        if (rows[i].max_bytes != SIZE_MAX)
            printf(", \"max_bytes\": %zu", rows[i].max_bytes);
        else
            printf(", \"max_bytes\": null");
        printf(", \"algorithm\": ");
        json_str(rows[i].algo->name);
        printf(", \"load\": ");
        json_str(tern_coll_load_name(rows[i].load));
        printf(", \"condition\": ");
        json_str(tern_coll_condition(rows[i].algo));
        printf("}%s\n", i + 1 < n ? "," : "");
    }
    printf("    ],\n    \"collectives\": [\n");
    size_t n_algo;
    const tern_coll_algo_t *all = tern_coll_algorithms(&n_algo);
    for (int k = 0; k < TERN_COLL_N; k++) {
        const tern_coll_algo_t *forced = tern_coll_forced((tern_coll_kind_t)k);
        printf("      {\"name\": ");
        json_str(tern_coll_kind_name((tern_coll_kind_t)k));
        printf(", \"knob\": ");
        json_str(tern_coll_algorithm_knob((tern_coll_kind_t)k));
        printf(", \"forced\": ");
        if (forced)
            json_str(forced->name);
        else
            printf("null");
        /* The first algorithm of a collective is its general fallback. */
        printf(",\n       \"algorithms\": [");
        int first = 1;
        for (size_t i = 0; i < n_algo; i++) {
            if ((int)all[i].kind != k)
                continue;
            printf("%s{\"name\": ", first ? "" : ", ");
            json_str(all[i].name);
            printf(", \"condition\": ");
            json_str(tern_coll_condition(&all[i]));
            printf("}");
            first = 0;
        }
        printf("]}%s\n", k + 1 < TERN_COLL_N ? "," : "");
    }
    printf("    ]}");
}

static void print_json(const cma_result_t *cma, const hw_result_t *hw)
{
    printf("{\n  \"version\": ");
    json_str(TERN_INFO_VERSION);
    printf(",\n  \"mpi_version\": \"%d.%d\",\n", MPI_VERSION, MPI_SUBVERSION);
    printf("  \"thread_support\": \"MPI_THREAD_MULTIPLE\",\n");
    printf("  \"build\": {\"type\": ");
    json_str(TERN_INFO_BUILD_TYPE);
    printf(", \"c_compiler\": ");
    json_str(TERN_INFO_C_COMPILER);
    printf(", \"c_flags\": ");
    json_str(TERN_INFO_C_FLAGS);
    printf(", \"sanitizers\": %s, \"sanitizer_names\": %s, \"hwloc\": ",
           TERN_INFO_SANITIZE ? "true" : "false",
           TERN_INFO_SANITIZE == 1   ? "[\"address\", \"undefined\"]"
           : TERN_INFO_SANITIZE == 2 ? "[\"thread\"]"
                                     : "[]");
    json_str(TERN_INFO_HWLOC_VERSION);
    printf(", \"prefix\": ");
    json_str(TERN_INFO_PREFIX);
    printf("},\n  \"transports\": [");
    for (size_t i = 0; tern_tl_all[i] != NULL; i++) {
        printf("%s", i ? ", " : "");
        json_str(tern_tl_all[i]->name);
    }
    printf("],\n  \"hardware\": ");
    if (hw->ok)
        printf("{\"packages\": %d, \"cores\": %d, \"pus\": %d, \"numa_nodes\": %d}", hw->packages,
               hw->cores, hw->pus, hw->numa_nodes);
    else
        printf("null");
    printf(",\n  \"cma\": {\"usable\": %s, \"reason\": ", cma->usable ? "true" : "false");
    json_str(cma->reason);
    printf(", \"ptrace_scope\": ");
    json_str(cma->ptrace_scope);
    printf("},\n  \"coverage\": ");
    tern_info_print_coverage_json("  ");
    printf(",\n  \"collective_selection\": ");
    print_coll_json();
    printf(",\n  \"knobs\": ");
    print_knobs_json("  ");
    printf("\n}\n");
}

int main(int argc, char **argv)
{
    int knobs_only = 0, json = 0, coverage = 0, mpit = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--knobs") || !strcmp(a, "-k")) {
            knobs_only = 1;
        } else if (!strcmp(a, "--mpit")) {
            mpit = 1;
        } else if (!strcmp(a, "--coverage") || !strcmp(a, "--coverage=missing")) {
            coverage = a[10] ? 2 : 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
            printf("tern-info (Tern) %s\n", TERN_INFO_VERSION);
            return 0;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "tern-info: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }

    if (mpit)
        return print_mpit();
    if (coverage) {
        tern_info_print_coverage(json, coverage == 2);
        return 0;
    }
    if (knobs_only) {
        if (json) {
            print_knobs_json("");
            printf("\n");
        } else {
            print_knobs_text();
        }
        return 0;
    }

    cma_result_t cma;
    hw_result_t hw;
    probe_cma(&cma);
    probe_hw(&hw);
    if (json)
        print_json(&cma, &hw);
    else
        print_text(&cma, &hw);
    return 0;
}
