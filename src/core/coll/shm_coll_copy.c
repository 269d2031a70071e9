/* Where a shm collective's step puts its bytes in the slots of
 * shm_region.h, and the block collectives' copies in and out of them
 * (shm_run.h; the state machine that calls them is shm_coll.c). */
#include "core/coll/shm_run.h"

#include <string.h>

/* A 2-rank allgather's, alltoall's or allreduce's step of PLACE_MIN bytes
 * or more moves over its slot: slot n % 2 is cut into as many places of a
 * power-of-two fraction of the slot as the step fits, and the place turns
 * every second step, so a copy in rewrites lines the other core read
 * 2 x places steps back (two slots' worth of bytes) instead of two steps
 * back, and finds them cheaper to take over (loaded A/B, slow VM
 * mode, allgather 16 / 32 KB: -27 / -31%, 64 KB -5% to level, allreduce
 * 32 KB -31%; docs/performance.md row `ag64s`). From 16 KB, not 4 KB: in
 * the fast mode a 4 KB allgather took 0.57 us with places against 0.38
 * without (the lead's A/B after the merge). Both ranks take
 * the same place: it follows the step number and the step's length, the
 * same on both (an allreduce whose counts differ, an erroneous program,
 * may read another place: wrong values, never a hang). */
#define PLACE_MIN ((size_t)16384)

size_t tern_shm_run_place(const run_t *r)
{
    tern_coll_kind_t k = r->kind;
    if (r->reg->p != 2 ||
        (k != TERN_COLL_ALLGATHER && k != TERN_COLL_ALLTOALL && k != TERN_COLL_ALLREDUCE))
        return 0;
    size_t bytes = k == TERN_COLL_ALLREDUCE ? r->len * r->a.esz : r->len;
    size_t stride = r->a2a_area ? r->reg->a2a_slot : r->reg->slot, places = 1;
    if (bytes < PLACE_MIN)
        return 0;
    while (bytes <= stride / 2 && !((stride / 2) % TERN_SHM_LINE)) {
        stride /= 2;
        places *= 2;
    }
    /* Places spread the steps over the whole slots, where the first calls'
     * copies would meet a page not mapped yet every 4 KB (a 16 KB step
     * turns over 16 places: 2-rank allgather 16 KB 1.4 us a call over the
     * first 100 calls, 0.9 after them; docs/performance.md row `slotmap`). */
    if (places > 1 && !r->a2a_area && !r->reg->slots_mapped)
        tern_shm_slots_map(r->reg);
    return (size_t)((r->n / TERN_SHM_SLOTS) % places) * stride;
}

/* Alltoall: where writer w's slot holds its piece for d != w (no place
 * for its own piece, which never crosses the slots). */
static size_t piece_at(int w, int d)
{
    return (size_t)(d < w ? d : d - 1);
}

/* Writer w's slot of this step at the step's place: in the area for the
 * allgathers and alltoalls that take it (a2a_area), else the data slot. */
static char *block_slot(run_t *r, int w)
{
    return r->a2a_area ? tern_shm_a2a_slot(r->reg, w, r->n) + r->at : slot_at(r, w);
}

/* Every copy into a slot takes plain stores (memcpy): its reader is the
 * other core, at once, and takes the lines from this core's cache;
 * streamed to memory, it waits for them to come back from there. At two
 * ranks, 16-64 KB, plain against streaming stores (quiet A/Bs): in the
 * VM's fast mode reduce 0.43-0.67x the time, gather 0.27-0.45x, scatter
 * 0.35-0.46x; in the slow one 0.66-1.05x, 0.67-0.83x, 0.68-0.78x;
 * allgather and alltoall 0.33-0.45x before (docs/performance.md, row
 * `slotnt`). */
void tern_shm_run_copy_in(run_t *r)
{
    tern_shm_region_t *reg = r->reg;
    const char *sbuf = r->a.sbuf;
    size_t b = r->a.bytes;
    switch (r->kind) {
    case TERN_COLL_SCATTER: /* the root's own block goes in copy_out */
        for (int q = 0; q < reg->p; q++)
            if (q != reg->me)
                memcpy(slot_at(r, q), sbuf + (size_t)q * b + r->off, r->len);
        break;
    case TERN_COLL_ALLTOALL: /* this rank's own piece goes in copy_own */
        for (int d = 0; d < reg->p; d++)
            if (d != reg->me)
                memcpy(block_slot(r, reg->me) + piece_at(reg->me, d) * r->len,
                       sbuf + (size_t)d * b + r->off, r->len);
        break;
    case TERN_COLL_ALLGATHER:
        memcpy(block_slot(r, reg->me), sbuf + r->off, r->len);
        break;
    case TERN_COLL_GATHER: /* the root copies its own block in copy_out */
        if (reg->me != r->root)
            memcpy(slot_at(r, reg->me), sbuf + r->off, r->len);
        break;
    default:
        break;
    }
}

void tern_shm_run_copy_out(run_t *r)
{
    tern_shm_region_t *reg = r->reg;
    char *rbuf = r->a.rbuf;
    size_t b = r->a.bytes;
    if (r->kind == TERN_COLL_SCATTER) {
        const char *src = reg->me == r->root ? (const char *)r->a.sbuf + (size_t)reg->me * b + r->off
                                             : slot_at(r, reg->me);
        if (src != rbuf + r->off) /* in place: the root's block stays */
            memcpy(rbuf + r->off, src, r->len);
        return;
    }
    /* The others' blocks (pieces) out of their slots; this rank's own
     * block went in copy_own (a gather's root: here, straight from its
     * send buffer; in place: the same bytes, no copy). */
    int me = reg->me, a2a = r->kind == TERN_COLL_ALLTOALL;
    for (int q = 0; q < reg->p; q++) {
        char *dst = rbuf + (size_t)q * b + r->off;
        if (q != me)
            memcpy(dst, block_slot(r, q) + (a2a ? piece_at(q, me) * r->len : 0), r->len);
        else if (r->kind == TERN_COLL_GATHER && (const char *)r->a.sbuf + r->off != dst)
            memcpy(dst, (const char *)r->a.sbuf + r->off, r->len);
    }
}

/* Allgather, alltoall: this rank's own block (piece) straight from its
 * send buffer to its receive buffer, once, never through a slot; done
 * after its enter store, while the others may still be copying in. */
void tern_shm_run_copy_own(run_t *r)
{
    if (r->kind != TERN_COLL_ALLGATHER && r->kind != TERN_COLL_ALLTOALL)
        return;
    size_t me = (size_t)r->reg->me, b = r->a.bytes;
    const char *src = (const char *)r->a.sbuf + (r->kind == TERN_COLL_ALLTOALL ? me * b : 0) + r->off;
    char *dst = (char *)r->a.rbuf + me * b + r->off;
    if (src != dst)
        memcpy(dst, src, r->len);
}
