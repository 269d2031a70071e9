/* --bind-to core: rank i runs on core i mod ncores, as hwloc counts cores
 * (only those this process may use). The sets are computed before forking;
 * each child applies its own with sched_setaffinity. */
#include "mpiexec.h"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <stdio.h>
#include <stdlib.h>

tern_status_t mpiexec_bind_cores(int n, cpu_set_t **sets_p)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return TERN_ERR_INTERNAL;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return TERN_ERR_INTERNAL;
    }
    hwloc_obj_type_t type = HWLOC_OBJ_CORE;
    int ncores = hwloc_get_nbobjs_by_type(topo, type);
    if (ncores <= 0) {
        /* Some virtual machines report no cores: use hardware threads. */
        type = HWLOC_OBJ_PU;
        ncores = hwloc_get_nbobjs_by_type(topo, type);
    }
    cpu_set_t *sets = calloc((size_t)n, sizeof *sets);
    if (ncores <= 0 || !sets) {
        free(sets);
        hwloc_topology_destroy(topo);
        return ncores <= 0 ? TERN_ERR_NOT_SUPPORTED : TERN_ERR_NOMEM;
    }
    if (n > ncores)
        fprintf(stderr, "mpiexec: warning: %d ranks on %d cores; several ranks share a core\n",
                n, ncores);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, type, (unsigned)(i % ncores));
        hwloc_cpuset_to_glibc_sched_affinity(topo, core->cpuset, &sets[i], sizeof sets[i]);
    }
    hwloc_topology_destroy(topo);
    *sets_p = sets;
    return TERN_OK;
}
