/* The MPI communicator constructors, MPI_Comm_free and MPI_Comm_disconnect
 * (comm_new.h). */
#include "core/comm/comm_new.h"
#include "core/comm/attr.h"
#include "core/comm/comm_create.h"
#include "core/comm/split_type.h"
#include "core/info/info.h"
#include "core/pt2pt/progress.h"
#include "core/pt2pt/request.h"
#include "core/comm/unmatched.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>

/* The handle of a new communicator (MPI_COMM_NULL for none). Takes the
 * address of the constructor's result: read after the constructor ran
 * (arguments are evaluated in no set order). */
static tern_status_t hand_out(tern_status_t st, tern_comm_t *const *nc_p, MPI_Comm *newcomm)
{
    if (st == TERN_OK)
        *newcomm = *nc_p ? (*nc_p)->handle : MPI_COMM_NULL;
    return st;
}

static tern_status_t need_intra(const tern_comm_t *c)
{
    if (c->is_inter)
        return tern_status_detail(TERN_ERR_COMM,
                                  "communicator 0x%x is an intercommunicator (not supported here)",
                                  (unsigned)c->handle);
    return TERN_OK;
}

/* TERN_ERR_GROUP unless every member of g is in c (its local group). */
static tern_status_t need_subgroup(const tern_comm_t *c, const tern_group_t *g)
{
    char *in = calloc((size_t)tern_rt.n_peers, 1);
    if (!in)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a rank table");
    for (int i = 0; i < c->size; i++)
        in[tern_comm_local_world_rank(c, i)] = 1;
    int bad = -1;
    for (int i = 0; i < g->size && bad < 0; i++)
        if (!in[g->world_ranks[i]])
            bad = i;
    free(in);
    if (bad >= 0)
        return tern_status_detail(TERN_ERR_GROUP,
                                  "rank %d of the group (world rank %d) is not in the communicator",
                                  bad, g->world_ranks[bad]);
    return TERN_OK;
}

tern_status_t tern_comm_dup_contents(tern_comm_t *c, tern_comm_t *nc, MPI_Info hints)
{
    tern_status_t st;
    if (hints != MPI_INFO_NULL && (st = tern_info_dup(hints, &nc->info)) != TERN_OK) {
        tern_comm_destroy(nc);
        return tern_status_detail(st, "cannot copy the info hints: %s", tern_status_string(st));
    }
    /* The topology goes with the copy (MPI-4.1 8.4). */
    if (c->topo && (st = c->topo_ops->copy(c->topo, &nc->topo)) != TERN_OK) {
        tern_comm_destroy(nc);
        return st;
    }
    nc->topo_ops = c->topo_ops;
    int err = tern_attr_copy_all(c, nc);
    if (err != MPI_SUCCESS) {
        (void)tern_attr_delete_all(nc);
        tern_comm_destroy(nc);
        return tern_status_callback(err,
                                  "an attribute copy callback failed with code %d", err);
    }
    return TERN_OK;
}

tern_status_t tern_comm_new_dup(tern_comm_t *c, MPI_Info info, int use_info, MPI_Comm *newcomm)
{
    tern_comm_t *nc = NULL;
    *newcomm = MPI_COMM_NULL;
    tern_status_t st = tern_comm_dup(c, &nc);
    if (st == TERN_OK && (st = tern_comm_dup_contents(c, nc, use_info ? info : c->info)) == TERN_OK)
        *newcomm = nc->handle;
    return st;
}

tern_status_t tern_comm_new_split(tern_comm_t *c, int color, int key, MPI_Comm *newcomm)
{
    if (color < 0 && color != MPI_UNDEFINED)
        return tern_status_detail(TERN_ERR_ARG, "color=%d is negative and not MPI_UNDEFINED",
                                  color);
    tern_comm_t *nc = NULL;
    return hand_out(tern_comm_split(c, color, key, &nc), &nc, newcomm);
}

/* MPI does not restrict comm to intracommunicators: on an intercommunicator
 * this is MPI_Comm_split by type, as in MPICH and Open MPI 5, and gives an
 * intercommunicator between the local and remote ranks of this rank's type
 * (MPI_COMM_NULL where either side has none). */
tern_status_t tern_comm_new_split_type(tern_comm_t *c, int split_type, int key,
                                      const tern_info_t *info, MPI_Comm *newcomm)
{
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_COMM_TYPE_HW_GUIDED &&
        split_type != MPI_COMM_TYPE_HW_UNGUIDED && split_type != MPI_COMM_TYPE_RESOURCE_GUIDED &&
        split_type != MPI_UNDEFINED)
        return tern_status_detail(TERN_ERR_ARG,
                                  "split_type=%d is not an MPI_COMM_TYPE_* value or "
                                  "MPI_UNDEFINED", split_type);
    int color = MPI_UNDEFINED;
    tern_status_t st = tern_split_type_color(c, split_type, info, &color);
    if (st != TERN_OK)
        return st;
    tern_comm_t *nc = NULL;
    return hand_out(tern_comm_split(c, color, key, &nc), &nc, newcomm);
}

tern_status_t tern_comm_new_create(tern_comm_t *c, const tern_group_t *g, MPI_Comm *newcomm)
{
    tern_status_t st = need_subgroup(c, g);
    if (st != TERN_OK)
        return st;
    tern_comm_t *nc = NULL;
    return hand_out(tern_comm_create(c, g, &nc), &nc, newcomm);
}

tern_status_t tern_comm_new_create_group(tern_comm_t *c, const tern_group_t *g, int tag,
                                         MPI_Comm *newcomm)
{
    tern_status_t st = need_intra(c);
    if (st == TERN_OK)
        st = need_subgroup(c, g);
    if (st != TERN_OK)
        return st;
    tern_comm_t *nc = NULL;
    return hand_out(tern_comm_create_group(c, g, tag, &nc), &nc, newcomm);
}

tern_status_t tern_comm_new_intercomm(tern_comm_t *local, int local_leader, MPI_Comm peer_comm,
                                      int remote_leader, int tag, MPI_Comm *newintercomm)
{
    tern_status_t st = need_intra(local);
    if (st != TERN_OK)
        return st;
    if (local_leader < 0 || local_leader >= local->size)
        return tern_status_detail(TERN_ERR_RANK,
                                  "local_leader=%d is out of range (local_comm has %d ranks)",
                                  local_leader, local->size);
    tern_comm_t *pc = NULL;
    /* peer_comm and remote_leader matter on the leader only. */
    if (local->rank == local_leader) {
        pc = tern_comm_lookup(peer_comm);
        if (!pc)
            return tern_status_detail(TERN_ERR_COMM, "peer_comm 0x%x is not a communicator",
                                      (unsigned)peer_comm);
        int n = tern_comm_peer_size(pc);
        if (remote_leader < 0 || remote_leader >= n)
            return tern_status_detail(TERN_ERR_RANK,
                                      "remote_leader=%d is out of range (peer_comm has %d ranks)",
                                      remote_leader, n);
        if (remote_leader == pc->rank && !pc->is_inter)
            return tern_status_detail(TERN_ERR_RANK, "remote_leader=%d is this process itself",
                                      remote_leader);
    }
    tern_comm_t *nc = NULL;
    return hand_out(tern_intercomm_create(local, local_leader, pc, remote_leader, tag, &nc), &nc,
                    newintercomm);
}

tern_status_t tern_comm_new_merge(tern_comm_t *inter, int high, MPI_Comm *newintracomm)
{
    if (!inter->is_inter)
        return tern_status_detail(TERN_ERR_COMM, "communicator 0x%x is not an intercommunicator",
                                  (unsigned)inter->handle);
    tern_comm_t *nc = NULL;
    return hand_out(tern_intercomm_merge(inter, high, &nc), &nc, newintracomm);
}

static tern_status_t free_handle(tern_comm_t *c, MPI_Comm *comm, const char *func)
{
    if (c->handle == MPI_COMM_WORLD || c->handle == MPI_COMM_SELF)
        return tern_status_detail(TERN_ERR_COMM, "cannot free %s", c->name);
    /* Messages that arrived on it and were never received: nobody can
     * receive them once the handle is gone. Under TERN_UNMATCHED=error the
     * call fails and the communicator stays (its handler runs on it); the
     * messages are gone either way, so freeing it again succeeds. */
    tern_status_t st = tern_unmatched_check(c, func);
    if (st != TERN_OK)
        return st;
    int err = tern_attr_delete_all(c);
    if (err != MPI_SUCCESS)
        return tern_status_callback(err,
                                  "an attribute delete callback failed with code %d", err);
    /* Requests keep world ranks and context ids, not the object, so
     * pending operations still complete. */
    tern_comm_destroy(c);
    *comm = MPI_COMM_NULL;
    return TERN_OK;
}

tern_status_t tern_comm_free_handle(tern_comm_t *c, MPI_Comm *comm)
{
    return free_handle(c, comm, "MPI_Comm_free");
}

tern_status_t tern_comm_disconnect(tern_comm_t *c, MPI_Comm *comm)
{
    if (c->handle == MPI_COMM_WORLD || c->handle == MPI_COMM_SELF)
        return tern_status_detail(TERN_ERR_COMM, "cannot disconnect %s", c->name);
    /* Our own operations on comm end first; the peers do the same in their
     * MPI_Comm_disconnect, which completes what they exchange with us. A
     * failed peer completes its operations with an error, so this ends. */
    unsigned idle = 0;
    while (tern_req_pending_on(c->handle))
        if (!tern_progress())
            tern_progress_idle(&idle);
    return free_handle(c, comm, "MPI_Comm_disconnect");
}
