/* A shm collective's run, shared by the two files that run it: shm_coll.c
 * (the state machine over the steps of shm_region.h, its folds, the bcast
 * cells and the builder) and shm_coll_copy.c (where a step's bytes lie in
 * a slot, and the copies in and out of the slots). Private to the two.
 * The place and the three copies are each called once, from poll_run,
 * and the link-time optimiser inlines them there as when they were
 * static (the same machine code: docs/performance.md, row `debts5`). */
#ifndef TERN_CORE_COLL_SHM_RUN_H
#define TERN_CORE_COLL_SHM_RUN_H

#include "core/coll/shm_coll.h"
#include "core/coll/shm_region.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    tern_shm_region_t *reg;
    tern_sched_t *s;          /* for the words of a truncation */
    tern_coll_kind_t kind;
    tern_coll_args_t a;       /* the views */
    int root;                 /* -1: every rank takes the result */
    size_t per;               /* bytes (bcast) or elements per step */
    size_t total;             /* bytes (bcast: the root's) or elements in all */
    size_t room;              /* bcast: bytes this rank's buffer holds */
    uint64_t ticket;          /* this run's place in the call order */
    uint64_t steps, first, n; /* this run's steps: first .. first + steps - 1 */
    size_t off, len;          /* the current step's elements (bytes for bcast) */
    /* Reduce_scatter: this rank's block (first element, count) of the
     * vector; flat: one step, the slot holds the vector as laid out, else
     * the slot holds per elements of every rank's block at q * per; own:
     * this rank's block goes into its slot too (in place: the result
     * overwrites the vector). */
    size_t my_lo, my_n;
    int flat, own;
    int a2a_area;             /* the blocks go through reg->a2a (2 ranks: allgather too) */
    size_t at;                /* the current step's place in its slots (place) */
    int phase, cursor;
} run_t;

/* Rank q's slot of the current step, at the step's place (r->at, set
 * once a step as it starts: a few instructions a call, not per slot). */
static inline char *slot_at(const run_t *r, int q)
{
    return tern_shm_slot(r->reg, q, r->n) + r->at;
}

/* The place of the current step in its slots (r->at; 0 but for a 2-rank
 * allgather, alltoall or allreduce step of PLACE_MIN bytes or more). */
size_t tern_shm_run_place(const run_t *r);
/* The block collectives' (gather, scatter, allgather, alltoall) copies of
 * the current step: into this rank's slot (scatter's root: every other
 * rank's), out of the writers' slots, and allgather's and alltoall's own
 * block straight from the send to the receive buffer. */
void tern_shm_run_copy_in(run_t *r);
void tern_shm_run_copy_out(run_t *r);
void tern_shm_run_copy_own(run_t *r);

#endif
