/* The one tag-matching engine: posted receives and unexpected messages, for
 * every transport alike (MPI_ANY_SOURCE needs no double posting). Both
 * queues keep arrival order, which gives MPI's non-overtaking rule since
 * each transport delivers in order per pair. */
#ifndef TERN_CORE_MATCH_H
#define TERN_CORE_MATCH_H

#include "core/pt2pt/request.h"
#include "base/pvars.h"
#include "transport/transport.h"
#include <stddef.h>
#include <stdint.h>

/* An incoming message as the protocols see it (eager data or rendezvous
 * announcement). */
typedef struct {
    uint32_t type;
    int src_world;
    int src;          /* rank in the communicator */
    int tag;
    uint32_t context_id;
    size_t size;      /* message bytes */
    const void *data; /* eager payload */
    uint64_t sreq;    /* sender's request (sync eager, rendezvous) */
    uint64_t addr;    /* rendezvous: sender buffer */
    tern_rkey_t rkey;
    uint32_t rts_flags; /* rendezvous: RTS_STREAM (p2p.c) when the sender's data is scattered */
    uint64_t seq;       /* which match packet from src_world this was (send cancel) */
} tern_msg_t;

/* Payloads up to this size are kept inside the entry (no allocation). */
#define TERN_UNEXP_INLINE 64

typedef struct tern_unexp {
    struct tern_unexp *next;
    /* Only while the queue is indexed (match.c): the entry before this one
     * and the next entry of its source's bin. */
    struct tern_unexp *prev, *bin_next;
    tern_msg_t msg;
    void *owned_data;   /* a larger payload's copy, or NULL */
    _Alignas(16) unsigned char inline_data[TERN_UNEXP_INLINE];
} tern_unexp_t;

static inline int tern_match_fits(uint32_t ctx, int src, int tag, uint32_t want_ctx, int want_src,
                                  int want_tag)
{
    return ctx == want_ctx && (want_src == MPI_ANY_SOURCE || want_src == src) &&
           (want_tag == MPI_ANY_TAG || want_tag == tag);
}

/* Posted receives. */
void tern_match_post(tern_req_t *req);
tern_req_t *tern_match_take_posted(uint32_t ctx, int src, int tag);
/* Removes a posted receive (cancel); 1 if it was there. */
int tern_match_unpost(tern_req_t *req);
/* Removes and returns the first posted receive for which pred is true, or
 * NULL (failures: receives from a failed peer). */
tern_req_t *tern_match_take_posted_if(int (*pred)(const tern_req_t *req));
/* Calls fn on every posted receive, in order. */
void tern_match_each_posted(void (*fn)(const tern_req_t *req, void *arg), void *arg);

/* Unexpected messages. */
tern_status_t tern_match_add_unexpected(const tern_msg_t *msg);
/* The two halves of add: an entry for msg, with room bytes at u->msg.data
 * when room is not 0 (NULL: no memory), filled by the caller, then queued
 * (or freed with tern_match_free_unexpected). */
tern_unexp_t *tern_match_new_unexpected(const tern_msg_t *msg, size_t room);
void tern_match_queue_unexpected(tern_unexp_t *u);
/* Finds the first match; removes it when take is set. Inline here: the
 * test for an empty queue (a receive's common case), and the taking of a
 * first entry that fits (a collective schedule's receive of a message that
 * arrived before it: ~20 instructions less than the search's call); the
 * search (match.c) does the rest and counts the entries it passes over
 * (base/pvars.h). A long queue that a search had to walk far into is
 * indexed by source (match.c); the head is then a sentinel no receive
 * fits, so every find goes to the search, and the inline path costs
 * nothing more while the queue is short. */
extern tern_unexp_t *tern_match_unexp_head, *tern_match_unexp_tail;
tern_unexp_t *tern_match_search_unexpected(uint32_t ctx, int src, int tag, int take);
/* An unexpected message left the queue: its level and event. */
static inline void tern_match_unexp_counted(const tern_unexp_t *u)
{
    tern_pvar_dec(TERN_PVAR_P2P_UNEXPECTED_LEN);
    tern_event4(TERN_EVENT_P2P_UNEXPECTED_MATCHED, u->msg.src, u->msg.tag, u->msg.size, 0);
}
static inline tern_unexp_t *tern_match_find_unexpected(uint32_t ctx, int src, int tag, int take)
{
    tern_unexp_t *u = tern_match_unexp_head;
    if (!u)
        return NULL;
    if (!tern_match_fits(u->msg.context_id, u->msg.src, u->msg.tag, ctx, src, tag))
        return tern_match_search_unexpected(ctx, src, tag, take);
    if (take) {
        tern_match_unexp_head = u->next;
        if (tern_match_unexp_tail == u)
            tern_match_unexp_tail = NULL;
        u->next = NULL;
        tern_match_unexp_counted(u);
    }
    return u;
}
void tern_match_free_unexpected(tern_unexp_t *u);
/* Removes and returns the unexpected message that was match packet seq
 * from src_world (a cancelled send), or NULL when it is not there. */
tern_unexp_t *tern_match_take_unexpected_seq(int src_world, uint64_t seq);
/* Removes and returns the first unexpected message for which pred is true,
 * or NULL (messages nobody will receive: comm/unmatched.c). */
tern_unexp_t *tern_match_take_unexpected_if(int (*pred)(const tern_msg_t *msg, void *arg),
                                            void *arg);

#endif
