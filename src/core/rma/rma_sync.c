/* Fences, post-start-complete-wait and passive-target locks over the
 * engine's counted messages (rma_am.h): an origin closes an epoch once
 * every operation of it is answered, which a target does only after
 * applying it; then the fence's barrier, the COMPLETE message or the
 * UNLOCK tells the target. */
#include "core/rma/rma_sync.h"
#include "core/coll/coll.h"
#include "core/comm/ulfm.h"
#include "core/pt2pt/progress.h"
#include "core/rma/rma_am.h"
#include "core/rma/rma_atomic.h"
#include "core/rma/rma_shm.h"
#include "core/pt2pt/peer_failure.h"
#include "core/runtime/runtime.h"

#include <stdatomic.h>
#include <stdlib.h>

/* locked[] values: the lock type, with this bit when no lock message was
 * sent (MPI_MODE_NOCHECK). */
#define LOCK_NOCHECK 0x80

tern_status_t tern_rma_check_epoch(tern_win_t *w, int target, int passive)
{
    if (w->locked[target] || (w->epoch & TERN_EPOCH_LOCK_ALL))
        return TERN_OK;
    if (!passive) {
        if (w->fence_open) {
            w->fence_used = 1; /* the fence opened an epoch: a fence must end it */
            return TERN_OK;
        }
        if (w->epoch & TERN_EPOCH_PSCW)
            for (int i = 0; i < w->n_access; i++)
                if (w->access_group[i] == target)
                    return TERN_OK;
    }
    return tern_status_detail(TERN_ERR_RMA_SYNC,
                              "no %sepoch gives access to target rank %d of the window",
                              passive ? "passive-target (lock) " : "", target);
}

tern_status_t tern_rma_check_target_alive(const tern_win_t *w, int target)
{
    if (__builtin_expect(!tern_rt.n_failed_peers, 1))
        return TERN_OK;
    int world = tern_win_world(w, target);
    if (world < 0 || world >= tern_rt.n_peers || tern_rt.peers[world].failed == TERN_OK)
        return TERN_OK;
    return tern_status_detail(tern_rt.peers[world].failed, "target rank %d of the window "
                              "(world rank %d) failed: %s", target, world,
                              tern_peer_failure(world));
}

tern_status_t tern_rma_revoked_error(const tern_win_t *w)
{
    return tern_status_detail(TERN_ERR_REVOKED, "window 0x%x is revoked (MPIX_Win_revoke)",
                              (unsigned)w->handle);
}

tern_status_t tern_win_revoke(tern_win_t *w)
{
    return tern_ulfm_revoke(w->comm);
}

tern_status_t tern_win_get_failed(tern_win_t *w, MPI_Group *failedgrp)
{
    return tern_ulfm_get_failed(w->comm, failedgrp);
}

/* The first failed member of the window, as tern_rma_check_target_alive
 * says it (lock_all and flush_all reach every member). */
static tern_status_t any_target_failed(const tern_win_t *w)
{
    if (!tern_rt.n_failed_peers)
        return TERN_OK;
    tern_status_t st = TERN_OK;
    for (int r = 0; r < w->size && st == TERN_OK; r++)
        st = tern_rma_check_target_alive(w, r);
    return st;
}

static tern_status_t check_assert(int assert_, int allowed, const char *what)
{
    if (assert_ & ~allowed)
        return tern_status_detail(TERN_ERR_ASSERT, "assert=%d has bits %s does not take",
                                  assert_, what);
    return TERN_OK;
}

static tern_status_t check_rank(const tern_win_t *w, int rank)
{
    if (rank < 0 || rank >= w->size)
        return tern_status_detail(TERN_ERR_RANK, "rank=%d is out of range (the window has %d "
                                  "ranks)", rank, w->size);
    return TERN_OK;
}

/* The epoch rules between the synchronisation modes (MPI-4.1 12.5; what
 * MPICH refuses, with MPI_ERR_RMA_SYNC). A fence without
 * MPI_MODE_NOSUCCEED opens an epoch only if RMA operations follow it before
 * the next fence (fence_used): until then it may as well have been the last
 * fence, so a lock, lock_all or start right after it is legal and ends the
 * fence sequence (fence_open cleared: operations need the new epoch, and
 * after it a fence again). Once an operation was issued the fence epoch is
 * open, and only a fence ends it. A fence is refused inside a lock,
 * lock_all or start (access) epoch and inside a post (exposure) epoch. */

/* TERN_ERR_RMA_SYNC naming the access epoch open on w, if any: a start or
 * lock_all epoch always, a lock epoch when locks, a fence epoch with
 * operations in it when fence. */
static tern_status_t access_epoch_open(const tern_win_t *w, int locks, int fence)
{
    if (w->epoch & TERN_EPOCH_PSCW)
        return tern_status_detail(TERN_ERR_RMA_SYNC, "an access epoch of MPI_Win_start is open "
                                  "on the window (MPI_Win_complete ends it)");
    if (w->epoch & TERN_EPOCH_LOCK_ALL)
        return tern_status_detail(TERN_ERR_RMA_SYNC, "a passive-target epoch of "
                                  "MPI_Win_lock_all is open on the window (MPI_Win_unlock_all "
                                  "ends it)");
    if (locks && w->n_locked) {
        int r = 0;
        while (r < w->size - 1 && !w->locked[r])
            r++;
        return tern_status_detail(TERN_ERR_RMA_SYNC, "a passive-target epoch of MPI_Win_lock "
                                  "is open on the window (rank %d is locked; MPI_Win_unlock "
                                  "ends it)", r);
    }
    if (fence && w->fence_open && w->fence_used)
        return tern_status_detail(TERN_ERR_RMA_SYNC, "a fence epoch is open on the window (RMA "
                                  "operations were issued after an MPI_Win_fence without "
                                  "MPI_MODE_NOSUCCEED; only MPI_Win_fence ends it)");
    return TERN_OK;
}

/* ------------------------------------------------------------------------ */

tern_status_t tern_win_fence(int assert_, tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    tern_status_t st = check_assert(assert_, MPI_MODE_NOSTORE | MPI_MODE_NOPUT |
                                    MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, "MPI_Win_fence");
    if (st != TERN_OK)
        return st;
    if ((st = access_epoch_open(w, 1, 0)) != TERN_OK)
        return st;
    if (w->n_exposure)
        return tern_status_detail(TERN_ERR_RMA_SYNC, "an exposure epoch of MPI_Win_post is "
                                  "open on the window (MPI_Win_wait or MPI_Win_test ends it)");
    st = tern_rma_am_wait_target(w, -1);
    atomic_thread_fence(memory_order_seq_cst); /* direct accesses, before the barrier */
    /* After the barrier every rank's operations are answered, so applied. */
    tern_status_t bst = tern_coll_barrier(w->comm);
    if (st == TERN_OK)
        st = bst;
    w->fence_open = !(assert_ & MPI_MODE_NOSUCCEED);
    w->fence_used = 0;
    return st;
}

/* Window ranks of a group's members in *ranks; TERN_ERR_GROUP for a member
 * not in the window. */
static tern_status_t group_ranks(const tern_win_t *w, const tern_group_t *g, int *ranks)
{
    if (g->size > w->size)
        return tern_status_detail(TERN_ERR_GROUP, "the group has %d ranks, the window %d",
                                  g->size, w->size);
    for (int i = 0; i < g->size; i++) {
        int r = 0;
        while (r < w->size && tern_win_world(w, r) != g->world_ranks[i])
            r++;
        if (r == w->size)
            return tern_status_detail(TERN_ERR_GROUP,
                                      "group rank %d (world rank %d) is not in the window", i,
                                      g->world_ranks[i]);
        ranks[i] = r;
    }
    return TERN_OK;
}

tern_status_t tern_win_post(const tern_group_t *g, int assert_, tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    tern_status_t st = check_assert(assert_, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE |
                                    MPI_MODE_NOPUT, "MPI_Win_post");
    if (st != TERN_OK)
        return st;
    if (w->n_exposure)
        return tern_status_detail(TERN_ERR_RMA_SYNC, "an exposure epoch of MPI_Win_post is "
                                  "open already (MPI_Win_wait or MPI_Win_test ends it)");
    /* A fence epoch with operations in it exposes the window already; a
     * fence with none after it is no epoch (as MPICH, the fence sequence
     * is left to the access side: a start, lock or fence ends it). */
    if (w->fence_open && w->fence_used)
        return access_epoch_open(w, 0, 1);
    if ((st = group_ranks(w, g, w->exposure_group)) != TERN_OK)
        return st;
    for (int i = 0; i < g->size && st == TERN_OK; i++)
        st = tern_rma_am_control(w, w->exposure_group[i], RMA_POST, 0, 0);
    if (st == TERN_OK)
        w->n_exposure = g->size;
    /* An empty group still opens an epoch that Win_wait closes. */
    if (st == TERN_OK && !g->size)
        w->n_exposure = -1;
    return st;
}

tern_status_t tern_win_start(const tern_group_t *g, int assert_, tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    tern_status_t st = check_assert(assert_, MPI_MODE_NOCHECK, "MPI_Win_start");
    if (st != TERN_OK)
        return st;
    if ((st = access_epoch_open(w, 1, 1)) != TERN_OK)
        return st;
    if ((st = group_ranks(w, g, w->access_group)) != TERN_OK)
        return st;
    /* Each target's POST must have come (they may come in any order). */
    unsigned idle = 0;
    for (int i = 0; i < g->size; i++)
        while (!w->posts_seen[w->access_group[i]])
            if (w->comm->revoked)
                return tern_rma_revoked_error(w);
            else if (!tern_progress())
                tern_progress_idle(&idle);
    for (int i = 0; i < g->size; i++)
        w->posts_seen[w->access_group[i]]--;
    w->n_access = g->size;
    w->epoch |= TERN_EPOCH_PSCW;
    w->fence_open = 0; /* the last fence had no operations after it: it ended the sequence */
    return TERN_OK;
}

tern_status_t tern_win_complete(tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    if (!(w->epoch & TERN_EPOCH_PSCW))
        return tern_status_detail(TERN_ERR_RMA_SYNC, "no MPI_Win_start epoch to complete");
    tern_status_t st = TERN_OK;
    for (int i = 0; i < w->n_access; i++) {
        tern_status_t s = tern_rma_am_wait_target(w, w->access_group[i]);
        if (st == TERN_OK)
            st = s;
    }
    for (int i = 0; i < w->n_access; i++) {
        tern_status_t s = tern_rma_am_control(w, w->access_group[i], RMA_COMPLETE, 0, 0);
        if (st == TERN_OK)
            st = s;
    }
    w->n_access = 0;
    w->epoch &= ~TERN_EPOCH_PSCW;
    return st;
}

/* 1 when every origin of the exposure epoch has completed (then closes it). */
static int exposure_done(tern_win_t *w)
{
    int n = w->n_exposure < 0 ? 0 : w->n_exposure;
    for (int i = 0; i < n; i++)
        if (!w->completes_seen[w->exposure_group[i]])
            return 0;
    for (int i = 0; i < n; i++)
        w->completes_seen[w->exposure_group[i]]--;
    w->n_exposure = 0;
    return 1;
}

tern_status_t tern_win_wait(tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    if (!w->n_exposure)
        return tern_status_detail(TERN_ERR_RMA_SYNC, "no MPI_Win_post epoch to wait for");
    unsigned idle = 0;
    while (!exposure_done(w)) {
        if (w->comm->revoked) { /* the epoch is over: nobody completes it */
            w->n_exposure = 0;
            return tern_rma_revoked_error(w);
        }
        if (!tern_progress())
            tern_progress_idle(&idle);
    }
    return TERN_OK;
}

tern_status_t tern_win_test(tern_win_t *w, int *flag)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    if (!w->n_exposure)
        return tern_status_detail(TERN_ERR_RMA_SYNC, "no MPI_Win_post epoch to test");
    tern_progress();
    *flag = exposure_done(w);
    if (!*flag)
        tern_progress_test_missed();
    return TERN_OK;
}

/* ------------------------------------------------------------------------ */

tern_status_t tern_win_lock(int lock_type, int rank, int assert_, tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return tern_status_detail(TERN_ERR_LOCKTYPE,
                                  "lock_type=%d is not MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED",
                                  lock_type);
    tern_status_t st = check_assert(assert_, MPI_MODE_NOCHECK, "MPI_Win_lock");
    if (st != TERN_OK)
        return st;
    if (rank == MPI_PROC_NULL)
        return TERN_OK;
    if ((st = check_rank(w, rank)) != TERN_OK)
        return st;
    if ((st = access_epoch_open(w, 0, 1)) != TERN_OK)
        return st;
    if ((st = tern_rma_check_target_alive(w, rank)) != TERN_OK)
        return st;
    if (w->locked[rank])
        return tern_status_detail(TERN_ERR_RMA_SYNC, "rank %d of the window is locked already "
                                  "(MPI_Win_unlock ends that epoch)", rank);
    if (!(assert_ & MPI_MODE_NOCHECK)) {
        if (w->ctrl)
            tern_rma_shm_lock(w, rank, lock_type);
        else if (tern_rma_atomic_locks(w) && (st = tern_rma_atomic_lock(w, rank, lock_type)) !=
                                                 TERN_OK)
            return st;
        else if (!tern_rma_atomic_locks(w) &&
                 (st = tern_rma_am_control(w, rank, RMA_LOCK, lock_type, 1)) != TERN_OK)
            return st;
    }
    w->locked[rank] = (uint8_t)(lock_type == MPI_LOCK_EXCLUSIVE ? 1 : 2) |
                      (assert_ & MPI_MODE_NOCHECK ? LOCK_NOCHECK : 0);
    w->n_locked++;
    w->epoch |= TERN_EPOCH_LOCK;
    w->fence_open = 0; /* the last fence had no operations after it: it ended the sequence */
    return TERN_OK;
}

tern_status_t tern_win_unlock(int rank, tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    if (rank == MPI_PROC_NULL)
        return TERN_OK;
    tern_status_t st = check_rank(w, rank);
    if (st != TERN_OK)
        return st;
    if (!w->locked[rank])
        return tern_status_detail(TERN_ERR_RMA_SYNC, "rank %d of the window is not locked",
                                  rank);
    st = tern_rma_am_wait_target(w, rank);
    tern_status_t s = TERN_OK;
    if (!(w->locked[rank] & LOCK_NOCHECK) && w->ctrl)
        tern_rma_shm_unlock(w, rank, (w->locked[rank] & 3) == 1 ? MPI_LOCK_EXCLUSIVE
                                                                 : MPI_LOCK_SHARED);
    else if (!(w->locked[rank] & LOCK_NOCHECK) && tern_rma_atomic_locks(w))
        s = tern_rma_atomic_unlock(w, rank, (w->locked[rank] & 3) == 1 ? MPI_LOCK_EXCLUSIVE
                                                                        : MPI_LOCK_SHARED);
    else if (!(w->locked[rank] & LOCK_NOCHECK))
        /* Sent, not waited for: the operations are answered already, and
         * this origin's next LOCK to the target arrives after it (one
         * round trip less per passive epoch). */
        s = tern_rma_am_control(w, rank, RMA_UNLOCK, 0, 0);
    w->locked[rank] = 0;
    if (!--w->n_locked)
        w->epoch &= ~TERN_EPOCH_LOCK;
    if (st == TERN_OK && s == TERN_OK)
        s = tern_rma_check_target_alive(w, rank);
    return st != TERN_OK ? st : s;
}

tern_status_t tern_win_lock_all(int assert_, tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    tern_status_t st = check_assert(assert_, MPI_MODE_NOCHECK, "MPI_Win_lock_all");
    if (st != TERN_OK)
        return st;
    if ((st = access_epoch_open(w, 1, 1)) != TERN_OK)
        return st;
    w->lock_all_nocheck = !!(assert_ & MPI_MODE_NOCHECK);
    for (int r = 0; r < w->size && !w->lock_all_nocheck && st == TERN_OK; r++) {
        if (w->ctrl)
            tern_rma_shm_lock(w, r, MPI_LOCK_SHARED);
        else if (tern_rma_atomic_locks(w))
            st = tern_rma_atomic_lock(w, r, MPI_LOCK_SHARED);
        else
            st = tern_rma_am_control(w, r, RMA_LOCK, MPI_LOCK_SHARED, 1);
    }
    if (st == TERN_OK) {
        w->epoch |= TERN_EPOCH_LOCK_ALL;
        w->fence_open = 0; /* as in Win_lock */
    }
    return st;
}

tern_status_t tern_win_unlock_all(tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    if (!(w->epoch & TERN_EPOCH_LOCK_ALL))
        return tern_status_detail(TERN_ERR_RMA_SYNC, "no MPI_Win_lock_all epoch to end");
    tern_status_t st = tern_rma_am_wait_target(w, -1);
    for (int r = 0; r < w->size && !w->lock_all_nocheck; r++) {
        if (w->ctrl) {
            tern_rma_shm_unlock(w, r, MPI_LOCK_SHARED);
            continue;
        }
        tern_status_t s = tern_rma_atomic_locks(w)
                              ? tern_rma_atomic_unlock(w, r, MPI_LOCK_SHARED)
                              : tern_rma_am_control(w, r, RMA_UNLOCK, 0, 0); /* as Win_unlock */
        if (st == TERN_OK)
            st = s;
    }
    w->epoch &= ~TERN_EPOCH_LOCK_ALL;
    return st == TERN_OK ? any_target_failed(w) : st;
}

tern_status_t tern_win_flush_checked(int rank, tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    if (rank == MPI_PROC_NULL)
        return TERN_OK;
    tern_status_t st = check_rank(w, rank);
    if (st == TERN_OK)
        st = tern_rma_check_epoch(w, rank, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (st == TERN_OK && !w->flush_fence_only)
        st = tern_rma_am_wait_target(w, rank);
    return st == TERN_OK ? tern_rma_check_target_alive(w, rank) : st;
}

tern_status_t tern_win_flush_all(tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    if (!w->n_locked && !(w->epoch & TERN_EPOCH_LOCK_ALL))
        return tern_status_detail(TERN_ERR_RMA_SYNC, "no passive-target epoch is open");
    atomic_thread_fence(memory_order_seq_cst);
    tern_status_t st = w->flush_fence_only ? TERN_OK : tern_rma_am_wait_target(w, -1); /* as Win_flush */
    return st == TERN_OK ? any_target_failed(w) : st;
}

tern_status_t tern_win_sync(tern_win_t *w)
{
    tern_status_t rv = tern_rma_check_revoked(w);
    if (rv != TERN_OK)
        return rv;
    (void)w;
    /* Unified model: the public and private copies are the same memory;
     * a full barrier orders this process's loads and stores. */
    atomic_thread_fence(memory_order_seq_cst);
    tern_progress();
    return TERN_OK;
}
