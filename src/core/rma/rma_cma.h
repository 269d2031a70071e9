/* Direct access to MPI_Win_create windows of ranks on one node with Cross
 * Memory Attach (rma_cma.c): a put is process_vm_writev into the target's
 * memory, a get process_vm_readv out of it, at the call, so they are
 * complete locally and at the target at once (no message, no answer; flush
 * has nothing to wait for). Accumulates and the fetching atomics stay on
 * the active-message path, which applies them one at a time at the target:
 * they remain atomic with respect to each other. A put or get by CMA to a
 * location that a concurrent accumulate also touches is a conflicting
 * access, which the standard leaves undefined anyway. Locks, fences and
 * PSCW keep their messages. TERN_RMA_CMA: auto (where the kernel permits,
 * probed at creation, unless TERN_SHM_CMA=off), on (warns when denied), off
 * (active messages). */
#ifndef TERN_CORE_RMA_RMA_CMA_H
#define TERN_CORE_RMA_RMA_CMA_H

#include "core/rma/rma_am.h"

/* Collective over the window's ranks (at MPI_Win_create): exchanges pids
 * and bases, probes CMA to each rank on this node; w->cma stays NULL when
 * no target can be reached that way. */
tern_status_t tern_rma_cma_open(tern_win_t *w);
void tern_rma_cma_close(tern_win_t *w);
/* Whether a put or get (hdr->type) to target goes by CMA. */
int tern_rma_cma_covers(const tern_win_t *w, int target, uint32_t type);
/* The put or get now: data (packed origin) written into, or the target's
 * bytes read into out, piece by piece of segs at hdr->addr from its base.
 * TERN_ERR_NOT_SUPPORTED when the kernel refused (the target is then left
 * to the active messages; the caller sends this operation that way). */
tern_status_t tern_rma_cma_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                                 const tern_dt_seg_t *segs, size_t nsegs, const char *data,
                                 char *out);

#endif
