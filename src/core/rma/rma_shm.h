/* Direct access to windows whose memory every rank maps (rma_shm.c):
 * Win_allocate_shared, and Win_allocate when the ranks share a node. The
 * memory is one memfd; before the ranks' memory it holds, per rank, the
 * lock word of passive-target epochs and the lock that makes accumulates
 * atomic, so locks, puts, gets and accumulates need nothing from the
 * target process: it may compute without calling MPI. */
#ifndef TERN_CORE_RMA_SHM_H
#define TERN_CORE_RMA_SHM_H

#include "core/rma/rma_am.h"

/* Maps the window's memory (collective over its ranks): w->shm,
 * w->shm_offsets, w->base, w->ctrl; w->direct = 1. TERN_ERR_RMA_SHARED when
 * the memory cannot be made or opened. */
tern_status_t tern_rma_shm_map(tern_win_t *w);
/* Passive-target locks on target's lock word (spins, running progress). */
void tern_rma_shm_lock(tern_win_t *w, int target, int lock_type);
void tern_rma_shm_unlock(tern_win_t *w, int target, int lock_type);
/* One operation on target's memory now (hdr->addr: offset from its base);
 * fetched data into out. */
void tern_rma_shm_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                        const tern_dt_seg_t *segs, const char *data, char *out);

#endif
