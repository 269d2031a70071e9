/* MPI_Win_create windows on one node: puts and gets by CMA (rma_cma.c),
 * with derived datatypes on both sides, under fence, lock, PSCW and
 * request-based operations, beside accumulates (which stay on the active
 * messages) to the same window; every result checked. Unless
 * TERN_RMA_CMA=off, also a passive target that computes without calling
 * MPI while the others put into it and get back under MPI_MODE_NOCHECK
 * locks: only a put or get that completes at the call (CMA) lets them
 * finish; the target fails after 20 s. */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 96


static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *buf = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        buf[i] = i >= 20 && i < 30 ? rank * 1000 + i : -1;
    MPI_Win win;
    MPI_Win_create(buf, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int flavor = 0, *fp, flag;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fp, &flag);
    flavor = *fp;
    CHECK(flag && flavor == MPI_WIN_FLAVOR_CREATE, "rank %d: flavor %d", rank, flavor);

    /* Target layout: 4 blocks of 2 ints, stride 3. Origin: 8 contiguous. */
    MPI_Datatype vec, idx;
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int blens[3] = {2, 3, 3}, displs[3] = {0, 5, 10};
    MPI_Type_indexed(3, blens, displs, MPI_INT, &idx);
    MPI_Type_commit(&idx);

    /* 1. Fence: a put of 8 ints into the right neighbour's vector at 1. */
    int src[8];
    for (int i = 0; i < 8; i++)
        src[i] = rank * 100 + i;
    MPI_Win_fence(0, win);
    MPI_Put(src, 8, MPI_INT, right, 1, 1, vec, win);
    MPI_Win_fence(0, win);
    for (int i = 1, k = 0; i < 12; i++) {
        int in = (i - 1) % 3 < 2;
        int want = in ? left * 100 + k : -1;
        CHECK(buf[i] == want, "rank %d: fence put: buf[%d] = %d, want %d", rank, i, buf[i], want);
        k += in;
    }

    /* 2. Lock: a get of the left neighbour's 8 ints at 20 into an indexed
     * layout (8 of 13 ints). */
    int got[16];
    for (int i = 0; i < 16; i++)
        got[i] = -7;
    MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
    MPI_Get(got, 1, idx, left, 20, 8, MPI_INT, win);
    MPI_Win_unlock(left, win);
    static const int at[8] = {0, 1, 5, 6, 7, 10, 11, 12};
    for (int j = 0, k = 0; j < 16; j++) {
        int want = k < 8 && at[k] == j ? left * 1000 + 20 + k : -7;
        CHECK(got[j] == want, "rank %d: lock get: got[%d] = %d, want %d", rank, j, got[j], want);
        if (k < 8 && at[k] == j)
            k++;
    }

    /* 3. PSCW: a put from an indexed origin into the right neighbour's 8
     * ints at 40, an accumulate (active messages) to 60 beside it. */
    MPI_Group world, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &lg);
    MPI_Group_incl(world, 1, &right, &rg);
    int pattern[13], back[8] = {0};
    for (int j = 0; j < 13; j++)
        pattern[j] = rank * 10000 + j;
    MPI_Win_post(lg, 0, win);
    MPI_Win_start(rg, 0, win);
    MPI_Put(pattern, 1, idx, right, 40, 8, MPI_INT, win);
    int one = 1;
    MPI_Accumulate(&one, 1, MPI_INT, right, 60, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    for (int k = 0; k < 8; k++) {
        int want = left * 10000 + at[k];
        CHECK(buf[40 + k] == want, "rank %d: pscw rput: buf[%d] = %d, want %d", rank, 40 + k, buf[40 + k], want);
    }
    CHECK(buf[60] == 0, "rank %d: accumulate: buf[60] = %d, want 0", rank, buf[60]);
    /* Request-based (passive target only): Rget of them back, Rput of a
     * vector's worth to 50. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request rq[2];
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Rget(back, 8, MPI_INT, right, 40, 8, MPI_INT, win, &rq[0]);
    MPI_Rput(pattern, 8, MPI_INT, right, 50, 8, MPI_INT, win, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Win_unlock(right, win);
    for (int k = 0; k < 8; k++)
        CHECK(back[k] == rank * 10000 + at[k], "rank %d: rget: back[%d] = %d", rank, k, back[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    for (int k = 0; k < 8; k++)
        CHECK(buf[50 + k] == left * 10000 + k, "rank %d: rput: buf[%d] = %d", rank, 50 + k, buf[50 + k]);
    MPI_Win_unlock(rank, win);

    /* 4. Every rank adds 1 to rank 0's 70 size times under lock_all,
     * beside puts to 71 + rank: the accumulates stay atomic. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        buf[70] = 0;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < size; i++) {
        MPI_Accumulate(&one, 1, MPI_INT, 0, 70, 1, MPI_INT, MPI_SUM, win);
        MPI_Put(&rank, 1, MPI_INT, 0, 71 + rank, 1, MPI_INT, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK(buf[70] == size * size, "rank 0: sum of accumulates %d, want %d", buf[70], size * size);
        for (int r = 0; r < size; r++)
            CHECK(buf[71 + r] == r, "rank 0: put of rank %d: %d", r, buf[71 + r]);
        MPI_Win_unlock(0, win);
    }

    /* 5. With CMA: rank 0 computes without MPI while the others put and
     * get under NOCHECK locks (no lock message either). */
    const char *knob = getenv("TERN_RMA_CMA");
    if (size > 1 && !(knob && !strcmp(knob, "off"))) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            double t0 = now(), sink = 0;
            for (;;) {
                int seen = 0;
                for (int r = 1; r < size; r++)
                    seen += __atomic_load_n(&buf[80 + r], __ATOMIC_ACQUIRE) == 5000 + r;
                if (seen == size - 1)
                    break;
                for (int i = 0; i < 10000; i++)
                    sink += i * 1e-9;
                if (now() - t0 > 20) {
                    CHECK(0, "rank 0: the puts did not arrive in 20 s without my help (%d of %d)", seen,
                          size - 1);
                    break;
                }
            }
            if (sink < 0)
                printf("%g\n", sink);
        } else {
            int v = 5000 + rank, r = 0;
            MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win);
            MPI_Put(&v, 1, MPI_INT, 0, 80 + rank, 1, MPI_INT, win);
            MPI_Win_flush(0, win);
            MPI_Get(&r, 1, MPI_INT, 0, 80 + rank, 1, MPI_INT, win);
            MPI_Win_unlock(0, win);
            CHECK(r == v, "rank %d: got back %d, want %d", rank, r, v);
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Group_free(&world);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    MPI_Win_free(&win);
    free(buf);
    int total = 0;
    MPI_Allreduce(&mtest_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "rma_cma: %d failures\n" : "rma_cma: ok\n", total);
    MPI_Finalize();
    return total != 0;
}
