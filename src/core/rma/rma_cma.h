/* Direct access to MPI_Win_create windows of ranks on one node with the
 * vector get/put of the transport that reaches each (rma_cma.c; shm, or
 * ofi under TERN_TRANSPORTS=ofi: Cross Memory Attach, self: memcpy): a put
 * is process_vm_writev into the target's memory, a get process_vm_readv
 * out of it, at the call, so they are complete locally and at the target
 * at once (caps TERN_TL_CAP_RMA_SYNC: no message, no answer; flush has
 * nothing to wait for). When every rank of the window is on this node
 * the window also has shared lock words and accumulate locks (w->ctrl,
 * rma_shm.h): locks are those words, and accumulates, Get_accumulate,
 * Fetch_and_op and Compare_and_swap are read, combined and written back by
 * the origin under the target's accumulate lock, which the target's engine
 * also takes for any accumulate that still reaches it by message: atomic
 * per element whatever the path. Without them (ranks on several nodes)
 * accumulates and locks stay on active messages. A put or get by CMA to a
 * location that a concurrent accumulate also touches is a conflicting
 * access, which the standard leaves undefined anyway. Fences and PSCW keep
 * their messages. TERN_RMA_CMA: auto (where the kernel permits,
 * probed at creation, unless TERN_SHM_CMA=off), on (warns when denied), off
 * (active messages). */
#ifndef TERN_CORE_RMA_RMA_CMA_H
#define TERN_CORE_RMA_RMA_CMA_H

#include "core/rma/rma_path.h"

#include <sys/types.h>
#include <sys/uio.h>

struct tern_rma_cma {
    tern_rkey_t *rkey; /* per window rank: its window memory's key */
    uint64_t *base;    /* its window memory, in its address space */
    uint8_t *ok;       /* vector transfers reach it */
    /* This rank's registrations with the transport of its node (NULL:
     * none), undone at close: the window memory and the probe word. */
    const tern_tl_ops_t *reg_ops;
    tern_tl_t *reg_tl;
    uint64_t *probe;
};

/* Collective over the window's ranks (at MPI_Win_create): registers the
 * window with the transport of this node, exchanges keys and bases, and
 * probes each rank whose transport has vector transfers complete at once
 * by reading a word of it; w->cma stays NULL when no target can be
 * reached that way. */
tern_status_t tern_rma_cma_open(tern_win_t *w);
void tern_rma_cma_close(tern_win_t *w);
/* Operations go by CMA (the route of rma_path.h) to a target w->cma->ok
 * marks: puts and gets, and accumulates when the window has shared
 * accumulate locks (w->ctrl). */
/* The put or get now: data (packed origin) written into, or the target's
 * bytes read into out, piece by piece of segs at hdr->addr from its base.
 * TERN_ERR_NOT_SUPPORTED when the kernel refused (ok[target] is cleared;
 * the CMA path routes the target to active messages and sends this
 * operation that way). */
tern_status_t tern_rma_cma_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                                 const tern_dt_seg_t *segs, size_t nsegs, const char *data,
                                 char *out);
/* total bytes between local and the cnt pieces riov of target's memory
 * (write: local to them), through its transport's putv or getv, complete
 * at return; TERN_ERR_NOT_SUPPORTED when the kernel refuses. */
tern_status_t tern_rma_cma_copyv(tern_win_t *w, int target, int write, char *local, size_t total,
                                 const struct iovec *riov, size_t cnt);
/* Accumulate, Get_accumulate, Compare_and_swap (hdr->type) now, by a
 * read-modify-write under the target's accumulate lock (rma_cma_acc.c);
 * fetched bytes into out. */
tern_status_t tern_rma_cma_accumulate(tern_win_t *w, int target, const rma_hdr_t *hdr,
                                      const tern_dt_seg_t *segs, size_t nsegs,
                                      const char *data, char *out);

#endif
