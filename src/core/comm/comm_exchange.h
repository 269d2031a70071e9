/* Small blocking exchanges used while creating communicators: binomial
 * bcast, reduce and gather over a set of ranks of a communicator, on
 * internal point-to-point (never on the collectives, which may be built
 * on communicators themselves). They run on a context the caller picks
 * (a communicator's collective context, ctx + 1) with NEGATIVE tags, which
 * user code and the collectives (tags >= 0) can never match. */
#ifndef TERN_CORE_COMM_EXCHANGE_H
#define TERN_CORE_COMM_EXCHANGE_H

#include "base/status.h"
#include "core/comm/comm.h"
#include <stddef.h>

/* Internal tags on a collective context (see docs/design.md). Each exchange
 * uses its tag and the three below it. */
#define TERN_XTAG_CTX_AGREE (-16)     /* context-id agreement */
#define TERN_XTAG_SPLIT (-20)         /* (color, key) allgather of Comm_split */
#define TERN_XTAG_INTER (-24)         /* leader exchanges of intercomm calls */
#define TERN_XTAG_INTER_BCAST (-28)   /* leader to local group */
#define TERN_XTAG_INTER_SWAP (-32)    /* rank lists swapped between groups */
#define TERN_XTAG_DIST_GRAPH (-36)    /* edge lists of MPI_Dist_graph_create */
#define TERN_XTAG_DYN (-40)           /* accept/connect (comm_dynamic.c) */
#define TERN_XTAG_SPAWN (-44)         /* the root's spawn outcome (comm_spawn.c) */
/* Comm_create_group: -1024 - 4 * (tag mod 2^24), so each call has four
 * tags to itself (user tags equal mod 2^24 share them); Intercomm_create
 * (one exchange, one tag): -2^30 - tag. All below the fixed tags above. */
#define TERN_XTAG_CREATE_GROUP(t) (-1024 - 4 * ((t) & 0xffffff))
/* Comm_create_from_group and Intercomm_create_from_groups, on
 * MPI_COMM_WORLD's collective context: eight tags per hash h of the string
 * tag, from -2^27 down to -2^28 (between the two ranges around it). */
#define TERN_XTAG_FROM_GROUP(h) (-(1 << 27) - 8 * (int)((h) & 0xffffff))
#define TERN_XTAG_INTERCOMM_CREATE(t) (-(1 << 30) - ((t) & 0x3fffffff))
/* Accept/connect and spawn, after the root's first bcast of the call's
 * port tag: eight tags per call from -2^28 down (between FROM_GROUP's and
 * INTERCOMM_CREATE's ranges), so threads that run such calls at once on
 * one communicator (MPICH's th_taskmanager) keep their messages apart. */
#define TERN_XTAG_DYN_CALL(t) (-(1 << 28) - 8 * (int)((t) & 0xffffff))

typedef struct {
    tern_comm_t *comm;  /* peers are addressed by ranks of this communicator */
    uint32_t ctx;       /* context the messages travel on */
    int n;              /* participants */
    int me;             /* my index among them */
    const int *members; /* index -> rank in comm; NULL: index is the rank */
    int tag;
} tern_xchg_t;

/* An exchange over all of an intracommunicator, on its collective context. */
tern_xchg_t tern_xchg_over(tern_comm_t *comm, int tag);

typedef void (*tern_xchg_combine_fn)(void *inout, const void *in, size_t bytes);

tern_status_t tern_xchg_bcast(const tern_xchg_t *x, int root, void *buf, size_t bytes);
/* buf holds this rank's value; on the root it ends as the combination. */
tern_status_t tern_xchg_reduce(const tern_xchg_t *x, int root, void *buf, size_t bytes,
                               tern_xchg_combine_fn combine);
/* all (n * item bytes) receives every participant's item, in index order. */
tern_status_t tern_xchg_allgather(const tern_xchg_t *x, const void *mine, void *all, size_t item);
/* One exchange with one peer (a rank of comm). */
tern_status_t tern_xchg_sendrecv(tern_comm_t *comm, uint32_t ctx, int peer, int tag,
                                 const void *sbuf, size_t sbytes, void *rbuf, size_t rbytes);

/* Agrees on n context ids (pairs) among the participants of x; root is any
 * index. Every participant marks them used; release the ones not needed. */
tern_status_t tern_ctx_agree(const tern_xchg_t *x, int root, int n, uint32_t *ctx_ids);

/* The same in rounds with a hook: at the root, between the group's reduce
 * and the bcast, swap(arg, m) combines the group's mask m with another
 * group's (the other root's, over a channel both roots have) and returns
 * TERN_OK or an error every member then returns. Both groups must run as
 * many rounds, which they do: each round's outcome (pick or retry) is read
 * from the combined mask. Windows come from (win_ctx, win_tag, round), so
 * the groups must pass the same pair. */
typedef tern_status_t (*tern_ctx_swap_fn)(void *arg, tern_ctx_mask_t *m);
tern_status_t tern_ctx_agree_ex(const tern_xchg_t *x, int root, int n, uint32_t *ctx_ids,
                                uint32_t win_ctx, int win_tag, tern_ctx_swap_fn swap, void *arg);

/* The same with each member's status mine checked in the same rounds (a
 * constructor's arguments, MPI_File_open's amode): when some member's is
 * not TERN_OK, or the root's swap fails, no ids are picked, every member
 * returns an error, its own if it had one, and *who is the index of the
 * member with the worst (MAXLOC order; -1 when the exchange itself
 * failed). The swap runs only while every status is TERN_OK, once per
 * round. */
tern_status_t tern_ctx_agree_checked(const tern_xchg_t *x, int root, int n, uint32_t *ctx_ids,
                                     uint32_t win_ctx, int win_tag, tern_ctx_swap_fn swap,
                                     void *arg, tern_status_t mine, int *who);

/* A swap hook for roots that reach each other through a communicator they
 * both have (an intercommunicator, the peer communicator of
 * Intercomm_create, WORLD for the groups of a session): arg is a
 * tern_ctx_peer_t naming the other root there. */
typedef struct {
    tern_comm_t *comm;
    uint32_t ctx;
    int peer; /* the other root, a rank of comm */
    int tag;
} tern_ctx_peer_t;
tern_status_t tern_ctx_swap_with_peer(void *arg, tern_ctx_mask_t *m);

#endif
