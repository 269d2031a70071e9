/* The internals ulfm.c and ulfm_agree.c share (docs/design.md, "Failure
 * handling under ULFM"): a communicator's failure state, the bodies of
 * agreements, the members of a communicator, and the messages. ulfm.c
 * keeps the state, sends and receives the messages and fails what waits;
 * ulfm_agree.c runs the agreements (agree, shrink and their nonblocking
 * forms, MPI_Finalize's meeting) as operations a progress hook advances. */
#ifndef TERN_CORE_ULFM_INT_H
#define TERN_CORE_ULFM_INT_H

#include "core/comm/ulfm.h"
#include "core/runtime/runtime.h"

#include <stddef.h>
#include <stdint.h>

enum { K_REVOKE = 1, K_CONTRIB, K_DECIDE, K_QUERY, K_ANSWER };

/* What an agreement combines; (members + 7) / 8 bytes of failed members
 * (a bit per member) follow. The flags are ANDed per group: an
 * intercommunicator's members get the other group's AND (the ULFM
 * specification's MPIX_Comm_agree), an intracommunicator's flag[0]. */
typedef struct {
    uint32_t flag[2];
    tern_ctx_mask_t mask;
} body_t;

typedef struct {
    uint32_t seq;
    int valid;
    unsigned char *body;
} slot_t;

struct tern_ulfm {
    int *failed;       /* comm ranks, in the order they were found failed */
    int n_acked;       /* the first n_acked of failed[] are acknowledged */
    uint32_t seq;      /* agreements this process started on the communicator */
    size_t body_bytes;
    slot_t *contrib;   /* [rank * 2 + (seq & 1)]: contributions sent to us */
    slot_t dec[4];     /* [seq & 3]: decisions known here */
    uint32_t *queried; /* [rank]: seq + 1 of a QUERY waiting for our decision */
};

/* Members: an intracommunicator's are its ranks; an intercommunicator's
 * are both groups, the first (as MPI_Intercomm_merge orders two groups of
 * equal `high`) before the other, so that every member of either group
 * numbers them alike. The agreement, revocation and the failed lists run
 * over members. */
static inline int local_first(const tern_comm_t *c)
{
    return c->inter_first ? c->inter_first > 0
                          : tern_comm_local_world_rank(c, 0) < c->remote_world_ranks[0];
}

static inline int n_members(const tern_comm_t *c)
{
    return c->is_inter ? c->size + c->remote_size : c->size;
}

static inline int first_group_size(const tern_comm_t *c)
{
    return !c->is_inter ? c->size : local_first(c) ? c->size : c->remote_size;
}

/* 0 for the first group, 1 for the other (an intracommunicator: 0). */
static inline int group_of(const tern_comm_t *c, int m)
{
    return m >= first_group_size(c);
}

static inline int self_of(const tern_comm_t *c)
{
    return c->is_inter && !local_first(c) ? c->remote_size + c->rank : c->rank;
}

static inline int world_of(const tern_comm_t *c, int m)
{
    if (!c->is_inter)
        return tern_comm_local_world_rank(c, m);
    int lf = local_first(c), first = lf ? c->size : c->remote_size;
    if (m >= first)
        return lf ? c->remote_world_ranks[m - first] : tern_comm_local_world_rank(c, m - first);
    return lf ? tern_comm_local_world_rank(c, m) : c->remote_world_ranks[m];
}

static inline int member_failed(const tern_comm_t *c, int m)
{
    return tern_rt.peers[world_of(c, m)].failed != TERN_OK;
}

/* c's failure state, made at the first need (NULL: out of memory). */
struct tern_ulfm *tern_ulfm_state(tern_comm_t *c);
/* Appends the members found failed since the last look. */
void tern_ulfm_update_failed(tern_comm_t *c);
/* Sends message kind of agreement seq to member m (body: body_bytes, or
 * NULL); nothing to a member known failed. */
void tern_ulfm_send(tern_comm_t *c, int m, uint32_t kind, uint32_t seq, const unsigned char *body);
/* Keeps the decision of agreement seq and answers the QUERYs that waited
 * for it. */
void tern_ulfm_record_decision(tern_comm_t *c, uint32_t seq, const unsigned char *body);

#endif
