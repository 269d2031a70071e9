/* PMI-1 spawn (MPI_Comm_spawn): a rank sends one block per command,
 *     mcmd=spawn
 *     nprocs=2  execname=prog  totspawns=1  spawnssofar=1
 *     argcnt=1  arg1=x  preput_num=1  preput_key_0=k  preput_val_0=v
 *     info_num=1  info_key_0=wdir  info_val_0=/tmp
 *     endcmd
 * (one key=value per line, values raw to the end of the line, as MPICH's
 * client sends them), and after the last block gets one reply,
 *     cmd=spawn_result rc=0 errcodes=0,0
 * The new processes form a job of their own: their own ranks 0..n-1, key-
 * value space (with the preput pairs) and barrier, started by this mpiexec
 * on this host (PMI_SPAWNED=1 in their environment), forwarded and
 * watched like the first job's ranks: a failure of any ends everything.
 * Info keys: wdir (working directory), path (directories searched for the
 * program), host (must name this host: multi-host spawn is not built
 * yet). A process that cannot be executed fails the whole spawn: the ones
 * started are killed and the reply says rc=-1 with the reason. */
#include "mpiexec.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { BLOCK_LINES_MAX = 512, BLOCKS_MAX = 32 };

typedef struct {
    int n;
    char *keys[BLOCK_LINES_MAX];
    char *vals[BLOCK_LINES_MAX];
} block_t;

struct mpiexec_spawn_req {
    block_t blocks[BLOCKS_MAX]; /* one per command; MPI_Comm_spawn_multiple's count */
    int n_blocks;
    int open;             /* between mcmd= and endcmd */
    char error[256];      /* a malformed request: replied at the end */
};

static const char *block_get(const block_t *b, const char *key)
{
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->keys[i], key) == 0)
            return b->vals[i];
    return NULL;
}

static int block_int(const block_t *b, const char *key, int dflt)
{
    const char *v = block_get(b, key);
    char *end;
    long x = v ? strtol(v, &end, 10) : dflt;
    if (v && (*end || end == v))
        return -1;
    return (int)x;
}

static void req_free(struct mpiexec_spawn_req *q)
{
    if (!q)
        return;
    for (int k = 0; k < q->n_blocks; k++)
        for (int i = 0; i < q->blocks[k].n; i++) {
            free(q->blocks[k].keys[i]);
            free(q->blocks[k].vals[i]);
        }
    free(q);
}

static void reply(mpiexec_job_t *job, mpiexec_rank_t *r, int rc, const char *msg,
                  const char *codes)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "spawn_result");
    tern_pmi_line_add_int(&line, "rc", rc);
    if (msg)
        tern_pmi_line_add(&line, "msg", msg);
    if (codes)
        tern_pmi_line_add(&line, "errcodes", codes);
    mpiexec_pmi_reply(job, r, &line);
}

static int is_this_host(const char *host)
{
    char me[256];
    if (strcmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0)
        return 1;
    if (gethostname(me, sizeof me - 1) != 0)
        return 0;
    me[sizeof me - 1] = '\0';
    size_t n = strlen(host);
    /* "node1" names "node1.example.org" and the other way round. */
    return strncmp(me, host, n) == 0 ? (me[n] == '\0' || me[n] == '.')
                                     : strncmp(me, host, strlen(me)) == 0 && host[strlen(me)] == '.';
}

/* The program to exec: command, or the first dir/command of info "path"
 * (colon-separated) that exists and is executable. A relative path names
 * a file from mpiexec's directory, also when info "wdir" moves the
 * process elsewhere. */
static char *program(const char *command, const char *path)
{
    if (command[0] != '/' && strchr(command, '/') && access(command, X_OK) == 0) {
        char *full = realpath(command, NULL);
        if (full)
            return full;
    }
    if (path && !strchr(command, '/')) {
        char *dirs = strdup(path), *save = NULL;
        for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
            size_t len = strlen(d) + strlen(command) + 2;
            char *full = malloc(len);
            if (!full)
                break;
            snprintf(full, len, "%s/%s", d, command);
            if (access(full, X_OK) == 0) {
                free(dirs);
                return full;
            }
            free(full);
        }
        free(dirs);
    }
    return strdup(command);
}

/* Checks a block and counts its processes; -1 with why. */
static int block_procs(const block_t *b, char *why, size_t cap)
{
    int n = block_int(b, "nprocs", -1);
    const char *exe = block_get(b, "execname");
    if (n <= 0 || !exe || !exe[0]) {
        snprintf(why, cap, "spawn needs nprocs > 0 and an execname");
        return -1;
    }
    int argc = block_int(b, "argcnt", 0), ninfo = block_int(b, "info_num", 0);
    if (argc < 0 || ninfo < 0) {
        snprintf(why, cap, "spawn: bad argcnt or info_num");
        return -1;
    }
    for (int i = 0; i < ninfo; i++) {
        char k[32];
        snprintf(k, sizeof k, "info_key_%d", i);
        const char *key = block_get(b, k);
        snprintf(k, sizeof k, "info_val_%d", i);
        const char *val = block_get(b, k);
        if (key && val && strcmp(key, "host") == 0 && !is_this_host(val)) {
            snprintf(why, cap, "spawn: host '%.100s' is not this host (mpiexec spawns on its own "
                               "host only)", val);
            return -1;
        }
    }
    return n;
}

/* Sets up job->ranks[first...] for block b; returns how many. */
static int block_ranks(mpiexec_job_t *job, const block_t *b, int space, int first, int rank0)
{
    int n = block_int(b, "nprocs", 0), argc = block_int(b, "argcnt", 0);
    const char *wdir = NULL, *path = NULL;
    for (int i = 0; i < block_int(b, "info_num", 0); i++) {
        char k[32];
        snprintf(k, sizeof k, "info_key_%d", i);
        const char *key = block_get(b, k);
        snprintf(k, sizeof k, "info_val_%d", i);
        const char *val = block_get(b, k);
        if (key && val && strcmp(key, "wdir") == 0)
            wdir = val;
        if (key && val && strcmp(key, "path") == 0)
            path = val;
    }
    for (int p = 0; p < n; p++) {
        mpiexec_rank_t *r = &job->ranks[first + p];
        memset(r, 0, sizeof *r);
        r->rank = rank0 + p;
        r->space = space;
        r->pmi_fd = -1;
        tern_pmi_reader_init(&r->pmi_in);
        mpiexec_stream_init(&r->out, -1, 1);
        mpiexec_stream_init(&r->err, -1, 2);
        r->argv = calloc((size_t)argc + 2, sizeof *r->argv);
        if (r->argv) {
            r->argv[0] = program(block_get(b, "execname"), path);
            for (int a = 0; a < argc; a++) {
                char k[32];
                snprintf(k, sizeof k, "arg%d", a + 1);
                const char *v = block_get(b, k);
                r->argv[a + 1] = strdup(v ? v : "");
            }
        }
        r->wdir = wdir ? strdup(wdir) : NULL;
    }
    return n;
}

static void start(mpiexec_job_t *job, mpiexec_rank_t *r, struct mpiexec_spawn_req *q)
{
    char why[512] = "";
    int total = 0;
    for (int k = 0; k < q->n_blocks && !why[0]; k++) {
        int n = block_procs(&q->blocks[k], why, sizeof why);
        total += n > 0 ? n : 0;
    }
    if (!why[0] && (job->opts->proxy || job->upstream_fd >= 0 || !job->spaces))
        snprintf(why, sizeof why, "spawn is not supported in multi-host jobs yet");
    if (!why[0] && (job->n_spaces >= MPIEXEC_SPAWN_MAX ||
                    job->n - job->n_main + total > MPIEXEC_SPAWN_MAX))
        snprintf(why, sizeof why, "spawn: more than %d spawned processes in one run",
                 MPIEXEC_SPAWN_MAX);
    if (job->terminating)
        snprintf(why, sizeof why, "spawn: the job is ending");
    if (why[0]) {
        reply(job, r, -1, why, NULL);
        return;
    }
    mpiexec_space_t *s = &job->spaces[job->n_spaces];
    memset(s, 0, sizeof *s);
    snprintf(s->kvsname, sizeof s->kvsname, "%s-s%d", job->kvsname, job->n_spaces + 1);
    s->first = job->n;
    s->n = total;
    char map[64];
    snprintf(map, sizeof map, "(vector,(0,1,%d))", total);
    s->kvs = mpiexec_kvs_new();
    if (!s->kvs || mpiexec_kvs_put(s->kvs, "PMI_process_mapping", map) != TERN_OK) {
        mpiexec_kvs_free(s->kvs);
        reply(job, r, -1, "spawn: out of memory", NULL);
        return;
    }
    for (int k = 0; k < q->n_blocks; k++) {
        const block_t *b = &q->blocks[k];
        for (int i = 0; i < block_int(b, "preput_num", 0); i++) {
            char kk[32], kv[32];
            snprintf(kk, sizeof kk, "preput_key_%d", i);
            snprintf(kv, sizeof kv, "preput_val_%d", i);
            if (block_get(b, kk) && block_get(b, kv))
                mpiexec_kvs_put(s->kvs, block_get(b, kk), block_get(b, kv));
        }
    }
    int space = ++job->n_spaces, at = s->first;
    for (int k = 0; k < q->n_blocks; k++)
        at += block_ranks(job, &q->blocks[k], space, at, at - s->first);
    job->n = at;

    /* Start them all; one that cannot be executed fails the spawn. */
    char *codes = calloc((size_t)total, 3);
    int failed = 0;
    size_t len = 0;
    for (int i = 0; i < total; i++) {
        mpiexec_rank_t *c = &job->ranks[s->first + i];
        tern_status_t st = failed ? TERN_ERR_SPAWN : c->argv ? mpiexec_launch_rank(job, c) : TERN_ERR_NOMEM;
        if (st != TERN_OK && !failed)
            snprintf(why, sizeof why, "cannot execute '%.200s': %s",
                     c->argv ? c->argv[0] : "?", st == TERN_ERR_NOT_FOUND ?
                     "not found or not executable (see mpiexec's message)" : tern_status_string(st));
        failed |= st != TERN_OK;
        if (codes)
            len += (size_t)sprintf(codes + len, "%s%d", i ? "," : "", st == TERN_OK ? 0 : -1);
    }
    if (failed) {
        for (int i = 0; i < total; i++) {
            mpiexec_rank_t *c = &job->ranks[s->first + i];
            c->quiet_exit = 1;
            if (c->running && kill(-c->pid, SIGKILL) != 0)
                kill(c->pid, SIGKILL);
        }
    }
    reply(job, r, failed ? -1 : 0, failed ? why : NULL, codes);
    free(codes);
}

void mpiexec_spawn_line(mpiexec_job_t *job, mpiexec_rank_t *r, const char *line)
{
    struct mpiexec_spawn_req *q = r->spawn_req;
    if (!q) {
        q = r->spawn_req = calloc(1, sizeof *q);
        if (!q) {
            reply(job, r, -1, "spawn: out of memory", NULL);
            return;
        }
    }
    if (strncmp(line, "mcmd=", 5) == 0) {
        if (q->open || strcmp(line + 5, "spawn") != 0 || q->n_blocks >= BLOCKS_MAX)
            snprintf(q->error, sizeof q->error, "spawn: unexpected '%.60s'", line);
        else
            q->n_blocks++;
        q->open = 1;
        return;
    }
    if (strcmp(line, "endcmd") == 0) {
        q->open = 0;
        const block_t *b = &q->blocks[q->n_blocks > 0 ? q->n_blocks - 1 : 0];
        int tot = block_int(b, "totspawns", 1), sofar = block_int(b, "spawnssofar", 1);
        if (sofar < tot && !q->error[0])
            return; /* more blocks to come */
        r->spawn_req = NULL;
        if (q->error[0] || q->n_blocks == 0)
            reply(job, r, -1, q->error[0] ? q->error : "spawn: no command", NULL);
        else
            start(job, r, q);
        req_free(q);
        return;
    }
    block_t *b = &q->blocks[q->n_blocks > 0 ? q->n_blocks - 1 : 0];
    const char *eq = strchr(line, '=');
    if (!q->open || !eq || b->n >= BLOCK_LINES_MAX) {
        snprintf(q->error, sizeof q->error, "spawn: unexpected line '%.60s'", line);
        return;
    }
    b->keys[b->n] = strndup(line, (size_t)(eq - line));
    b->vals[b->n] = strdup(eq + 1);
    if (b->keys[b->n] && b->vals[b->n])
        b->n++;
}

void mpiexec_spawn_free(mpiexec_job_t *job)
{
    for (int i = job->n_main; i < job->n; i++) {
        mpiexec_rank_t *r = &job->ranks[i];
        for (int a = 0; r->argv && r->argv[a]; a++)
            free(r->argv[a]);
        free(r->argv);
        free(r->wdir);
    }
    for (int i = 0; i < job->n; i++) {
        req_free(job->ranks[i].spawn_req);
        job->ranks[i].spawn_req = NULL;
    }
    for (int k = 0; k < job->n_spaces; k++)
        mpiexec_kvs_free(job->spaces[k].kvs);
    free(job->spaces);
    job->spaces = NULL;
    job->n_spaces = 0;
}
