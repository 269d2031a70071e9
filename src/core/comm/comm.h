/* Communicators. A communicator maps its ranks to world ranks and owns two
 * context ids: one for point-to-point, one (+1) for collectives, so internal
 * collective traffic never matches user receives.
 *
 * MPI_COMM_WORLD and MPI_COMM_SELF are static objects; the others live in a
 * table that grows by doubling, handle 0x84000000 | index. An
 * intercommunicator describes its local group with rank/size/world_ranks,
 * and its remote group with remote_size/remote_world_ranks: destinations
 * and sources of point-to-point are remote ranks. It carries an internal
 * intracommunicator over its local group (local_comm) for the agreements of
 * Intercomm_merge and Comm_dup. */
#ifndef TERN_CORE_COMM_H
#define TERN_CORE_COMM_H

#include "base/status.h"
#include "core/runtime/attr.h"
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Largest tag (the MPI_TAG_UB attribute). */
#define TERN_TAG_UB ((1 << 30) - 1)

struct tern_topo;

/* What the topology room does with a communicator's topology: copy it for
 * a duplicate, free it with the communicator. */
typedef struct tern_comm_topo_ops {
    tern_status_t (*copy)(const struct tern_topo *t, struct tern_topo **copy_p);
    void (*free)(struct tern_topo *t);
} tern_comm_topo_ops_t;

typedef struct tern_comm {
    MPI_Comm handle;
    uint32_t context_id;   /* point-to-point; collectives use context_id + 1 */
    int rank;
    int size;
    int *world_ranks;      /* comm rank -> world rank; NULL means identity */
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    unsigned coll_seq;     /* blocking collectives' sequence number, for tags */
    unsigned nbc_seq;      /* nonblocking and persistent collectives' */
    /* Intercommunicators. */
    int is_inter;
    int remote_size;
    int *remote_world_ranks;
    struct tern_comm *local_comm;
    /* Between groups of different jobs (dynamic processes), whose world
     * ranks say nothing across jobs: 1 when Intercomm_merge puts the local
     * group first on a tie of `high` (the accepting side), -1 not; 0
     * otherwise (the lower world rank goes first). */
    int inter_first;
    /* Attributes (newest first) and info hints (MPI_INFO_NULL or owned). */
    tern_attr_t *attrs;
    MPI_Info info;
    /* References: the user's handle plus operations that hold the object
     * (tern_comm_retain), so a communicator freed with a nonblocking
     * operation pending lives, with its context ids, until that ends. */
    int refs;
    /* Collective selection's cache (coll_select.c), since the group and the
     * node map never change: 0 not known yet, 1 the communicator spans
     * several nodes with several ranks on some node, -1 it does not. */
    int coll_spans_nodes;
    /* The virtual topology (a room above: topo/topo.h), NULL for none;
     * owned. The topology room attaches it with its copy and free
     * (topo_ops), so that MPI_Comm_dup copies it and the object's end
     * frees it without this room calling up. */
    struct tern_topo *topo;
    const struct tern_comm_topo_ops *topo_ops;
    /* The node-level shared-memory region of the collectives (a room
     * above: coll/shm_region.c), NULL until a collective creates it; freed
     * through coll_shm_free when the object goes. */
    void *coll_shm;
    void (*coll_shm_free)(void *region);
    /* ULFM (ulfm.c): revoked (every operation but agree and shrink fails
     * with TERN_ERR_REVOKED), its members known failed (every collective
     * fails), and the rest of its state, NULL until needed. */
    int revoked;
    int n_failed;          /* members this process knows failed */
    struct tern_ulfm *ulfm;
} tern_comm_t;

/* The tag of c's next collective on the collective context. Blocking and
 * nonblocking (and persistent) collectives count apart, in tags below and
 * above 2^29, as MPICH's and Open MPI's tag spaces do: a program that
 * starts a nonblocking collective on one rank while another first runs a
 * blocking one (erroneous, yet common: mpi4py's Comm.Iagree fallback does
 * it) still gets each matched with its own kind. */
static inline int tern_comm_next_coll_tag(tern_comm_t *c, int blocking)
{
    return blocking ? (int)(c->coll_seq++ & 0x1fffffffu)
                    : (int)(0x20000000u | (c->nbc_seq++ & 0x1fffffffu));
}

/* Handle to object; NULL if the handle is not a live communicator. */
tern_comm_t *tern_comm_lookup(MPI_Comm comm);
void tern_comm_init_predefined(int world_rank, int world_size);
void tern_comm_finalize(void);
/* Calls fn on MPI_COMM_WORLD, MPI_COMM_SELF and every communicator with a
 * handle (fn must not create or free communicators). */
void tern_comm_each(void (*fn)(tern_comm_t *c, void *arg), void *arg);

/* A new communicator with a handle, context id ctx, our rank and the world
 * ranks of its (local) group (copied; NULL: the identity over n ranks).
 * Errhandler and the binding to a session's buffered-send buffer, and
 * nothing else, are inherited from parent (may be NULL). */
tern_status_t tern_comm_new(const tern_comm_t *parent, uint32_t ctx, int rank, int n,
                            const int *world_ranks, tern_comm_t **comm_p);
/* Drops the handle (lookups fail from now on) and the handle's reference;
 * attributes must be gone already. Point-to-point requests keep world
 * ranks and context ids, not the communicator; operations that keep the
 * object (collective schedules) hold a reference. */
void tern_comm_destroy(tern_comm_t *c);
/* The object (and its context ids) stays until the last release. No-ops
 * in effect for MPI_COMM_WORLD and MPI_COMM_SELF. */
void tern_comm_retain(tern_comm_t *c);
/* Gives c the topology t with its copy and free (NULL, NULL: none),
 * freeing the one it had: the topology room's tern_topo_attach, and the
 * communicator's end. */
void tern_comm_set_topo(tern_comm_t *c, struct tern_topo *t, const tern_comm_topo_ops_t *ops);
void tern_comm_release(tern_comm_t *c);

/* Whether a live communicator (one with a handle) has errhandler eh, so
 * that a handler the user freed is kept while one still uses it. */
int tern_comm_errhandler_in_use(MPI_Errhandler eh);

/* World rank of a rank of c: for an intercommunicator, a rank of the remote
 * group (the peers of its point-to-point). */
static inline int tern_comm_world_rank(const tern_comm_t *c, int rank)
{
    if (c->is_inter)
        return c->remote_world_ranks[rank];
    return c->world_ranks ? c->world_ranks[rank] : rank;
}

/* World rank of a rank of the local group. */
static inline int tern_comm_local_world_rank(const tern_comm_t *c, int rank)
{
    return c->world_ranks ? c->world_ranks[rank] : rank;
}

/* Ranks as seen by point-to-point: the remote group's size for an
 * intercommunicator. */
static inline int tern_comm_peer_size(const tern_comm_t *c)
{
    return c->is_inter ? c->remote_size : c->size;
}

/* ---- Context ids (context_id.c) ---------------------------------------- */

#define TERN_CTX_SLOTS 4096
#define TERN_CTX_MASK_WORDS (TERN_CTX_SLOTS / 32)

typedef struct {
    uint32_t free[TERN_CTX_MASK_WORDS]; /* bit set: slot free here */
    uint32_t cursor;
    uint32_t windowed; /* OR over members: some contributed a window (MULTIPLE) */
} tern_ctx_mask_t;

void tern_ctx_init(void);
/* The slots free here: not in use, not reserved by an agreement in flight. */
void tern_ctx_mask_local(tern_ctx_mask_t *m);
/* This process's contribution to an agreement: the free slots among
 * [first, first + n) (multiples of 32; n = TERN_CTX_SLOTS: all), which
 * stay reserved for it until tern_ctx_withdraw(m), called before the pick. */
void tern_ctx_contribute(tern_ctx_mask_t *m, uint32_t first, uint32_t n);
void tern_ctx_withdraw(const tern_ctx_mask_t *mine);
/* Slots a nonblocking agreement's round contributes: a window of
 * TERN_CTX_WINDOW slots chosen from the parent's context id, the
 * agreement's tag and the round, the same on every member. */
#define TERN_CTX_WINDOW 64
uint32_t tern_ctx_window(uint32_t parent_ctx, int tag, unsigned round);
/* Combines two masks (tern_xchg_combine_fn): AND of free bits, max cursor,
 * OR of windowed. */
void tern_ctx_mask_combine(void *inout, const void *in, size_t bytes);
/* Picks n free slots of a combined mask and marks them used here. */
tern_status_t tern_ctx_pick(const tern_ctx_mask_t *m, int n, uint32_t *ctx_ids);
void tern_ctx_release(uint32_t ctx);

#endif
