/* Context ids. Each communicator owns a pair (ctx, ctx + 1); slot s of the
 * table is the pair (2s, 2s + 1). WORLD has slot 0, SELF slot 1.
 *
 * Agreement: every participant contributes a bitmask of its free slots and
 * a cursor; the masks are ANDed, the cursors maxed (a binomial reduce to
 * the root and a bcast back, on internal point-to-point), and all pick the
 * first free slots at or after the cursor. Everyone computes from the same
 * combined mask, so all pick the same slot, and a slot free on every
 * participant cannot be in use by any communicator that shares a process
 * with the new one. The moving cursor makes a freed id the last to be
 * reused, so a late message for a freed communicator is unlikely to meet
 * its successor.
 *
 * Several agreements may be in flight at once on a process: nonblocking
 * ones (MPI_Comm_idup) advance by progress, and a blocking one waits in
 * progress too. Each reserves the slots it contributed until its round
 * ends, and the others contribute only slots not reserved, so no two can
 * pick the same slot. A nonblocking round contributes only a window of
 * slots (tern_ctx_window), the same on every member, so overlapping
 * agreements on shared processes each find free slots in their own
 * window; a round that finds none retries with another window.
 *
 * Under MPI_THREAD_MULTIPLE blocking agreements overlap too: a thread's
 * wait lets another thread's agreement in (runtime/api_lock.h), so they
 * take windows the same way; otherwise the first would reserve every slot
 * and the second find none. Agreements spanning two groups that meet only
 * through their roots (accept/connect, spawn: comm_dynamic.c) run the same
 * rounds with the roots swapping masks in between (tern_ctx_agree_ex). */
#include "core/comm/comm.h"
#include "core/comm/comm_exchange.h"
#include "core/runtime/api_lock.h"

#include <string.h>

static uint32_t used[TERN_CTX_MASK_WORDS]; /* bit set: slot in use here */
static uint32_t reserved[TERN_CTX_MASK_WORDS]; /* contributed to an agreement in flight */
static uint32_t cursor;                    /* grows; slot = cursor % SLOTS */

void tern_ctx_init(void)
{
    memset(used, 0, sizeof used);
    memset(reserved, 0, sizeof reserved);
    used[0] = 3u; /* WORLD and SELF */
    used[TERN_CTX_MASK_WORDS - 1] = 1u << 31; /* TERN_CTX_BRIDGE (comm_dynamic.h) */
    cursor = 2;
}

void tern_ctx_mask_local(tern_ctx_mask_t *m)
{
    for (int i = 0; i < TERN_CTX_MASK_WORDS; i++)
        m->free[i] = ~used[i] & ~reserved[i];
    m->cursor = cursor;
    m->windowed = 0;
}

void tern_ctx_contribute(tern_ctx_mask_t *m, uint32_t first, uint32_t n)
{
    tern_ctx_mask_local(m);
    if (n < TERN_CTX_SLOTS) {
        /* Slots [first, first + n): whole words (n and first are multiples of 32). */
        for (uint32_t i = 0; i < TERN_CTX_MASK_WORDS; i++)
            if (i < first / 32 || i >= (first + n) / 32)
                m->free[i] = 0;
    }
    for (int i = 0; i < TERN_CTX_MASK_WORDS; i++)
        reserved[i] |= m->free[i];
}

void tern_ctx_withdraw(const tern_ctx_mask_t *mine)
{
    for (int i = 0; i < TERN_CTX_MASK_WORDS; i++)
        reserved[i] &= ~mine->free[i];
}

uint32_t tern_ctx_window(uint32_t parent_ctx, int tag, unsigned round)
{
    /* splitmix64 of the agreement's identity and round: every member
     * computes the same window, overlapping agreements rarely share one. */
    uint64_t z = ((uint64_t)parent_ctx << 32 | (uint32_t)tag) + 0x9e3779b97f4a7c15ull * (round + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (uint32_t)(z % (TERN_CTX_SLOTS / TERN_CTX_WINDOW)) * TERN_CTX_WINDOW;
}

void tern_ctx_mask_combine(void *inout, const void *in, size_t bytes)
{
    tern_ctx_mask_t *a = inout;
    const tern_ctx_mask_t *b = in;
    (void)bytes;
    for (int i = 0; i < TERN_CTX_MASK_WORDS; i++)
        a->free[i] &= b->free[i];
    if (b->cursor > a->cursor)
        a->cursor = b->cursor;
    a->windowed |= b->windowed;
}

tern_status_t tern_ctx_pick(const tern_ctx_mask_t *m, int n, uint32_t *ctx_ids)
{
    int got = 0;
    uint32_t c = m->cursor;
    for (uint32_t i = 0; i < TERN_CTX_SLOTS && got < n; i++, c++) {
        uint32_t s = c % TERN_CTX_SLOTS;
        if (m->free[s / 32] & (1u << (s % 32)))
            ctx_ids[got++] = 2 * s;
    }
    if (got < n) {
        /* Every slot in use somewhere: a fixed limit, not memory. */
        int live = 0;
        for (int i = 0; i < TERN_CTX_MASK_WORDS; i++)
            live += __builtin_popcount(used[i]);
        live--; /* the slot kept for dynamic-process handshakes is no communicator */
        return tern_status_detail(TERN_ERR_LIMIT,
                                  "too many communicators: %d are live in this process "
                                  "(MPI_COMM_WORLD and MPI_COMM_SELF included) and no context "
                                  "id is free on every member (the limit is %d); free some "
                                  "with MPI_Comm_free",
                                  live, TERN_CTX_SLOTS - 1);
    }
    for (int i = 0; i < n; i++) {
        uint32_t s = ctx_ids[i] / 2;
        used[s / 32] |= 1u << (s % 32);
    }
    if (c > cursor)
        cursor = c;
    return TERN_OK;
}

void tern_ctx_release(uint32_t ctx)
{
    uint32_t s = ctx / 2;
    if (s >= 2 && s < TERN_CTX_SLOTS)
        used[s / 32] &= ~(1u << (s % 32));
}

/* Rounds of windowed agreement before one over every slot (comm_idup.c
 * uses as many). */
#define WINDOW_ROUNDS 32

static int count_free(const tern_ctx_mask_t *m)
{
    int k = 0;
    for (int i = 0; i < TERN_CTX_MASK_WORDS; i++)
        k += __builtin_popcount(m->free[i]);
    return k;
}

/* A round's reduced buffer: the mask and the worst status a member
 * brought (the root's swap's counts as the root's), with that member's
 * index; ties go to the lowest index, so every member names the same. */
typedef struct {
    tern_ctx_mask_t m;
    int32_t status;
    int32_t who;
} ctx_round_t;

static void round_combine(void *inout, const void *in, size_t bytes)
{
    ctx_round_t *a = inout;
    const ctx_round_t *b = in;
    (void)bytes;
    tern_ctx_mask_combine(&a->m, &b->m, sizeof a->m);
    if (b->status > a->status || (b->status == a->status && b->who < a->who)) {
        a->status = b->status;
        a->who = b->who;
    }
}

tern_status_t tern_ctx_agree_checked(const tern_xchg_t *x, int root, int n, uint32_t *ctx_ids,
                                     uint32_t win_ctx, int win_tag, tern_ctx_swap_fn swap,
                                     void *arg, tern_status_t mine, int *who)
{
    /* Members may differ (MULTIPLE asked for on some): whether to retry
     * is decided on the combined mask, the same on all. */
    int windowed = atomic_load_explicit(&tern_api_locking, memory_order_relaxed);
    *who = -1;
    for (unsigned round = 0;; round++) {
        tern_ctx_mask_t contributed;
        ctx_round_t all;
        if (windowed && round < WINDOW_ROUNDS)
            tern_ctx_contribute(&contributed, tern_ctx_window(win_ctx, win_tag, round),
                                TERN_CTX_WINDOW);
        else
            tern_ctx_contribute(&contributed, 0, TERN_CTX_SLOTS);
        contributed.windowed = windowed && round < WINDOW_ROUNDS;
        all.m = contributed;
        all.status = (int32_t)mine;
        all.who = x->me;
        tern_status_t st = tern_xchg_reduce(x, root, &all, sizeof all, round_combine);
        tern_status_t root_st = TERN_OK;
        if (x->me == root) {
            /* The root's failure (or the other group's) reaches every
             * member in the bcast, so none waits for a round that never
             * comes. A member's bad status skips the swap: no ids are
             * picked then. */
            if (st == TERN_OK && all.status == TERN_OK && swap)
                st = swap(arg, &all.m);
            if (st != TERN_OK) {
                root_st = st;
                all.status = (int32_t)st;
                all.who = root;
            }
            st = TERN_OK;
        }
        if (st == TERN_OK)
            st = tern_xchg_bcast(x, root, &all, sizeof all);
        tern_ctx_withdraw(&contributed);
        if (st == TERN_OK && all.status != TERN_OK) {
            *who = all.who;
            if (mine != TERN_OK)
                st = mine;
            else if (x->me == root && root_st != TERN_OK)
                st = root_st;
            else
                st = tern_status_detail((tern_status_t)all.status,
                                        "context-id agreement failed at member %d: %s", all.who,
                                        tern_status_string((tern_status_t)all.status));
        }
        if (st != TERN_OK)
            return st;
        /* All members saw the same mask: they retry, or pick, together. */
        if (all.m.windowed && count_free(&all.m) < n)
            continue;
        return tern_ctx_pick(&all.m, n, ctx_ids);
    }
}

tern_status_t tern_ctx_agree_ex(const tern_xchg_t *x, int root, int n, uint32_t *ctx_ids,
                                uint32_t win_ctx, int win_tag, tern_ctx_swap_fn swap, void *arg)
{
    int who;
    return tern_ctx_agree_checked(x, root, n, ctx_ids, win_ctx, win_tag, swap, arg, TERN_OK, &who);
}

tern_status_t tern_ctx_agree(const tern_xchg_t *x, int root, int n, uint32_t *ctx_ids)
{
    return tern_ctx_agree_ex(x, root, n, ctx_ids, x->ctx, x->tag, NULL, NULL);
}

tern_status_t tern_ctx_swap_with_peer(void *arg, tern_ctx_mask_t *m)
{
    const tern_ctx_peer_t *p = arg;
    tern_ctx_mask_t theirs;
    tern_status_t st = tern_xchg_sendrecv(p->comm, p->ctx, p->peer, p->tag, m, sizeof *m, &theirs,
                                          sizeof theirs);
    if (st == TERN_OK)
        tern_ctx_mask_combine(m, &theirs, sizeof *m);
    return st;
}
