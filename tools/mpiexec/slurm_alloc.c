/* Inside a Slurm allocation (SLURM_JOB_ID and SLURM_JOB_NODELIST set) with
 * no --hosts/--hostfile: run on the allocation's nodes with their task slots
 * (SLURM_TASKS_PER_NODE, e.g. "4(x2),2"), and start each host's proxy with
 * srun instead of ssh, as Hydra does, so Slurm accounts for and cleans up
 * everything. An explicit --launcher or TERN_MPIEXEC_LAUNCHER wins. */
#include "mpiexec.h"
#include "base/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One step of one task per host, sharing the allocation's CPUs with the
 * other proxies' steps; the proxy binds its own ranks. root.c appends the
 * host, then "sh -c <command line>". */
#define SRUN_LAUNCHER "srun --overlap --mpi=none --cpu-bind=none -N1 -n1 --nodelist"

/* The slot count of each node from "4(x2),2": n_nodes entries. */
static int parse_tasks_per_node(const char *spec, int *slots, int n_nodes)
{
    int node = 0;
    for (const char *p = spec; *p && node < n_nodes;) {
        char *end;
        long count = strtol(p, &end, 10), times = 1;
        if (end == p || count < 1)
            return -1;
        p = end;
        if (strncmp(p, "(x", 2) == 0) {
            times = strtol(p + 2, &end, 10);
            if (end == p + 2 || *end != ')' || times < 1)
                return -1;
            p = end + 1;
        }
        for (long i = 0; i < times && node < n_nodes; i++)
            slots[node++] = (int)count;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return node == n_nodes ? 0 : -1;
}

int mpiexec_slurm_hosts(mpiexec_opts_t *o)
{
    const char *nodelist = getenv("SLURM_JOB_NODELIST");
    if (!getenv("SLURM_JOB_ID") || !nodelist || !*nodelist || o->n_hosts > 0)
        return 0;
    /* scontrol expands "node[1-3,7]" the way Slurm means it. */
    FILE *f = popen("scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null", "r");
    char line[1024];
    int rc = 0;
    while (f && rc == 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (*line)
            rc = mpiexec_hosts_parse_list(o, line, "scontrol");
    }
    if (!f || pclose(f) != 0 || rc != 0 || o->n_hosts == 0) {
        fprintf(stderr, "mpiexec: cannot list the nodes of Slurm allocation %s (%s) with "
                        "scontrol; give --hosts\n", getenv("SLURM_JOB_ID"), nodelist);
        return -1;
    }
    const char *tasks = getenv("SLURM_TASKS_PER_NODE");
    if (tasks && parse_tasks_per_node(tasks, o->host_slots, o->n_hosts) != 0) {
        fprintf(stderr, "mpiexec: cannot parse SLURM_TASKS_PER_NODE=%s\n", tasks);
        return -1;
    }
    if (!o->launcher && !tern_knob_from_env(TERN_KNOB_MPIEXEC_LAUNCHER))
        o->launcher = SRUN_LAUNCHER;
    return 0;
}
