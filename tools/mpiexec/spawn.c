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
 * program), host (must name this host), file or hostfile (a hostfile that
 * names only this host). A process that cannot be executed
 * fails the whole spawn: the ones started are killed and the reply says
 * rc=-1 with the reason.
 *
 * In a multi-host job the rank's proxy checks the blocks and hands them to
 * the root (root_spawn.c), which places the processes on the hosts; each
 * host's proxy starts its part (spawn_start below) and says how it went;
 * the root answers the rank through its proxy. */
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

/* Checks a block and counts its processes; -1 with why. A proxy leaves
 * the host keys to the root. */
static int block_procs(const block_t *b, int check_host, char *why, size_t cap)
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
        if (check_host && key && val && strcmp(key, "host") == 0 && !is_this_host(val)) {
            snprintf(why, cap, "spawn: host '%.100s' is not this host (mpiexec spawns on its own "
                               "host only)", val);
            return -1;
        }
        if (check_host && key && val && (!strcmp(key, "file") || !strcmp(key, "hostfile"))) {
            /* A hostfile per spawn: on one host it may name only this one. */
            mpiexec_opts_t o = {0};
            int bad = mpiexec_hosts_read_file(&o, val) != 0 ? -1 : 0;
            for (int h = 0; !bad && h < o.n_hosts; h++)
                bad = is_this_host(o.hosts[h]) ? 0 : h + 1;
            if (bad)
                snprintf(why, cap, bad < 0 ? "spawn: cannot read hostfile '%.200s'"
                                           : "spawn: hostfile '%.200s' names a host other than "
                                             "this one (mpiexec spawns on its own host only)",
                         val);
            mpiexec_opts_free(&o);
            if (bad)
                return -1;
        }
    }
    return n;
}

/* Sets up job->ranks[first...] for the processes of block b (ranks rank0...
 * of the new job) that run here: all, or those whose place is `me`;
 * returns how many. */
static int block_ranks(mpiexec_job_t *job, const block_t *b, int space, int first, int rank0,
                       const int *place, int me)
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
    int here = 0;
    for (int p = 0; p < n; p++) {
        if (place && place[rank0 + p] != me)
            continue;
        mpiexec_rank_t *r = &job->ranks[first + here++];
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
    return here;
}

/* Ends this host's processes of a spawn that failed; their exits are no
 * news. */
static void space_kill(mpiexec_job_t *job, mpiexec_space_t *s)
{
    for (int i = 0; i < s->n_local; i++) {
        mpiexec_rank_t *c = &job->ranks[s->first + i];
        c->quiet_exit = 1;
        if (c->running && kill(-c->pid, SIGKILL) != 0)
            kill(c->pid, SIGKILL);
    }
}

/* Proxy: the checked request goes to the root, one spawn_kv line per
 * key, then spawn; the root's spawn_result comes back for rank `from`. */
static void forward(mpiexec_job_t *job, mpiexec_rank_t *r, const struct mpiexec_spawn_req *q)
{
    for (int k = 0; k < q->n_blocks; k++)
        for (int i = 0; i < q->blocks[k].n; i++) {
            tern_pmi_line_t line;
            tern_pmi_line_begin(&line, "spawn_kv");
            tern_pmi_line_add_int(&line, "block", k);
            tern_pmi_line_add(&line, "key", q->blocks[k].keys[i]);
            tern_pmi_line_add(&line, "value", q->blocks[k].vals[i]);
            mpiexec_proxy_send(job, &line);
        }
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "spawn");
    tern_pmi_line_add_int(&line, "from", (long)(r - job->ranks));
    tern_pmi_line_add_int(&line, "blocks", q->n_blocks);
    mpiexec_proxy_send(job, &line);
}

static int total_procs(const struct mpiexec_spawn_req *q)
{
    int total = 0;
    for (int k = 0; k < q->n_blocks; k++)
        total += block_int(&q->blocks[k], "nprocs", 0);
    return total;
}

/* Opens job number `space` (its slot spaces[space - 1] free): key-value
 * space with the map and the preput pairs, and this host's ranks of it
 * (place: the host of each rank, NULL: all here). NULL when out of memory. */
static mpiexec_space_t *space_open(mpiexec_job_t *job, const struct mpiexec_spawn_req *q,
                                   int space, const char *kvsname, const char *map,
                                   const int *place, int me)
{
    mpiexec_space_t *s = &job->spaces[space - 1];
    memset(s, 0, sizeof *s);
    snprintf(s->kvsname, sizeof s->kvsname, "%s", kvsname);
    s->first = job->n;
    s->n = total_procs(q);
    s->kvs = mpiexec_kvs_new();
    if (!s->kvs || mpiexec_kvs_put(s->kvs, "PMI_process_mapping", map) != TERN_OK) {
        mpiexec_kvs_free(s->kvs);
        s->kvs = NULL;
        return NULL;
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
    if (space > job->n_spaces)
        job->n_spaces = space;
    int at = s->first, rank0 = 0;
    for (int k = 0; k < q->n_blocks; k++) {
        at += block_ranks(job, &q->blocks[k], space, at, rank0, place, me);
        rank0 += block_int(&q->blocks[k], "nprocs", 0);
    }
    s->n_local = at - s->first;
    job->n = at;
    return s;
}

/* Starts this host's processes of s; one that cannot be executed fails
 * them all (the started ones are killed; their exits are no news). Writes
 * a code per process ("0,-1,...") and returns 0 or -1 with why. */
static int space_launch(mpiexec_job_t *job, mpiexec_space_t *s, char *codes, char *why,
                        size_t cap)
{
    int failed = 0;
    size_t len = 0;
    for (int i = 0; i < s->n_local; i++) {
        mpiexec_rank_t *c = &job->ranks[s->first + i];
        tern_status_t st = failed ? TERN_ERR_SPAWN : c->argv ? mpiexec_launch_rank(job, c) : TERN_ERR_NOMEM;
        if (st != TERN_OK && !failed) {
            char me[64] = "";
            gethostname(me, sizeof me - 1);
            snprintf(why, cap, "cannot execute '%.200s' on host %.64s: %s",
                     c->argv ? c->argv[0] : "?", me, st == TERN_ERR_NOT_FOUND ?
                     "not found or not executable (see mpiexec's message)" : tern_status_string(st));
        }
        failed |= st != TERN_OK;
        if (codes)
            len += (size_t)sprintf(codes + len, "%s%d", i ? "," : "", st == TERN_OK ? 0 : -1);
    }
    if (failed)
        space_kill(job, s);
    return failed ? -1 : 0;
}

static void start(mpiexec_job_t *job, mpiexec_rank_t *r, struct mpiexec_spawn_req *q)
{
    char why[512] = "";
    int total = 0, proxy = job->upstream_fd >= 0;
    for (int k = 0; k < q->n_blocks && !why[0]; k++) {
        int n = block_procs(&q->blocks[k], !proxy, why, sizeof why);
        total += n > 0 ? n : 0;
    }
    if (!why[0] && !proxy && (job->n_spaces >= MPIEXEC_SPAWN_MAX ||
                              job->n - job->n_main + total > MPIEXEC_SPAWN_MAX))
        snprintf(why, sizeof why, "spawn: more than %d spawned processes in one run",
                 MPIEXEC_SPAWN_MAX);
    if (job->terminating)
        snprintf(why, sizeof why, "spawn: the job is ending");
    if (why[0]) {
        reply(job, r, -1, why, NULL);
        return;
    }
    if (proxy) {
        forward(job, r, q);
        return;
    }
    char map[64], kvsname[96];
    snprintf(map, sizeof map, "(vector,(0,1,%d))", total);
    snprintf(kvsname, sizeof kvsname, "%s-s%d", job->kvsname, job->n_spaces + 1);
    mpiexec_space_t *s = space_open(job, q, job->n_spaces + 1, kvsname, map, NULL, 0);
    if (!s) {
        reply(job, r, -1, "spawn: out of memory", NULL);
        return;
    }
    char *codes = calloc((size_t)total, 3);
    int failed = space_launch(job, s, codes, why, sizeof why);
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

/* Proxy: the root placed a spawn; start our part ("place" gives each
 * rank's host) and tell the root how it went. */
static void spawn_start(mpiexec_job_t *job, const tern_pmi_msg_t *msg)
{
    struct mpiexec_spawn_req *q = job->from_root;
    job->from_root = NULL;
    int space = 0, me = job->opts->proxy_index;
    tern_pmi_msg_get_int(msg, "space", &space);
    const char *kvsname = tern_pmi_msg_get(msg, "kvsname"), *map = tern_pmi_msg_get(msg, "map");
    const char *place_s = tern_pmi_msg_get(msg, "place");
    char why[512] = "";
    int total = q ? total_procs(q) : 0, local = 0, *place = calloc((size_t)total + 1, sizeof *place);
    const char *p = place_s;
    for (int i = 0; p && place && i < total; i++) {
        char *end;
        place[i] = (int)strtol(p, &end, 10);
        local += place[i] == me;
        p = *end == ',' ? end + 1 : i + 1 < total ? NULL : end;
    }
    if (!q || !kvsname || !map || !p || !place || total <= 0 || space < 1 ||
        space > MPIEXEC_SPAWN_MAX || job->spaces[space - 1].kvs)
        snprintf(why, sizeof why, "spawn: a malformed start from the launch host");
    else if (job->n - job->n_main + local > MPIEXEC_SPAWN_MAX)
        snprintf(why, sizeof why, "spawn: more than %d spawned processes on one host",
                 MPIEXEC_SPAWN_MAX);
    else if (job->terminating)
        snprintf(why, sizeof why, "spawn: the job is ending");
    mpiexec_space_t *s = NULL;
    if (!why[0] && !(s = space_open(job, q, space, kvsname, map, place, me)))
        snprintf(why, sizeof why, "spawn: out of memory");
    char *codes = s ? calloc((size_t)s->n_local + 1, 3) : NULL;
    int failed = why[0] ? -1 : space_launch(job, s, codes, why, sizeof why);
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "spawned");
    tern_pmi_line_add_int(&line, "space", space);
    tern_pmi_line_add_int(&line, "rc", failed ? -1 : 0);
    if (failed)
        tern_pmi_line_add(&line, "msg", why);
    if (codes)
        tern_pmi_line_add(&line, "codes", codes);
    mpiexec_proxy_send(job, &line);
    free(codes);
    free(place);
    req_free(q);
}

void mpiexec_spawn_from_root(mpiexec_job_t *job, const tern_pmi_msg_t *msg)
{
    int space = 0, from = -1, rc = -1;
    tern_pmi_msg_get_int(msg, "space", &space);
    if (strcmp(msg->cmd, "spawn_kv") == 0) {
        /* A block's key=value, as the rank sent it. */
        struct mpiexec_spawn_req *q = job->from_root;
        if (!q && !(q = job->from_root = calloc(1, sizeof *q)))
            return; /* spawn_start answers that it is malformed */
        int k = -1;
        const char *key = tern_pmi_msg_get(msg, "key"), *val = tern_pmi_msg_get(msg, "value");
        tern_pmi_msg_get_int(msg, "block", &k);
        if (k < 0 || k >= BLOCKS_MAX || !key || !val)
            return;
        if (k >= q->n_blocks)
            q->n_blocks = k + 1;
        block_t *b = &q->blocks[k];
        if (b->n < BLOCK_LINES_MAX && (b->keys[b->n] = strdup(key)) &&
            (b->vals[b->n] = strdup(val)))
            b->n++;
    } else if (strcmp(msg->cmd, "spawn_start") == 0) {
        spawn_start(job, msg);
    } else if (strcmp(msg->cmd, "spawn_kill") == 0) {
        if (space >= 1 && space <= job->n_spaces && job->spaces[space - 1].kvs)
            space_kill(job, &job->spaces[space - 1]);
    } else if (strcmp(msg->cmd, "spawn_result") == 0) {
        tern_pmi_msg_get_int(msg, "from", &from);
        tern_pmi_msg_get_int(msg, "rc", &rc);
        if (from >= 0 && from < job->n)
            reply(job, &job->ranks[from], rc, tern_pmi_msg_get(msg, "msg"),
                  tern_pmi_msg_get(msg, "errcodes"));
    }
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
    req_free(job->from_root);
    job->from_root = NULL;
    for (int k = 0; k < job->n_spaces; k++)
        mpiexec_kvs_free(job->spaces[k].kvs);
    free(job->spaces);
    job->spaces = NULL;
    job->n_spaces = 0;
}
