/* Synchronisation of one-sided communication (rma_sync.c): fences,
 * post-start-complete-wait, passive-target locks, flushes; and the epoch
 * test every operation makes. Arguments checked by kind in the MPI layer;
 * asserts, lock types and ranks are checked here. */
#ifndef TERN_CORE_RMA_SYNC_H
#define TERN_CORE_RMA_SYNC_H

#include "core/group/group.h"
#include "core/rma/window.h"
#include "core/runtime/runtime.h"
#include "base/fence.h"

/* TERN_OK when the origin may access target now (passive: only a lock or
 * lock_all epoch will do, as for the request-based operations);
 * TERN_ERR_RMA_SYNC otherwise. An access granted by a fence marks the fence
 * epoch as used (fence_used): a lock, lock_all or start is then refused
 * until a fence ends it. */
tern_status_t tern_rma_check_epoch(tern_win_t *w, int target, int passive);
/* TERN_OK unless target's process is known failed (ULFM: an operation, a
 * lock or a flush with a dead target fails with MPIX_ERR_PROC_FAILED
 * through the window's handler, also where shared memory would let it
 * "succeed" into the dead process's memory). */
tern_status_t tern_rma_check_target_alive(const tern_win_t *w, int target);
/* TERN_ERR_REVOKED once the window is revoked (MPIX_Win_revoke here or on
 * any member: its communicator is revoked), else TERN_OK: the check of
 * every operation and synchronisation on it. One load. */
tern_status_t tern_rma_revoked_error(const tern_win_t *w);
static inline tern_status_t tern_rma_check_revoked(const tern_win_t *w)
{
    return __builtin_expect(w->comm->revoked, 0) ? tern_rma_revoked_error(w) : TERN_OK;
}

/* ULFM (MPIX_Win_revoke, MPIX_Win_get_failed, the ULFM specification's
 * window procedures): revokes the window's communicator, so every member's
 * operations and epochs on it fail with TERN_ERR_REVOKED and MPI_Win_free
 * needs nobody else; the window's members known failed. */
tern_status_t tern_win_revoke(tern_win_t *w);
tern_status_t tern_win_get_failed(tern_win_t *w, MPI_Group *failedgrp);

tern_status_t tern_win_fence(int assert_, tern_win_t *w);
tern_status_t tern_win_post(const tern_group_t *g, int assert_, tern_win_t *w);
tern_status_t tern_win_start(const tern_group_t *g, int assert_, tern_win_t *w);
tern_status_t tern_win_complete(tern_win_t *w);
tern_status_t tern_win_wait(tern_win_t *w);
tern_status_t tern_win_test(tern_win_t *w, int *flag);
tern_status_t tern_win_lock(int lock_type, int rank, int assert_, tern_win_t *w);
tern_status_t tern_win_unlock(int rank, tern_win_t *w);
tern_status_t tern_win_lock_all(int assert_, tern_win_t *w);
tern_status_t tern_win_unlock_all(tern_win_t *w);
/* A flush the common case of tern_win_flush does not cover, checked: says
 * what is wrong, or passes the engine. Out of line, so that the common case
 * saves no registers. */
__attribute__((noinline)) tern_status_t tern_win_flush_checked(int rank, tern_win_t *w);
/* Flushes (local ones too: an operation is complete only when answered).
 * tern_win_flush is inline into the MPI layer's entry points
 * (docs/performance.md row putinline). */
static inline tern_status_t tern_win_flush(int rank, tern_win_t *w)
{
    /* Every operation on a window whose targets are all routed direct is
     * complete when its call returns (rma_shm.c): in a passive epoch on a
     * live target the fence is all a flush of one needs, no pass of the
     * engine (rma_path.c keeps the flag). */
    if (__builtin_expect(w->flush_fence_only && (unsigned)rank < (unsigned)w->size &&
                             (w->locked[rank] || (w->epoch & TERN_EPOCH_LOCK_ALL)) &&
                             !w->comm->revoked && !tern_rt.n_failed_peers,
                         1)) {
        tern_fence_seq_cst();
        return TERN_OK;
    }
    return tern_win_flush_checked(rank, w);
}
tern_status_t tern_win_flush_all(tern_win_t *w);
tern_status_t tern_win_sync(tern_win_t *w);

#endif
