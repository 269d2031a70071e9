/* One-sided puts and gets over the network transport's RDMA (rma_rdma.c).
 *
 * A window whose memory is known at creation (Win_create, Win_allocate off
 * the direct path) registers it with the transport that reaches peers over
 * the network (ofi) once, and the creation allgather carries every rank's
 * base address and remote key. Put and Get (and Rput, Rget) to a target
 * reached by that transport then become transport writes and reads of the
 * target's memory, with no message to the target's engine: the origin
 * counts them in w->pending like answered requests, so every
 * synchronisation that waits for answers (flush, unlock, fence, complete)
 * waits for them too. Accumulates (unless remote atomics serve them:
 * rma_atomic.h) and anything RDMA cannot do (a target layout of many
 * pieces, a target on this node) stay on the active-message path. TERN_RMA_RDMA: auto (use it where the memory registers), on (a
 * window whose memory does not register is an error), off. */
#ifndef TERN_CORE_RMA_RDMA_H
#define TERN_CORE_RMA_RDMA_H

#include "core/rma/rma_am.h"

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

/* A Put or Get of a checked request (hdr->addr: byte offset at the target,
 * the address on a dynamic window; segs: the target layout). TERN_ERR_NOT_SUPPORTED when RDMA cannot serve
 * it (the caller takes the active-message path); else the operation is
 * issued: for a put, data (tbytes packed bytes, malloc'ed) becomes ours;
 * fetched bytes are unpacked into result when the reads complete. req_p:
 * Rput/Rget's request, completed with the operation. */
tern_status_t tern_rma_rdma_issue(tern_win_t *w, int target, const rma_hdr_t *hdr,
                                  const tern_dt_seg_t *segs, void **data, void *result,
                                  MPI_Count rcount, MPI_Datatype rtype, tern_req_t **req_p);

#endif
