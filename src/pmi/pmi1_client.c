/* PMI-1 "simple" wire client (pmi_wire.h) over PMI_FD or PMI_PORT: Tern's
 * mpiexec, MPICH's Hydra, Slurm's srun --mpi=pmi2 (which also speaks
 * PMI-1). */
#include "pmi/pmi_flavour.h"
#include "pmi/pmi_mapping.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static tern_pmi_info_t *info;

/* Sends a query and waits for the reply named `expect`. */
static tern_status_t call(tern_pmi_line_t *line, const char *expect, tern_pmi_msg_t *msg_p)
{
    tern_status_t st = tern_pmi_conn_call(line, TERN_PMI_WIRE1, msg_p);
    if (st != TERN_OK)
        return st;
    if (strcmp(msg_p->cmd, expect) != 0) {
        tern_error("PMI: expected %s from the process manager, got %s", expect, msg_p->cmd);
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

static tern_status_t simple_call(const char *cmd, const char *expect, tern_pmi_msg_t *msg_p)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, cmd);
    return call(&line, expect, msg_p);
}

/* With PMI_PORT and PMI_ID the rank comes from the server: "initack
 * pmiid=<PMI_ID>". Newer servers answer with rank and size in the initack;
 * older ones send "set size=", "set rank=", "set debug=" lines after it. */
static tern_status_t initack(void)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    int have_rank = 0, have_size = 0;

    tern_pmi_line_begin(&line, "initack");
    tern_pmi_line_add(&line, "pmiid", getenv("PMI_ID"));
    tern_status_t st = call(&line, "initack", &msg);
    if (st != TERN_OK)
        return st;
    have_rank = tern_pmi_msg_get_int(&msg, "rank", &info->rank) == TERN_OK;
    have_size = tern_pmi_msg_get_int(&msg, "size", &info->size) == TERN_OK;
    while (!(have_rank && have_size)) {
        if ((st = tern_pmi_conn_recv1(&msg)) != TERN_OK)
            return st;
        if (strcmp(msg.cmd, "set") != 0)
            return TERN_ERR_PMI;
        if (tern_pmi_msg_get_int(&msg, "rank", &info->rank) == TERN_OK)
            have_rank = 1;
        if (tern_pmi_msg_get_int(&msg, "size", &info->size) == TERN_OK)
            have_size = 1;
    }
    /* Old servers end the sequence with "set debug=". */
    if (tern_pmi_msg_get(&msg, "debug") == NULL && strcmp(msg.cmd, "set") == 0) {
        if ((st = tern_pmi_conn_recv1(&msg)) != TERN_OK)
            return st;
    }
    return TERN_OK;
}

static tern_status_t pmi1_init(tern_pmi_info_t *info_p)
{
    tern_pmi_msg_t msg;
    tern_status_t st;

    info = info_p;
    if ((st = tern_pmi_conn_open()) != TERN_OK)
        return st;
    if (tern_pmi_conn_is_port() && getenv("PMI_ID")) {
        if ((st = initack()) != TERN_OK)
            return st;
    } else if (tern_pmi_env_int("PMI_RANK", &info->rank) != TERN_OK ||
               tern_pmi_env_int("PMI_SIZE", &info->size) != TERN_OK) {
        tern_error("PMI: PMI_%s is set but PMI_RANK or PMI_SIZE is not",
                   tern_pmi_conn_is_port() ? "PORT" : "FD");
        return TERN_ERR_PMI;
    }

    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "init");
    tern_pmi_line_add_int(&line, "pmi_version", 1);
    tern_pmi_line_add_int(&line, "pmi_subversion", 1);
    if ((st = call(&line, "response_to_init", &msg)) != TERN_OK)
        return st;
    if (tern_pmi_msg_rc(&msg) != 0) {
        tern_error("PMI: the process manager refused PMI version 1.1");
        return TERN_ERR_PMI;
    }

    int key_max = 64, value_max = 1024;
    if ((st = simple_call("get_maxes", "maxes", &msg)) != TERN_OK)
        return st;
    tern_pmi_msg_get_int(&msg, "keylen_max", &key_max);
    tern_pmi_msg_get_int(&msg, "vallen_max", &value_max);
    info->key_max = key_max > 0 ? (size_t)key_max : 64;
    info->value_max = value_max > 16 ? (size_t)value_max : 1024;

    if ((st = simple_call("get_appnum", "appnum", &msg)) != TERN_OK)
        return st;
    info->appnum = 0;
    tern_pmi_msg_get_int(&msg, "appnum", &info->appnum);

    if ((st = simple_call("get_universe_size", "universe_size", &msg)) != TERN_OK)
        return st;
    info->universe_size = info->size;
    tern_pmi_msg_get_int(&msg, "size", &info->universe_size);

    if ((st = simple_call("get_my_kvsname", "my_kvsname", &msg)) != TERN_OK)
        return st;
    const char *kvsname = tern_pmi_msg_get(&msg, "kvsname");
    if (!kvsname || strlen(kvsname) >= sizeof info->kvsname) {
        tern_error("PMI: the process manager gave no usable kvsname");
        return TERN_ERR_PMI;
    }
    strcpy(info->kvsname, kvsname);
    /* vallen_max bounds the value, but some managers (Slurm) also read a
     * whole request line into a buffer of that size: keep put lines
     * within it. */
    size_t overhead = strlen("cmd=put kvsname= key= value=\n") + strlen(kvsname) + info->key_max;
    if (info->value_max > overhead + 64)
        info->value_max -= overhead;
    return TERN_OK;
}

static tern_status_t pmi1_put(const char *key, const char *value)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "put");
    tern_pmi_line_add(&line, "kvsname", info->kvsname);
    tern_pmi_line_add(&line, "key", key);
    tern_pmi_line_add(&line, "value", value);
    tern_status_t st = call(&line, "put_result", &msg);
    if (st != TERN_OK)
        return st;
    if (tern_pmi_msg_rc(&msg) != 0) {
        const char *why = tern_pmi_msg_get(&msg, "msg");
        tern_error("PMI: put of key %s failed: %s", key, why ? why : "no reason given");
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

static tern_status_t pmi1_get(const char *key, char *value, size_t value_len)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "get");
    tern_pmi_line_add(&line, "kvsname", info->kvsname);
    tern_pmi_line_add(&line, "key", key);
    tern_status_t st = call(&line, "get_result", &msg);
    if (st != TERN_OK)
        return st;
    const char *found = tern_pmi_msg_get(&msg, "found");
    const char *v = tern_pmi_msg_get(&msg, "value");
    if (tern_pmi_msg_rc(&msg) != 0 || !v || (found && strcasecmp(found, "true") != 0))
        return TERN_ERR_NOT_FOUND;
    if (strlen(v) >= value_len)
        return TERN_ERR_TRUNCATE;
    strcpy(value, v);
    return TERN_OK;
}

static tern_status_t pmi1_fence(void)
{
    tern_pmi_msg_t msg;
    return simple_call("barrier_in", "barrier_out", &msg);
}

/* Hydra, Slurm and Tern's mpiexec publish the map as a job-wide key. */
static tern_status_t pmi1_node_map(int *node_of_rank)
{
    size_t len = info->value_max + 1;
    char *map = malloc(len);
    if (!map)
        return TERN_ERR_NOMEM;
    tern_status_t st = pmi1_get("PMI_process_mapping", map, len);
    if (st == TERN_OK && tern_pmi_mapping_parse(map, info->size, node_of_rank) != TERN_OK) {
        tern_debug("PMI: unusable PMI_process_mapping '%s'", map);
        st = TERN_ERR_NOT_SUPPORTED;
    }
    free(map);
    if (st == TERN_ERR_NOT_FOUND || st == TERN_ERR_TRUNCATE)
        st = TERN_ERR_NOT_SUPPORTED;
    return st;
}

static tern_status_t pmi1_finalize(void)
{
    tern_pmi_msg_t msg;
    tern_status_t st = simple_call("finalize", "finalize_ack", &msg);
    tern_pmi_conn_close();
    return st;
}

static void pmi1_abort(int code, const char *msg)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "abort");
    tern_pmi_line_add_int(&line, "exitcode", code);
    if (*msg)
        tern_pmi_line_add(&line, "message", msg);
    if (tern_pmi_abort_scope)
        tern_pmi_line_add(&line, "ranks", tern_pmi_abort_scope);
    (void)tern_pmi_conn_send_line(&line, TERN_PMI_WIRE1);
}

/* A raw "key=value" line of a multi-line command (values are not
 * escaped there: they run to the end of the line, as MPICH's client sends
 * them). */
static tern_status_t mline(const char *key, const char *value)
{
    if (strchr(value, '\n'))
        return tern_status_detail(TERN_ERR_ARG, "spawn: a value with a newline (%s)", key);
    size_t len = strlen(key) + strlen(value) + 2;
    char *buf = malloc(len + 1);
    if (!buf)
        return TERN_ERR_NOMEM;
    snprintf(buf, len + 1, "%s=%s\n", key, value);
    tern_status_t st = tern_pmi_conn_send(buf, len);
    free(buf);
    return st;
}

static tern_status_t mline_int(const char *key, long v)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", v);
    return mline(key, num);
}

/* MPICH's PMI-1 spawn: one "mcmd=spawn ... endcmd" block per command, then
 * one spawn_result for all. Tern's mpiexec adds errcodes=<comma list>. */
static tern_status_t pmi1_spawn(int n_cmds, const tern_pmi_spawn_cmd_t *cmds,
                                const char *preput_key, const char *preput_value, int *errcodes)
{
    tern_status_t st = TERN_OK;
    int total = 0;
    for (int c = 0; c < n_cmds; c++)
        total += cmds[c].maxprocs;
    for (int c = 0; c < n_cmds && st == TERN_OK; c++) {
        const tern_pmi_spawn_cmd_t *cmd = &cmds[c];
        char key[32];
        int argc = 0;
        while (cmd->argv && cmd->argv[argc])
            argc++;
        st = tern_pmi_conn_send("mcmd=spawn\n", 11);
        if (st == TERN_OK) st = mline_int("nprocs", cmd->maxprocs);
        if (st == TERN_OK) st = mline("execname", cmd->command);
        if (st == TERN_OK) st = mline_int("totspawns", n_cmds);
        if (st == TERN_OK) st = mline_int("spawnssofar", c + 1);
        if (st == TERN_OK) st = mline_int("argcnt", argc);
        for (int a = 0; a < argc && st == TERN_OK; a++) {
            snprintf(key, sizeof key, "arg%d", a + 1);
            st = mline(key, cmd->argv[a]);
        }
        if (st == TERN_OK) st = mline_int("preput_num", 1);
        if (st == TERN_OK) st = mline("preput_key_0", preput_key);
        if (st == TERN_OK) st = mline("preput_val_0", preput_value);
        if (st == TERN_OK) st = mline_int("info_num", cmd->n_info);
        for (int i = 0; i < cmd->n_info && st == TERN_OK; i++) {
            snprintf(key, sizeof key, "info_key_%d", i);
            st = mline(key, cmd->info_keys[i]);
            snprintf(key, sizeof key, "info_val_%d", i);
            if (st == TERN_OK)
                st = mline(key, cmd->info_values[i]);
        }
        if (st == TERN_OK) st = tern_pmi_conn_send("endcmd\n", 7);
    }
    tern_pmi_msg_t msg;
    if (st == TERN_OK)
        st = tern_pmi_conn_recv1(&msg);
    if (st != TERN_OK)
        return st == TERN_ERR_ARG || st == TERN_ERR_NOMEM ? st : TERN_ERR_PMI;
    if (strcmp(msg.cmd, "spawn_result") != 0)
        return tern_status_detail(TERN_ERR_PMI, "expected spawn_result from the process "
                                  "manager, got %s", msg.cmd);
    int rc = tern_pmi_msg_rc(&msg);
    const char *codes = tern_pmi_msg_get(&msg, "errcodes");
    for (int i = 0; i < total; i++)
        errcodes[i] = rc ? -1 : 0;
    for (int i = 0; codes && *codes && i < total; i++) {
        errcodes[i] = (int)strtol(codes, (char **)&codes, 10);
        if (*codes == ',')
            codes++;
    }
    if (rc == 0)
        return TERN_OK;
    const char *why = tern_pmi_msg_get(&msg, "msg");
    return tern_status_detail(TERN_ERR_SPAWN, "%s", why ? why : "the process manager refused");
}

/* MPICH's PMI-1 name service: publish_name service port -> publish_result,
 * unpublish_name service -> unpublish_result, lookup_name service ->
 * lookup_result port. */
static tern_status_t names_call(const char *cmd, const char *expect, const char *service,
                                const char *port, tern_pmi_msg_t *msg)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, cmd);
    tern_pmi_line_add(&line, "service", service);
    if (port)
        tern_pmi_line_add(&line, "port", port);
    return call(&line, expect, msg);
}

static tern_status_t pmi1_publish(const char *service, const char *port)
{
    tern_pmi_msg_t msg;
    tern_status_t st = names_call("publish_name", "publish_result", service, port, &msg);
    if (st == TERN_OK && tern_pmi_msg_rc(&msg) != 0)
        st = tern_status_detail(TERN_ERR_SERVICE, "cannot publish service '%s': %s", service,
                                tern_pmi_msg_get(&msg, "msg") ? tern_pmi_msg_get(&msg, "msg")
                                                              : "refused");
    return st;
}

static tern_status_t pmi1_unpublish(const char *service)
{
    tern_pmi_msg_t msg;
    tern_status_t st = names_call("unpublish_name", "unpublish_result", service, NULL, &msg);
    if (st == TERN_OK && tern_pmi_msg_rc(&msg) != 0)
        st = tern_status_detail(TERN_ERR_SERVICE, "service '%s' is not published", service);
    return st;
}

static tern_status_t pmi1_lookup(const char *service, char *port, size_t port_len)
{
    tern_pmi_msg_t msg;
    tern_status_t st = names_call("lookup_name", "lookup_result", service, NULL, &msg);
    if (st != TERN_OK)
        return st;
    const char *v = tern_pmi_msg_get(&msg, "port");
    if (tern_pmi_msg_rc(&msg) != 0 || !v)
        return tern_status_detail(TERN_ERR_NAME, "service '%s' is not published", service);
    if (strlen(v) >= port_len)
        return tern_status_detail(TERN_ERR_NAME, "the port of service '%s' is too long", service);
    strcpy(port, v);
    return TERN_OK;
}

const tern_pmi_flavour_t tern_pmi1_flavour = {
    .publish = pmi1_publish,
    .unpublish = pmi1_unpublish,
    .lookup = pmi1_lookup,
    .spawn = pmi1_spawn,
    .name = "pmi1",
    .init = pmi1_init,
    .put = pmi1_put,
    .fence = pmi1_fence,
    .get = pmi1_get,
    .node_map = pmi1_node_map,
    .finalize = pmi1_finalize,
    .abort = pmi1_abort,
};
