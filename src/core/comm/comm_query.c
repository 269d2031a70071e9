/* The communicator queries of MPI (rank, size, groups, comparison, names,
 * info hints) on communicators the MPI layer has checked. Errors name the
 * argument (tern_status_detail). */
#include "core/comm/comm_query.h"
#include "core/group/group.h"
#include "core/info/info.h"
#include "core/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tern_status_t tern_comm_get_rank(const tern_comm_t *c, int *rank)
{
    *rank = c->rank;
    return TERN_OK;
}

tern_status_t tern_comm_get_size(const tern_comm_t *c, int *size)
{
    *size = c->size;
    return TERN_OK;
}

static tern_status_t need_inter(const tern_comm_t *c)
{
    if (!c->is_inter)
        return tern_status_detail(TERN_ERR_COMM, "communicator 0x%x is not an intercommunicator",
                                  (unsigned)c->handle);
    return TERN_OK;
}

tern_status_t tern_comm_get_remote_size(const tern_comm_t *c, int *size)
{
    tern_status_t st = need_inter(c);
    if (st == TERN_OK)
        *size = c->remote_size;
    return st;
}

tern_status_t tern_comm_test_inter(const tern_comm_t *c, int *flag)
{
    *flag = c->is_inter;
    return TERN_OK;
}

/* The local (remote == 0) or remote group of c as a new group. */
static tern_status_t group_of(const tern_comm_t *c, int remote, MPI_Group *group)
{
    int n = remote ? c->remote_size : c->size;
    int *wr = malloc((size_t)(n ? n : 1) * sizeof *wr);
    if (!wr)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the group");
    for (int i = 0; i < n; i++)
        wr[i] = remote ? c->remote_world_ranks[i] : tern_comm_local_world_rank(c, i);
    tern_status_t st = tern_group_new(wr, n, group);
    free(wr);
    return st;
}

tern_status_t tern_comm_get_group(const tern_comm_t *c, MPI_Group *group)
{
    return group_of(c, 0, group);
}

tern_status_t tern_comm_get_remote_group(const tern_comm_t *c, MPI_Group *group)
{
    tern_status_t st = need_inter(c);
    return st == TERN_OK ? group_of(c, 1, group) : st;
}

/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL for the local groups. */
static tern_status_t compare_local(const tern_comm_t *a, const tern_comm_t *b, int *result)
{
    int *wa = malloc((size_t)(a->size + 1) * sizeof *wa);
    int *wb = malloc((size_t)(b->size + 1) * sizeof *wb);
    if (!wa || !wb) {
        free(wa);
        free(wb);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for the rank lists");
    }
    for (int i = 0; i < a->size; i++)
        wa[i] = tern_comm_local_world_rank(a, i);
    for (int i = 0; i < b->size; i++)
        wb[i] = tern_comm_local_world_rank(b, i);
    *result = tern_group_compare_ranks(wa, a->size, wb, b->size);
    free(wa);
    free(wb);
    return TERN_OK;
}

tern_status_t tern_comm_compare(const tern_comm_t *a, const tern_comm_t *b, int *result)
{
    if (a == b) {
        *result = MPI_IDENT;
        return TERN_OK;
    }
    if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
        return TERN_OK;
    }
    int local = MPI_UNEQUAL, remote = MPI_IDENT;
    tern_status_t st = compare_local(a, b, &local);
    if (st != TERN_OK)
        return st;
    if (a->is_inter)
        remote = tern_group_compare_ranks(a->remote_world_ranks, a->remote_size,
                                          b->remote_world_ranks, b->remote_size);
    /* IDENT groups make the communicators CONGRUENT (the contexts differ). */
    int worst = local > remote ? local : remote;
    *result = worst == MPI_IDENT ? MPI_CONGRUENT : worst;
    return TERN_OK;
}

tern_status_t tern_comm_set_name(tern_comm_t *c, const char *name)
{
    snprintf(c->name, sizeof c->name, "%s", name); /* truncated to MPI_MAX_OBJECT_NAME */
    return TERN_OK;
}

tern_status_t tern_comm_get_name(const tern_comm_t *c, char *name, int *resultlen)
{
    /* MPI-4.1: the null handle has a name too (c is NULL for it). */
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c ? c->name : "MPI_COMM_NULL");
    *resultlen = (int)strlen(name);
    return TERN_OK;
}

tern_status_t tern_comm_set_info(tern_comm_t *c, MPI_Info info)
{
    MPI_Info copy;
    tern_status_t st = tern_info_dup(info, &copy);
    if (st != TERN_OK)
        return st;
    if (c->info != MPI_INFO_NULL)
        tern_info_free(c->info);
    c->info = copy;
    return TERN_OK;
}

tern_status_t tern_comm_get_info(const tern_comm_t *c, MPI_Info *info_used)
{
    /* A new object every time, owned by the caller. */
    return c->info != MPI_INFO_NULL ? tern_info_dup(c->info, info_used)
                                    : tern_info_create(info_used);
}

int tern_comm_one_node(const tern_comm_t *c)
{
    for (int r = 0; r < c->size && !c->is_inter; r++)
        if (tern_rt.node_of_rank[tern_comm_local_world_rank(c, r)] != tern_rt.node)
            return 0;
    return !c->is_inter;
}
