#include "core/pt2pt/match.h"
#include "base/pvars.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static tern_req_t *posted_head, *posted_tail;
tern_unexp_t *tern_match_unexp_head, *tern_match_unexp_tail;
#define unexp_head tern_match_unexp_head
#define unexp_tail tern_match_unexp_tail
/* Freed entries are kept for the next unexpected message: a small early
 * message (most collective traffic) then costs no malloc and no free.
 * Senders that run ahead of a descheduled receiver (a gather's with more
 * ranks than cores) queue thousands within their eager credit, and at 256
 * kept two of a 4-rank gather root's three entries a call were malloced
 * and freed again; 4096 (~0.8 MB at most, what such a burst held anyway)
 * keeps a burst's entries for the next. */
enum { UNEXP_KEEP_MAX = 4096 };
static tern_unexp_t *unexp_free;
static int n_unexp_free;

/* A message leaves the unexpected queue for a receive (or a drop). */
static void unexp_taken(const tern_unexp_t *u)
{
    tern_match_unexp_counted(u);
}

/* The index of a long unexpected queue. A sender far ahead of its
 * receiver (a gather's or a reduce's senders when ranks outnumber cores:
 * each may queue thousands of small messages within its eager credit)
 * makes the one queue long, and a receive naming its source walked past
 * every other source's entries: a gather root at 8 ranks on 2 cores spent
 * 60% of its time in that walk (perf, docs/performance.md). Once a search
 * for one source passes more than INDEX_AFTER entries, the entries are
 * also chained per bin of their source rank (src % N_BINS, arrival order
 * kept in each bin), so such a receive walks its bin only; MPI_ANY_SOURCE
 * still walks the queue in arrival order. The short queue pays nothing:
 * adding appends as always (the search bins what came since it last ran),
 * and while indexed the head is a sentinel that fits no receive (no
 * context has id UINT32_MAX), so the inline find comes to the search.
 * The index goes when the queue empties, and before the rare walkers
 * below (a cancelled send, unmatched messages) take from it. */
enum { N_BINS = 64, INDEX_AFTER = 32 };
static int indexed;
static tern_unexp_t sentinel = {.msg = {.context_id = UINT32_MAX, .src = -1, .tag = -1}};
static tern_unexp_t *binned_last; /* the last entry in a bin */
static tern_unexp_t *bin_head[N_BINS], *bin_tail[N_BINS];

static unsigned bin_of(int src)
{
    return (unsigned)src % N_BINS;
}

/* Bins the entries added since the last indexed search. */
static void index_catch_up(void)
{
    for (tern_unexp_t *u = binned_last->next; u; u = u->next) {
        unsigned b = bin_of(u->msg.src);
        u->prev = binned_last;
        u->bin_next = NULL;
        if (bin_tail[b])
            bin_tail[b]->bin_next = u;
        else
            bin_head[b] = u;
        bin_tail[b] = u;
        binned_last = u;
    }
}

static void index_build(void)
{
    memset(bin_head, 0, sizeof bin_head);
    memset(bin_tail, 0, sizeof bin_tail);
    sentinel.next = unexp_head;
    unexp_head = &sentinel;
    if (!unexp_tail)
        unexp_tail = &sentinel;
    binned_last = &sentinel;
    indexed = 1;
}

static void index_drop(void)
{
    if (!indexed)
        return;
    unexp_head = sentinel.next;
    if (unexp_tail == &sentinel)
        unexp_tail = NULL;
    sentinel.next = NULL;
    indexed = 0;
}

/* Takes u out of the indexed queue; bprev is the entry before it in its
 * bin (NULL: the bin's first). */
static void index_take(tern_unexp_t *u, tern_unexp_t *bprev)
{
    unsigned b = bin_of(u->msg.src);
    if (bprev)
        bprev->bin_next = u->bin_next;
    else
        bin_head[b] = u->bin_next;
    if (bin_tail[b] == u)
        bin_tail[b] = bprev;
    tern_unexp_t *p = u->prev;
    p->next = u->next;
    if (u->next)
        u->next->prev = p;
    if (unexp_tail == u)
        unexp_tail = p;
    if (binned_last == u)
        binned_last = p;
    u->next = NULL;
    unexp_taken(u);
    if (!sentinel.next)
        index_drop();
}

static tern_unexp_t *search_indexed(uint32_t ctx, int src, int tag, int take)
{
    index_catch_up();
    if (src == MPI_ANY_SOURCE) {
        for (tern_unexp_t *u = sentinel.next; u; u = u->next) {
            if (!tern_match_fits(u->msg.context_id, u->msg.src, u->msg.tag, ctx, src, tag)) {
                tern_pvar_add(TERN_PVAR_P2P_MATCH_ATTEMPTS, 1);
                continue;
            }
            if (take) {
                tern_unexp_t *bprev = NULL;
                for (tern_unexp_t *x = bin_head[bin_of(u->msg.src)]; x != u; x = x->bin_next)
                    bprev = x;
                index_take(u, bprev);
            }
            return u;
        }
        return NULL;
    }
    tern_unexp_t *bprev = NULL;
    for (tern_unexp_t *u = bin_head[bin_of(src)]; u; bprev = u, u = u->bin_next) {
        if (!tern_match_fits(u->msg.context_id, u->msg.src, u->msg.tag, ctx, src, tag)) {
            tern_pvar_add(TERN_PVAR_P2P_MATCH_ATTEMPTS, 1);
            continue;
        }
        if (take)
            index_take(u, bprev);
        return u;
    }
    return NULL;
}

void tern_match_post(tern_req_t *req)
{
    req->next = NULL;
    req->in_posted = 1;
    if (posted_tail)
        posted_tail->next = req;
    else
        posted_head = req;
    posted_tail = req;
    tern_pvar_inc(TERN_PVAR_P2P_POSTED_LEN);
}

tern_req_t *tern_match_take_posted(uint32_t ctx, int src, int tag)
{
    tern_req_t *prev = NULL;
    for (tern_req_t *r = posted_head; r; prev = r, r = r->next) {
        if (!tern_match_fits(ctx, src, tag, r->context_id, r->peer, r->tag)) {
            tern_pvar_add(TERN_PVAR_P2P_MATCH_ATTEMPTS, 1);
            continue;
        }
        if (prev)
            prev->next = r->next;
        else
            posted_head = r->next;
        if (posted_tail == r)
            posted_tail = prev;
        r->next = NULL;
        r->in_posted = 0;
        tern_pvar_dec(TERN_PVAR_P2P_POSTED_LEN);
        return r;
    }
    return NULL;
}

tern_req_t *tern_match_take_posted_if(int (*pred)(const tern_req_t *req))
{
    for (tern_req_t *r = posted_head; r; r = r->next)
        if (pred(r)) {
            tern_match_unpost(r);
            return r;
        }
    return NULL;
}

void tern_match_each_posted(void (*fn)(const tern_req_t *req, void *arg), void *arg)
{
    for (tern_req_t *r = posted_head; r; r = r->next)
        fn(r, arg);
}

int tern_match_unpost(tern_req_t *req)
{
    tern_req_t *prev = NULL;
    for (tern_req_t *r = posted_head; r; prev = r, r = r->next) {
        if (r != req)
            continue;
        if (prev)
            prev->next = r->next;
        else
            posted_head = r->next;
        if (posted_tail == r)
            posted_tail = prev;
        r->next = NULL;
        r->in_posted = 0;
        tern_pvar_dec(TERN_PVAR_P2P_POSTED_LEN);
        return 1;
    }
    return 0;
}

tern_unexp_t *tern_match_new_unexpected(const tern_msg_t *msg, size_t room)
{
    tern_unexp_t *u = unexp_free;
    if (u) {
        unexp_free = u->next;
        n_unexp_free--;
    } else if (!(u = malloc(sizeof *u))) {
        return NULL;
    }
    u->next = NULL;
    u->msg = *msg;
    u->owned_data = NULL;
    if (room) {
        u->msg.data = u->inline_data;
        if (room > sizeof u->inline_data && !(u->msg.data = u->owned_data = malloc(room))) {
            free(u);
            return NULL;
        }
    }
    return u;
}

tern_status_t tern_match_add_unexpected(const tern_msg_t *msg)
{
    /* A rendezvous has no data to keep (msg->data NULL). */
    size_t room = msg->data ? msg->size : 0;
    tern_unexp_t *u = tern_match_new_unexpected(msg, room);
    if (!u)
        return TERN_ERR_NOMEM;
    if (room)
        memcpy((void *)u->msg.data, msg->data, room);
    tern_match_queue_unexpected(u);
    return TERN_OK;
}

void tern_match_queue_unexpected(tern_unexp_t *u)
{
    const tern_msg_t *msg = &u->msg;
    if (unexp_tail)
        unexp_tail->next = u;
    else
        unexp_head = u;
    unexp_tail = u;
    tern_pvar_add(TERN_PVAR_P2P_UNEXPECTED, 1);
    tern_pvar_inc(TERN_PVAR_P2P_UNEXPECTED_LEN);
    tern_event4(TERN_EVENT_P2P_UNEXPECTED_QUEUED, msg->src, msg->tag, msg->size, 0);
}

tern_unexp_t *tern_match_search_unexpected(uint32_t ctx, int src, int tag, int take)
{
    if (indexed)
        return search_indexed(ctx, src, tag, take);
    tern_unexp_t *prev = NULL;
    int passed = 0;
    for (tern_unexp_t *u = unexp_head; u; prev = u, u = u->next) {
        if (!tern_match_fits(u->msg.context_id, u->msg.src, u->msg.tag, ctx, src, tag)) {
            tern_pvar_add(TERN_PVAR_P2P_MATCH_ATTEMPTS, 1);
            if (++passed > INDEX_AFTER && src != MPI_ANY_SOURCE) {
                index_build();
                return search_indexed(ctx, src, tag, take);
            }
            continue;
        }
        if (take) {
            if (prev)
                prev->next = u->next;
            else
                unexp_head = u->next;
            if (unexp_tail == u)
                unexp_tail = prev;
            u->next = NULL;
            unexp_taken(u);
        }
        return u;
    }
    return NULL;
}

tern_unexp_t *tern_match_take_unexpected_seq(int src_world, uint64_t seq)
{
    index_drop();
    tern_unexp_t *prev = NULL;
    for (tern_unexp_t *u = unexp_head; u; prev = u, u = u->next) {
        if (u->msg.src_world != src_world || u->msg.seq != seq)
            continue;
        if (prev)
            prev->next = u->next;
        else
            unexp_head = u->next;
        if (unexp_tail == u)
            unexp_tail = prev;
        u->next = NULL;
        unexp_taken(u);
        return u;
    }
    return NULL;
}

tern_unexp_t *tern_match_take_unexpected_if(int (*pred)(const tern_msg_t *msg, void *arg),
                                            void *arg)
{
    index_drop();
    tern_unexp_t *prev = NULL;
    for (tern_unexp_t *u = unexp_head; u; prev = u, u = u->next) {
        if (!pred(&u->msg, arg))
            continue;
        if (prev)
            prev->next = u->next;
        else
            unexp_head = u->next;
        if (unexp_tail == u)
            unexp_tail = prev;
        u->next = NULL;
        unexp_taken(u);
        return u;
    }
    return NULL;
}

void tern_match_free_unexpected(tern_unexp_t *u)
{
    free(u->owned_data);
    if (n_unexp_free >= UNEXP_KEEP_MAX) {
        free(u);
        return;
    }
    u->next = unexp_free;
    unexp_free = u;
    n_unexp_free++;
}
