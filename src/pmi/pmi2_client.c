/* PMI-2 wire client (MPICH's pmi-2.0.txt) over PMI_FD or PMI_PORT: Slurm's
 * srun --mpi=pmi2 and MPICH's Hydra. The session opens with a PMI-1 line
 * asking for version 2; a manager that refuses it (Tern's mpiexec) makes
 * init return TERN_ERR_NOT_SUPPORTED with the connection still open, so the
 * dispatcher can go on with PMI-1. */
#include "pmi/pmi_flavour.h"
#include "pmi/pmi_mapping.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* pmi-2.0.txt's limits; Slurm and Hydra use these. */
enum { PMI2_KEY_MAX = 64, PMI2_VALUE_MAX = 1024 };

static tern_pmi_info_t *info;

/* Sends a request and waits for "<cmd>-response"; a nonzero rc in it
 * gives TERN_ERR_NOT_FOUND (the manager's word for "no such key" too). */
static tern_status_t call(tern_pmi_line_t *line, const char *cmd, tern_pmi_msg_t *msg_p)
{
    tern_status_t st = tern_pmi_conn_call(line, TERN_PMI_WIRE2, msg_p);
    if (st != TERN_OK)
        return st;
    size_t n = strlen(cmd);
    if (strncmp(msg_p->cmd, cmd, n) != 0 || strcmp(msg_p->cmd + n, "-response") != 0) {
        tern_error("PMI-2: expected %s-response from the process manager, got %s", cmd,
                   msg_p->cmd);
        return TERN_ERR_PMI;
    }
    if (tern_pmi_msg_rc(msg_p) != 0) {
        const char *why = tern_pmi_msg_get(msg_p, "errmsg");
        tern_debug("PMI-2: %s failed: %s", cmd, why ? why : "no reason given");
        return TERN_ERR_NOT_FOUND;
    }
    return TERN_OK;
}

static tern_status_t simple_call(const char *cmd, tern_pmi_msg_t *msg_p)
{
    tern_pmi_line_t line;
    tern_pmi2_line_begin(&line, cmd);
    return call(&line, cmd, msg_p);
}

static tern_status_t need_int(const tern_pmi_msg_t *msg, const char *key, int *value_p)
{
    if (tern_pmi_msg_get_int(msg, key, value_p) != TERN_OK) {
        tern_error("PMI-2: fullinit-response without a valid %s", key);
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

static tern_status_t pmi2_init(tern_pmi_info_t *info_p)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    tern_status_t st;

    info = info_p;
    if ((st = tern_pmi_conn_open()) != TERN_OK)
        return st;
    tern_pmi_line_begin(&line, "init");
    tern_pmi_line_add_int(&line, "pmi_version", 2);
    tern_pmi_line_add_int(&line, "pmi_subversion", 0);
    if (tern_pmi_conn_call(&line, TERN_PMI_WIRE1, &msg) != TERN_OK)
        return TERN_ERR_PMI;
    int version = 0;
    tern_pmi_msg_get_int(&msg, "pmi_version", &version);
    if (strcmp(msg.cmd, "response_to_init") != 0 || tern_pmi_msg_rc(&msg) != 0 || version != 2) {
        tern_debug("PMI-2: the process manager refused version 2");
        return TERN_ERR_NOT_SUPPORTED;
    }

    tern_pmi2_line_begin(&line, "fullinit");
    if (getenv("PMI_JOBID")) /* Slurm insists on it */
        tern_pmi2_line_add(&line, "pmijobid", getenv("PMI_JOBID"));
    int rank;
    if (getenv("PMI_ID") && tern_pmi_env_int("PMI_ID", &rank) == TERN_OK)
        tern_pmi2_line_add_int(&line, "pmiid", rank);
    else if (tern_pmi_env_int("PMI_RANK", &rank) == TERN_OK)
        tern_pmi2_line_add_int(&line, "pmirank", rank);
    tern_pmi2_line_add(&line, "threaded", "FALSE");
    if ((st = call(&line, "fullinit", &msg)) != TERN_OK) {
        tern_error("PMI-2: the process manager refused fullinit");
        return TERN_ERR_PMI;
    }
    if ((st = need_int(&msg, "rank", &info->rank)) != TERN_OK ||
        (st = need_int(&msg, "size", &info->size)) != TERN_OK)
        return st;
    info->appnum = 0;
    tern_pmi_msg_get_int(&msg, "appnum", &info->appnum);
    if (info->appnum < 0) /* Slurm sends -1 */
        info->appnum = 0;
    info->universe_size = info->size;
    info->key_max = PMI2_KEY_MAX;
    info->value_max = PMI2_VALUE_MAX;

    if (simple_call("job-getid", &msg) != TERN_OK)
        return TERN_ERR_PMI;
    const char *jobid = tern_pmi_msg_get(&msg, "jobid");
    if (!jobid || !*jobid || strlen(jobid) >= sizeof info->kvsname) {
        tern_error("PMI-2: the process manager gave no usable job id");
        return TERN_ERR_PMI;
    }
    strcpy(info->kvsname, jobid);

    /* Optional: the universe size, as a job attribute. */
    tern_pmi2_line_begin(&line, "info-getjobattr");
    tern_pmi2_line_add(&line, "key", "universeSize");
    if (call(&line, "info-getjobattr", &msg) == TERN_OK) {
        const char *found = tern_pmi_msg_get(&msg, "found");
        if (found && strcasecmp(found, "true") == 0)
            tern_pmi_msg_get_int(&msg, "value", &info->universe_size);
    }
    return TERN_OK;
}

static tern_status_t pmi2_put(const char *key, const char *value)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    tern_pmi2_line_begin(&line, "kvs-put");
    tern_pmi2_line_add(&line, "key", key);
    tern_pmi2_line_add(&line, "value", value);
    if (call(&line, "kvs-put", &msg) != TERN_OK) {
        tern_error("PMI-2: put of key %s failed", key);
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

static tern_status_t pmi2_fence(void)
{
    tern_pmi_msg_t msg;
    return simple_call("kvs-fence", &msg) == TERN_OK ? TERN_OK : TERN_ERR_PMI;
}

static tern_status_t pmi2_get(const char *key, char *value, size_t value_len)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    tern_pmi2_line_begin(&line, "kvs-get");
    tern_pmi2_line_add(&line, "jobid", info->kvsname);
    tern_pmi2_line_add_int(&line, "srcid", -1);
    tern_pmi2_line_add(&line, "key", key);
    tern_status_t st = call(&line, "kvs-get", &msg);
    if (st != TERN_OK)
        return st;
    const char *found = tern_pmi_msg_get(&msg, "found");
    const char *v = tern_pmi_msg_get(&msg, "value");
    if (!v || (found && strcasecmp(found, "true") != 0))
        return TERN_ERR_NOT_FOUND;
    if (strlen(v) >= value_len)
        return TERN_ERR_TRUNCATE;
    strcpy(value, v);
    return TERN_OK;
}

static tern_status_t pmi2_node_map(int *node_of_rank)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    tern_pmi2_line_begin(&line, "info-getjobattr");
    tern_pmi2_line_add(&line, "key", "PMI_process_mapping");
    tern_status_t st = call(&line, "info-getjobattr", &msg);
    if (st != TERN_OK)
        return TERN_ERR_NOT_SUPPORTED;
    const char *found = tern_pmi_msg_get(&msg, "found");
    const char *map = tern_pmi_msg_get(&msg, "value");
    if (!map || (found && strcasecmp(found, "true") != 0))
        return TERN_ERR_NOT_SUPPORTED;
    if (tern_pmi_mapping_parse(map, info->size, node_of_rank) != TERN_OK) {
        tern_debug("PMI-2: unusable PMI_process_mapping '%s'", map);
        return TERN_ERR_NOT_SUPPORTED;
    }
    return TERN_OK;
}

static tern_status_t pmi2_finalize(void)
{
    tern_pmi_msg_t msg;
    tern_status_t st = simple_call("finalize", &msg);
    tern_pmi_conn_close();
    return st == TERN_OK ? TERN_OK : TERN_ERR_PMI;
}

static void pmi2_abort(int code, const char *msg)
{
    (void)code; /* PMI-2 carries no exit code; the rank's own exit gives it */
    tern_pmi_line_t line;
    tern_pmi2_line_begin(&line, "abort");
    tern_pmi2_line_add(&line, "isworld", "TRUE");
    if (*msg)
        tern_pmi2_line_add(&line, "msg", msg);
    (void)tern_pmi_conn_send_line(&line, TERN_PMI_WIRE2);
}

const tern_pmi_flavour_t tern_pmi2_flavour = {
    .name = "pmi2",
    .init = pmi2_init,
    .put = pmi2_put,
    .fence = pmi2_fence,
    .get = pmi2_get,
    .node_map = pmi2_node_map,
    .finalize = pmi2_finalize,
    .abort = pmi2_abort,
};
