/* One-sided puts and gets over the network transport's RDMA (rma_rdma.c).
 *
 * A window whose memory is known at creation (Win_create, Win_allocate off
 * the direct path) registers it with the transport that reaches peers over
 * the network (ofi) once, and the creation allgather carries every rank's
 * base address and remote key. Put and Get (and Rput, Rget) to a target
 * reached by that transport then become transport writes and reads of the
 * target's memory, with no message to the target's engine, from the
 * origin buffer and into the result buffer where they are contiguous
 * (packed through a bounce buffer otherwise). The tracker (rma_track.h)
 * counts them in w->pending like answered requests, so every
 * synchronisation that waits for answers (flush, unlock, fence, complete)
 * waits for them too. The targets RDMA reaches are routed to this path at
 * creation (rma_path.h); what it cannot carry (a target layout of more
 * than 16 pieces, a dynamic region not registered, a failed peer) it hands
 * to active messages; accumulates take their own route (remote atomics:
 * rma_atomic.h, or messages). TERN_RMA_RDMA: auto (use it where the
 * memory registers), on (a window whose memory does not register is an
 * error), off. */
#ifndef TERN_CORE_RMA_RDMA_H
#define TERN_CORE_RMA_RDMA_H

#include "core/rma/rma_path.h"

/* Words per rank in the creation allgather: registered?, base, the key. */
#define TERN_RMA_RDMA_WORDS 5

/* Registers this rank's window memory when the window can use RDMA and
 * fills rec (TERN_RMA_RDMA_WORDS words) for the allgather; all zero when it
 * does not. TERN_ERR_* only with TERN_RMA_RDMA=on. */
tern_status_t tern_rma_rdma_local(tern_win_t *w, uint64_t *rec);
/* Takes every rank's record (rank r's at all + r * stride words). */
tern_status_t tern_rma_rdma_remote(tern_win_t *w, const int64_t *all, size_t stride);
/* Drops the registrations (the window's operations have completed). */
void tern_rma_rdma_close(tern_win_t *w);

/* Dynamic windows: memory attached is registered at Win_attach (an error
 * there only with TERN_RMA_RDMA=on), deregistered at Win_detach. An origin
 * asks a target for the key of the region holding an address (RMA_KEYQ,
 * answered by the target's engine with TERN_RMA_RDMA_KEY_BYTES: base, size,
 * key; MPI_ERR_RMA_RANGE for memory not attached) and keeps it until its
 * next synchronisation with any target (tern_rma_rdma_forget): a target
 * detaches only memory whose accesses were synchronised, so a key is never
 * used after that. */
#define TERN_RMA_RDMA_KEY_BYTES 40
tern_status_t tern_rma_rdma_attach(tern_win_t *w, tern_win_region_t *r);
void tern_rma_rdma_detach(tern_win_t *w, tern_win_region_t *r);
tern_status_t tern_rma_rdma_region_key(tern_win_t *w, uint64_t addr, void *out);
void tern_rma_rdma_forget(tern_win_t *w);

/* Whether puts and gets to target go by RDMA (its route, rma_path.h). */
int tern_rma_rdma_reaches(const tern_win_t *w, int target);

#endif
