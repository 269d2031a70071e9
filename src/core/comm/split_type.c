/* The colors of MPI_Comm_split_type and MPI_Get_hw_resource_info
 * (split_type.h), from the node map and hwloc's view of the resources this
 * process is bound to. The topology is
 * loaded once, at the first hardware split. */
#include "core/comm/split_type.h"
#include "core/comm/comm_exchange.h"
#include "core/group/pset.h"
#include "core/runtime/runtime.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static hwloc_topology_t topo;
static hwloc_bitmap_t bound; /* the CPUs this process may run on */

/* The CPUs this process may run on now. */
static void read_binding(void)
{
    if (!bound)
        bound = hwloc_bitmap_alloc();
    if (!bound || hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) != 0 ||
        hwloc_bitmap_iszero(bound)) {
        /* Unknown binding: whatever the machine has. */
        hwloc_bitmap_free(bound);
        bound = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(topo));
    }
}

static tern_status_t load_topology(void)
{
    if (topo)
        return TERN_OK;
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return tern_status_detail(TERN_ERR_INTERNAL, "hwloc cannot start");
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return tern_status_detail(TERN_ERR_INTERNAL, "hwloc cannot read the topology");
    }
    topo = t;
    read_binding();
    return TERN_OK;
}

/* A color for the resource of type `type` holding every CPU this process
 * may run on, unique across nodes; MPI_UNDEFINED if none holds them all. */
static int resource_color(hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)i);
        if (o && o->cpuset && hwloc_bitmap_isincluded(bound, o->cpuset))
            return tern_rt.node * 65536 + i;
    }
    return MPI_UNDEFINED;
}

/* The resource type a value names (MPI_Get_hw_resource_info's keys, with
 * "hwloc://", too), or -1. */
static int type_named(const char *name, hwloc_obj_type_t *type)
{
    if (strncmp(name, "hwloc://", 8) == 0)
        name += 8;
    if (strcasecmp(name, "HWThread") == 0) {
        *type = HWLOC_OBJ_PU;
        return 0;
    }
    union hwloc_obj_attr_u attr;
    return hwloc_type_sscanf(name, type, &attr, sizeof attr);
}

static tern_status_t guided_color(const tern_info_t *info, int *color)
{
    const char *v = info ? tern_info_get(info, "mpi_hw_resource_type") : NULL;
    *color = MPI_UNDEFINED;
    if (!v)
        return TERN_OK;
    if (strcmp(v, "mpi_shared_memory") == 0) {
        *color = tern_rt.node;
        return TERN_OK;
    }
    hwloc_obj_type_t type;
    if (type_named(v, &type) != 0)
        return TERN_OK;
    tern_status_t st = load_topology();
    if (st == TERN_OK)
        *color = type == HWLOC_OBJ_MACHINE ? tern_rt.node : resource_color(type);
    return st;
}

/* Coarsest first: the node, then the levels inside it. */
static const hwloc_obj_type_t levels[] = {HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE,
                                          HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
                                          HWLOC_OBJ_L1CACHE, HWLOC_OBJ_CORE, HWLOC_OBJ_PU};
#define N_LEVELS (1 + (int)(sizeof levels / sizeof levels[0]))

/* Every rank's color at every level; the first level at which every rank
 * has one and they are not all equal splits c into strict subsets. */
static tern_status_t unguided_color(tern_comm_t *c, int *color)
{
    if (c->is_inter)
        return tern_status_detail(TERN_ERR_COMM, "MPI_COMM_TYPE_HW_UNGUIDED needs an "
                                                 "intracommunicator");
    tern_status_t st = load_topology();
    if (st != TERN_OK)
        return st;
    int mine[N_LEVELS];
    mine[0] = tern_rt.node;
    for (int l = 1; l < N_LEVELS; l++)
        mine[l] = resource_color(levels[l - 1]);
    int *all = malloc((size_t)c->size * sizeof mine);
    if (!all)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the ranks' resources");
    tern_xchg_t x = tern_xchg_over(c, TERN_XTAG_SPLIT);
    st = tern_xchg_allgather(&x, mine, all, sizeof mine);
    *color = MPI_UNDEFINED;
    for (int l = 0; l < N_LEVELS && st == TERN_OK; l++) {
        int defined = 1, split = 0;
        for (int r = 0; r < c->size; r++) {
            int v = all[r * N_LEVELS + l];
            defined &= v != MPI_UNDEFINED;
            split |= v != all[l];
        }
        if (defined && split) {
            *color = mine[l];
            break;
        }
    }
    free(all);
    return st;
}

static tern_status_t pset_color(const tern_info_t *info, int *color)
{
    const char *v = info ? tern_info_get(info, "mpi_pset_name") : NULL;
    int *ranks, n;
    *color = MPI_UNDEFINED;
    if (!v) /* MPI-4.1: it takes HW_GUIDED's mpi_hw_resource_type as well */
        return guided_color(info, color);
    if (tern_pset_members(v, &ranks, &n) != TERN_OK) {
        (void)tern_status_take_detail(TERN_ERR_ARG); /* not an error: MPI_COMM_NULL */
        return TERN_OK;
    }
    /* Every set holds this process: its first member names it. */
    *color = ranks[0];
    free(ranks);
    return TERN_OK;
}

tern_status_t tern_split_type_color(tern_comm_t *c, int split_type, const tern_info_t *info,
                                    int *color)
{
    switch (split_type) {
    case MPI_COMM_TYPE_SHARED: *color = tern_rt.node; return TERN_OK;
    case MPI_COMM_TYPE_HW_GUIDED: return guided_color(info, color);
    case MPI_COMM_TYPE_HW_UNGUIDED: return unguided_color(c, color);
    case MPI_COMM_TYPE_RESOURCE_GUIDED: return pset_color(info, color);
    default: *color = MPI_UNDEFINED; return TERN_OK;
    }
}

tern_status_t tern_hw_resource_info(MPI_Info *hw_info)
{
    tern_status_t st = load_topology();
    if (st != TERN_OK)
        return st;
    read_binding(); /* "at the moment of the call": it may have changed */
    MPI_Info h;
    if ((st = tern_info_create(&h)) != TERN_OK)
        return st;
    for (int l = 0; l < N_LEVELS - 1 && st == TERN_OK; l++) {
        if (hwloc_get_nbobjs_by_type(topo, levels[l]) <= 0)
            continue; /* absent from this machine */
        char key[64];
        snprintf(key, sizeof key, "hwloc://%s", hwloc_obj_type_string(levels[l]));
        st = tern_info_set(tern_info_lookup(h), key,
                           resource_color(levels[l]) != MPI_UNDEFINED ? "true" : "false");
    }
    if (st != TERN_OK) {
        tern_info_free(h);
        return st;
    }
    *hw_info = h;
    return TERN_OK;
}
