/* The node-level shared-memory region of a communicator whose ranks all
 * share one node (the shm collectives: barrier_shm.c, bcast_shm.c,
 * reduce_shm.c, allreduce_shm.c).
 *
 * Created by the first blocking collective that selects a shm algorithm on
 * the communicator (collective over it, through point-to-point), freed with
 * the communicator: a memfd of the leader that the others open through
 * /proc, so that /dev/shm never holds it and a job killed while it is made
 * (mpiexec's SIGKILL: no sweep) leaves nothing; a named segment where a
 * rank cannot open that path (an undumpable leader, a pid namespace of its
 * own). It has two lanes of the same layout, one for blocking collectives
 * and one for nonblocking and persistent ones, each with its own steps: the
 * two kinds never share a sequence (as their tags do not,
 * tern_comm_next_coll_tag), so a rank that starts a nonblocking collective
 * while another first runs a blocking one (erroneous, but common) still
 * meets each with its own kind. Layout of a lane, every part on its own
 * cache lines:
 *   per rank: three flag lines (enter, reduced, leave), each written by that
 *   rank only, plus its pid, an allreduce's count and (3+ ranks, up to 16
 *   bytes) its allreduce term in the enter line;
 *   per rank: two data slots of TERN_COLL_SHM_SLOT bytes (auto: 16 KB,
 *   128 KB in a region of two ranks);
 *   two result slots (the slices of a parallel reduction);
 *   the bcast ring: TERN_COLL_SHM_BCAST_CELLS cells, each a header line
 *   (the root's byte count) and TERN_COLL_SHM_BCAST_CELL bytes (auto: 32
 *   KB, at most a slot);
 *   per rank: two exchange blocks of TERN_SHM_XLINES lines (pair_line.h:
 *   a 2-rank allreduce, allgather or alltoall of up to 272 bytes, one to
 *   five lines each way);
 * and, for the blocking lane, on a node with more ranks than CPUs, 3 to
 * TERN_SHM_SLOT_OVER_MAX_RANKS ranks, an alltoall area: a segment of its
 * own, created by the first blocking alltoall whose block needs it
 * (tern_shm_a2a_area_get), with per rank two alltoall slots of p - 1
 * pieces of a slot (at most TERN_SHM_SLOT_OVER bytes) each, so a 64 KB
 * alltoall block is one step (the data slots hold p - 1 pieces of
 * slot / (p - 1) bytes: p steps). Lazy: 7 MB at 8 ranks that most
 * communicators never use. A region of two ranks, one per core, gets
 * the same area with slots of TERN_SHM_FAR_SLOT bytes, for allgather and
 * alltoall blocks of TERN_SHM_FAR_MIN to a data slot: their places
 * (shm_coll_copy.c) then turn over 2 MB, not the data slots' 256 KB.
 *
 * Synchronisation is by sequence numbers, never reset: every rank counts
 * the steps it runs on the region (one per collective, or one per
 * slot-sized chunk of a larger message) the same way, and step n uses slot
 * n % 2. A rank stores enter = n once its data of step n is in its slot,
 * reduced = n once its slice of the result is written, leave = n once it
 * read everything it needs of step n. Before writing into slot n % 2 a rank
 * waits until every rank left step n - 2, the last step that used that
 * slot; so two consecutive steps (the next collective, the next chunk)
 * overlap and nothing ever waits for a reset. Allgather and alltoall of
 * two ranks with chunks of 32-64 KB wait for step n - 1 instead, to copy
 * in lockstep (shm_coll.c, slot_wait_back).
 *
 * A bcast's steps go through the ring instead of the root's slots: its
 * chunk k (counted over every bcast on the lane, the same on every rank)
 * uses cell k % cells, and the root waits only until every rank left the
 * step that last used that cell. So the root runs up to cells - 1 chunks
 * ahead, of one bcast or of consecutive ones, while the cells stay small
 * enough to pass from cache to cache (docs/performance.md). */
#ifndef TERN_CORE_COLL_SHM_REGION_H
#define TERN_CORE_COLL_SHM_REGION_H

#include "base/shm_segment.h"
#include "base/status.h"
#include "core/coll/coll.h"
#include <stddef.h>
#include <stdint.h>

enum { TERN_SHM_ENTER, TERN_SHM_REDUCED, TERN_SHM_LEAVE, TERN_SHM_N_FLAGS };
/* TERN_SHM_XLINES: lines of a rank's exchange block (pair_line.h). */
enum { TERN_SHM_LINE = 64, TERN_SHM_SLOTS = 2, TERN_SHM_XLINES = 5 };
/* TERN_COLL_SHM_SLOT=auto: slots of this many bytes, and larger ones in a
 * region of two ranks, whose 128 KB allreduce then fits one step. */
#define TERN_SHM_SLOT_DEFAULT ((size_t)16384)
#define TERN_SHM_SLOT_2RANKS ((size_t)131072)
/* auto on a node with more ranks than CPUs, up to 8 ranks: 64 KB slots,
 * so a 64 KB bcast or allreduce is one step (every step waits for the
 * slowest, descheduled rank; 1.2 MB of region per lane at 8 ranks). */
#define TERN_SHM_SLOT_OVER ((size_t)65536)
#define TERN_SHM_SLOT_OVER_MAX_RANKS 8
/* Two ranks one per core: the area's slots, and the smallest block that
 * goes through them. A copy in rewrites lines the other core read two
 * slots' worth of places back; within 256 KB it still holds them, and
 * where its core is slow to give them up (this session's host, both VM
 * modes) a 64 KB allgather took 12.7 us, 5.6 through 1 MB slots, level
 * at 16 KB (3.4 against 5.9: 64 places of 16 KB reach past the L2
 * themselves); docs/performance.md row `far`. 4 MB a communicator that
 * runs such a collective (2 ranks x 2 slots). */
#define TERN_SHM_FAR_SLOT ((size_t)1 << 20)
#define TERN_SHM_FAR_MIN ((size_t)32768)
/* TERN_COLL_SHM_BCAST_CELL=auto: cells of this many bytes (at most a
 * slot; a slot when oversubscribed, where every step waits for a
 * descheduled reader); the most cells TERN_COLL_SHM_BCAST_CELLS allows. */
#define TERN_SHM_BCAST_CELL_DEFAULT ((size_t)32768)
#define TERN_SHM_BCAST_MAX_CELLS 64

typedef struct tern_shm_region {
    tern_shm_segment_t seg;
    tern_comm_t *comm;   /* the owner (not retained: it frees the region) */
    struct tern_shm_region *sibling; /* the other lane */
    int p, me;
    size_t slot;         /* bytes per data slot, a multiple of TERN_SHM_LINE */
    /* Steps are numbered from 1; a rank runs them strictly in order, so its
     * flags only grow: step n starts once done == n - 1. Collectives take
     * tickets in call (or MPI_Start) order and run one after the other: the
     * run of ticket t starts once runs_done == t - 1, at step done + 1 (a
     * bcast's non-root learns its number of steps only in its first). */
    uint64_t tickets, runs_done, done;
    /* The last step whose every enter this rank saw (an allreduce's fold):
     * a rank enters step n only after it left step n - 1, so every leave
     * up to all_entered - 1 is known without reading the leave lines. */
    uint64_t all_entered;
    char *flags;         /* rank q, flag f: flags + (q * TERN_SHM_N_FLAGS + f) * LINE */
    char *data;          /* rank q, slot k: data + (q * TERN_SHM_SLOTS + k) * slot */
    char *result;        /* slot k: result + k * slot */
    char *ring;          /* the bcast ring: cell i at ring + i * (LINE + cell) */
    size_t ar_whole;     /* TERN_COLL_SHM_ALLREDUCE_WHOLE: a 2-rank allreduce chunk up
                          * to this many bytes is folded whole by each rank */
    size_t cell;         /* bytes of data per cell, a multiple of TERN_SHM_LINE */
    int cells;
    char *a2a;           /* NULL, or rank q's alltoall slot k: a2a + (q * SLOTS + k) * a2a_slot */
    size_t a2a_slot;     /* p - 1 pieces, each a multiple of TERN_SHM_LINE; 0: no area, ever
                          * (not this lane's, or its creation failed) */
    tern_shm_segment_t a2a_seg; /* the area's segment, once created */
    char *xline;         /* rank q's exchange block k: xline + (q * SLOTS + k) * XLINES * LINE */
    uint64_t xseq;       /* line exchanges run on this lane so far (pair_line.h) */
    int xline_on;        /* TERN_COLL_PAIR_LINE, read at creation */
    int slots_mapped;    /* the data and result slots' pages mapped (tern_shm_slots_map) */
    int get_cma;         /* pair_get.c: 0 not probed yet, 1 both ranks may CMA-read, -1 not */
    int get_pays;        /* pair_get.c: the read paid for both ranks at the last agreement */
    uint64_t get_calls;  /* pair_get.c: calls that asked for the read under auto */
    uint64_t chunks;     /* bcast chunks run on this lane so far */
    uint64_t cell_step[TERN_SHM_BCAST_MAX_CELLS]; /* the step that last used cell i */
    unsigned misses;     /* flag checks that found the flag behind */
    int broken;          /* the rank found dead in a wait, else -1: every later
                          * collective on the region fails at once (the
                          * failed one left this rank's steps unfinished) */
    double next_check_ms;
} tern_shm_region_t;

/* comm->coll_shm before a region exists (shm_region.c): the communicator
 * cannot have one, or it can; else NULL (not known yet) or its region. */
extern char tern_shm_none_mark, tern_shm_local_mark;

/* Whether a shm algorithm can serve the call: an intracommunicator of 2 or
 * more ranks that share one node and reach each other through the shm
 * transport (never across nodes, never when TERN_TRANSPORTS leaves shm
 * out), whose region has not failed to be created, and (reductions) whose
 * elements fit a slot. A nonblocking or persistent call also needs the
 * region to exist already (a blocking collective creates it: creation
 * waits for every rank, which a nonblocking call must not). The same
 * answer on every rank of the communicator. */
int tern_shm_coll_usable(const tern_coll_args_t *a);

/* "/tern-<job>-<what>-<leader world rank>-<context id>": a name in
 * /dev/shm for a resource of communicator c, the same on every rank of c
 * (the leader's live communicators have distinct context ids; the
 * launcher's sweep of /dev/shm/tern-<job>-* covers it when the job fails,
 * but not when the launcher itself is killed). */
void tern_shm_comm_name(char *buf, size_t len, const tern_comm_t *c, const char *what);

/* Leaves comm's collectives to the point-to-point algorithms for good: it
 * never creates a region. For internal communicators whose few small
 * collectives do not repay a region's creation (a segment created, mapped
 * by every rank and agreed in two exchanges; I/O's file and shared-pointer
 * communicators, docs/performance.md). Local; call it on every rank of comm
 * before comm's first blocking collective that could use the region. */
void tern_shm_coll_off(tern_comm_t *comm);

/* The communicator's lane for blocking collectives (created now if the
 * region does not exist: collective, every rank of comm calls it at the
 * same point) or for nonblocking and persistent ones (only if it exists).
 * *reg_p NULL and TERN_OK: the communicator has none (creation failed on
 * some rank, agreed by all: it never selects shm again). */
tern_status_t tern_shm_region_get(tern_comm_t *comm, int blocking, tern_shm_region_t **reg_p);

/* The blocking lane's alltoall area, created now if the lane may have one
 * and has none yet: collective, every rank of the communicator calls it
 * at the same point (the first blocking alltoall whose block needs it: a
 * decision on the block's byte count, the same on every rank). Afterwards
 * reg->a2a is the area, or NULL with reg->a2a_slot 0 for good when some
 * rank could not map it (agreed by all, one warning). An error only when
 * a rank failed during the creation. */
tern_status_t tern_shm_a2a_area_get(tern_shm_region_t *reg);

static inline char *tern_shm_slot(tern_shm_region_t *reg, int q, uint64_t n)
{
    return reg->data + ((size_t)q * TERN_SHM_SLOTS + (size_t)(n % TERN_SHM_SLOTS)) * reg->slot;
}
static inline char *tern_shm_result(tern_shm_region_t *reg, uint64_t n)
{
    return reg->result + (size_t)(n % TERN_SHM_SLOTS) * reg->slot;
}

/* Rank q's alltoall slot of step n (the region has an alltoall area). */
static inline char *tern_shm_a2a_slot(tern_shm_region_t *reg, int q, uint64_t n)
{
    return reg->a2a + ((size_t)q * TERN_SHM_SLOTS + (size_t)(n % TERN_SHM_SLOTS)) * reg->a2a_slot;
}

/* Rank q's word for an allreduce's element count, in the run's first step
 * n (its enter line, past the pid; one word per slot parity, so a rank one
 * step ahead never overwrites a count not yet read). */
static inline uint64_t *tern_shm_count_word(tern_shm_region_t *reg, int q, uint64_t n)
{
    return (uint64_t *)(void *)(reg->flags + ((size_t)q * TERN_SHM_N_FLAGS + TERN_SHM_ENTER) *
                                                 TERN_SHM_LINE +
                                16 + 8 * (size_t)(n % TERN_SHM_SLOTS));
}

/* Rank q's term of a small allreduce's step n, in its enter line past the
 * count words (one area per slot parity): a reader takes flag and term in
 * one line transfer instead of two (shm_coll.c, inline_term). */
#define TERN_SHM_INLINE_MAX ((size_t)16)
static inline char *tern_shm_inline_slot(tern_shm_region_t *reg, int q, uint64_t n)
{
    return reg->flags + ((size_t)q * TERN_SHM_N_FLAGS + TERN_SHM_ENTER) * TERN_SHM_LINE + 32 +
           TERN_SHM_INLINE_MAX * (size_t)(n % TERN_SHM_SLOTS);
}

/* The bcast ring's cell i: its header line, then its data. */
static inline char *tern_shm_cell(tern_shm_region_t *reg, int i)
{
    return reg->ring + (size_t)i * (TERN_SHM_LINE + reg->cell);
}

/* Rank q's exchange block of exchange n (pair_line.h). */
static inline char *tern_shm_xline(tern_shm_region_t *reg, int q, uint64_t n)
{
    size_t k = (size_t)q * TERN_SHM_SLOTS + (size_t)(n % TERN_SHM_SLOTS);
    return reg->xline + k * TERN_SHM_XLINES * TERN_SHM_LINE;
}

/* Stores this rank's flag (release: what it wrote before is visible to
 * whoever sees the value). */
void tern_shm_set(tern_shm_region_t *reg, int flag, uint64_t n);
/* Maps every page of the lane's data and result slots now, once (a 2-rank
 * step that turns over the slots' places, shm_coll_copy.c): not by the
 * first calls' copies, a fault a page. */
void tern_shm_slots_map(tern_shm_region_t *reg);
/* 1 once rank q's flag (q < 0: every other rank's) reached n; else 0, and
 * the next call resumes at *cursor. Never waits. 1 with *st TERN_ERR_PEER,
 * naming the rank, when a rank it waits for has died (checked every
 * TERN_PEER_CHECK_MS while it waits). */
int tern_shm_reached(tern_shm_region_t *reg, int flag, int q, uint64_t n, int *cursor,
                     tern_status_t *st);
/* A wait for rank q's word (a flag or an exchange line's sequence) to
 * reach n missed: TERN_OK, or the error once rank q is known failed or its
 * process gone (checked at most every TERN_PEER_CHECK_MS) and the word is
 * still short of n; then the region is broken for both lanes. */
tern_status_t tern_shm_peer_check(tern_shm_region_t *reg, int q, const void *word, uint64_t n);
/* TERN_ERR_PEER, naming the dead rank, once a wait found one (reg->broken). */
tern_status_t tern_shm_broken_status(tern_shm_region_t *reg);

#endif
