/* The rules between the synchronisation modes of one window (MPI-4.1
 * 12.5): starting a lock, lock_all, start or post epoch inside a fence epoch
 * (a fence without MPI_MODE_NOSUCCEED followed by RMA operations), and a
 * fence inside a lock, lock_all, start or post epoch, are erroneous and
 * refused with MPI_ERR_RMA_SYNC, the message naming the function and the
 * epoch that is open; under MPI_ERRORS_RETURN the window stays usable (the
 * closing fence works, the operation before the refusal lands). And the
 * legal sequences next to them still work: fence(0) ... fence(NOSUCCEED)
 * then a lock; a first fence with MPI_MODE_NOPRECEDE; fences with nothing
 * between them; a lock, lock_all, start or post right after a fence(0)
 * that no operation followed, which ends the fence sequence (MPICH's
 * errors/rma/win_sync_lock_fence: an operation after that epoch is
 * refused). On a Win_create window and a Win_allocate one (direct access
 * on one node: puts and gets are copies at the call). */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

/* The call must give class cls; with words non-NULL the message must name
 * fn and contain words. */
static void expect(int line, const char *what, int e, int cls, const char *fn, const char *words)
{
    int c = -1, len = 0;
    char s[MPI_MAX_ERROR_STRING];
    s[0] = 0;
    MPI_Error_class(e, &c);
    if (e != MPI_SUCCESS)
        MPI_Error_string(e, s, &len);
    if (c != cls) {
        fprintf(stderr, "rank %d line %d: %s gave class %d, want %d (%s)\n", rank, line, what, c,
                cls, s);
        mtest_errors++;
    } else if (words && (!strstr(s, fn) || !strstr(s, words))) {
        fprintf(stderr, "rank %d line %d: %s: message \"%s\" does not name %s and \"%s\"\n",
                rank, line, what, s, fn, words);
        mtest_errors++;
    }
}
#define EXPECT(call, cls) expect(__LINE__, #call, (call), (cls), NULL, NULL)
#define REFUSED(call, fn, words) expect(__LINE__, #call, (call), MPI_ERR_RMA_SYNC, fn, words)

#define FENCE_OPEN "a fence epoch is open"

/* buf[slot] of rank target, read under a shared lock (outside any epoch). */
static int read_at(MPI_Win win, int target, int slot)
{
    int v = -1;
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win), MPI_SUCCESS);
    EXPECT(MPI_Get(&v, 1, MPI_INT, target, slot, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_unlock(target, win), MPI_SUCCESS);
    return v;
}

static void run(MPI_Win win, const char *flavor)
{
    int target = (rank + 1) % size, from = (rank + size - 1) % size;
    int v, got;
    MPI_Group g, wg;
    MPI_Win_get_group(win, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    /* A first fence with MPI_MODE_NOPRECEDE, a put, a closing fence with
     * MPI_MODE_NOSUCCEED; then a lock epoch (legal: no fence epoch open). */
    v = 100 + rank;
    EXPECT(MPI_Win_fence(MPI_MODE_NOPRECEDE, win), MPI_SUCCESS);
    EXPECT(MPI_Put(&v, 1, MPI_INT, target, 0, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), MPI_SUCCESS);
    v = 200 + rank;
    EXPECT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win), MPI_SUCCESS);
    EXPECT(MPI_Put(&v, 1, MPI_INT, target, 1, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_unlock(target, win), MPI_SUCCESS);
    /* After fence(NOSUCCEED) the fence epoch is over: no operation. */
    EXPECT(MPI_Put(&v, 1, MPI_INT, target, 1, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    EXPECT(MPI_Win_unlock_all(win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK((got = read_at(win, target, 0)) == 100 + rank, "%s: fence put read %d", flavor, got);
    CHECK((got = read_at(win, target, 1)) == 200 + rank, "%s: lock put after fence(NOSUCCEED) "
          "read %d", flavor, got);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Fences with nothing between them; a put in the last epoch. */
    v = 300 + rank;
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    EXPECT(MPI_Win_fence(MPI_MODE_NOSTORE, win), MPI_SUCCESS);
    EXPECT(MPI_Put(&v, 1, MPI_INT, target, 2, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    int mine = -1;
    EXPECT(MPI_Get(&mine, 1, MPI_INT, rank, 2, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    CHECK(mine == 300 + from, "%s: put between fences read %d, want %d", flavor, mine,
          300 + from);

    /* Refused in a fence epoch that operations opened: lock, lock_all,
     * start, post. Each leaves the window usable: the put before lands at
     * the closing fence. */
    for (int k = 0; k < 4; k++) {
        v = 400 + 10 * k + rank;
        EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
        EXPECT(MPI_Put(&v, 1, MPI_INT, target, 3, 1, MPI_INT, win), MPI_SUCCESS);
        if (k == 0)
            REFUSED(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win), "MPI_Win_lock", FENCE_OPEN);
        else if (k == 1)
            REFUSED(MPI_Win_lock_all(0, win), "MPI_Win_lock_all", FENCE_OPEN);
        else if (k == 2)
            REFUSED(MPI_Win_start(g, 0, win), "MPI_Win_start", FENCE_OPEN);
        else
            REFUSED(MPI_Win_post(g, 0, win), "MPI_Win_post", FENCE_OPEN);
        /* Still in the fence epoch: operations go on, the fence closes it. */
        EXPECT(MPI_Get(&got, 1, MPI_INT, target, 0, 1, MPI_INT, win), MPI_SUCCESS);
        EXPECT(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), MPI_SUCCESS);
        CHECK(got == 100 + rank, "%s: get in the fence epoch read %d", flavor, got);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK((got = read_at(win, target, 3)) == 400 + 10 * k + rank,
              "%s: case %d: put before the refusal read %d", flavor, k, got);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* The fence epoch of a get (operations of every kind open it) and of
     * an accumulate. */
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    EXPECT(MPI_Get(&got, 1, MPI_INT, target, 0, 1, MPI_INT, win), MPI_SUCCESS);
    REFUSED(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, MPI_MODE_NOCHECK, win), "MPI_Win_lock",
            FENCE_OPEN);
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    v = 1;
    EXPECT(MPI_Accumulate(&v, 1, MPI_INT, target, 4, 1, MPI_INT, MPI_SUM, win), MPI_SUCCESS);
    REFUSED(MPI_Win_lock_all(MPI_MODE_NOCHECK, win), "MPI_Win_lock_all", FENCE_OPEN);
    EXPECT(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), MPI_SUCCESS);

    /* A fence inside a lock, lock_all, start or post epoch: refused on
     * every rank (before its barrier), the epoch goes on. */
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win), MPI_SUCCESS);
    REFUSED(MPI_Win_fence(0, win), "MPI_Win_fence", "epoch of MPI_Win_lock is open");
    EXPECT(MPI_Get(&got, 1, MPI_INT, target, 0, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_unlock(target, win), MPI_SUCCESS);
    CHECK(got == 100 + rank, "%s: get after the refused fence read %d", flavor, got);
    EXPECT(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    REFUSED(MPI_Win_fence(MPI_MODE_NOPRECEDE, win), "MPI_Win_fence",
            "epoch of MPI_Win_lock_all is open");
    EXPECT(MPI_Win_unlock_all(win), MPI_SUCCESS);
    EXPECT(MPI_Win_post(wg, 0, win), MPI_SUCCESS);
    REFUSED(MPI_Win_fence(0, win), "MPI_Win_fence", "epoch of MPI_Win_post is open");
    EXPECT(MPI_Win_start(wg, 0, win), MPI_SUCCESS);
    REFUSED(MPI_Win_fence(0, win), "MPI_Win_fence", "epoch of MPI_Win_start is open");
    /* The other access epochs inside a start epoch. */
    REFUSED(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win), "MPI_Win_lock",
            "epoch of MPI_Win_start is open");
    REFUSED(MPI_Win_lock_all(0, win), "MPI_Win_lock_all", "epoch of MPI_Win_start is open");
    v = 500 + rank;
    EXPECT(MPI_Put(&v, 1, MPI_INT, target, 5, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_complete(win), MPI_SUCCESS);
    EXPECT(MPI_Win_wait(win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK((got = read_at(win, target, 5)) == 500 + rank, "%s: PSCW put read %d", flavor, got);
    MPI_Barrier(MPI_COMM_WORLD);

    /* MPICH's errors/rma/win_sync_lock_fence: a lock right after fence(0)
     * is legal (no operation followed the fence) and ends the fence
     * sequence, so after the unlock an operation has no epoch. */
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win), MPI_SUCCESS);
    EXPECT(MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_unlock(0, win), MPI_SUCCESS);
    REFUSED(MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win), "MPI_Get", "epoch");
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    CHECK(got == 100 + size - 1, "%s: get under the lock after fence(0) read %d", flavor, got);
    /* The same with lock_all, and with start and post after a fence(0)
     * that closed an epoch with operations in it. */
    EXPECT(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    EXPECT(MPI_Win_unlock_all(win), MPI_SUCCESS);
    EXPECT(MPI_Put(&v, 1, MPI_INT, target, 6, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    v = 600 + rank;
    EXPECT(MPI_Put(&v, 1, MPI_INT, target, 6, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    EXPECT(MPI_Win_post(wg, 0, win), MPI_SUCCESS);
    EXPECT(MPI_Win_start(wg, 0, win), MPI_SUCCESS);
    /* The start epoch reaches its group only (here every rank). */
    EXPECT(MPI_Get(&got, 1, MPI_INT, target, 6, 1, MPI_INT, win), MPI_SUCCESS);
    EXPECT(MPI_Win_complete(win), MPI_SUCCESS);
    EXPECT(MPI_Win_wait(win), MPI_SUCCESS);
    CHECK(got == 600 + rank, "%s: PSCW get after fence(0) read %d", flavor, got);
    EXPECT(MPI_Put(&v, 1, MPI_INT, target, 6, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    /* And a lock to each rank (several lock epochs at once) after a
     * closing fence(0). */
    EXPECT(MPI_Win_fence(0, win), MPI_SUCCESS);
    for (int r = 0; r < size; r++)
        EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win), MPI_SUCCESS);
    REFUSED(MPI_Win_lock_all(0, win), "MPI_Win_lock_all", "epoch of MPI_Win_lock is open");
    for (int r = 0; r < size; r++)
        EXPECT(MPI_Win_unlock(r, win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Group_free(&g);
    MPI_Group_free(&wg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int buf[8] = {0};
    int *abuf;
    MPI_Win win;

    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    run(win, "Win_create");
    EXPECT(MPI_Win_free(&win), MPI_SUCCESS);

    MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &abuf, &win);
    memset(abuf, 0, 8 * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    run(win, "Win_allocate");
    EXPECT(MPI_Win_free(&win), MPI_SUCCESS);

    int all;
    MPI_Allreduce(&mtest_errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED: %d\n" : "ok\n", all);
    MPI_Finalize();
    return all != 0;
}
