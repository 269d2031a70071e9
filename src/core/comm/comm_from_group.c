/* MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups
 * (comm_from_group.h). The members address each other by world rank over
 * MPI_COMM_WORLD's collective context; the string tag picks the tags
 * (TERN_XTAG_FROM_GROUP of its hash), so concurrent constructions with
 * different tags keep their messages apart, and non-members never take
 * part. */
#include "core/comm/comm_from_group.h"
#include "core/comm/comm_create.h"
#include "core/comm/comm_exchange.h"
#include "core/pt2pt/bsend.h"
#include "core/runtime/runtime.h"

#include <string.h>

/* FNV-1a of the string tag. */
static uint32_t tag_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static tern_status_t check_tag(const char *stringtag)
{
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return tern_status_detail(TERN_ERR_ARG,
                                  "stringtag is %zu characters long (at most %d)",
                                  strlen(stringtag), MPI_MAX_STRINGTAG_LEN - 1);
    return TERN_OK;
}

/* The exchange among g's members (their world ranks are world's ranks). */
static tern_xchg_t over_group(const tern_group_t *g, int tag)
{
    tern_comm_t *world = tern_comm_lookup(MPI_COMM_WORLD);
    return (tern_xchg_t){.comm = world, .ctx = world->context_id + 1, .n = g->size,
                         .me = g->rank, .members = g->world_ranks, .tag = tag};
}

/* The communicator made from g uses g's session's buffered-send buffer
 * when it has none of its own (MPI-4.1 3.6); the pool exists from
 * MPI_Session_init to MPI_Session_finalize. */
static tern_status_t bind_session_buffer(const tern_group_t *g, uint32_t ctx)
{
    tern_bsend_pool_t *p = g->session != MPI_SESSION_NULL
                               ? tern_bsend_session_pool((uint32_t)g->session, 0)
                               : NULL;
    if (p && tern_bsend_ctx_bind(ctx, p) != TERN_OK)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a buffer binding");
    return TERN_OK;
}

tern_status_t tern_comm_from_group(const tern_group_t *g, const char *stringtag,
                                   const tern_info_t *info, MPI_Errhandler errhandler,
                                   MPI_Comm *newcomm)
{
    (void)info; /* no hint changes what Tern does */
    tern_status_t st = check_tag(stringtag);
    if (st != TERN_OK)
        return st;
    if (g->rank == MPI_UNDEFINED) {
        /* Not a member (MPI_GROUP_EMPTY among others): nothing to agree
         * on, MPI_COMM_NULL at once; the members agree among themselves
         * (as MPI_Comm_create_group, MPI-4.1 7.4.2). */
        *newcomm = MPI_COMM_NULL;
        return TERN_OK;
    }
    tern_xchg_t x = over_group(g, TERN_XTAG_FROM_GROUP(tag_hash(stringtag)));
    uint32_t ctx;
    if ((st = tern_ctx_agree(&x, 0, 1, &ctx)) != TERN_OK)
        return st;
    tern_comm_t *c;
    if ((st = tern_comm_new(NULL, ctx, g->rank, g->size, g->world_ranks, &c)) != TERN_OK) {
        tern_ctx_release(ctx);
        return st;
    }
    if ((st = bind_session_buffer(g, ctx)) != TERN_OK) {
        tern_comm_destroy(c);
        return st;
    }
    c->errhandler = errhandler;
    *newcomm = c->handle;
    return TERN_OK;
}

static tern_status_t check_leader(const tern_group_t *g, int leader, const char *what)
{
    if (leader < 0 || leader >= g->size)
        return tern_status_detail(TERN_ERR_RANK, "%s=%d is out of range (its group has %d ranks)",
                                  what, leader, g->size);
    return TERN_OK;
}

tern_status_t tern_intercomm_from_groups(const tern_group_t *lg, int local_leader,
                                         const tern_group_t *rg, int remote_leader,
                                         const char *stringtag, const tern_info_t *info,
                                         MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    (void)info; /* no hint changes what Tern does */
    tern_status_t st = check_tag(stringtag);
    if (st == TERN_OK)
        st = check_leader(lg, local_leader, "local_leader");
    if (st == TERN_OK)
        st = check_leader(rg, remote_leader, "remote_leader");
    if (st != TERN_OK)
        return st;
    if (lg->rank == MPI_UNDEFINED)
        return tern_status_detail(TERN_ERR_GROUP, "this process is not a member of local_group");
    if (rg->rank != MPI_UNDEFINED)
        return tern_status_detail(TERN_ERR_GROUP,
                                  "this process is a member of remote_group too (the groups "
                                  "must be disjoint)");
    /* Each group reduces its free context ids to its leader, the leaders
     * swap and combine theirs, and each bcasts the result to its group:
     * both ids are then free on every member of either group. In windows
     * and rounds under MPI_THREAD_MULTIPLE (context_id.c), the window from
     * the string tag, the same in both groups. */
    int base = TERN_XTAG_FROM_GROUP(tag_hash(stringtag));
    tern_xchg_t x = over_group(lg, base);
    tern_ctx_peer_t other = {.comm = x.comm, .ctx = x.ctx, .peer = rg->world_ranks[remote_leader],
                             .tag = base - 4};
    uint32_t ids[2];
    st = tern_ctx_agree_ex(&x, local_leader, 2, ids, x.ctx, base, tern_ctx_swap_with_peer, &other);
    if (st != TERN_OK)
        return st;
    tern_comm_t *c;
    st = tern_comm_new_inter(NULL, ids[0], ids[1], lg->rank, lg->size, lg->world_ranks, rg->size,
                             rg->world_ranks, &c);
    if (st != TERN_OK) {
        tern_ctx_release(ids[0]);
        tern_ctx_release(ids[1]);
        return st;
    }
    if ((st = bind_session_buffer(lg, c->context_id)) != TERN_OK) {
        tern_comm_destroy(c);
        return st;
    }
    c->errhandler = errhandler;
    c->local_comm->errhandler = errhandler;
    *newintercomm = c->handle;
    return TERN_OK;
}
