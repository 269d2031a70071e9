/* MPI_Comm_spawn(_multiple) and MPI_Comm_get_parent. The root opens a
 * port and asks the process manager (tern_pmi_spawn) to start the new job
 * with the port name preset in the job's key-value space under
 * PARENT_ROOT_PORT_NAME (MPICH's name, so Hydra serves it the same way);
 * it bcasts the outcome, and on success the parents accept on the port
 * while the children, inside MPI_Init, connect to it over their world
 * (tern_comm_parent_init): the intercommunicator joins both. A spawn the
 * process manager refuses, or whose processes do not all start, returns
 * TERN_ERR_SPAWN on every parent, with errcodes filled. */
#include "core/dynamic/comm_dynamic.h"
#include "core/comm/comm_exchange.h"
#include "core/info/info.h"
#include "core/runtime/runtime.h"
#include "base/log.h"
#include "pmi/pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARENT_PORT_KEY "PARENT_ROOT_PORT_NAME"

static MPI_Comm parent_handle = MPI_COMM_NULL;
static const tern_comm_t *parent_obj;

/* The root's checks of the arguments only it reads, and the total count. */
static tern_status_t check_root_args(int count, char *commands[], const int maxprocs[],
                                     const MPI_Info infos[], int *total_p)
{
    long total = 0;
    if (count <= 0)
        return tern_status_detail(TERN_ERR_COUNT, "count must be positive (is %d)", count);
    if (!maxprocs || !infos)
        return tern_status_detail(TERN_ERR_ARG, "array_of_%s is NULL at the root",
                                  maxprocs ? "info" : "maxprocs");
    for (int c = 0; c < count; c++) {
        if (!commands || !commands[c] || !commands[c][0])
            return tern_status_detail(TERN_ERR_ARG, "command %d is %s", c,
                                      commands && commands[c] ? "empty" : "NULL");
        if (maxprocs[c] <= 0)
            return tern_status_detail(TERN_ERR_ARG, "maxprocs[%d] must be positive (is %d)", c,
                                      maxprocs[c]);
        if (infos[c] != MPI_INFO_NULL && !tern_info_lookup(infos[c]))
            return tern_status_detail(TERN_ERR_ARG, "info[%d] is not a valid info object", c);
        total += maxprocs[c];
    }
    if (total > TERN_DYN_PEERS_MAX)
        return tern_status_detail(TERN_ERR_LIMIT, "%ld processes asked for, at most %d",
                                  total, TERN_DYN_PEERS_MAX);
    *total_p = (int)total;
    return TERN_OK;
}

/* At root: starts the processes; pmi_codes get each one's 0 or -1. */
static tern_status_t root_spawn(int count, char *commands[], char **argvs[],
                                const int maxprocs[], const MPI_Info infos[], const char *port,
                                int *pmi_codes)
{
    tern_pmi_spawn_cmd_t *cmds = calloc((size_t)count, sizeof *cmds);
    if (!cmds)
        return TERN_ERR_NOMEM;
    for (int c = 0; c < count; c++) {
        const tern_info_t *info = infos[c] == MPI_INFO_NULL ? NULL : tern_info_lookup(infos[c]);
        cmds[c] = (tern_pmi_spawn_cmd_t){
            .command = commands[c],
            .argv = argvs ? argvs[c] : NULL,
            .maxprocs = maxprocs[c],
            .n_info = info ? info->n : 0,
            .info_keys = info ? (const char *const *)info->keys : NULL,
            .info_values = info ? (const char *const *)info->vals : NULL,
        };
    }
    tern_status_t st = tern_pmi_spawn(count, cmds, PARENT_PORT_KEY, port, pmi_codes);
    free(cmds);
    if (st == TERN_ERR_NOT_SUPPORTED) {
        char why[256]; /* the detail's own buffer is rewritten below */
        const char *d = tern_status_take_detail(st);
        snprintf(why, sizeof why, "%s", d ? d : "the process manager cannot spawn");
        st = tern_status_detail(TERN_ERR_SPAWN, "%s", why);
    }
    return st;
}

tern_status_t tern_comm_spawn(tern_comm_t *comm, int root, int count, char *commands[],
                              char **argvs[], const int maxprocs[], const MPI_Info infos[],
                              MPI_Comm *intercomm, int errcodes[])
{
    *intercomm = MPI_COMM_NULL;
    /* The outcome the root bcasts: its status and, per process, 0 or -1. */
    struct {
        int32_t status;
        int32_t total;
        int32_t port_tag; /* the call's identity (tern_comm_dyn_join) */
    } out = {TERN_OK, 0, 0};
    int *codes = NULL;
    char port[MPI_MAX_PORT_NAME] = "";
    char why[256] = "";
    if (comm->rank == root) {
        tern_status_t st = check_root_args(count, commands, maxprocs, infos, &out.total);
        if (st == TERN_OK && !(codes = calloc((size_t)out.total, sizeof *codes)))
            st = TERN_ERR_NOMEM;
        if (st == TERN_OK)
            st = tern_port_open(port);
        if (st == TERN_OK)
            st = root_spawn(count, commands, argvs, maxprocs, infos, port, codes);
        if (st != TERN_OK) {
            const char *d = tern_status_take_detail(st);
            snprintf(why, sizeof why, "%s", d ? d : tern_status_string(st));
        }
        out.status = (int32_t)st;
        out.port_tag = tern_port_tag(port);
        if (st != TERN_OK && st != TERN_ERR_SPAWN)
            out.total = 0; /* nothing was started: no codes to send */
    }
    /* The outcome first, on the fixed tag; the rest of the call on tags of
     * its port (TERN_XTAG_DYN_CALL), so spawns that threads run at once on
     * one communicator (MPICH's th_taskmanager) do not cross: whichever
     * outcome a rank's thread takes, it follows that spawn to the end. */
    tern_xchg_t x = tern_xchg_over(comm, TERN_XTAG_SPAWN);
    tern_status_t st = tern_xchg_bcast(&x, root, &out, sizeof out);
    if (st == TERN_OK && out.total > 0 && !codes && !(codes = calloc((size_t)out.total, sizeof *codes)))
        st = TERN_ERR_NOMEM;
    x.tag = TERN_XTAG_DYN_CALL(out.port_tag) - 4;
    if (st == TERN_OK && out.total > 0)
        st = tern_xchg_bcast(&x, root, codes, (size_t)out.total * sizeof *codes);
    x.tag = TERN_XTAG_DYN_CALL(out.port_tag) - 5;
    if (st == TERN_OK && out.status != TERN_OK)
        st = tern_xchg_bcast(&x, root, why, sizeof why);
    if (st == TERN_OK && errcodes)
        for (int i = 0; i < out.total; i++)
            errcodes[i] = codes[i] == 0 && out.status == TERN_OK ? MPI_SUCCESS : MPI_ERR_SPAWN;
    free(codes);
    if (st != TERN_OK)
        return st;
    if (out.status != TERN_OK)
        return tern_status_detail((tern_status_t)out.status, "%s", why);
    tern_comm_t *ic;
    st = tern_comm_dyn_join(comm, root, 1, port, out.port_tag, 0, &ic);
    if (st == TERN_OK)
        *intercomm = ic->handle;
    return st;
}

tern_status_t tern_comm_parent_init(void)
{
    const char *spawned = getenv("PMI_SPAWNED");
    if (!spawned || strcmp(spawned, "1") != 0)
        return TERN_OK;
    char port[MPI_MAX_PORT_NAME];
    tern_status_t st = tern_pmi_get(PARENT_PORT_KEY, port, sizeof port);
    if (st == TERN_ERR_NOT_FOUND)
        return TERN_OK; /* started by a process manager's own means */
    if (st != TERN_OK)
        return st;
    tern_comm_t *world = tern_comm_lookup(MPI_COMM_WORLD), *ic;
    st = tern_comm_dyn_join(world, 0, 0, port, tern_port_tag(port), 0, &ic);
    if (st != TERN_OK) {
        char why[256]; /* the detail's own buffer is rewritten below */
        const char *d = tern_status_take_detail(st);
        snprintf(why, sizeof why, "%s", d ? d : tern_status_string(st));
        return tern_status_detail(st, "cannot connect to the parents at %s: %s", port, why);
    }
    parent_handle = ic->handle;
    parent_obj = ic;
    return TERN_OK;
}

tern_status_t tern_comm_get_parent(MPI_Comm *parent)
{
    /* A parent freed or disconnected reads as none (MPI-4.1 11.8.2). */
    if (parent_handle != MPI_COMM_NULL && tern_comm_lookup(parent_handle) != parent_obj)
        parent_handle = MPI_COMM_NULL;
    *parent = parent_handle;
    return TERN_OK;
}

tern_status_t tern_comm_spawn_checked(tern_comm_t *comm, int root, int count, char *commands[],
                                      char **argvs[], const int maxprocs[],
                                      const MPI_Info infos[], MPI_Comm *intercomm,
                                      int errcodes[])
{
    *intercomm = MPI_COMM_NULL;
    tern_status_t st = tern_comm_check_root(comm, root);
    if (st != TERN_OK)
        return st;
    return tern_comm_spawn(comm, root, count, commands, argvs, maxprocs, infos, intercomm,
                           errcodes);
}

tern_status_t tern_comm_spawn_one(tern_comm_t *comm, int root, const char *command, char *argv[],
                                  int maxprocs, MPI_Info info, MPI_Comm *intercomm,
                                  int errcodes[])
{
    char *cmds[1] = {(char *)command};
    char **argvs[1] = {argv};
    return tern_comm_spawn_checked(comm, root, 1, cmds, argv ? argvs : NULL, &maxprocs, &info,
                                   intercomm, errcodes);
}
