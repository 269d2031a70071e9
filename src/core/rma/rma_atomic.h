/* One-sided accumulates and passive-target locks as the network
 * transport's remote atomics (rma_atomic.c).
 *
 * Decided per window at creation, the same on every rank: accumulates of
 * one basic type are applied either all by the provider (fi_atomic,
 * fi_fetch_atomic, fi_compare_atomic, from every origin, this rank and
 * ranks on its node included, through the provider's loopback) or all by
 * the targets' engines (active messages): applied by both, two updates of
 * one location would not be atomic with each other. With the default
 * accumulate_ops=same_op_no_op a basic type goes to the provider only when
 * it offers, at every rank, every operation MPI defines on that type plus
 * the atomic read (MPI_NO_OP), write (MPI_REPLACE) and compare-and-swap;
 * with same_op (concurrent accumulates to a location use one operation,
 * not even MPI_NO_OP beside it) each (operation, type) pair is decided on
 * its own. Only Win_create and Win_allocate windows (memory registered at
 * creation) off the direct path, whose every rank has the transport's
 * atomics open; dynamic windows keep the active messages. Such a window
 * routes every target's accumulates to this path (rma_path.h), which hands
 * a type and operation the provider does not apply (by that decision) to
 * active messages, and tracks its own in flight (rma_track.h).
 *
 * Passive-target locks: when every rank registered a lock word and the
 * provider offers compare-and-swap and add on 64-bit integers, Win_lock,
 * Win_unlock, Win_lock_all and Win_unlock_all take and release the
 * target's word with remote atomics (an exclusive bit or the count of
 * shared holders, as rma_shm.c in shared memory): no message to the target.
 * TERN_RMA_ATOMICS: auto, on (a window that gets no atomics is an error),
 * off. */
#ifndef TERN_CORE_RMA_ATOMIC_H
#define TERN_CORE_RMA_ATOMIC_H

#include "core/rma/rma_path.h"

/* Words per rank in the creation allgather: the (operation, type) pairs
 * offered, the lock word's address and remote key, the window memory's
 * address and remote key. */
#define TERN_RMA_ATOMIC_WORDS 11

/* Fills rec for the allgather (all zero when this rank has no atomics). */
tern_status_t tern_rma_atomic_local(tern_win_t *w, uint64_t *rec);
/* Takes every rank's record (rank r's at all + r * stride words). */
tern_status_t tern_rma_atomic_remote(tern_win_t *w, const int64_t *all, size_t stride);
/* Drops the lock word and the decision (the window's operations are over). */
void tern_rma_atomic_close(tern_win_t *w);

/* Passive-target locks by remote atomics: 1 when the window takes them. */
int tern_rma_atomic_locks(const tern_win_t *w);
tern_status_t tern_rma_atomic_lock(tern_win_t *w, int target, int lock_type);
tern_status_t tern_rma_atomic_unlock(tern_win_t *w, int target, int lock_type);

#endif
