/* mpiexec's command line: options, --help, --version. */
#include "mpiexec.h"
#include "base/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TERN_VERSION
#define TERN_VERSION "unknown"
#endif
/* --abi mpich: the installed library directory, relative to bin/ (CMake). */
#ifndef TERN_MPIEXEC_LIBDIR
#define TERN_MPIEXEC_LIBDIR "../lib"
#endif

/* Every option, in the order --help lists them: the parser looks names up
 * here and nowhere else, and --help and --list-options print this table, so
 * an option cannot be accepted without being documented. */
typedef enum {
    OPT_NP,
    OPT_HOSTS,
    OPT_HOSTFILE,
    OPT_PPN,
    OPT_LAUNCHER,
    OPT_EXPORT,
    OPT_ENV,
    OPT_GENV,
    OPT_BIND,
    OPT_TAG,
    OPT_FT,
    OPT_PROFILE,
    OPT_HELP,
    OPT_VERSION,
    OPT_LIST,
    OPT_ABI,
    OPT_PROXY
} opt_id_t;

typedef struct {
    opt_id_t id;
    /* Spellings, without dashes; --help shows one-letter ones as -x and
     * the others as --name, but both prefixes are accepted for all. */
    const char *names[4];
    /* What follows the option in --help; NULL: nothing. */
    const char *arg;
    /* Also written --name=VALUE. */
    int takes_eq;
    /* Lines of help, '\n'-separated. */
    const char *help;
} opt_row_t;

static const opt_row_t options[] = {
    {OPT_NP, {"n", "np", "c"}, "N", 1, "number of ranks (default 1)"},
    {OPT_HOSTS, {"hosts", "host"}, "a,b[:slots]", 0,
     "run on these hosts: one proxy per host, started with\n"
     "the remote-start command; ranks placed in blocks"},
    {OPT_HOSTFILE, {"hostfile", "f", "machinefile"}, "FILE", 0,
     "hosts from FILE, one \"host[:slots]\" a line"},
    {OPT_PPN, {"ppn", "npernode"}, "N", 0, "N ranks per host (default: the slots, else even)"},
    {OPT_LAUNCHER, {"launcher", "launcher-exec"}, "CMD", 0,
     "remote-start command, run as CMD HOST COMMAND (default\n"
     "TERN_MPIEXEC_LAUNCHER: ssh); hosts named localhost or\n"
     "like this one start without it unless CMD is given"},
    {OPT_EXPORT, {"x"}, "VAR[=VAL]", 0,
     "VAR: pass VAR from mpiexec's environment to the ranks;\n"
     "VAR=VAL: set VAR to VAL in the ranks"},
    {OPT_ENV, {"env"}, "VAR=VAL", 0, "set VAR to VAL in the ranks (also --env VAR VAL)"},
    {OPT_GENV, {"genv"}, "VAR VAL", 0, "same, Hydra's spelling"},
    {OPT_BIND, {"bind-to"}, "core|none", 1,
     "core: rank i is bound to core i mod ncores (hwloc);\n"
     "none (default): no binding"},
    {OPT_TAG, {"tag-output", "l", "prepend-rank"}, NULL, 0,
     "prefix every output line with \"[rank] \", e.g. \"[1] hello\""},
    {OPT_FT, {"ft", "disable-auto-cleanup"}, NULL, 0,
     "fault tolerance (ULFM): when a rank dies the others go on and\n"
     "learn of it (MPIX_ERR_PROC_FAILED); sets TERN_FT=1 in the ranks;\n"
     "MPI_Abort ends the ranks of its communicator only; the exit\n"
     "status is still non-zero (Hydra: -disable-auto-cleanup)"},
    {OPT_PROFILE, {"profile"}, "DIR", 1,
     "the traffic picture of the job: sets TERN_PROFILE=DIR in\n"
     "the ranks, whose MPI_Finalize writes DIR/profile.json;\n"
     "then mpiexec runs tern-profile DIR, which draws\n"
     "DIR/profile.png (needs Python's matplotlib)"},
    {OPT_HELP, {"help", "h"}, NULL, 0, "this text"},
    {OPT_VERSION, {"version", "V"}, NULL, 0, "version"},
    {OPT_LIST, {"list-options"}, NULL, 0,
     "print every spelling of every option, one a line\n"
     "(for scripts and shell completion)"},
    {OPT_ABI, {"abi"}, "mpich", 1,
     "mpich: run a binary built with MPICH (mpicc.mpich...)\n"
     "on Tern's libmpich.so.12: its directory goes first in\n"
     "the ranks' LD_LIBRARY_PATH"},
    {OPT_PROXY, {"proxy"}, "ADDR HOST,FIRST,COUNT,SIZE[,UNIVERSE] KVS MAP", 0,
     "internal: how a multi-host mpiexec starts its proxy\n"
     "on each host; not for users"},
};
#define N_OPTIONS (sizeof options / sizeof options[0])
#define HELP_COLUMN 25

static void print_option(FILE *f, const opt_row_t *r)
{
    char left[160];
    int n = snprintf(left, sizeof left, " ");
    for (size_t k = 0; k < 4 && r->names[k]; k++) {
        const char *nm = r->names[k];
        n += snprintf(left + n, sizeof left - (size_t)n, "%s %s%s", k ? "," : "",
                      nm[1] ? "--" : "-", nm);
        if (n >= (int)sizeof left)
            n = (int)sizeof left - 1;
    }
    if (r->arg) {
        n += snprintf(left + n, sizeof left - (size_t)n, " %s", r->arg);
        if (n >= (int)sizeof left)
            n = (int)sizeof left - 1;
    }
    /* The help starts on the option's line when it fits, else on the next. */
    fputs(left, f);
    const char *h = r->help;
    int col = n;
    for (;;) {
        const char *eol = strchr(h, '\n');
        int len = eol ? (int)(eol - h) : (int)strlen(h);
        if (col >= HELP_COLUMN - 1) {
            fputc('\n', f);
            col = 0;
        }
        fprintf(f, "%*s%.*s\n", HELP_COLUMN - col, "", len, h);
        col = 0;
        if (!eol)
            break;
        h = eol + 1;
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpiexec [options] -n N program [args...]\n"
            "Runs N ranks of program on this node, or over several hosts with --hosts or\n"
            "--hostfile (Tern's launcher and PMI-1 server).\n"
            "\n"
            "Options (each may be written with - or --; -- ends the options):\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        print_option(f, &options[i]);
        if (options[i].takes_eq)
            fprintf(f, "%*s(also %s%s=%s)\n", HELP_COLUMN, "",
                    options[i].names[0][1] ? "--" : "-", options[i].names[0], options[i].arg);
    }
    fprintf(f,
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

static void list_options(void)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        for (size_t k = 0; k < 4 && options[i].names[k]; k++)
            printf("%s%s\n", options[i].names[k][1] ? "--" : "-", options[i].names[k]);
}

/* The row of name ("np", or "np=4" for a row that takes it: *eq_p then
 * points at "4"), or NULL. */
static const opt_row_t *find_option(const char *name, const char **eq_p)
{
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t i = 0; i < N_OPTIONS; i++)
        for (size_t k = 0; k < 4 && options[i].names[k]; k++) {
            const char *nm = options[i].names[k];
            if (strlen(nm) != len || strncmp(nm, name, len) != 0)
                continue;
            if (eq && !options[i].takes_eq)
                return NULL;
            *eq_p = eq ? eq + 1 : NULL;
            return &options[i];
        }
    return NULL;
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

static int parse_bind(mpiexec_opts_t *o, const char *v)
{
    if (v && !strcmp(v, "core")) {
        o->bind_core = 1;
    } else if (v && !strcmp(v, "none")) {
        o->bind_core = 0;
    } else {
        fprintf(stderr, "mpiexec: --bind-to takes core or none\n");
        return -1;
    }
    return 0;
}

/* --abi mpich: the directory of Tern's libmpich.so.12 goes first in the
 * ranks' LD_LIBRARY_PATH. It is the build tree's src/ when this mpiexec
 * is the build tree's (tools/mpiexec/), else the installed library
 * directory beside bin/ (TERN_MPIEXEC_LIBDIR, relative to bin/). */
static int parse_abi(mpiexec_opts_t *o, const char *v)
{
    if (!v || strcmp(v, "mpich") != 0) {
        fprintf(stderr, "mpiexec: --abi takes mpich\n");
        return -1;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "mpiexec: --abi mpich: cannot find this program's directory\n");
        return -1;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    *slash = '\0';
    static const char *const rel[] = {"/../../src", "/" TERN_MPIEXEC_LIBDIR};
    char dir[sizeof self + 64];
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char lib[sizeof dir + 32];
        snprintf(dir, sizeof dir, "%s%s", self, rel[i]);
        snprintf(lib, sizeof lib, "%s/libmpich.so.12", dir);
        if (access(lib, R_OK) != 0)
            continue;
        const char *old = getenv("LD_LIBRARY_PATH");
        size_t len = strlen(dir) + (old ? strlen(old) : 0) + 2;
        char *path = malloc(len);
        if (!path)
            return -1;
        snprintf(path, len, "%s%s%s", dir, old && *old ? ":" : "", old ? old : "");
        int rc = add_env(o, "LD_LIBRARY_PATH", path);
        free(path);
        return rc;
    }
    fprintf(stderr, "mpiexec: --abi mpich: no libmpich.so.12 beside this mpiexec (%s%s)\n", self,
            rel[1]);
    return -2;
}

/* -genv VAR VAL (also -env VAR VAL) at argv[i]. */
static int parse_env_pair(int argc, char **argv, int i, mpiexec_opts_t *o)
{
    if (i + 2 >= argc || add_env(o, argv[i + 1], argv[i + 2]) != 0) {
        fprintf(stderr, "mpiexec: %s needs VAR VAL\n", argv[i]);
        return -1;
    }
    return 0;
}

/* Internal, from a root: --proxy ADDR HOST,FIRST,COUNT,SIZE[,UNIVERSE] KVS MAP
 * at argv[i]. */
static int parse_proxy(int argc, char **argv, int i, mpiexec_opts_t *o)
{
    if (i + 4 >= argc || sscanf(argv[i + 2], "%d,%d,%d,%d,%d", &o->proxy_index, &o->proxy_first,
                                &o->np, &o->world_size, &o->universe_size) < 4) {
        fprintf(stderr, "mpiexec: bad --proxy arguments\n");
        return -1;
    }
    o->proxy = 1;
    o->proxy_root = argv[i + 1];
    o->proxy_kvs = argv[i + 3];
    o->proxy_map = argv[i + 4];
    return 0;
}

/* --profile DIR: absolute, so that ranks started elsewhere (another
 * working directory, a proxy) write where mpiexec draws. */
static int parse_profile(mpiexec_opts_t *o, const char *dir)
{
    if (!dir || !dir[0])
        return -1;
    char cwd[4096];
    char *abs = NULL;
    if (dir[0] == '/')
        abs = strdup(dir);
    else if (getcwd(cwd, sizeof cwd)) {
        size_t len = strlen(cwd) + strlen(dir) + 2;
        if ((abs = malloc(len)))
            snprintf(abs, len, "%s/%s", cwd, dir);
    }
    if (!abs || add_env(o, "TERN_PROFILE", abs) != 0) {
        free(abs);
        return -1;
    }
    free(o->profile);
    o->profile = abs;
    return 0;
}

/* Applies the option of row r at argv[i] (value eq when written
 * --name=VALUE); *used_p: the arguments after it that it took. Returns 0,
 * 1 (exit 0: --help, --version, --list-options) or mpiexec_parse_args's
 * error codes. */
static int apply_option(const opt_row_t *r, const char *eq, int argc, char **argv, int i,
                        mpiexec_opts_t *o, int *used_p)
{
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    const char *v = eq ? eq : next;
    *used_p = eq ? 0 : 1;
    switch (r->id) {
    case OPT_HELP:
        usage(stdout);
        return 1;
    case OPT_VERSION:
        printf("mpiexec (Tern) %s\n", TERN_VERSION);
        return 1;
    case OPT_LIST:
        list_options();
        return 1;
    case OPT_NP:
        return parse_np(v, &o->np);
    case OPT_EXPORT:
        return !next || add_export(o, next) != 0 ? -1 : 0;
    case OPT_ENV:
        if (next && strchr(next, '='))
            return add_env(o, next, NULL) != 0 ? -1 : 0;
        *used_p = 2; /* -env VAR VAL */
        return parse_env_pair(argc, argv, i, o);
    case OPT_GENV:
        *used_p = 2;
        return parse_env_pair(argc, argv, i, o);
    case OPT_BIND:
        return parse_bind(o, v);
    case OPT_ABI:
        return parse_abi(o, v);
    case OPT_HOSTS:
        if (!next)
            return -1;
        /* A bad host list is a bad input, exit 1 like other job errors. */
        return mpiexec_hosts_parse_list(o, next, "--hosts") != 0 ? -2 : 0;
    case OPT_HOSTFILE:
        if (!next)
            return -1;
        return mpiexec_hosts_read_file(o, next) != 0 ? -2 : 0;
    case OPT_PPN:
        return parse_np(next, &o->ppn);
    case OPT_LAUNCHER:
        if (!next)
            return -1;
        o->launcher = next;
        return 0;
    case OPT_PROXY:
        *used_p = 4;
        return parse_proxy(argc, argv, i, o);
    case OPT_TAG:
        *used_p = 0;
        o->tag_output = 1;
        return 0;
    case OPT_FT:
        *used_p = 0;
        o->ft = 1;
        return 0;
    case OPT_PROFILE:
        return parse_profile(o, v);
    }
    return -1;
}

int mpiexec_parse_args(int argc, char **argv, mpiexec_opts_t *o)
{
    o->np = 1;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        /* Accept --opt and -opt alike, as Hydra and Open MPI users type both. */
        const char *eq;
        const opt_row_t *r = find_option(a[1] == '-' ? a + 2 : a + 1, &eq);
        if (!r) {
            fprintf(stderr, "mpiexec: unknown option '%s' (see mpiexec --help)\n", a);
            return -1;
        }
        int used;
        int rc = apply_option(r, eq, argc, argv, i, o, &used);
        if (rc != 0)
            return rc;
        i += used;
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
    free(o->profile);
    o->hosts = NULL;
    o->host_slots = NULL;
    o->env = NULL;
    o->profile = NULL;
    o->n_hosts = o->n_env = 0;
}
