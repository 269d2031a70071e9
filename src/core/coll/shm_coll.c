/* The shm collectives as one resumable schedule step (tern_sched_poll): a
 * state machine over the steps of shm_region.h, returning whenever a flag
 * it needs is not there yet, so the same code serves the blocking call
 * (polled in a loop) and the nonblocking and persistent ones (polled from
 * progress).
 *
 * A collective takes a ticket when it first runs (the call, or each
 * MPI_Start), and its turn comes once the runs of the earlier tickets have
 * ended; its steps then follow the last step this rank ran: one for a
 * barrier, one per slot-sized chunk otherwise (cell-sized for a bcast,
 * through the ring of shm_region.h). A bcast takes the root's number of
 * steps (at least one), whatever its own count says: the root stores its
 * byte count in the cell's header line, the others read it in the first
 * step, copy what fits their buffer and end with TERN_ERR_TRUNCATE when
 * the counts differ, so an erroneous program (MPICH's bcastlength) gets an
 * error instead of ranks falling out of step and hanging. A reduce takes
 * its own count's steps: one while the vector fits a slot (every call the
 * default table sends here), where mismatched counts leave the elements
 * past the shortest vector undefined but nothing hangs. An allreduce runs
 * the shortest count's steps, agreed in its first (ar_agree_count).
 * Per step n (slot n % 2; at two ranks, a place inside it, shm_coll_copy.c):
 *   barrier:  enter = n; wait for every enter >= n.
 *   bcast:    root: wait until its next cell is free, copy the chunk in,
 *             store its byte count, enter = n; others: wait for the root's
 *             enter >= n, copy the chunk out of that cell.
 *   (all)reduce: wait until slot n is free, copy the chunk in, enter = n;
 *             small chunks (and a 2-rank allreduce's up to
 *             TERN_COLL_SHM_ALLREDUCE_WHOLE bytes: whole): the taker
 *             (root, or every rank) waits for every enter and folds all
 *             the slots into its output; from
 *             TERN_SHM_PARALLEL_MIN bytes: every rank copies in all but
 *             its own 1/p slice, folds that slice (its own term from its
 *             buffer) into the result slot, reduced = n, and the taker(s)
 *             wait for every reduced and copy the result out. A reduce's
 *             root (not in place) folds its own term from its buffer and
 *             copies nothing in; a reduce of 2 ranks always folds at the
 *             root (the other's chunk crosses the cores once).
 *   gather, allgather, scatter, alltoall (blocks of b bytes, chunks of at
 *             most a slot; alltoall: an alltoall slot / (p - 1) bytes,
 *             shm_region.h): the writers
 *             (every rank; the root for scatter) wait until slot n is
 *             free, copy their chunk in (scatter: the root fills every
 *             rank's slot; alltoall: every rank puts one piece per other
 *             destination in its slot), enter = n (allgather, alltoall:
 *             then the own chunk straight to the receive buffer); the
 *             readers (every rank; the root for gather) wait for the
 *             writers' enter and copy out of every other slot (scatter:
 *             out of their own).
 *   reduce_scatter (steps of up to a slot / p elements of every rank's
 *             block; a vector that fits a slot: one step, the slot holding
 *             it as laid out): wait until slot n is free, copy every other
 *             rank's piece in (in place: this rank's too), enter = n; a
 *             rank with a piece in this step waits for every enter and
 *             folds its piece of every slot (its own term from its buffer
 *             unless in place) straight into its receive buffer: each rank
 *             reads 1/p of the data, no result slot, no second flag.
 *   then leave = n.
 * Folds run from the right, x_0 op (x_1 op (... op x_(p-1))): a
 * non-commutative op keeps rank order, and the bits are the same for a
 * given count and communicator size, blocking or not (at two ranks, rank
 * 1 folds a commutative op's terms as x_1 op x_0: see fold). */
#include "core/coll/shm_coll.h"
#include "core/coll/shm_region.h"
#include "core/coll/shm_run.h"
#include "core/datatype/op.h"
#include "core/pt2pt/progress.h"

#include <stdint.h>
#include <string.h>

enum { PH_CLAIM, PH_TURN, PH_ORDER, PH_SLOT_FREE, PH_ENTERED, PH_REDUCED, PH_OUT };

/* The result slot of the current step, at the step's place. */
static char *result_at(const run_t *r)
{
    return tern_shm_result(r->reg, r->n) + r->at;
}

/* An allreduce of 3+ ranks whose vector fits TERN_SHM_INLINE_MAX bytes
 * puts each term in its rank's enter line (shm_region.h), not its slot:
 * oversubscribed, each cross-core line a reader pulls or a writer takes
 * back costs ~0.05-0.2 us (docs/performance.md, row `ar4s`). */
static int inline_term(const run_t *r)
{
    return r->kind == TERN_COLL_ALLREDUCE && r->reg->p > 2 &&
           r->len * r->a.esz <= TERN_SHM_INLINE_MAX;
}

/* dst = x_0 op ... op x_(p-1) over count elements at off_bytes of each
 * rank's slot of step n; this rank's term is read from mine instead when
 * not NULL (its slice of a parallel fold, which it never copied in).
 * Rank 1 of two with a commutative op computes x_1 op x_0 instead: the
 * other core's term then comes over in the memcpy (glibc's string copy
 * pulls those lines faster than the op's vector loads) and the op reads
 * only local memory, as rank 0's fold already does (loaded A/B, 2-rank
 * allreduce 16/32/64 KB: 2.38/3.52/5.53 against 2.76/3.94/5.89 us;
 * docs/performance.md). */
static tern_status_t fold(run_t *r, size_t off_bytes, size_t count, const char *mine, char *dst)
{
    if (count == 0)
        return TERN_OK;
    int p = r->reg->p, me = r->reg->me, in = inline_term(r);
#define TERM(q)                                                                                    \
    (mine && (q) == me ? mine                                                                      \
     : in              ? tern_shm_inline_slot(r->reg, (q), r->n)                                   \
                       : slot_at(r, (q)) + off_bytes)
    if (p == 2 && me == 1 && mine && tern_op_is_commutative(r->a.op)) {
        memcpy(dst, TERM(0), count * r->a.esz);
        return tern_op_apply(r->a.op, r->a.dt, mine, dst, count);
    }
    memcpy(dst, TERM(p - 1), count * r->a.esz);
    for (int q = p - 2; q >= 0; q--) {
        tern_status_t st = tern_op_apply(r->a.op, r->a.dt, TERM(q), dst, count);
#undef TERM
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}

/* The block collectives: does this rank write (copy in) / read (copy out)
 * in a step? */
static int writes(const run_t *r, int me)
{
    return r->kind != TERN_COLL_SCATTER || me == r->root;
}

static int reads(const run_t *r, int me)
{
    return r->kind != TERN_COLL_GATHER || me == r->root;
}

/* Allgather and alltoall of two ranks copy chunks of PAIR_LOCKSTEP_MIN
 * to PAIR_LOCKSTEP_MAX bytes in lockstep (slot_wait_back). Other chunks
 * keep the slack of two slots, where the wait for the other's copy out
 * cost more than it saved (loaded A/Bs: 2 KB 0.60 -> 0.72 us, 8 KB +3%,
 * 16 KB level; 128 KB +6% in the fast mode; docs/performance.md row
 * `ag64o`). */
#define PAIR_LOCKSTEP_MIN ((size_t)32768)
#define PAIR_LOCKSTEP_MAX ((size_t)65536)

/* How many steps back the step lies whose leave a writer waits for before
 * it copies into slot n % 2: 2, the last step that used the slot; for
 * allgather and alltoall of two ranks with chunks of PAIR_LOCKSTEP_MIN to
 * PAIR_LOCKSTEP_MAX bytes 1, so neither rank copies into one slot while
 * the other still pulls the step before out of the other slot. The two
 * then copy in together and copy out together, instead of one core's
 * stores invalidating lines while the other core pulls lines out of its
 * cache (loaded A/B, 64 KB in the fast mode: 2.64 / 2.59 -> 2.43 / 2.44
 * us; docs/performance.md row `ag64o`). */
static uint64_t slot_wait_back(const run_t *r)
{
    int pair = r->reg->p == 2 && (r->kind == TERN_COLL_ALLGATHER || r->kind == TERN_COLL_ALLTOALL);
    int mid = r->len >= PAIR_LOCKSTEP_MIN && r->len <= PAIR_LOCKSTEP_MAX;
    return pair && mid ? 1 : TERN_SHM_SLOTS;
}

static int is_rs(const run_t *r)
{
    return tern_coll_is_reduce_scatter(r->kind);
}

/* Reduce_scatter, step [off, off + len) of every block: each rank's piece
 * into its place in this rank's slot (its own only when own). */
static void rs_copy_in(run_t *r)
{
    tern_shm_region_t *reg = r->reg;
    size_t esz = r->a.esz, total = r->a.count, mine_end = r->my_lo + r->my_n;
    const char *sbuf = r->a.sbuf;
    char *slot = slot_at(r, reg->me);
    if (r->flat) { /* the vector as it is, less this rank's block unless own */
        if (r->own) {
            memcpy(slot, sbuf, total * esz);
            return;
        }
        if (r->my_lo)
            memcpy(slot, sbuf, r->my_lo * esz);
        if (total > mine_end)
            memcpy(slot + mine_end * esz, sbuf + mine_end * esz, (total - mine_end) * esz);
        return;
    }
    size_t lo = 0;
    for (int q = 0; q < reg->p; q++) {
        size_t c = r->a.rcounts[q];
        if (c > r->off && (q != reg->me || r->own)) {
            size_t n = c - r->off < r->len ? c - r->off : r->len;
            memcpy(slot + (size_t)q * r->per * esz, sbuf + (lo + r->off) * esz, n * esz);
        }
        lo += c;
    }
}

/* Reduce_scatter: this rank's piece of step n from every slot, folded into
 * its receive buffer. */
static tern_status_t rs_fold(run_t *r, size_t n)
{
    size_t esz = r->a.esz;
    size_t at = r->flat ? r->my_lo : (size_t)r->reg->me * r->per;
    const char *mine = r->own ? NULL : (const char *)r->a.sbuf + (r->my_lo + r->off) * esz;
    return fold(r, at * esz, n, mine, (char *)r->a.rbuf + r->off * esz);
}

/* Reduce_scatter: this rank's elements in the current step. */
static size_t rs_mine(const run_t *r)
{
    if (r->my_n <= r->off)
        return 0;
    return r->my_n - r->off < r->len ? r->my_n - r->off : r->len;
}

static int blocks(const run_t *r)
{
    return r->kind == TERN_COLL_GATHER || r->kind == TERN_COLL_ALLGATHER ||
           r->kind == TERN_COLL_SCATTER || r->kind == TERN_COLL_ALLTOALL;
}

/* An allreduce of two ranks with a commutative op, chunks up to
 * TERN_COLL_SHM_ALLREDUCE_WHOLE bytes: each rank copies its whole chunk in
 * (plain stores, as allgather's copy in) and folds the whole vector from the
 * other's slot, so a call synchronises once and writes no result slot;
 * the parallel fold's second flag and the pass of each half back cost
 * more than the doubled fold there (loaded A/B, slow VM mode, 16 / 32 KB:
 * 2.1 / 3.1 against 2.4 / 3.6 us; docs/performance.md). The fold takes
 * the same path on both ranks: the agreed length, the op and the knob
 * (which must match) decide it. */
static int whole(const run_t *r)
{
    return r->kind == TERN_COLL_ALLREDUCE && r->reg->p == 2 &&
           r->len * r->a.esz <= r->reg->ar_whole && tern_op_is_commutative(r->a.op);
}

/* A reduce of two ranks folds at the root alone: the other rank's chunk
 * crosses the cores once, where the parallel fold moves half of it each
 * way and the root's result slice back (loaded A/B, 8-64 KB: 0.55-0.65x
 * the parallel fold's time; docs/performance.md). */
static int parallel(const run_t *r)
{
    if ((r->kind == TERN_COLL_REDUCE && r->reg->p == 2) || whole(r))
        return 0;
    return r->len * r->a.esz >= TERN_SHM_PARALLEL_MIN && r->len >= (size_t)r->reg->p;
}

/* A reduce's root outside MPI_IN_PLACE folds its own term straight from
 * its send buffer, never copying it into its slot (no one else reads it). */
static const char *root_term(const run_t *r)
{
    if (r->kind != TERN_COLL_REDUCE || r->root != r->reg->me || r->a.sbuf == r->a.rbuf || !r->len)
        return NULL;
    return (const char *)r->a.sbuf + r->off * r->a.esz;
}

/* An allreduce's parallel fold writes this rank's slice straight into its
 * receive buffer, then copies it into the result slot for the others: its
 * own slice is never copied back out of the slot (loaded A/B, 2 ranks,
 * 64 KB: 6.0 against 7.0 us; docs/performance.md). Not in place, where
 * the fold's first store would overwrite this rank's own term before it
 * is read. */
static int fold_to_rbuf(const run_t *r)
{
    if (r->kind != TERN_COLL_ALLREDUCE)
        return 0;
    uintptr_t sb = (uintptr_t)r->a.sbuf, rb = (uintptr_t)r->a.rbuf;
    size_t n = r->a.count * r->a.esz;
    return sb + n <= rb || rb + n <= sb;
}

/* The first element of rank q's slice of a parallel fold (q = p: the end). */
static size_t slice_lo(const run_t *r, int q)
{
    return r->len * (size_t)q / (size_t)r->reg->p;
}

static uint64_t steps_for(const run_t *r)
{
    if (r->kind == TERN_COLL_BARRIER)
        return 1;
    uint64_t n = (r->total + r->per - 1) / r->per;
    return r->kind == TERN_COLL_BCAST && n == 0 ? 1 : n; /* a bcast always meets */
}

/* The bcast ring's cell of this step (every rank counts the chunks alike). */
static int bcast_cell(const tern_shm_region_t *reg)
{
    return (int)(reg->chunks % (uint64_t)reg->cells);
}

/* A rank is done with the cell of step n (the root filled it, the others
 * read it): the root's next use of it waits for every leave >= n. */
static void bcast_cell_used(tern_shm_region_t *reg, int i, uint64_t n)
{
    reg->cell_step[i] = n;
    reg->chunks++;
}

/* A bcast's non-root, in its first step: the root's byte count, in the
 * cell's header, decides the steps (the enter flag's acquire made it
 * visible). */
static void bcast_learn_total(run_t *r, const char *cell)
{
    uint64_t total;
    memcpy(&total, cell, sizeof total);
    r->total = (size_t)total;
    r->steps = steps_for(r);
    r->len = r->total < r->per ? r->total : r->per;
}

/* A bcast's non-root, after its last step: the root sent another amount. */
static tern_status_t bcast_mismatch(run_t *r)
{
    if (r->total == r->room)
        return TERN_OK;
    tern_sched_note(r->s, "the root (rank %d) sent %zu bytes where this rank's count and datatype "
                          "describe %zu: they must describe the same amount of data on every rank",
                    r->root, r->total, r->room);
    return TERN_ERR_TRUNCATE;
}

/* An allreduce's first step: this rank's element count beside its enter
 * flag; once every rank entered, every rank runs the steps of the shortest
 * count. Mismatched (non-zero) counts, an erroneous program, then leave
 * the result undefined instead of one rank waiting forever for steps the
 * others never run (or for a parallel fold's flag that a shorter, unfolded
 * step never sets), so the 2-rank row may take more than one step. */
static void ar_publish_count(run_t *r)
{
    if (r->kind == TERN_COLL_ALLREDUCE && r->n == r->first)
        *tern_shm_count_word(r->reg, r->reg->me, r->n) = r->total;
}

static void ar_agree_count(run_t *r)
{
    if (r->kind != TERN_COLL_ALLREDUCE || r->n != r->first)
        return;
    for (int q = 0; q < r->reg->p; q++) {
        uint64_t c = *tern_shm_count_word(r->reg, q, r->n);
        if (c < r->total)
            r->total = (size_t)c;
    }
    r->steps = steps_for(r);
    if (r->len > r->total)
        r->len = r->total;
}

/* Ends step n; 1 when it was the last. */
static int end_step(run_t *r)
{
    tern_shm_set(r->reg, TERN_SHM_LEAVE, r->n);
    r->reg->done = r->n;
    if (r->n + 1 == r->first + r->steps) {
        r->reg->runs_done = r->ticket;
        r->phase = PH_CLAIM;
        return 1;
    }
    r->n++;
    r->off += r->len;
    r->len = r->total - r->off < r->per ? r->total - r->off : r->per;
    r->phase = PH_ORDER;
    return 0;
}

#define WAIT(flag, q, n)                                                       \
    do {                                                                       \
        if (!tern_shm_reached(reg, (flag), (q), (n), &r->cursor, st))          \
            return 0;                                                          \
        if (*st != TERN_OK)                                                    \
            return 1;                                                          \
    } while (0)

static int poll_run(void *ctx, tern_status_t *st)
{
    run_t *r = ctx;
    tern_shm_region_t *reg = r->reg;
    int me = reg->me, takes = r->root < 0 || r->root == me;
    size_t esz = r->a.esz;
    for (;;) {
        switch (r->phase) {
        case PH_CLAIM: /* a new run: its place in call (or start) order */
            if (r->kind == TERN_COLL_BCAST)
                r->total = r->room; /* the root's; the others learn it in step 1 */
            else if (r->kind == TERN_COLL_ALLREDUCE)
                r->total = r->a.count; /* a persistent run's last agreement may have cut it */
            if (steps_for(r) == 0)
                return 1; /* no step, no ticket */
            r->ticket = ++reg->tickets;
            r->phase = PH_TURN;
            /* fall through */
        case PH_TURN: /* the earlier runs ended: this run's steps follow theirs */
            if (reg->broken >= 0) { /* an earlier step will never end */
                *st = tern_shm_broken_status(reg);
                r->phase = PH_CLAIM;
                return 1;
            }
            if (reg->runs_done != r->ticket - 1)
                return 0;
            r->steps = steps_for(r);
            r->first = r->n = reg->done + 1;
            r->off = 0;
            r->len = r->total < r->per ? r->total : r->per;
            r->cursor = 0;
            r->phase = PH_ORDER;
            /* fall through */
        case PH_ORDER: /* this rank's steps run one at a time, in order */
            if (reg->broken >= 0) { /* an earlier step will never end */
                *st = tern_shm_broken_status(reg);
                r->phase = PH_CLAIM;
                return 1;
            }
            r->at = tern_shm_run_place(r);
            r->phase = PH_SLOT_FREE;
            /* fall through */
        case PH_SLOT_FREE:
            if (is_rs(r)) {
                if (r->n > TERN_SHM_SLOTS)
                    WAIT(TERN_SHM_LEAVE, -1, r->n - TERN_SHM_SLOTS);
                rs_copy_in(r);
                tern_shm_set(reg, TERN_SHM_ENTER, r->n);
            } else if (blocks(r)) {
                if (writes(r, me)) {
                    uint64_t back = slot_wait_back(r);
                    if (r->n > back)
                        WAIT(TERN_SHM_LEAVE, -1, r->n - back);
                    tern_shm_run_copy_in(r);
                    tern_shm_set(reg, TERN_SHM_ENTER, r->n);
                    tern_shm_run_copy_own(r);
                }
            } else if (r->kind == TERN_COLL_BARRIER) {
                tern_shm_set(reg, TERN_SHM_ENTER, r->n);
            } else if (r->kind == TERN_COLL_BCAST) {
                if (me == r->root) {
                    int i = bcast_cell(reg);
                    if (reg->cell_step[i]) /* its readers left the step that last used it */
                        WAIT(TERN_SHM_LEAVE, -1, reg->cell_step[i]);
                    char *cell = tern_shm_cell(reg, i);
                    uint64_t total = r->total;
                    if (r->len) /* an empty bcast still takes its step; its buffer may be NULL */
                        memcpy(cell + TERN_SHM_LINE, (const char *)r->a.sbuf + r->off, r->len);
                    memcpy(cell, &total, sizeof total);
                    bcast_cell_used(reg, i, r->n);
                    tern_shm_set(reg, TERN_SHM_ENTER, r->n);
                }
            } else {
                /* Slot n % 2 was last used by step n - 2, which every
                 * rank left once it entered n - 1 (all_entered). */
                if (r->n > TERN_SHM_SLOTS && reg->all_entered + TERN_SHM_SLOTS <= r->n)
                    WAIT(TERN_SHM_LEAVE, -1, r->n - TERN_SHM_SLOTS);
                char *slot = inline_term(r) ? tern_shm_inline_slot(reg, me, r->n) : slot_at(r, me);
                const char *src = (const char *)r->a.sbuf + r->off * esz;
                if (parallel(r)) {
                    /* Our own slice is folded by us alone, from the buffer. */
                    size_t lo = slice_lo(r, me), hi = slice_lo(r, me + 1);
                    memcpy(slot, src, lo * esz);
                    memcpy(slot + hi * esz, src + hi * esz, (r->len - hi) * esz);
                } else if (root_term(r)) {
                    /* the root's term stays in its buffer */
                } else if (r->len) { /* plain stores (shm_coll_copy.c) */
                    memcpy(slot, src, r->len * esz);
                }
                ar_publish_count(r);
                tern_shm_set(reg, TERN_SHM_ENTER, r->n);
            }
            r->phase = PH_ENTERED;
            /* fall through */
        case PH_ENTERED:
            if (r->kind == TERN_COLL_ALLREDUCE && r->n == r->first) {
                WAIT(TERN_SHM_ENTER, -1, r->n); /* every count is there */
                ar_agree_count(r);
            }
            if (is_rs(r)) {
                /* A rank with nothing to fold here reads no slot: it
                 * leaves at once. */
                size_t n = rs_mine(r);
                if (n) {
                    WAIT(TERN_SHM_ENTER, -1, r->n);
                    *st = rs_fold(r, n);
                }
            } else if (blocks(r)) {
                if (reads(r, me)) {
                    WAIT(TERN_SHM_ENTER, r->kind == TERN_COLL_SCATTER ? r->root : -1, r->n);
                    tern_shm_run_copy_out(r);
                }
            } else if (r->kind == TERN_COLL_BARRIER) {
                WAIT(TERN_SHM_ENTER, -1, r->n);
            } else if (r->kind == TERN_COLL_BCAST) {
                if (me != r->root) {
                    WAIT(TERN_SHM_ENTER, r->root, r->n);
                    int i = bcast_cell(reg);
                    const char *cell = tern_shm_cell(reg, i);
                    if (r->n == r->first)
                        bcast_learn_total(r, cell);
                    if (r->off < r->room) /* what fits this rank's buffer */
                        memcpy((char *)r->a.rbuf + r->off, cell + TERN_SHM_LINE,
                               r->len < r->room - r->off ? r->len : r->room - r->off);
                    bcast_cell_used(reg, i, r->n);
                    if (r->n + 1 == r->first + r->steps)
                        *st = bcast_mismatch(r);
                }
            } else if (!parallel(r)) {
                if (takes) {
                    WAIT(TERN_SHM_ENTER, -1, r->n);
                    reg->all_entered = r->n;
                    /* In place, sbuf is rbuf: this chunk was copied in already.
                     * A whole 2-rank fold names its own term, so fold pulls
                     * the other's by memcpy on either rank: from its send
                     * buffer, not its slot, whose lines the other core is
                     * pulling at the same time (16 / 32 KB: 3.2 / 4.7 us
                     * from the slot); in place, from its slot. */
                    const char *mine = !whole(r)        ? root_term(r)
                                       : fold_to_rbuf(r) ? (const char *)r->a.sbuf + r->off * esz
                                                         : slot_at(r, me);
                    *st = fold(r, 0, r->len, mine, (char *)r->a.rbuf + r->off * esz);
                }
            } else {
                WAIT(TERN_SHM_ENTER, -1, r->n);
                size_t lo = slice_lo(r, me), hi = slice_lo(r, me + 1);
                char *res = result_at(r) + lo * esz;
                char *to = fold_to_rbuf(r) ? (char *)r->a.rbuf + (r->off + lo) * esz : res;
                *st = fold(r, lo * esz, hi - lo, (const char *)r->a.sbuf + (r->off + lo) * esz, to);
                if (to != res) /* the others read it from the result slot */
                    memcpy(res, to, (hi - lo) * esz);
                tern_shm_set(reg, TERN_SHM_REDUCED, r->n);
                r->phase = PH_REDUCED;
                if (*st != TERN_OK)
                    return 1;
                continue;
            }
            if (*st != TERN_OK && r->kind != TERN_COLL_BCAST)
                return 1;
            if (end_step(r))
                return 1; /* a bcast's truncation: the steps are over, in step */
            continue;
        case PH_REDUCED:
            if (takes) {
                WAIT(TERN_SHM_REDUCED, -1, r->n);
                char *dst = (char *)r->a.rbuf + r->off * esz, *res = result_at(r);
                if (fold_to_rbuf(r)) { /* the others' slices; ours is there */
                    size_t lo = slice_lo(r, me) * esz, hi = slice_lo(r, me + 1) * esz;
                    memcpy(dst, res, lo);
                    memcpy(dst + hi, res + hi, r->len * esz - hi);
                } else {
                    memcpy(dst, res, r->len * esz);
                }
            }
            if (end_step(r))
                return 1;
            continue;
        default:
            return 1;
        }
    }
}

tern_status_t tern_shm_coll_build(tern_sched_t *s, const tern_coll_args_t *a,
                                  tern_coll_kind_t kind, int *served)
{
    tern_shm_region_t *reg = NULL;
    *served = 0;
    tern_status_t st = tern_shm_region_get(a->comm, a->blocking, &reg);
    if (st != TERN_OK || !reg)
        return st;
    run_t *r = tern_sched_tmp(s, sizeof *r);
    if (!r)
        return tern_sched_error(s);
    *r = (run_t){.reg = reg, .s = s, .kind = kind, .a = *a, .phase = PH_CLAIM,
                 .root = kind == TERN_COLL_ALLREDUCE ? -1 : a->root};
    if (kind == TERN_COLL_BCAST) {
        r->per = reg->cell;
        r->room = a->bytes;
        r->a.sbuf = a->rbuf; /* the root's message */
    } else if (kind == TERN_COLL_GATHER || kind == TERN_COLL_ALLGATHER ||
               kind == TERN_COLL_SCATTER || kind == TERN_COLL_ALLTOALL) {
        /* Alltoall: a piece per other destination in each slot; through
         * the alltoall area (oversubscribed) when the data slots' pieces
         * would take more than one step (the same on every rank: a block
         * has the same size everywhere). Smaller blocks keep the data
         * slots: through the area, 8 ranks 8 B-2 KB were 3-13% slower
         * (docs/performance.md). */
        size_t piece = reg->slot / (size_t)(reg->p - 1);
        /* Two ranks: allgather and alltoall blocks from TERN_SHM_FAR_MIN
         * up to a data slot go through the area, whose places turn over
         * 2 MB (shm_region.h). */
        int area = reg->p == 2 ? (kind == TERN_COLL_ALLGATHER || kind == TERN_COLL_ALLTOALL) &&
                                     a->bytes >= TERN_SHM_FAR_MIN && a->bytes <= reg->slot
                               : kind == TERN_COLL_ALLTOALL && a->bytes > piece;
        if (area) {
            tern_status_t ast = tern_shm_a2a_area_get(reg); /* the first such call creates it */
            if (ast != TERN_OK)
                return ast;
        }
        r->a2a_area = area && reg->a2a;
        r->per = r->a2a_area                  ? reg->a2a_slot / (size_t)(reg->p - 1)
                 : kind != TERN_COLL_ALLTOALL ? reg->slot
                                              : piece;
        r->total = a->bytes;
        if (r->per == 0)
            return TERN_OK; /* more ranks than bytes in a slot: not served */
    } else if (tern_coll_is_reduce_scatter(kind)) {
        /* Steps of per elements of every block (the largest decides how
         * many); a vector that fits a slot goes in one step as it is. */
        size_t fit = reg->slot / a->esz, most = 0;
        for (int q = 0; q < reg->p; q++) {
            if (q == reg->me)
                r->my_lo = r->total;
            r->total += a->rcounts[q];
            most = a->rcounts[q] > most ? a->rcounts[q] : most;
        }
        r->my_n = a->rcounts[reg->me];
        r->root = -1;
        r->flat = a->count <= fit;
        r->per = r->flat ? (most ? most : 1) : fit / (size_t)reg->p;
        r->total = most;
        if (r->per == 0)
            return TERN_OK; /* more ranks than elements in a slot: not served */
        /* In place (or any overlap): the result may overwrite input not
         * yet copied from the vector, so this rank's block is copied in too
         * and folded from the slots. Only a step's own piece is written,
         * below (flat: after) everything copied in by then. */
        uintptr_t sb = (uintptr_t)a->sbuf, rb = (uintptr_t)a->rbuf;
        r->own = r->my_n && sb < rb + r->my_n * a->esz && rb < sb + a->count * a->esz;
    } else if (kind != TERN_COLL_BARRIER) {
        r->per = reg->slot / a->esz; /* >= 1: selection checked esz */
        r->total = a->count;
    }
    *served = 1;
    tern_sched_poll(s, poll_run, r,
                    kind == TERN_COLL_REDUCE || kind == TERN_COLL_ALLREDUCE ||
                            tern_coll_is_reduce_scatter(kind)
                        ? a->dt
                        : MPI_DATATYPE_NULL);
    return tern_sched_error(s);
}

tern_status_t tern_shm_barrier_now(const tern_coll_args_t *a, int *served)
{
    tern_shm_region_t *reg = NULL;
    *served = 0;
    tern_status_t st = tern_shm_region_get(a->comm, 1, &reg);
    if (st != TERN_OK || !reg)
        return st;
    *served = 1;
    run_t r = {.reg = reg, .kind = TERN_COLL_BARRIER, .a = *a, .phase = PH_CLAIM,
               .root = a->root};
    unsigned idle = 0;
    while (!poll_run(&r, &st))
        if (tern_progress() == 0)
            tern_progress_idle(&idle);
    return st;
}
