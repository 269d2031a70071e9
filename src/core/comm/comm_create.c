/* Communicator constructors. Each runs one context-id agreement; split
 * adds an allgather of (color, key); intercommunicator calls agree in each
 * group and let the two leaders combine the results. */
#include "core/comm/comm_create.h"
#include "core/comm/comm_exchange.h"
#include "core/runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

/* The world ranks of c's (local) group, as a new array. */
static int *local_world_ranks(const tern_comm_t *c)
{
    int *r = malloc((size_t)(c->size ? c->size : 1) * sizeof *r);
    if (r)
        for (int i = 0; i < c->size; i++)
            r[i] = tern_comm_local_world_rank(c, i);
    return r;
}

tern_status_t tern_comm_new_inter(const tern_comm_t *eh_parent, uint32_t ctx, uint32_t local_ctx,
                                int rank, int lsize, const int *lranks, int rsize,
                                const int *rranks, tern_comm_t **new_p)
{
    tern_comm_t *c, *lc;
    int *rr = malloc((size_t)rsize * sizeof *rr);
    if (!rr)
        return TERN_ERR_NOMEM;
    tern_status_t st = tern_comm_new(eh_parent, ctx, rank, lsize, lranks, &c);
    if (st != TERN_OK) {
        free(rr);
        return st;
    }
    st = tern_comm_new(eh_parent, local_ctx, rank, lsize, lranks, &lc);
    if (st != TERN_OK) {
        free(rr);
        tern_comm_destroy(c);
        return st;
    }
    memcpy(rr, rranks, (size_t)rsize * sizeof *rr);
    c->is_inter = 1;
    c->remote_size = rsize;
    c->remote_world_ranks = rr;
    c->local_comm = lc;
    /* Dup, split and create of a dynamic intercommunicator keep its order. */
    c->inter_first = eh_parent && eh_parent->is_inter ? eh_parent->inter_first : 0;
    *new_p = c;
    return TERN_OK;
}

/* Context agreement spanning both groups of an intercommunicator: each
 * group reduces its masks to its rank 0, the two leaders swap theirs and
 * combine, and bcast to their group; in windows and rounds under
 * MPI_THREAD_MULTIPLE (context_id.c), the window from the
 * intercommunicator's context, the same on both sides. */
static tern_status_t inter_agree(tern_comm_t *inter, int n, uint32_t *ids)
{
    tern_xchg_t x = tern_xchg_over(inter->local_comm, TERN_XTAG_CTX_AGREE);
    tern_ctx_peer_t other = {.comm = inter, .ctx = inter->context_id + 1, .peer = 0,
                             .tag = TERN_XTAG_INTER};
    return tern_ctx_agree_ex(&x, 0, n, ids, inter->context_id, TERN_XTAG_INTER,
                             tern_ctx_swap_with_peer, &other);
}

tern_status_t tern_comm_dup_on(tern_comm_t *p, const uint32_t *ids, tern_comm_t **new_p)
{
    tern_status_t st;
    if (p->is_inter)
        st = tern_comm_new_inter(p, ids[0], ids[1], p->rank, p->size, p->world_ranks, p->remote_size,
                        p->remote_world_ranks, new_p);
    else
        st = tern_comm_new(p, ids[0], p->rank, p->size, p->world_ranks, new_p);
    if (st != TERN_OK)
        for (int i = 0; i < (p->is_inter ? 2 : 1); i++)
            tern_ctx_release(ids[i]);
    return st;
}

tern_status_t tern_comm_dup_checked(tern_comm_t *p, tern_status_t mine, tern_ctx_swap_fn at_root,
                                    void *arg, tern_comm_t **new_p, int *who)
{
    uint32_t id;
    tern_xchg_t x = tern_xchg_over(p, TERN_XTAG_CTX_AGREE);
    *new_p = NULL;
    tern_status_t st = tern_ctx_agree_checked(&x, 0, 1, &id, x.ctx, x.tag, at_root, arg, mine, who);
    if (st != TERN_OK)
        return st;
    return tern_comm_dup_on(p, &id, new_p);
}

tern_status_t tern_comm_dup(tern_comm_t *p, tern_comm_t **new_p)
{
    if (!p->is_inter) {
        int who;
        return tern_comm_dup_checked(p, TERN_OK, NULL, NULL, new_p, &who);
    }
    uint32_t ids[2];
    tern_status_t st = inter_agree(p, 2, ids);
    if (st != TERN_OK)
        return st;
    return tern_comm_dup_on(p, ids, new_p);
}

typedef struct {
    int key, rank;
} key_rank_t;

static int cmp_key_rank(const void *a, const void *b)
{
    const key_rank_t *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static tern_status_t split_inter(tern_comm_t *p, int color, int key, tern_comm_t **new_p);

tern_status_t tern_comm_split(tern_comm_t *p, int color, int key, tern_comm_t **new_p)
{
    if (p->is_inter)
        return split_inter(p, color, key, new_p);
    int n = p->size, mine[2] = {color, key};
    int *all = malloc((size_t)n * sizeof mine);
    key_rank_t *members = malloc((size_t)n * sizeof *members);
    int *wr = malloc((size_t)n * sizeof *wr);
    tern_status_t st = all && members && wr ? TERN_OK : TERN_ERR_NOMEM;
    tern_xchg_t x = tern_xchg_over(p, TERN_XTAG_SPLIT);
    if (st == TERN_OK)
        st = tern_xchg_allgather(&x, mine, all, sizeof mine);
    uint32_t ctx = 0;
    x.tag = TERN_XTAG_CTX_AGREE;
    if (st == TERN_OK)
        st = tern_ctx_agree(&x, 0, 1, &ctx);
    *new_p = NULL;
    if (st == TERN_OK && color == MPI_UNDEFINED) {
        tern_ctx_release(ctx);
    } else if (st == TERN_OK) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (all[2 * i] == color)
                members[m++] = (key_rank_t){.key = all[2 * i + 1], .rank = i};
        qsort(members, (size_t)m, sizeof *members, cmp_key_rank);
        int rank = 0;
        for (int i = 0; i < m; i++) {
            wr[i] = tern_comm_local_world_rank(p, members[i].rank);
            if (members[i].rank == p->rank)
                rank = i;
        }
        st = tern_comm_new(p, ctx, rank, m, wr, new_p);
        if (st != TERN_OK)
            tern_ctx_release(ctx);
    }
    free(all);
    free(members);
    free(wr);
    return st;
}

static tern_status_t create_inter(tern_comm_t *p, const tern_group_t *g, tern_comm_t **new_p);

tern_status_t tern_comm_create(tern_comm_t *p, const tern_group_t *g, tern_comm_t **new_p)
{
    if (p->is_inter)
        return create_inter(p, g, new_p);
    uint32_t ctx;
    tern_xchg_t x = tern_xchg_over(p, TERN_XTAG_CTX_AGREE);
    tern_status_t st = tern_ctx_agree(&x, 0, 1, &ctx);
    *new_p = NULL;
    if (st != TERN_OK)
        return st;
    if (g->rank == MPI_UNDEFINED) {
        tern_ctx_release(ctx);
        return TERN_OK;
    }
    st = tern_comm_new(p, ctx, g->rank, g->size, g->world_ranks, new_p);
    if (st != TERN_OK)
        tern_ctx_release(ctx);
    return st;
}

tern_status_t tern_comm_create_group(tern_comm_t *p, const tern_group_t *g, int tag,
                                     tern_comm_t **new_p)
{
    *new_p = NULL;
    if (g->rank == MPI_UNDEFINED)
        return TERN_OK;
    /* Participants are addressed by their ranks in the parent, so calls
     * with different groups can never mix up their messages' sources. */
    int *parent_rank = malloc((size_t)tern_rt.n_peers * sizeof(int));
    int *members = malloc((size_t)g->size * sizeof(int));
    tern_status_t st = parent_rank && members ? TERN_OK : TERN_ERR_NOMEM;
    if (st == TERN_OK) {
        for (int i = 0; i < p->size; i++)
            parent_rank[tern_comm_local_world_rank(p, i)] = i;
        for (int i = 0; i < g->size; i++)
            members[i] = parent_rank[g->world_ranks[i]];
        tern_xchg_t x = {.comm = p, .ctx = p->context_id + 1, .n = g->size, .me = g->rank,
                         .members = members, .tag = TERN_XTAG_CREATE_GROUP(tag)};
        uint32_t ctx;
        st = tern_ctx_agree(&x, 0, 1, &ctx);
        if (st == TERN_OK) {
            st = tern_comm_new(p, ctx, g->rank, g->size, g->world_ranks, new_p);
            if (st != TERN_OK)
                tern_ctx_release(ctx);
        }
    }
    free(parent_rank);
    free(members);
    return st;
}

tern_status_t tern_intercomm_create(tern_comm_t *local, int local_leader, tern_comm_t *peer,
                                    int remote_leader, int tag, tern_comm_t **new_p)
{
    /* The leaders swap their groups' sizes and world ranks over peer and
     * bcast them, with the identity of the agreement's windows (the peer
     * communicator's context and the tag, the same at both leaders, known
     * to the other members only through them) and the outcome. */
    struct {
        int32_t size, status, win_tag;
        uint32_t win_ctx;
    } hdr = {.size = local->size, .status = TERN_OK};
    int *lranks = local_world_ranks(local), *rranks = NULL;
    if (!lranks)
        return TERN_ERR_NOMEM;
    tern_ctx_peer_t other = {.comm = peer, .peer = remote_leader,
                             .tag = TERN_XTAG_INTERCOMM_CREATE(tag)};
    tern_status_t st = TERN_OK;
    if (local->rank == local_leader) {
        other.ctx = peer->context_id + 1;
        int32_t theirs = 0;
        st = tern_xchg_sendrecv(peer, other.ctx, remote_leader, other.tag, &hdr.size,
                                sizeof hdr.size, &theirs, sizeof theirs);
        if (st == TERN_OK && theirs <= 0)
            st = tern_status_detail(TERN_ERR_INTERNAL, "malformed group size from the other leader");
        if (st == TERN_OK && !(rranks = malloc((size_t)theirs * sizeof *rranks)))
            st = TERN_ERR_NOMEM;
        if (st == TERN_OK)
            st = tern_xchg_sendrecv(peer, other.ctx, remote_leader, other.tag, lranks,
                                    (size_t)local->size * sizeof *lranks, rranks,
                                    (size_t)theirs * sizeof *rranks);
        hdr.size = theirs;
        hdr.status = (int32_t)st;
        hdr.win_ctx = peer->context_id;
        hdr.win_tag = tag;
    }
    tern_xchg_t x = tern_xchg_over(local, TERN_XTAG_INTER_BCAST);
    tern_status_t bst = tern_xchg_bcast(&x, local_leader, &hdr, sizeof hdr);
    if (st == TERN_OK)
        st = bst;
    if (st == TERN_OK && hdr.status != TERN_OK)
        st = tern_status_detail((tern_status_t)hdr.status,
                                "the local leader (rank %d) could not reach the remote leader",
                                local_leader);
    if (st == TERN_OK && !rranks && !(rranks = malloc((size_t)hdr.size * sizeof *rranks)))
        st = TERN_ERR_NOMEM;
    x.tag = TERN_XTAG_INTER_BCAST - 1;
    if (st == TERN_OK)
        st = tern_xchg_bcast(&x, local_leader, rranks, (size_t)hdr.size * sizeof *rranks);
    /* Then the context ids over both groups, in windows and rounds under
     * MPI_THREAD_MULTIPLE (context_id.c), so that threads creating
     * intercommunicators at once do not take every free slot from each
     * other. */
    uint32_t ids[2];
    x.tag = TERN_XTAG_CTX_AGREE;
    if (st == TERN_OK)
        st = tern_ctx_agree_ex(&x, local_leader, 2, ids, hdr.win_ctx, hdr.win_tag,
                               tern_ctx_swap_with_peer, &other);
    if (st == TERN_OK) {
        st = tern_comm_new_inter(local, ids[0], ids[1], local->rank, local->size, lranks, hdr.size,
                                 rranks, new_p);
        if (st != TERN_OK) {
            tern_ctx_release(ids[0]);
            tern_ctx_release(ids[1]);
        }
    }
    free(lranks);
    free(rranks);
    return st;
}

static tern_status_t inter_swap(tern_comm_t *p, const int *mine, int nmine, int **theirs_p,
                                int *ntheirs_p);

tern_status_t tern_intercomm_merge(tern_comm_t *inter, int high, tern_comm_t **new_p)
{
    uint32_t ctx;
    int remote_high = 0, *theirs = NULL, ntheirs = 0;
    high = high != 0;
    tern_status_t st = inter_swap(inter, &high, 1, &theirs, &ntheirs);
    if (st == TERN_OK && ntheirs != 1)
        st = tern_status_detail(TERN_ERR_INTERNAL, "malformed high flag from the other group");
    if (st == TERN_OK)
        remote_high = theirs[0] != 0;
    free(theirs);
    if (st == TERN_OK)
        st = inter_agree(inter, 1, &ctx);
    if (st != TERN_OK)
        return st;
    /* The low group first; on a tie, the group whose leader has the lower
     * world rank (both sides compute the same). */
    int local_first = high != remote_high ? !high
                      : inter->inter_first ? inter->inter_first > 0
                                           : tern_comm_local_world_rank(inter, 0) <
                                                 inter->remote_world_ranks[0];
    int n = inter->size + inter->remote_size;
    int *wr = malloc((size_t)n * sizeof *wr);
    if (!wr) {
        tern_ctx_release(ctx);
        return TERN_ERR_NOMEM;
    }
    int *lpart = local_first ? wr : wr + inter->remote_size;
    int *rpart = local_first ? wr + inter->size : wr;
    for (int i = 0; i < inter->size; i++)
        lpart[i] = tern_comm_local_world_rank(inter, i);
    memcpy(rpart, inter->remote_world_ranks, (size_t)inter->remote_size * sizeof *wr);
    int rank = local_first ? inter->rank : inter->remote_size + inter->rank;
    st = tern_comm_new(inter, ctx, rank, n, wr, new_p);
    if (st != TERN_OK)
        tern_ctx_release(ctx);
    free(wr);
    return st;
}

/* The leaders swap int arrays over the intercommunicator and each bcasts
 * what it got to its group. *theirs_p is malloc'ed. */
static tern_status_t inter_swap(tern_comm_t *p, const int *mine, int nmine, int **theirs_p,
                                int *ntheirs_p)
{
    tern_comm_t *lc = p->local_comm;
    uint32_t ctx = p->context_id + 1;
    int32_t n = 0;
    int *theirs = NULL;
    tern_status_t st = TERN_OK;
    if (lc->rank == 0) {
        int32_t m = nmine;
        st = tern_xchg_sendrecv(p, ctx, 0, TERN_XTAG_INTER_SWAP, &m, sizeof m, &n, sizeof n);
        if (st == TERN_OK && n < 0)
            st = TERN_ERR_INTERNAL;
        if (st == TERN_OK && !(theirs = malloc((size_t)(n ? n : 1) * sizeof *theirs)))
            st = TERN_ERR_NOMEM;
        if (st == TERN_OK)
            st = tern_xchg_sendrecv(p, ctx, 0, TERN_XTAG_INTER_SWAP - 1, mine,
                                    (size_t)nmine * sizeof *mine, theirs,
                                    (size_t)n * sizeof *theirs);
    }
    tern_xchg_t x = tern_xchg_over(lc, TERN_XTAG_INTER_SWAP);
    if (st == TERN_OK)
        st = tern_xchg_bcast(&x, 0, &n, sizeof n);
    if (st == TERN_OK && !theirs && !(theirs = malloc((size_t)(n ? n : 1) * sizeof *theirs)))
        st = TERN_ERR_NOMEM;
    x.tag = TERN_XTAG_INTER_SWAP - 2;
    if (st == TERN_OK)
        st = tern_xchg_bcast(&x, 0, theirs, (size_t)n * sizeof *theirs);
    if (st != TERN_OK) {
        free(theirs);
        return st;
    }
    *theirs_p = theirs;
    *ntheirs_p = n;
    return TERN_OK;
}

/* Members of one color from (color, key) pairs of n ranks, ordered by key
 * then rank, as world ranks (map: rank -> world rank). Returns the count;
 * *pos_p gets the position of rank `me` (if listed). */
static int members_of_color(const int *pairs, int n, int color, const int *map, int me,
                            key_rank_t *scratch, int *out, int *pos_p)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (pairs[2 * i] == color)
            scratch[m++] = (key_rank_t){.key = pairs[2 * i + 1], .rank = i};
    qsort(scratch, (size_t)m, sizeof *scratch, cmp_key_rank);
    for (int i = 0; i < m; i++) {
        out[i] = map[scratch[i].rank];
        if (scratch[i].rank == me)
            *pos_p = i;
    }
    return m;
}

static tern_status_t split_inter(tern_comm_t *p, int color, int key, tern_comm_t **new_p)
{
    int nl = p->size, nr = p->remote_size, mine[2] = {color, key};
    int *lpairs = malloc((size_t)nl * sizeof mine), *rpairs = NULL, nrp = 0;
    int *lranks = malloc((size_t)nl * sizeof(int)), *rranks = malloc((size_t)nr * sizeof(int));
    key_rank_t *scratch = malloc((size_t)(nl > nr ? nl : nr) * sizeof *scratch);
    tern_status_t st = lpairs && lranks && rranks && scratch ? TERN_OK : TERN_ERR_NOMEM;
    tern_xchg_t x = tern_xchg_over(p->local_comm, TERN_XTAG_SPLIT);
    if (st == TERN_OK)
        st = tern_xchg_allgather(&x, mine, lpairs, sizeof mine);
    if (st == TERN_OK)
        st = inter_swap(p, lpairs, 2 * nl, &rpairs, &nrp);
    if (st == TERN_OK && nrp != 2 * nr)
        st = TERN_ERR_INTERNAL;
    uint32_t ids[2];
    if (st == TERN_OK)
        st = inter_agree(p, 2, ids);
    *new_p = NULL;
    if (st == TERN_OK) {
        int rank = 0, ignored = 0, ln = 0, rn = 0;
        if (color != MPI_UNDEFINED) {
            ln = members_of_color(lpairs, nl, color, p->world_ranks, p->rank, scratch, lranks,
                                  &rank);
            rn = members_of_color(rpairs, nr, color, p->remote_world_ranks, -1, scratch, rranks,
                                  &ignored);
        }
        if (ln > 0 && rn > 0)
            st = tern_comm_new_inter(p, ids[0], ids[1], rank, ln, lranks, rn, rranks, new_p);
        if (!*new_p) {
            tern_ctx_release(ids[0]);
            tern_ctx_release(ids[1]);
        }
    }
    free(lpairs);
    free(rpairs);
    free(lranks);
    free(rranks);
    free(scratch);
    return st;
}

static tern_status_t create_inter(tern_comm_t *p, const tern_group_t *g, tern_comm_t **new_p)
{
    int *rranks = NULL, nr = 0;
    tern_status_t st = inter_swap(p, g->world_ranks, g->size, &rranks, &nr);
    uint32_t ids[2];
    if (st == TERN_OK)
        st = inter_agree(p, 2, ids);
    *new_p = NULL;
    if (st == TERN_OK) {
        if (g->rank != MPI_UNDEFINED && nr > 0)
            st = tern_comm_new_inter(p, ids[0], ids[1], g->rank, g->size, g->world_ranks, nr, rranks,
                            new_p);
        if (!*new_p) {
            tern_ctx_release(ids[0]);
            tern_ctx_release(ids[1]);
        }
    }
    free(rranks);
    return st;
}
