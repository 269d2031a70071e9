/* Communicator management: groups of communicators, comparison, the
 * constructors (dup, split, create, intercommunicators), free, names and
 * info. The agreements themselves are in src/core/comm_create.c. */
#include "core/attr.h"
#include "core/comm_create.h"
#include "core/info.h"
#include "core/request.h"
#include "mpi/mpi_group.h"
#include "mpi/mpi_p2p.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stores the handle of a new communicator (or MPI_COMM_NULL). */
static int finish_new(const char *func, MPI_Comm comm, tern_status_t st, tern_comm_t *c,
                      MPI_Comm *newcomm)
{
    if (st != TERN_OK)
        return tern_mpi_status_error(comm, st, func, "cannot create the communicator");
    *newcomm = c ? c->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int check_intra(const char *func, tern_comm_t *c)
{
    if (c->is_inter)
        return tern_mpi_error(c->handle, MPI_ERR_COMM, func,
                              "communicator 0x%x is an intercommunicator (not supported here)",
                              (unsigned)c->handle);
    return MPI_SUCCESS;
}

static int check_out(const char *func, MPI_Comm comm, const void *p, const char *name)
{
    if (!p)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "%s is NULL", name);
    return MPI_SUCCESS;
}

/* Groups of a communicator. */
static int group_of(const char *func, MPI_Comm comm, int remote, MPI_Group *group)
{
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, group, "group");
    if (err)
        return err;
    if (remote && !c->is_inter)
        return tern_mpi_error(comm, MPI_ERR_COMM, func, "not an intercommunicator");
    int n = remote ? c->remote_size : c->size;
    int *wr = malloc((size_t)(n ? n : 1) * sizeof *wr);
    if (!wr)
        return tern_mpi_status_error(comm, TERN_ERR_NOMEM, func, "group");
    for (int i = 0; i < n; i++)
        wr[i] = remote ? c->remote_world_ranks[i] : tern_comm_local_world_rank(c, i);
    tern_status_t st = tern_group_new(wr, n, group);
    free(wr);
    if (st != TERN_OK)
        return tern_mpi_status_error(comm, st, func, "cannot create the group");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_group)
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    return group_of("MPI_Comm_group", comm, 0, group);
}

TERN_PMPI_ALIAS(Comm_remote_group)
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    return group_of("MPI_Comm_remote_group", comm, 1, group);
}

TERN_PMPI_ALIAS(Comm_remote_size)
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    static const char *const func = "MPI_Comm_remote_size";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, size, "size");
    if (err)
        return err;
    if (!c->is_inter)
        return tern_mpi_error(comm, MPI_ERR_COMM, func, "not an intercommunicator");
    *size = c->remote_size;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_test_inter)
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    static const char *const func = "MPI_Comm_test_inter";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, flag, "flag");
    if (err)
        return err;
    *flag = c->is_inter;
    return MPI_SUCCESS;
}

/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL for the local groups. */
static int compare_local(const tern_comm_t *a, const tern_comm_t *b, int *result)
{
    int *wa = malloc((size_t)(a->size + 1) * sizeof *wa);
    int *wb = malloc((size_t)(b->size + 1) * sizeof *wb);
    if (!wa || !wb) {
        free(wa);
        free(wb);
        return 0;
    }
    for (int i = 0; i < a->size; i++)
        wa[i] = tern_comm_local_world_rank(a, i);
    for (int i = 0; i < b->size; i++)
        wb[i] = tern_comm_local_world_rank(b, i);
    *result = tern_group_compare_ranks(wa, a->size, wb, b->size);
    free(wa);
    free(wb);
    return 1;
}

TERN_PMPI_ALIAS(Comm_compare)
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    static const char *const func = "MPI_Comm_compare";
    TERN_CHECK_INIT(func);
    tern_comm_t *a = NULL, *b = NULL;
    int err = tern_check_comm(func, comm1, &a);
    if (!err)
        err = tern_check_comm(func, comm2, &b);
    if (!err)
        err = check_out(func, comm1, result, "result");
    if (err)
        return err;
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int local, remote = MPI_IDENT;
    if (!compare_local(a, b, &local))
        return tern_mpi_status_error(comm1, TERN_ERR_NOMEM, func, "compare");
    if (a->is_inter)
        remote = tern_group_compare_ranks(a->remote_world_ranks, a->remote_size,
                                          b->remote_world_ranks, b->remote_size);
    /* IDENT groups make the communicators CONGRUENT (the contexts differ). */
    int worst = local > remote ? local : remote;
    *result = worst == MPI_IDENT ? MPI_CONGRUENT : worst;
    return MPI_SUCCESS;
}

/* Comm_dup and its variants: new context, attributes copied, info from
 * the parent or the given one. */
static int dup_common(const char *func, MPI_Comm comm, MPI_Info info, int use_info,
                      MPI_Comm *newcomm)
{
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL, *nc = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, newcomm, "newcomm");
    if (err)
        return err;
    if (use_info && info != MPI_INFO_NULL && !tern_info_lookup(info))
        return tern_mpi_error(comm, MPI_ERR_INFO, func, "invalid info handle 0x%x",
                              (unsigned)info);
    *newcomm = MPI_COMM_NULL;
    tern_status_t st = tern_comm_dup(c, &nc);
    if (st != TERN_OK)
        return tern_mpi_status_error(comm, st, func, "cannot duplicate the communicator");
    MPI_Info src = use_info ? info : c->info;
    if (src != MPI_INFO_NULL && (st = tern_info_dup(src, &nc->info)) != TERN_OK) {
        tern_comm_destroy(nc);
        return tern_mpi_status_error(comm, st, func, "cannot copy the info hints");
    }
    err = tern_attr_copy_all(c, nc);
    if (err != MPI_SUCCESS) {
        (void)tern_attr_delete_all(nc);
        tern_comm_destroy(nc);
        return tern_mpi_error(comm, MPI_ERR_OTHER, func,
                              "an attribute copy callback failed with code %d", err);
    }
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return dup_common("MPI_Comm_dup", comm, MPI_INFO_NULL, 0, newcomm);
}

TERN_PMPI_ALIAS(Comm_dup_with_info)
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return dup_common("MPI_Comm_dup_with_info", comm, info, 1, newcomm);
}

/* Comm_idup completes the agreement inside the call (it is a few small
 * messages) and returns an already completed request. */
TERN_PMPI_ALIAS(Comm_idup)
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    static const char *const func = "MPI_Comm_idup";
    TERN_CHECK_INIT(func);
    if (!request)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "request is NULL");
    int err = dup_common(func, comm, MPI_INFO_NULL, 0, newcomm);
    if (err)
        return err;
    tern_req_t *req = tern_req_alloc(TERN_REQ_GENERIC);
    if (!req)
        return tern_mpi_status_error(comm, TERN_ERR_NOMEM, func, "request");
    req->comm = comm;
    req->status_source = MPI_ANY_SOURCE;
    req->status_tag = MPI_ANY_TAG;
    tern_req_complete(req);
    return tern_mpi_request_handle(func, comm, req, request);
}

TERN_PMPI_ALIAS(Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char *const func = "MPI_Comm_split";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL, *nc = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, newcomm, "newcomm");
    if (err)
        return err;
    if (color < 0 && color != MPI_UNDEFINED)
        return tern_mpi_error(comm, MPI_ERR_ARG, func,
                              "color=%d is negative and not MPI_UNDEFINED", color);
    tern_status_t st = tern_comm_split(c, color, key, &nc);
    return finish_new(func, comm, st, nc, newcomm);
}

TERN_PMPI_ALIAS(Comm_split_type)
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char *const func = "MPI_Comm_split_type";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL, *nc = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, newcomm, "newcomm");
    if (!err)
        err = check_intra(func, c);
    if (err)
        return err;
    if (info != MPI_INFO_NULL && !tern_info_lookup(info))
        return tern_mpi_error(comm, MPI_ERR_INFO, func, "invalid info handle 0x%x",
                              (unsigned)info);
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
        return tern_mpi_error(comm, MPI_ERR_ARG, func,
                              "split_type=%d is not MPI_COMM_TYPE_SHARED or MPI_UNDEFINED",
                              split_type);
    /* Ranks of one node share memory: the node number is the color. */
    int color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : tern_rt.node;
    tern_status_t st = tern_comm_split(c, color, key, &nc);
    return finish_new(func, comm, st, nc, newcomm);
}

/* MPI_ERR_GROUP unless every member of g is in c (its local group). */
static int check_subgroup(const char *func, const tern_comm_t *c, const tern_group_t *g)
{
    char *in = calloc((size_t)tern_rt.size, 1);
    if (!in)
        return tern_mpi_status_error(c->handle, TERN_ERR_NOMEM, func, "rank table");
    for (int i = 0; i < c->size; i++)
        in[tern_comm_local_world_rank(c, i)] = 1;
    int bad = -1;
    for (int i = 0; i < g->size && bad < 0; i++)
        if (!in[g->world_ranks[i]])
            bad = i;
    free(in);
    if (bad >= 0)
        return tern_mpi_error(c->handle, MPI_ERR_GROUP, func,
                              "rank %d of the group (world rank %d) is not in the communicator",
                              bad, g->world_ranks[bad]);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char *const func = "MPI_Comm_create";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL, *nc = NULL;
    tern_group_t *g = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, newcomm, "newcomm");
    if (!err)
        err = tern_check_group(func, comm, group, &g);
    if (!err)
        err = check_subgroup(func, c, g);
    if (err)
        return err;
    tern_status_t st = tern_comm_create(c, g, &nc);
    return finish_new(func, comm, st, nc, newcomm);
}

TERN_PMPI_ALIAS(Comm_create_group)
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char *const func = "MPI_Comm_create_group";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL, *nc = NULL;
    tern_group_t *g = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, newcomm, "newcomm");
    if (!err)
        err = check_intra(func, c);
    if (!err)
        err = tern_check_group(func, comm, group, &g);
    if (!err)
        err = check_subgroup(func, c, g);
    if (!err)
        err = tern_check_send_tag(func, comm, tag);
    if (err)
        return err;
    tern_status_t st = tern_comm_create_group(c, g, tag, &nc);
    return finish_new(func, comm, st, nc, newcomm);
}

TERN_PMPI_ALIAS(Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
    static const char *const func = "MPI_Comm_free";
    TERN_CHECK_INIT(func);
    if (!comm)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, func, "comm is NULL");
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, *comm, &c);
    if (err)
        return err;
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return tern_mpi_error(*comm, MPI_ERR_COMM, func, "cannot free %s", c->name);
    err = tern_attr_delete_all(c);
    if (err != MPI_SUCCESS)
        return tern_mpi_error(*comm, MPI_ERR_OTHER, func,
                              "an attribute delete callback failed with code %d", err);
    /* Requests keep world ranks and context ids, not the object, so
     * pending operations still complete. */
    tern_comm_destroy(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    static const char *const func = "MPI_Comm_set_name";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, comm_name, "comm_name");
    if (err)
        return err;
    snprintf(c->name, sizeof c->name, "%s", comm_name); /* truncated to MAX_OBJECT_NAME */
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    static const char *const func = "MPI_Comm_get_name";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, comm_name, "comm_name");
    if (!err)
        err = check_out(func, comm, resultlen, "resultlen");
    if (err)
        return err;
    strcpy(comm_name, c->name);
    *resultlen = (int)strlen(c->name);
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_set_info)
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    static const char *const func = "MPI_Comm_set_info";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (err)
        return err;
    if (info == MPI_INFO_NULL || !tern_info_lookup(info))
        return tern_mpi_error(comm, MPI_ERR_INFO, func, "invalid info handle 0x%x",
                              (unsigned)info);
    MPI_Info copy;
    tern_status_t st = tern_info_dup(info, &copy);
    if (st != TERN_OK)
        return tern_mpi_status_error(comm, st, func, "cannot copy the info");
    if (c->info != MPI_INFO_NULL)
        tern_info_free(c->info);
    c->info = copy;
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Comm_get_info)
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    static const char *const func = "MPI_Comm_get_info";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL;
    int err = tern_check_comm(func, comm, &c);
    if (!err)
        err = check_out(func, comm, info_used, "info_used");
    if (err)
        return err;
    /* A new object every time, owned by the caller. */
    tern_status_t st = c->info != MPI_INFO_NULL ? tern_info_dup(c->info, info_used)
                                                : tern_info_create(info_used);
    if (st != TERN_OK)
        return tern_mpi_status_error(comm, st, func, "cannot copy the info");
    return MPI_SUCCESS;
}

TERN_PMPI_ALIAS(Intercomm_create)
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char *const func = "MPI_Intercomm_create";
    TERN_CHECK_INIT(func);
    tern_comm_t *lc = NULL, *pc = NULL, *nc = NULL;
    int err = tern_check_comm(func, local_comm, &lc);
    if (!err)
        err = check_out(func, local_comm, newintercomm, "newintercomm");
    if (!err)
        err = check_intra(func, lc);
    if (err)
        return err;
    if (local_leader < 0 || local_leader >= lc->size)
        return tern_mpi_error(local_comm, MPI_ERR_RANK, func,
                              "local_leader=%d is out of range (local_comm has %d ranks)",
                              local_leader, lc->size);
    err = tern_check_send_tag(func, local_comm, tag);
    if (err)
        return err;
    /* peer_comm and remote_leader matter on the leader only. */
    if (lc->rank == local_leader) {
        err = tern_check_comm(func, peer_comm, &pc);
        if (err)
            return err;
        if (remote_leader < 0 || remote_leader >= tern_comm_peer_size(pc))
            return tern_mpi_error(local_comm, MPI_ERR_RANK, func,
                                  "remote_leader=%d is out of range (peer_comm has %d ranks)",
                                  remote_leader, tern_comm_peer_size(pc));
        if (remote_leader == pc->rank && !pc->is_inter)
            return tern_mpi_error(local_comm, MPI_ERR_RANK, func,
                                  "remote_leader=%d is this process itself", remote_leader);
    }
    tern_status_t st = tern_intercomm_create(lc, local_leader, pc, remote_leader, tag, &nc);
    return finish_new(func, local_comm, st, nc, newintercomm);
}

TERN_PMPI_ALIAS(Intercomm_merge)
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char *const func = "MPI_Intercomm_merge";
    TERN_CHECK_INIT(func);
    tern_comm_t *c = NULL, *nc = NULL;
    int err = tern_check_comm(func, intercomm, &c);
    if (!err)
        err = check_out(func, intercomm, newintracomm, "newintracomm");
    if (err)
        return err;
    if (!c->is_inter)
        return tern_mpi_error(intercomm, MPI_ERR_COMM, func, "not an intercommunicator");
    tern_status_t st = tern_intercomm_merge(c, high, &nc);
    return finish_new(func, intercomm, st, nc, newintracomm);
}
