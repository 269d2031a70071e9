/* MPI_Comm_spawn in a multi-host job: the root places the new processes
 * and runs the new job's fences; each host's proxy starts its part.
 *
 *   proxy -> root: spawn_kv block=J key=K value=V  (each line of the rank's
 *                  blocks), then spawn from=I blocks=N (I: the rank's index
 *                  at its proxy)
 *   root -> hosts: spawn_kv space=S block=J key=K value=V ..., then
 *                  spawn_start space=S kvsname=.. map=.. place=H0,H1,...
 *                  (the host of each new rank) to each host given ranks
 *   host -> root:  spawned space=S rc=0|-1 [msg=why] codes=0,-1,.. (its ranks)
 *   root -> proxy: spawn_result from=I rc [msg] errcodes=.. (every rank's)
 *   root -> hosts: spawn_kill space=S when any host failed to start its part
 * and then, for the new job, put/fence/release with space=S as the first
 * job's (root.c), among the hosts that run its ranks. The run's name
 * service (publish/lookup) is here too: name -> name_result (proxy.c).
 *
 * Placement (info keys of each command): "host" (or "hosts"), a host or a
 * comma-separated list of this job's hosts, each name[:slots]; "file" (or
 * MPICH's "hostfile"), a hostfile read here on the launch host, whose hosts
 * must be this job's; neither: all the job's hosts. The processes fill the
 * hosts in order, each taking its slots (1 when none are given) before the
 * next, round again when all are full: with no slots, one process per host
 * in turn. Without a host key, a spawn_multiple's commands continue where
 * the previous one left off. */
#include "root.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    int block;
    char *key, *value;
} bkv_t;

typedef struct {
    bkv_t *v;
    int n, cap;
} bkv_list_t;

/* A spawned job, from its request to its end. */
typedef struct {
    int origin, from;      /* requesting host and rank index there */
    int n;                 /* processes */
    int *place;            /* host of each */
    int *codes;
    char *in;              /* per host: runs ranks of it */
    char *fenced;          /* per host: in the job's barrier */
    char *replied;         /* per host: said how its start went */
    int n_in, n_replies, n_fenced;
    int answered;
    char why[512];         /* the first host's failure */
    kv_t *fresh;           /* puts since the last release */
    int n_fresh, cap_fresh;
} rspace_t;

struct mpiexec_root_spawn {
    mpiexec_kvs_t *names;  /* the run's published names */
    bkv_list_t *incoming;  /* per host: the request being sent */
    rspace_t *spaces;
    int n_spaces;
};

static mpiexec_root_spawn_t *state(root_t *rt)
{
    if (!rt->spawn) {
        rt->spawn = calloc(1, sizeof *rt->spawn);
        if (rt->spawn && !(rt->spawn->incoming = calloc((size_t)rt->n, sizeof *rt->spawn->incoming)) &&
            rt->n > 0) {
            free(rt->spawn);
            rt->spawn = NULL;
        }
    }
    return rt->spawn;
}

static void bkv_clear(bkv_list_t *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->v[i].key);
        free(l->v[i].value);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static const char *bkv_get(const bkv_list_t *l, int block, const char *key)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].block == block && strcmp(l->v[i].key, key) == 0)
            return l->v[i].value;
    return NULL;
}

static int bkv_int(const bkv_list_t *l, int block, const char *key)
{
    const char *v = bkv_get(l, block, key);
    return v ? atoi(v) : 0;
}

/* An info value of the block: the first of the keys given. */
static const char *bkv_info(const bkv_list_t *l, int block, const char *k1, const char *k2)
{
    int n = bkv_int(l, block, "info_num");
    for (int i = 0; i < n; i++) {
        char k[32];
        snprintf(k, sizeof k, "info_key_%d", i);
        const char *key = bkv_get(l, block, k);
        snprintf(k, sizeof k, "info_val_%d", i);
        if (key && (strcmp(key, k1) == 0 || strcmp(key, k2) == 0))
            return bkv_get(l, block, k);
    }
    return NULL;
}

static void reply(root_t *rt, int host, int from, int rc, const char *msg, const char *codes)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "spawn_result");
    tern_pmi_line_add_int(&line, "from", from);
    tern_pmi_line_add_int(&line, "rc", rc);
    if (msg)
        tern_pmi_line_add(&line, "msg", msg);
    if (codes)
        tern_pmi_line_add(&line, "errcodes", codes);
    mpiexec_root_send(rt, &rt->hosts[host], &line);
}

/* "node1" names "node1.example.org" and the other way round. */
static int same_host(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;
    return strncmp(a, b, n) == 0 && (na == nb || (na > nb ? a[n] : b[n]) == '.');
}

/* This job's host of that name (one with ranks: only those have a proxy). */
static int find_host(root_t *rt, const char *want)
{
    for (int h = 0; h < rt->n; h++)
        if (same_host(rt->hosts[h].name, want))
            return h;
    if (mpiexec_root_is_local(want))
        for (int h = 0; h < rt->n; h++)
            if (mpiexec_root_is_local(rt->hosts[h].name))
                return h;
    return -1;
}

/* Candidate hosts of a command (index and slots); -1 with why. */
static int candidates(root_t *rt, const bkv_list_t *l, int block, int *idx, int *slots,
                      char *why, size_t cap)
{
    const char *list = bkv_info(l, block, "host", "hosts");
    const char *file = bkv_info(l, block, "file", "hostfile");
    if (!list && !file) {
        for (int h = 0; h < rt->n; h++) {
            idx[h] = h;
            slots[h] = rt->hosts[h].slots;
        }
        return rt->n;
    }
    mpiexec_opts_t o = {0};
    int rc = file ? mpiexec_hosts_read_file(&o, file)
                  : mpiexec_hosts_parse_list(&o, list, "spawn info host");
    int m = 0;
    if (rc != 0) {
        snprintf(why, cap, "spawn: cannot use %s '%.200s' (see mpiexec's message)",
                 file ? "hostfile" : "host", file ? file : list);
        m = -1;
    }
    for (int i = 0; m >= 0 && i < o.n_hosts; i++) {
        int h = find_host(rt, o.hosts[i]);
        if (h < 0) {
            size_t len = (size_t)snprintf(why, cap, "spawn: host '%.100s' is not one of this "
                                                    "job's hosts with ranks (", o.hosts[i]);
            for (int k = 0; k < rt->n && len < cap; k++)
                len += (size_t)snprintf(why + len, cap - len, "%s%.60s", k ? ", " : "",
                                        rt->hosts[k].name);
            if (len < cap)
                snprintf(why + len, cap - len, ")");
            m = -1;
        } else if (m < rt->n) {
            idx[m] = h;
            slots[m++] = o.host_slots ? o.host_slots[i] : 0;
        }
    }
    mpiexec_opts_free(&o);
    return m;
}

/* Places every process of the request; 0, or -1 with why. */
static int place(root_t *rt, const bkv_list_t *l, int n_blocks, int *where, char *why, size_t cap)
{
    int *idx = calloc((size_t)rt->n, sizeof *idx), *slots = calloc((size_t)rt->n, sizeof *slots);
    int at = 0, rc = 0, cur = 0, used = 0; /* the job's hosts: where the last command stopped */
    if (!idx || !slots) {
        snprintf(why, cap, "spawn: out of memory");
        rc = -1;
    }
    for (int k = 0; rc == 0 && k < n_blocks; k++) {
        int own = bkv_info(l, k, "host", "hosts") || bkv_info(l, k, "file", "hostfile");
        int m = candidates(rt, l, k, idx, slots, why, cap);
        if (m <= 0) {
            if (m == 0)
                snprintf(why, cap, "spawn: no host to run on");
            rc = -1;
            break;
        }
        int c = own ? 0 : cur, u = own ? 0 : used;
        for (int p = 0; p < bkv_int(l, k, "nprocs"); p++) {
            if (c >= m)
                c = 0;
            where[at++] = idx[c];
            if (++u >= (slots[c] > 0 ? slots[c] : 1)) {
                u = 0;
                c++;
            }
        }
        if (!own) {
            cur = c;
            used = u;
        }
    }
    free(idx);
    free(slots);
    return rc;
}

/* "(vector,(node,1,count)...)" over the runs of ranks on one host, the
 * nodes numbered in order of first appearance. */
static char *job_map(root_t *rt, const int *where, int n)
{
    int *node = malloc((size_t)rt->n * sizeof *node), next = 0;
    char *map = malloc(16 + (size_t)n * 32);
    if (!node || !map) {
        free(node);
        free(map);
        return NULL;
    }
    for (int h = 0; h < rt->n; h++)
        node[h] = -1;
    size_t len = (size_t)sprintf(map, "(vector");
    for (int i = 0; i < n;) {
        int run = 1;
        while (i + run < n && where[i + run] == where[i])
            run++;
        if (node[where[i]] < 0)
            node[where[i]] = next++;
        len += (size_t)sprintf(map + len, ",(%d,1,%d)", node[where[i]], run);
        i += run;
    }
    strcpy(map + len, ")");
    free(node);
    return map;
}

static void space_free(rspace_t *s)
{
    for (int i = 0; i < s->n_fresh; i++) {
        free(s->fresh[i].key);
        free(s->fresh[i].value);
    }
    free(s->fresh);
    free(s->place);
    free(s->codes);
    free(s->in);
    free(s->fenced);
    free(s->replied);
    memset(s, 0, sizeof *s);
}

/* A rank's request is complete: place it, hand it to the hosts. */
static void request(root_t *rt, mpiexec_root_spawn_t *sp, int h, int from, int n_blocks)
{
    bkv_list_t *l = &sp->incoming[h];
    char why[512] = "";
    int total = 0;
    for (int k = 0; k < n_blocks; k++)
        total += bkv_int(l, k, "nprocs");
    if (rt->terminating)
        snprintf(why, sizeof why, "spawn: the job is ending");
    else if (n_blocks < 1 || total < 1 || total > MPIEXEC_SPAWN_MAX)
        snprintf(why, sizeof why, "spawn: between 1 and %d processes, not %d", MPIEXEC_SPAWN_MAX,
                 total);
    else if (sp->n_spaces >= MPIEXEC_SPAWN_MAX)
        snprintf(why, sizeof why, "spawn: more than %d spawns in one run", MPIEXEC_SPAWN_MAX);
    rspace_t *s = NULL;
    if (!why[0] && !sp->spaces &&
        !(sp->spaces = calloc(MPIEXEC_SPAWN_MAX, sizeof *sp->spaces)))
        snprintf(why, sizeof why, "spawn: out of memory");
    if (!why[0]) {
        s = &sp->spaces[sp->n_spaces];
        *s = (rspace_t){.origin = h, .from = from, .n = total};
        s->place = calloc((size_t)total, sizeof *s->place);
        s->codes = calloc((size_t)total, sizeof *s->codes);
        s->in = calloc((size_t)rt->n, 1);
        s->fenced = calloc((size_t)rt->n, 1);
        s->replied = calloc((size_t)rt->n, 1);
        if (!s->place || !s->codes || !s->in || !s->fenced || !s->replied)
            snprintf(why, sizeof why, "spawn: out of memory");
    }
    if (!why[0])
        place(rt, l, n_blocks, s->place, why, sizeof why);
    char *map = why[0] ? NULL : job_map(rt, s->place, total);
    if (!why[0] && !map)
        snprintf(why, sizeof why, "spawn: out of memory");
    for (int i = 0; !why[0] && i < total; i++) {
        host_t *ho = &rt->hosts[s->place[i]];
        if (s->in[s->place[i]]++)
            continue;
        s->n_in++;
        /* A host without ranks of the first job gets its proxy now. */
        if (ho->count == 0 && !ho->running && mpiexec_root_start_host(rt, s->place[i]) != TERN_OK)
            snprintf(why, sizeof why, "spawn: cannot start mpiexec on host %.100s", ho->name);
        else if (ho->ctl_fd < 0 && !(ho->running && !ho->said_hello))
            snprintf(why, sizeof why, "spawn: host %.100s has no proxy running any more",
                     ho->name);
    }
    if (why[0]) {
        if (s)
            space_free(s);
        free(map);
        bkv_clear(l);
        reply(rt, h, from, -1, why, NULL);
        return;
    }
    int space = ++sp->n_spaces;
    char kvsname[96], *place_s = malloc((size_t)total * 12 + 1);
    snprintf(kvsname, sizeof kvsname, "%s-s%d", rt->fwd.kvsname, space);
    size_t len = 0;
    for (int i = 0; place_s && i < total; i++)
        len += (size_t)sprintf(place_s + len, "%s%d", i ? "," : "", s->place[i]);
    for (int d = 0; d < rt->n; d++) {
        if (!s->in[d])
            continue;
        for (int i = 0; i < l->n; i++) {
            tern_pmi_line_t line;
            tern_pmi_line_begin(&line, "spawn_kv");
            tern_pmi_line_add_int(&line, "space", space);
            tern_pmi_line_add_int(&line, "block", l->v[i].block);
            tern_pmi_line_add(&line, "key", l->v[i].key);
            tern_pmi_line_add(&line, "value", l->v[i].value);
            mpiexec_root_send(rt, &rt->hosts[d], &line);
        }
        tern_pmi_line_t line;
        tern_pmi_line_begin(&line, "spawn_start");
        tern_pmi_line_add_int(&line, "space", space);
        tern_pmi_line_add(&line, "kvsname", kvsname);
        tern_pmi_line_add(&line, "map", map);
        tern_pmi_line_add(&line, "place", place_s ? place_s : "");
        mpiexec_root_send(rt, &rt->hosts[d], &line);
    }
    free(place_s);
    free(map);
    bkv_clear(l);
    mpiexec_root_spawn_host_ended(rt, -1, NULL); /* a host started after the first job ended */
}

/* A host started its part (or not); once all did, the rank is answered. */
static void spawned(root_t *rt, rspace_t *s, int h, int rc, const char *codes, const char *why)
{
    if (!s->in[h] || s->replied[h] || s->answered)
        return;
    s->replied[h] = 1;
    s->n_replies++;
    if (rc != 0 && !s->why[0])
        snprintf(s->why, sizeof s->why, "%s", why ? why : "spawn failed on a host");
    for (int i = 0; i < s->n; i++) {
        if (s->place[i] != h)
            continue;
        s->codes[i] = codes && *codes ? atoi(codes) : -1;
        codes = codes ? strchr(codes, ',') : NULL;
        codes = codes ? codes + 1 : NULL;
    }
    if (s->n_replies < s->n_in)
        return;
    s->answered = 1;
    char *all = malloc((size_t)s->n * 12 + 1);
    size_t len = 0;
    for (int i = 0; all && i < s->n; i++)
        len += (size_t)sprintf(all + len, "%s%d", i ? "," : "", s->codes[i]);
    int space = (int)(s - rt->spawn->spaces) + 1;
    if (s->why[0])
        for (int d = 0; d < rt->n; d++)
            if (s->in[d]) {
                tern_pmi_line_t line;
                tern_pmi_line_begin(&line, "spawn_kill");
                tern_pmi_line_add_int(&line, "space", space);
                mpiexec_root_send(rt, &rt->hosts[d], &line);
            }
    reply(rt, s->origin, s->from, s->why[0] ? -1 : 0, s->why[0] ? s->why : NULL, all);
    free(all);
}

/* The new job's keys and barrier, as root.c's for the first job. */
static void put(root_t *rt, rspace_t *s, const tern_pmi_msg_t *msg)
{
    const char *k = tern_pmi_msg_get(msg, "key"), *v = tern_pmi_msg_get(msg, "value");
    if (!k || !v)
        return;
    if (s->n_fresh == s->cap_fresh) {
        int cap = s->cap_fresh ? 2 * s->cap_fresh : 64;
        kv_t *f = realloc(s->fresh, (size_t)cap * sizeof *f);
        if (!f) {
            fprintf(stderr, "mpiexec: out of memory\n");
            mpiexec_root_fail(rt, 1);
            return;
        }
        s->fresh = f;
        s->cap_fresh = cap;
    }
    s->fresh[s->n_fresh].key = strdup(k);
    s->fresh[s->n_fresh].value = strdup(v);
    s->n_fresh++;
}

static void fence(root_t *rt, rspace_t *s, int h)
{
    if (!s->in[h] || s->fenced[h])
        return;
    s->fenced[h] = 1;
    if (++s->n_fenced < s->n_in)
        return;
    int space = (int)(s - rt->spawn->spaces) + 1;
    for (int d = 0; d < rt->n; d++) {
        if (!s->in[d])
            continue;
        for (int i = 0; i < s->n_fresh; i++) {
            tern_pmi_line_t line;
            tern_pmi_line_begin(&line, "put");
            tern_pmi_line_add_int(&line, "space", space);
            tern_pmi_line_add(&line, "key", s->fresh[i].key ? s->fresh[i].key : "");
            tern_pmi_line_add(&line, "value", s->fresh[i].value ? s->fresh[i].value : "");
            mpiexec_root_send(rt, &rt->hosts[d], &line);
        }
        tern_pmi_line_t line;
        tern_pmi_line_begin(&line, "release");
        tern_pmi_line_add_int(&line, "space", space);
        mpiexec_root_send(rt, &rt->hosts[d], &line);
        s->fenced[d] = 0;
    }
    for (int i = 0; i < s->n_fresh; i++) {
        free(s->fresh[i].key);
        free(s->fresh[i].value);
    }
    s->n_fresh = 0;
    s->n_fenced = 0;
}

int mpiexec_root_spawn_message(root_t *rt, host_t *ho, const tern_pmi_msg_t *msg)
{
    int space = 0, h = (int)(ho - rt->hosts);
    tern_pmi_msg_get_int(msg, "space", &space);
    int is_spawn = strncmp(msg->cmd, "spawn", 5) == 0 || strcmp(msg->cmd, "name") == 0;
    if (!is_spawn && space == 0)
        return 0;
    mpiexec_root_spawn_t *sp = state(rt);
    if (!sp) {
        fprintf(stderr, "mpiexec: out of memory\n");
        mpiexec_root_fail(rt, 1);
        return 1;
    }
    if (strcmp(msg->cmd, "name") == 0) {
        /* The name service of the whole run, for every host's ranks. */
        const char *op = tern_pmi_msg_get(msg, "op");
        tern_pmi_msg_t req = *msg;
        req.cmd = op ? op : "lookup_name";
        tern_pmi_line_t line;
        tern_pmi_line_begin(&line, "name_result");
        tern_pmi_line_add(&line, "op", req.cmd);
        tern_pmi_line_add(&line, "from", tern_pmi_msg_get(msg, "from") ? tern_pmi_msg_get(msg, "from") : "-1");
        mpiexec_names_apply(&sp->names, &req, &line);
        mpiexec_root_send(rt, ho, &line);
        return 1;
    }
    if (strcmp(msg->cmd, "spawn_kv") == 0) {
        bkv_list_t *l = &sp->incoming[h];
        const char *k = tern_pmi_msg_get(msg, "key"), *v = tern_pmi_msg_get(msg, "value");
        int block = -1;
        tern_pmi_msg_get_int(msg, "block", &block);
        if (!k || !v || block < 0)
            return 1;
        if (l->n == l->cap) {
            int cap = l->cap ? 2 * l->cap : 32;
            bkv_t *nv = realloc(l->v, (size_t)cap * sizeof *nv);
            if (!nv)
                return 1;
            l->v = nv;
            l->cap = cap;
        }
        l->v[l->n++] = (bkv_t){block, strdup(k), strdup(v)};
        if (!l->v[l->n - 1].key || !l->v[l->n - 1].value) {
            free(l->v[l->n - 1].key);
            free(l->v[l->n - 1].value);
            l->n--;
        }
        return 1;
    }
    if (strcmp(msg->cmd, "spawn") == 0) {
        int from = -1, blocks = 0;
        tern_pmi_msg_get_int(msg, "from", &from);
        tern_pmi_msg_get_int(msg, "blocks", &blocks);
        request(rt, sp, h, from, blocks);
        return 1;
    }
    if (space < 1 || space > sp->n_spaces)
        return 1; /* nothing of ours: dropped */
    rspace_t *s = &sp->spaces[space - 1];
    if (strcmp(msg->cmd, "spawned") == 0)
        spawned(rt, s, h, tern_pmi_msg_rc(msg), tern_pmi_msg_get(msg, "codes"),
                tern_pmi_msg_get(msg, "msg"));
    else if (strcmp(msg->cmd, "put") == 0)
        put(rt, s, msg);
    else if (strcmp(msg->cmd, "fence") == 0)
        fence(rt, s, h);
    return 1;
}

void mpiexec_root_spawn_host_ended(root_t *rt, int h, const char *why)
{
    mpiexec_root_spawn_t *sp = rt->spawn;
    /* Spawns still waiting for that host's answer fail. */
    for (int k = 0; h >= 0 && sp && k < sp->n_spaces; k++) {
        rspace_t *s = &sp->spaces[k];
        if (why && s->in[h] && !s->answered) {
            char text[400];
            snprintf(text, sizeof text, "spawn: %s", why);
            spawned(rt, s, h, -1, NULL, text);
        }
    }
    /* Once the first job's hosts are done, a host started for a spawn may
     * end when its processes have. */
    for (int d = 0; d < rt->n_ranked; d++)
        if (rt->hosts[d].running)
            return;
    for (int d = rt->n_ranked; d < rt->n; d++) {
        host_t *ho = &rt->hosts[d];
        if (ho->running && !ho->told_finish) {
            tern_pmi_line_t line;
            tern_pmi_line_begin(&line, "finish");
            mpiexec_root_send(rt, ho, &line);
            ho->told_finish = 1;
        }
    }
}

void mpiexec_root_spawn_free(root_t *rt)
{
    mpiexec_root_spawn_t *sp = rt->spawn;
    if (!sp)
        return;
    for (int h = 0; h < rt->n; h++)
        bkv_clear(&sp->incoming[h]);
    for (int k = 0; sp->spaces && k < sp->n_spaces; k++)
        space_free(&sp->spaces[k]);
    mpiexec_kvs_free(sp->names);
    free(sp->incoming);
    free(sp->spaces);
    free(sp);
    rt->spawn = NULL;
}
