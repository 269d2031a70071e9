/* PMI-1 server: one key-value space per job, a barrier over all ranks, and
 * the job's constants. Every put is visible at once (a fence is only a
 * barrier here); clients must still fence before reading others' keys, as
 * other process managers (Hydra) publish puts only at the barrier.
 *
 * The sockets are non-blocking: replies go to a per-rank queue written as
 * the socket takes them, so a rank that sends without reading can never
 * block mpiexec. A rank whose unread replies pass
 * MPIEXEC_PMI_REPLY_QUEUE_MAX, or whose line passes MPIEXEC_PMI_LINE_MAX,
 * is reported and the job ended. */
#include "mpiexec.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    KVS_BUCKETS = 4096,
    KVSNAME_MAX = 256,
    KEY_MAX = 256,
    VALUE_MAX = 65536,
};

typedef struct kvs_entry {
    struct kvs_entry *next;
    char *key;
    char *value;
} kvs_entry_t;

struct mpiexec_kvs {
    kvs_entry_t *buckets[KVS_BUCKETS];
};

static unsigned kvs_hash(const char *key)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 16777619u;
    return h % KVS_BUCKETS;
}

static kvs_entry_t *kvs_find(mpiexec_kvs_t *kvs, const char *key)
{
    for (kvs_entry_t *e = kvs->buckets[kvs_hash(key)]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static tern_status_t kvs_put(mpiexec_kvs_t *kvs, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return TERN_ERR_NOMEM;
    kvs_entry_t *e = kvs_find(kvs, key);
    if (e) {
        free(e->value);
        e->value = v;
        return TERN_OK;
    }
    e = malloc(sizeof *e);
    if (!e || !(e->key = strdup(key))) {
        free(e);
        free(v);
        return TERN_ERR_NOMEM;
    }
    unsigned b = kvs_hash(key);
    e->value = v;
    e->next = kvs->buckets[b];
    kvs->buckets[b] = e;
    return TERN_OK;
}

mpiexec_kvs_t *mpiexec_kvs_new(void) { return calloc(1, sizeof(mpiexec_kvs_t)); }

tern_status_t mpiexec_kvs_put(mpiexec_kvs_t *kvs, const char *key, const char *value)
{
    return kvs_put(kvs, key, value);
}

/* The key-value space and size of the rank's job (spawned ones have
 * their own). */
static mpiexec_space_t *space_of(mpiexec_job_t *job, const mpiexec_rank_t *r)
{
    return r->space > 0 ? &job->spaces[r->space - 1] : NULL;
}

static mpiexec_kvs_t *kvs_of(mpiexec_job_t *job, const mpiexec_rank_t *r)
{
    return r->space > 0 ? job->spaces[r->space - 1].kvs : job->kvs;
}

int mpiexec_rank_world_size(const mpiexec_job_t *job, const mpiexec_rank_t *r)
{
    return r->space > 0 ? job->spaces[r->space - 1].n : job->world_size;
}

const char *mpiexec_rank_kvsname(const mpiexec_job_t *job, const mpiexec_rank_t *r)
{
    return r->space > 0 ? job->spaces[r->space - 1].kvsname : job->kvsname;
}

tern_status_t mpiexec_pmi_init(mpiexec_job_t *job)
{
    job->kvs = calloc(1, sizeof *job->kvs);
    if (!job->kvs)
        return TERN_ERR_NOMEM;
    /* Which ranks share a node, as Hydra and Slurm publish it, so ranks
     * need no host-name exchange. Every rank runs on this host, unless a
     * multi-host root gave the job's map. */
    if (job->opts->proxy_map)
        return kvs_put(job->kvs, "PMI_process_mapping", job->opts->proxy_map);
    char map[64];
    snprintf(map, sizeof map, "(vector,(0,1,%d))", job->n);
    return kvs_put(job->kvs, "PMI_process_mapping", map);
}

/* 1 if key was there. */
static int kvs_del(mpiexec_kvs_t *kvs, const char *key)
{
    for (kvs_entry_t **pp = &kvs->buckets[kvs_hash(key)]; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->key, key) == 0) {
            kvs_entry_t *e = *pp;
            *pp = e->next;
            free(e->key);
            free(e->value);
            free(e);
            return 1;
        }
    return 0;
}

tern_status_t mpiexec_pmi_store(mpiexec_job_t *job, int space, const char *key,
                                const char *value)
{
    if (space < 0 || space > job->n_spaces || (space > 0 && !job->spaces[space - 1].kvs))
        return TERN_ERR_ARG;
    return kvs_put(space > 0 ? job->spaces[space - 1].kvs : job->kvs, key, value);
}

void mpiexec_kvs_free(mpiexec_kvs_t *kvs)
{
    if (!kvs)
        return;
    for (int b = 0; b < KVS_BUCKETS; b++) {
        for (kvs_entry_t *e = kvs->buckets[b], *next; e; e = next) {
            next = e->next;
            free(e->key);
            free(e->value);
            free(e);
        }
    }
    free(kvs);
}

void mpiexec_pmi_free(mpiexec_job_t *job)
{
    mpiexec_kvs_free(job->names);
    job->names = NULL;
    mpiexec_kvs_free(job->kvs);
    job->kvs = NULL;
}

void mpiexec_pmi_close(mpiexec_rank_t *r)
{
    if (r->pmi_fd >= 0)
        close(r->pmi_fd);
    r->pmi_fd = -1;
    tern_pmi_reader_free(&r->pmi_in);
    mpiexec_outq_free(&r->pmi_out);
}

int mpiexec_pmi_pending(const mpiexec_rank_t *r)
{
    return r->pmi_fd >= 0 && mpiexec_outq_pending(&r->pmi_out) > 0;
}

void mpiexec_pmi_flush(mpiexec_rank_t *r)
{
    /* A rank that went away is not news here: waitpid tells why. */
    (void)mpiexec_outq_flush(&r->pmi_out, r->pmi_fd);
}

/* Finishes a reply, queues it and writes what the socket takes now. */
void mpiexec_pmi_reply(mpiexec_job_t *job, mpiexec_rank_t *r, tern_pmi_line_t *line)
{
    if (tern_pmi_line_end(line) == TERN_OK && r->pmi_fd >= 0) {
        if (mpiexec_outq_push(&r->pmi_out, line->buf, line->len,
                              MPIEXEC_PMI_REPLY_QUEUE_MAX) != 0) {
            mpiexec_job_fail(job, 1,
                             "rank %d sent PMI requests without reading the replies (more "
                             "than %d bytes of replies unread, the PMI reply queue limit)",
                             r->rank, MPIEXEC_PMI_REPLY_QUEUE_MAX);
            mpiexec_pmi_close(r);
        } else {
            mpiexec_pmi_flush(r);
        }
    }
    tern_pmi_line_free(line);
}

static void reply(mpiexec_job_t *job, mpiexec_rank_t *r, tern_pmi_line_t *line)
{
    mpiexec_pmi_reply(job, r, line);
}

static void reply_error(mpiexec_job_t *job, mpiexec_rank_t *r, const char *cmd, const char *why)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, cmd);
    tern_pmi_line_add_int(&line, "rc", -1);
    tern_pmi_line_add(&line, "msg", why);
    reply(job, r, &line);
}

static void release_ranks(mpiexec_job_t *job, int first, int n)
{
    for (int i = first; i < first + n; i++) {
        tern_pmi_line_t line;
        tern_pmi_line_begin(&line, "barrier_out");
        tern_pmi_line_add_int(&line, "rc", 0);
        reply(job, &job->ranks[i], &line);
        job->ranks[i].in_barrier = 0;
    }
}

void mpiexec_pmi_barrier_release(mpiexec_job_t *job, int space)
{
    if (space > 0 && space <= job->n_spaces) {
        mpiexec_space_t *s = &job->spaces[space - 1];
        release_ranks(job, s->first, s->n_local);
        s->barrier_count = 0;
    } else if (space == 0) {
        release_ranks(job, 0, job->n_main);
        job->barrier_count = 0;
    }
}

static void barrier_enter(mpiexec_job_t *job, mpiexec_rank_t *r)
{
    if (r->in_barrier)
        return;
    r->in_barrier = 1;
    mpiexec_space_t *s = space_of(job, r);
    int space = r->space;
    if (s ? ++s->barrier_count < s->n_local
          : ++job->barrier_count < job->n_main - job->n_dead)
        return;
    /* Everyone of the job here arrived: a proxy now waits for the other
     * hosts (a spawned job's own barrier, when it spans hosts). */
    if (job->upstream_fd >= 0)
        mpiexec_proxy_fence(job, space);
    else
        mpiexec_pmi_barrier_release(job, space);
}

static int kvsname_ok(const mpiexec_job_t *job, const mpiexec_rank_t *r,
                      const tern_pmi_msg_t *msg)
{
    const char *k = tern_pmi_msg_get(msg, "kvsname");
    return !k || strcmp(k, mpiexec_rank_kvsname(job, r)) == 0;
}

static void handle_put(mpiexec_job_t *job, mpiexec_rank_t *r, const tern_pmi_msg_t *msg)
{
    const char *key = tern_pmi_msg_get(msg, "key");
    const char *value = tern_pmi_msg_get(msg, "value");
    if (!kvsname_ok(job, r, msg))
        { reply_error(job, r, "put_result", "unknown kvsname"); return; }
    if (!key || !value)
        { reply_error(job, r, "put_result", "put needs key and value"); return; }
    if (strlen(key) >= KEY_MAX || strlen(value) >= VALUE_MAX)
        { reply_error(job, r, "put_result", "key or value too long"); return; }
    if (kvs_put(kvs_of(job, r), key, value) != TERN_OK)
        { reply_error(job, r, "put_result", "out of memory"); return; }
    if (job->upstream_fd >= 0) {
        /* The root hands it to the job's other hosts at the next fence. */
        tern_pmi_line_t up;
        tern_pmi_line_begin(&up, "put");
        if (r->space > 0)
            tern_pmi_line_add_int(&up, "space", r->space);
        tern_pmi_line_add(&up, "key", key);
        tern_pmi_line_add(&up, "value", value);
        mpiexec_proxy_send(job, &up);
    }
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "put_result");
    tern_pmi_line_add_int(&line, "rc", 0);
    reply(job, r, &line);
}

static void handle_get(mpiexec_job_t *job, mpiexec_rank_t *r, const tern_pmi_msg_t *msg)
{
    const char *key = tern_pmi_msg_get(msg, "key");
    if (!kvsname_ok(job, r, msg))
        { reply_error(job, r, "get_result", "unknown kvsname"); return; }
    if (!key)
        { reply_error(job, r, "get_result", "get needs a key"); return; }
    kvs_entry_t *e = kvs_find(kvs_of(job, r), key);
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "get_result");
    if (e) {
        tern_pmi_line_add_int(&line, "rc", 0);
        tern_pmi_line_add(&line, "value", e->value);
        tern_pmi_line_add(&line, "found", "TRUE");
    } else {
        tern_pmi_line_add_int(&line, "rc", -1);
        tern_pmi_line_add(&line, "msg", "key not found");
        tern_pmi_line_add(&line, "found", "FALSE");
    }
    reply(job, r, &line);
}

/* The name service (MPI_Publish_name & co.), one table for every job this
 * mpiexec runs, spawned ones included: answers a publish_name,
 * unpublish_name or lookup_name into reply (begun by the caller) from
 * *names (created on first use). In a multi-host job the table is the
 * root's (root_spawn.c); proxies forward the requests. */
void mpiexec_names_apply(mpiexec_kvs_t **names, const tern_pmi_msg_t *msg, tern_pmi_line_t *reply)
{
    const char *cmd = msg->cmd, *service = tern_pmi_msg_get(msg, "service");
    const char *port = tern_pmi_msg_get(msg, "port"), *why = NULL;
    kvs_entry_t *e = NULL;
    if (!*names && !(*names = mpiexec_kvs_new()))
        why = "out of memory";
    else if (!service || !service[0] || strlen(service) >= KEY_MAX)
        why = "a service name is needed";
    else
        e = kvs_find(*names, service);
    if (why) {
    } else if (strcmp(cmd, "publish_name") == 0) {
        why = !port || strlen(port) >= VALUE_MAX ? "a port is needed"
              : e                                 ? "already published"
              : kvs_put(*names, service, port) != TERN_OK ? "out of memory"
                                                          : NULL;
        if (!why)
            tern_pmi_line_add_int(reply, "rc", 0);
    } else if (strcmp(cmd, "unpublish_name") == 0) {
        tern_pmi_line_add_int(reply, "rc", kvs_del(*names, service) ? 0 : -1);
    } else if (e) {
        tern_pmi_line_add_int(reply, "rc", 0);
        tern_pmi_line_add(reply, "port", e->value);
    } else {
        why = "not published";
    }
    if (why) {
        tern_pmi_line_add_int(reply, "rc", -1);
        tern_pmi_line_add(reply, "msg", why);
    }
}

static const char *names_reply_cmd(const char *cmd)
{
    return strcmp(cmd, "publish_name") == 0     ? "publish_result"
           : strcmp(cmd, "unpublish_name") == 0 ? "unpublish_result"
                                                : "lookup_result";
}

static void handle_names(mpiexec_job_t *job, mpiexec_rank_t *r, const tern_pmi_msg_t *msg)
{
    tern_pmi_line_t line;
    if (job->upstream_fd >= 0) {
        /* One table for the whole run: the root's. */
        tern_pmi_line_begin(&line, "name");
        tern_pmi_line_add(&line, "op", msg->cmd);
        tern_pmi_line_add_int(&line, "from", (long)(r - job->ranks));
        for (int i = 0; i < msg->n_fields; i++)
            if (!strcmp(msg->fields[i].key, "service") || !strcmp(msg->fields[i].key, "port"))
                tern_pmi_line_add(&line, msg->fields[i].key, msg->fields[i].value);
        mpiexec_proxy_send(job, &line);
        return;
    }
    tern_pmi_line_begin(&line, names_reply_cmd(msg->cmd));
    mpiexec_names_apply(&job->names, msg, &line);
    reply(job, r, &line);
}

void mpiexec_names_from_root(mpiexec_job_t *job, const tern_pmi_msg_t *msg)
{
    int from = -1;
    const char *op = tern_pmi_msg_get(msg, "op");
    tern_pmi_msg_get_int(msg, "from", &from);
    if (!op || from < 0 || from >= job->n)
        return;
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, names_reply_cmd(op));
    tern_pmi_line_add_int(&line, "rc", tern_pmi_msg_rc(msg));
    for (int i = 0; i < msg->n_fields; i++)
        if (!strcmp(msg->fields[i].key, "port") || !strcmp(msg->fields[i].key, "msg"))
            tern_pmi_line_add(&line, msg->fields[i].key, msg->fields[i].value);
    reply(job, &job->ranks[from], &line);
}

static void handle_abort(mpiexec_job_t *job, mpiexec_rank_t *r, const tern_pmi_msg_t *msg)
{
    int code = 1;
    tern_pmi_msg_get_int(msg, "exitcode", &code);
    const char *text = tern_pmi_msg_get(msg, "message");
    const char *ranks = tern_pmi_msg_get(msg, "ranks");
    if (job->opts->ft && ranks && r->space == 0 && (!job->opts->proxy || job->upstream_fd >= 0)) {
        /* --ft: MPI_Abort on a communicator that is not the whole job
         * ends its ranks only (a list of world ranks, comma-separated),
         * on every host. */
        mpiexec_job_abort_ranks(job, r, code, ranks, text);
        return;
    }
    /* The rank exits by itself; from now on its exit is no news. */
    r->pmi_finalized = 1;
    mpiexec_job_fail(job, code, "rank %d called MPI_Abort with code %d%s%s", r->rank, code,
                     text ? ": " : "", text ? text : "");
}

static void handle(mpiexec_job_t *job, mpiexec_rank_t *r, const tern_pmi_msg_t *msg)
{
    const char *cmd = msg->cmd;
    tern_pmi_line_t line;

    if (strcmp(cmd, "init") == 0) {
        int version = 0;
        tern_pmi_msg_get_int(msg, "pmi_version", &version);
        r->pmi_inited = 1;
        tern_pmi_line_begin(&line, "response_to_init");
        tern_pmi_line_add_int(&line, "pmi_version", 1);
        tern_pmi_line_add_int(&line, "pmi_subversion", 1);
        tern_pmi_line_add_int(&line, "rc", version == 1 ? 0 : -1);
    } else if (strcmp(cmd, "initack") == 0) {
        r->pmi_inited = 1;
        tern_pmi_line_begin(&line, "initack");
        tern_pmi_line_add_int(&line, "rank", r->rank);
        tern_pmi_line_add_int(&line, "size", mpiexec_rank_world_size(job, r));
        tern_pmi_line_add_int(&line, "appnum", 0);
        tern_pmi_line_add_int(&line, "debug", 0);
        tern_pmi_line_add_int(&line, "rc", 0);
    } else if (strcmp(cmd, "get_maxes") == 0) {
        tern_pmi_line_begin(&line, "maxes");
        tern_pmi_line_add_int(&line, "kvsname_max", KVSNAME_MAX);
        tern_pmi_line_add_int(&line, "keylen_max", KEY_MAX);
        tern_pmi_line_add_int(&line, "vallen_max", VALUE_MAX);
        tern_pmi_line_add_int(&line, "rc", 0);
    } else if (strcmp(cmd, "get_appnum") == 0) {
        tern_pmi_line_begin(&line, "appnum");
        tern_pmi_line_add_int(&line, "appnum", 0);
        tern_pmi_line_add_int(&line, "rc", 0);
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        tern_pmi_line_begin(&line, "universe_size");
        /* The slots mpiexec was given (hostfile slots, else -n). */
        tern_pmi_line_add_int(&line, "size", job->opts->universe_size > 0
                                                 ? job->opts->universe_size : job->world_size);
        tern_pmi_line_add_int(&line, "rc", 0);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        tern_pmi_line_begin(&line, "my_kvsname");
        tern_pmi_line_add(&line, "kvsname", mpiexec_rank_kvsname(job, r));
        tern_pmi_line_add_int(&line, "rc", 0);
    } else if (strcmp(cmd, "put") == 0) {
        { handle_put(job, r, msg); return; }
    } else if (strcmp(cmd, "get") == 0) {
        { handle_get(job, r, msg); return; }
    } else if (strcmp(cmd, "barrier_in") == 0) {
        { barrier_enter(job, r); return; }
    } else if (strcmp(cmd, "finalize") == 0) {
        r->pmi_finalized = 1;
        tern_pmi_line_begin(&line, "finalize_ack");
        tern_pmi_line_add_int(&line, "rc", 0);
    } else if (strcmp(cmd, "publish_name") == 0 || strcmp(cmd, "unpublish_name") == 0 ||
               strcmp(cmd, "lookup_name") == 0) {
        { handle_names(job, r, msg); return; }
    } else if (strcmp(cmd, "abort") == 0) {
        { handle_abort(job, r, msg); return; }
    } else {
        char reply_cmd[128];
        snprintf(reply_cmd, sizeof reply_cmd, "%.100s_result", cmd);
        fprintf(stderr, "mpiexec: rank %d sent unsupported PMI command '%s'\n", r->rank, cmd);
        reply_error(job, r, reply_cmd, "unsupported command");
        return;
    }
    reply(job, r, &line);
}

typedef struct {
    mpiexec_job_t *job;
    mpiexec_rank_t *r;
} pmi_ctx_t;

static int pmi_line(void *ctx, char *text)
{
    pmi_ctx_t *c = ctx;
    tern_pmi_msg_t msg;
    if (c->r->spawn_req || strncmp(text, "mcmd=", 5) == 0)
        mpiexec_spawn_line(c->job, c->r, text); /* MPICH's multi-line spawn */
    else if (tern_pmi_wire_parse(text, &msg) != TERN_OK)
        fprintf(stderr, "mpiexec: rank %d sent a malformed PMI line\n", c->r->rank);
    else
        handle(c->job, c->r, &msg);
    /* A reply over the queue bound closed the connection. */
    return c->r->pmi_fd < 0;
}

int mpiexec_pmi_read(mpiexec_job_t *job, mpiexec_rank_t *r)
{
    if (r->pmi_fd < 0)
        return 0;
    pmi_ctx_t c = {job, r};
    mpiexec_lines_t got =
        mpiexec_lines_read(&r->pmi_in, r->pmi_fd, MPIEXEC_PMI_LINE_MAX, pmi_line, &c);
    if (got == MPIEXEC_LINES_TOO_LONG && r->pmi_fd >= 0)
        mpiexec_job_fail(job, 1,
                         "rank %d sent a PMI line longer than %d bytes (the PMI line length "
                         "limit)",
                         r->rank, MPIEXEC_PMI_LINE_MAX);
    if ((got != MPIEXEC_LINES_OPEN && got != MPIEXEC_LINES_AGAIN) || r->pmi_fd < 0) {
        mpiexec_pmi_close(r);
        return 0;
    }
    return 1;
}
