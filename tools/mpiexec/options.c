/* mpiexec's command line: options, --help, --version. */
#include "mpiexec.h"
#include "base/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TERN_VERSION
#define TERN_VERSION "unknown"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpiexec [options] -n N program [args...]\n"
            "Runs N ranks of program on this node, or over several hosts with --hosts or\n"
            "--hostfile (Tern's launcher and PMI-1 server).\n"
            "\n"
            "Options:\n"
            "  -n N, -np N            number of ranks (default 1)\n"
            "  --hosts a,b[:slots]    run on these hosts: one proxy per host, started with\n"
            "                         the remote-start command; ranks placed in blocks\n"
            "  --hostfile FILE        hosts from FILE, one \"host[:slots]\" a line (also -f)\n"
            "  -ppn N                 N ranks per host (default: the slots, else even)\n"
            "  --launcher CMD         remote-start command, run as CMD HOST COMMAND (default\n"
            "                         TERN_MPIEXEC_LAUNCHER: ssh); hosts named localhost or\n"
            "                         like this one start without it unless CMD is given\n"
            "  -x VAR                 pass VAR from mpiexec's environment to the ranks\n"
            "  -x VAR=VAL             set VAR to VAL in the ranks\n"
            "  --env VAR=VAL          set VAR to VAL in the ranks\n"
            "  -genv VAR VAL          same, Hydra's spelling (also -env VAR VAL)\n"
            "  --bind-to core|none    core: rank i is bound to core i mod ncores (hwloc);\n"
            "                         none (default): no binding\n"
            "  --tag-output, -l       prefix every output line with \"[rank] \", e.g. \"[1] hello\"\n"
            "  -h, --help             this text\n"
            "  -V, --version          version\n"
            "\n"
            "Environment:\n"
            "  MPIEXEC_TIMEOUT=S      end the job after S seconds (as Hydra and Open MPI do):\n"
            "                         mpiexec says so and exits with status 124; 0 or unset:\n"
            "                         no limit\n"
            "\n"
            "The ranks inherit mpiexec's environment plus PMI_FD, PMI_RANK, PMI_SIZE and\n"
            "TERN_JOBID (the job's unique KVS name). stdin goes to rank 0 (the others read\n"
            "/dev/null); stdout and stderr of each rank are forwarded by whole lines.\n"
            "\n"
            "Exit status: 0 if every rank exits 0; else the first failing rank's exit code,\n"
            "128+N if it was killed by signal N, or the MPI_Abort code (1 for code 0).\n"
            "When a rank fails (signal, non-zero exit, exit without MPI_Finalize while\n"
            "others run, MPI_Abort) the others get SIGTERM, then SIGKILL one second later.\n"
            "SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to every rank the same way.\n");
}

static int parse_np(const char *s, int *np_p)
{
    char *end;
    long n = s ? strtol(s, &end, 10) : 0;
    if (!s || *end || n < 1 || n > 1 << 20) {
        fprintf(stderr, "mpiexec: invalid number of ranks '%s'\n", s ? s : "");
        return -1;
    }
    *np_p = (int)n;
    return 0;
}

static int add_env(mpiexec_opts_t *o, const char *var, const char *val)
{
    size_t len = strlen(var) + (val ? strlen(val) : 0) + 2;
    char *e = malloc(len);
    char **env = realloc(o->env, (size_t)(o->n_env + 1) * sizeof *env);
    if (env)
        o->env = env; /* moved even when e failed: the old one is gone */
    if (!e || !env) {
        free(e);
        return -1;
    }
    if (val)
        snprintf(e, len, "%s=%s", var, val);
    else
        snprintf(e, len, "%s", var);
    if (!strchr(e, '=') || e[0] == '=') {
        fprintf(stderr, "mpiexec: expected VAR=VAL, got '%s'\n", e);
        free(e);
        return -1;
    }
    o->env[o->n_env++] = e;
    return 0;
}

/* -x VAR copies VAR from our environment (ranks inherit it anyway; -x makes
 * it explicit and survives a later --env of the same name). */
static int add_export(mpiexec_opts_t *o, const char *arg)
{
    if (strchr(arg, '='))
        return add_env(o, arg, NULL);
    const char *v = getenv(arg);
    if (!v) {
        fprintf(stderr, "mpiexec: warning: -x %s: not set in the environment\n", arg);
        return 0;
    }
    return add_env(o, arg, v);
}

/* MPIEXEC_TIMEOUT, whole seconds (Hydra's and Open MPI's spelling). */
static int parse_timeout(mpiexec_opts_t *o)
{
    const char *s = getenv("MPIEXEC_TIMEOUT");
    if (!s || !*s)
        return 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > MPIEXEC_TIMEOUT_MAX_S) {
        fprintf(stderr, "mpiexec: MPIEXEC_TIMEOUT='%s' is not a number of seconds from 0 to %d\n",
                s, MPIEXEC_TIMEOUT_MAX_S);
        return -1;
    }
    o->timeout_s = (int)v;
    return 0;
}

/* The knobs mpiexec itself reads: a value that does not parse stops it
 * here, as MPI_Init stops a rank. */
static int check_knobs(void)
{
    static const tern_knob_id_t mine[] = {TERN_KNOB_MPIEXEC_KILL_GRACE_MS};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++) {
        const char *bad = tern_knob_rejected(mine[i]);
        if (bad) {
            char allowed[128];
            tern_knob_allowed(mine[i], allowed, sizeof allowed);
            fprintf(stderr, "mpiexec: %s='%s': must be %s\n", tern_knob_table()[mine[i]].name, bad,
                    allowed);
            return -1;
        }
    }
    return 0;
}

int mpiexec_parse_args(int argc, char **argv, mpiexec_opts_t *o)
{
    o->np = 1;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        /* Accept --opt and -opt alike, as Hydra and Open MPI users type both. */
        const char *name = a[1] == '-' ? a + 2 : a + 1;
        if (!strcmp(name, "h") || !strcmp(name, "help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(name, "V") || !strcmp(name, "version")) {
            printf("mpiexec (Tern) %s\n", TERN_VERSION);
            return 1;
        } else if (!strcmp(name, "n") || !strcmp(name, "np") || !strcmp(name, "c")) {
            if (parse_np(next, &o->np) != 0)
                return -1;
            i++;
        } else if (!strncmp(name, "n=", 2) || !strncmp(name, "np=", 3)) {
            if (parse_np(strchr(name, '=') + 1, &o->np) != 0)
                return -1;
        } else if (!strcmp(name, "x")) {
            if (!next || add_export(o, next) != 0)
                return -1;
            i++;
        } else if (!strcmp(name, "env") && next && strchr(next, '=')) {
            if (add_env(o, next, NULL) != 0)
                return -1;
            i++;
        } else if (!strcmp(name, "env") || !strcmp(name, "genv")) {
            if (!next || i + 2 >= argc || add_env(o, next, argv[i + 2]) != 0) {
                fprintf(stderr, "mpiexec: %s needs VAR VAL\n", a);
                return -1;
            }
            i += 2;
        } else if (!strcmp(name, "bind-to") || !strncmp(name, "bind-to=", 8)) {
            const char *v = name[7] == '=' ? name + 8 : next;
            if (name[7] != '=')
                i++;
            if (v && !strcmp(v, "core")) {
                o->bind_core = 1;
            } else if (v && !strcmp(v, "none")) {
                o->bind_core = 0;
            } else {
                fprintf(stderr, "mpiexec: --bind-to takes core or none\n");
                return -1;
            }
        } else if (!strcmp(name, "hosts") || !strcmp(name, "host")) {
            if (!next)
                return -1;
            /* A bad host list is a bad input, exit 1 like other job errors. */
            if (mpiexec_hosts_parse_list(o, next, "--hosts") != 0)
                return -2;
            i++;
        } else if (!strcmp(name, "hostfile") || !strcmp(name, "f") ||
                   !strcmp(name, "machinefile")) {
            if (!next)
                return -1;
            if (mpiexec_hosts_read_file(o, next) != 0)
                return -2;
            i++;
        } else if (!strcmp(name, "ppn") || !strcmp(name, "npernode")) {
            if (parse_np(next, &o->ppn) != 0)
                return -1;
            i++;
        } else if (!strcmp(name, "launcher") || !strcmp(name, "launcher-exec")) {
            if (!next)
                return -1;
            o->launcher = next;
            i++;
        } else if (!strcmp(name, "proxy")) {
            /* Internal, from a root:
             * --proxy ADDR HOST,FIRST,COUNT,SIZE[,UNIVERSE] KVS MAP */
            if (i + 4 >= argc ||
                sscanf(argv[i + 2], "%d,%d,%d,%d,%d", &o->proxy_index, &o->proxy_first, &o->np,
                       &o->world_size, &o->universe_size) < 4) {
                fprintf(stderr, "mpiexec: bad --proxy arguments\n");
                return -1;
            }
            o->proxy = 1;
            o->proxy_root = argv[i + 1];
            o->proxy_kvs = argv[i + 3];
            o->proxy_map = argv[i + 4];
            i += 4;
        } else if (!strcmp(name, "tag-output") || !strcmp(name, "l") ||
                   !strcmp(name, "prepend-rank")) {
            o->tag_output = 1;
        } else {
            fprintf(stderr, "mpiexec: unknown option '%s' (see mpiexec --help)\n", a);
            return -1;
        }
    }
    /* A proxy's block must lie in its world; checked after every option, as
     * a later -n changes it (fuzz_args). */
    /* A proxy without ranks (np 0) serves the spawns the root sends it. */
    if (o->proxy && (o->proxy_index < 0 || o->proxy_first < 0 || o->np < 0 ||
                     o->np > 1 << 20 || o->world_size < o->np ||
                     o->proxy_first > o->world_size - o->np)) {
        fprintf(stderr, "mpiexec: bad --proxy arguments\n");
        return -1;
    }
    if (i >= argc) {
        fprintf(stderr, "mpiexec: no program given (see mpiexec --help)\n");
        return -1;
    }
    o->argv = argv + i;
    /* The root keeps the time; a proxy ends when the root tells it. */
    if (check_knobs() != 0)
        return -1;
    if (!o->proxy && parse_timeout(o) != 0)
        return -1;
    return 0;
}

void mpiexec_opts_free(mpiexec_opts_t *o)
{
    for (int i = 0; i < o->n_hosts; i++)
        free(o->hosts[i]);
    free(o->hosts);
    free(o->host_slots);
    for (int i = 0; i < o->n_env; i++)
        free(o->env[i]);
    free(o->env);
    o->hosts = NULL;
    o->host_slots = NULL;
    o->env = NULL;
    o->n_hosts = o->n_env = 0;
}
