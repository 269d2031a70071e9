/* Direct access to windows whose memory every rank maps (rma_shm.c):
 * Win_allocate_shared, and Win_allocate when the ranks share a node. The
 * memory is one memfd; before the ranks' memory it holds, per rank, the
 * lock word of passive-target epochs and the accumulate stripes' locks
 * (rma_shm_acc.c), so locks, puts, gets and accumulates need nothing from
 * the target process: it may compute without calling MPI. Win_create windows
 * of ranks on one node get the control lines alone (w->ctrl, its own
 * memfd): their locks are these words, their accumulates go by CMA under
 * the accumulate lock (rma_cma_acc.c). */
#ifndef TERN_CORE_RMA_SHM_H
#define TERN_CORE_RMA_SHM_H

#include "core/rma/rma_path.h"

/* Direct windows: per rank, accumulate-class operations to its memory
 * hold the stripes of the bytes they update (rma_shm_acc.c), one lock word
 * per cache line. */
#define TERN_RMA_STRIPES 64
#define TERN_RMA_STRIPE_LINE 64

/* Maps the window's memory (collective over its ranks): w->shm,
 * w->shm_offsets, w->base, w->ctrl; w->direct = 1. TERN_ERR_RMA_SHARED when
 * the memory cannot be made or opened. */
tern_status_t tern_rma_shm_map(tern_win_t *w);
/* Win_create on one node: only the control lines, in their own memfd
 * (collective). w->ctrl and w->ctrl_bytes are set when every rank mapped
 * it; otherwise left NULL (locks and accumulates then by active messages),
 * which every rank sees alike. */
tern_status_t tern_rma_shm_map_ctrl(tern_win_t *w);
/* The lock that makes accumulates to target of a Win_create window atomic:
 * every origin (CMA) and the target's engine take it. Held only around a copy
 * or a read-modify-write, never across a progress call. */
void tern_rma_shm_acc_lock(tern_win_t *w, int target);
void tern_rma_shm_acc_unlock(tern_win_t *w, int target);
/* Passive-target locks on target's lock word (spins, running progress). */
void tern_rma_shm_lock(tern_win_t *w, int target, int lock_type);
void tern_rma_shm_unlock(tern_win_t *w, int target, int lock_type);
/* One operation on target's memory now (hdr->addr: offset from its base);
 * fetched data into out. Accumulates, Get_accumulate and CAS go to
 * tern_rma_shm_acc_apply. */
void tern_rma_shm_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                        const tern_dt_seg_t *segs, const char *data, char *out);
/* An accumulate, Get_accumulate or CAS on target's memory now, atomic per
 * element: under the stripes of the bytes it updates (none while this
 * origin holds target's exclusive lock). */
void tern_rma_shm_acc_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                            const tern_dt_seg_t *segs, const char *data, char *out);
/* The fast path of Accumulate to a direct window: one predefined type on
 * both sides, the same count, a predefined operation defined on it, an
 * epoch that covers target, in range: applied now (atomic per element, as
 * tern_rma_shm_acc_apply) and 1 returned. 0: nothing done, the general path. */
int tern_rma_shm_accumulate(tern_win_t *w, const void *origin, MPI_Count ocount,
                            MPI_Datatype otype, int target, MPI_Aint disp, MPI_Count tcount,
                            MPI_Datatype ttype, MPI_Op op);
/* The fast path of Fetch_and_op (compare NULL) and Compare_and_swap to a
 * direct window: an element of 1, 2, 4 or 8 bytes at an aligned address,
 * an epoch that covers target, in range, a predefined operation defined
 * on dt: done now under the element's one stripe, result written, 1
 * returned. 0: nothing done, the caller takes the general path. */
int tern_rma_shm_fetch_atomic(tern_win_t *w, int target, MPI_Aint disp, MPI_Datatype dt,
                              MPI_Op op, const void *origin, const void *compare, void *result);
/* The fast path of Put and Get to a direct window (w->direct): contiguous
 * data on both sides, an epoch that covers target, in range: copied now
 * and 1 returned. 0: nothing done, the caller takes the general path. */
int tern_rma_shm_copy(tern_win_t *w, int get, void *origin, MPI_Count ocount, MPI_Datatype otype,
                      int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype);

#endif
