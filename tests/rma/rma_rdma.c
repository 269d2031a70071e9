/* Puts and gets between every pair of ranks on windows made by
 * MPI_Win_create and MPI_Win_allocate, in every synchronisation mode, with
 * results checked: contiguous data, a strided target of a few pieces (one
 * RDMA transfer each), a target of many pieces (the active-message path),
 * 3 MB at once (chunked by the transport), the request-based forms; and
 * a dynamic window's attach, access and detach.
 * tests/ofi runs it over the network transport with TERN_RMA_RDMA on and
 * off (and TERN_RMA_DIRECT=off, so Win_allocate is not shared memory). */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (3 << 18) /* ints: 3 MB */



static int val(int writer, int i)
{
    return writer * 1000003 + i;
}

static void run(MPI_Win win, int *mem, int rank, int size, const char *what)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *src = malloc(N * sizeof *src), *dst = malloc(N * sizeof *dst);
    for (int i = 0; i < N; i++)
        src[i] = val(rank, i);

    /* Fence: 3 MB to the right, read back from the left's target. */
    memset(mem, 0, N * sizeof *mem);
    MPI_Win_fence(0, win);
    MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i += 4099)
        CHECK(mem[i] == val(left, i), "%s fence put: mem[%d] = %d, want %d", what, i, mem[i],
              val(left, i));
    memset(dst, 0, N * sizeof *dst);
    MPI_Get(dst, N, MPI_INT, right, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i += 4099)
        CHECK(dst[i] == val(rank, i), "%s fence get: [%d] = %d, want %d", what, i, dst[i],
              val(rank, i));

    /* Lock and flush: a strided target of 8 pieces, then 200 pieces. */
    MPI_Datatype few, many;
    MPI_Type_vector(8, 16, 64, MPI_INT, &few);
    MPI_Type_vector(200, 1, 3, MPI_INT, &many);
    MPI_Type_commit(&few);
    MPI_Type_commit(&many);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(src, 128, MPI_INT, right, 10, 1, few, win);
    MPI_Put(src + 128, 200, MPI_INT, right, 1000, 1, many, win);
    MPI_Win_flush(right, win);
    int back[328];
    MPI_Get(back, 128, MPI_INT, right, 10, 1, few, win);
    MPI_Get(back + 128, 200, MPI_INT, right, 1000, 1, many, win);
    MPI_Win_unlock(right, win);
    for (int i = 0; i < 328; i++)
        CHECK(back[i] == src[i], "%s strided: back[%d] = %d, want %d", what, i, back[i], src[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int b = 0; b < 8; b++)
        for (int j = 0; j < 16; j++)
            CHECK(mem[10 + 64 * b + j] == val(left, 16 * b + j), "%s strided target [%d]",
                  what, 10 + 64 * b + j);
    MPI_Type_free(&few);
    MPI_Type_free(&many);

    /* Lock_all, request-based: every rank writes its slot at every rank. */
    MPI_Win_lock_all(0, win);
    MPI_Request reqs[2 * 64];
    int got[64];
    int nr = 0;
    for (int t = 0; t < size && t < 64; t++)
        MPI_Rput(&src[7], 1, MPI_INT, t, 2 * N / 3 + rank, 1, MPI_INT, win, &reqs[nr++]);
    MPI_Waitall(nr, reqs, MPI_STATUSES_IGNORE);
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    nr = 0;
    for (int t = 0; t < size && t < 64; t++)
        MPI_Rget(&got[t], 1, MPI_INT, t, 2 * N / 3 + left, 1, MPI_INT, win, &reqs[nr++]);
    MPI_Waitall(nr, reqs, MPI_STATUSES_IGNORE);
    MPI_Win_unlock_all(win);
    for (int t = 0; t < size && t < 64; t++)
        CHECK(got[t] == val(left, 7), "%s Rget from %d: %d, want %d", what, t, got[t],
              val(left, 7));

    /* Post-start-complete-wait, everyone with everyone. */
    MPI_Group wg;
    MPI_Win_get_group(win, &wg);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_post(wg, 0, win);
    MPI_Win_start(wg, 0, win);
    for (int t = 0; t < size; t++)
        MPI_Put(&src[rank], 1, MPI_INT, t, N / 2 + rank, 1, MPI_INT, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    for (int r = 0; r < size; r++)
        CHECK(mem[N / 2 + r] == val(r, r), "%s PSCW slot %d: %d", what, r, mem[N / 2 + r]);
    MPI_Group_free(&wg);
    free(src);
    free(dst);
}

/* Dynamic window: attach, access over RDMA (the key asked for on demand),
 * detach: an access to detached memory fails with MPI_ERR_RMA_RANGE (at the
 * call or at the unlock), memory attached next works. */
static void dynamic(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int round = 0; round < 2; round++) {
        int *a = calloc(4096, sizeof *a);
        MPI_Win_attach(win, a, 4096 * sizeof *a);
        MPI_Aint mine, *addr = malloc((size_t)size * sizeof *addr);
        MPI_Get_address(a, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
        int src[100], back[100];
        for (int i = 0; i < 100; i++)
            src[i] = val(rank, i + round);
        MPI_Win_lock_all(0, win);
        MPI_Put(src, 100, MPI_INT, right, addr[right] + 40, 100, MPI_INT, win);
        MPI_Win_flush(right, win);
        MPI_Get(back, 100, MPI_INT, right, addr[right] + 40, 100, MPI_INT, win);
        MPI_Win_unlock_all(win);
        for (int i = 0; i < 100; i++)
            CHECK(back[i] == src[i], "dynamic round %d: back[%d] = %d", round, i, back[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < 100; i++)
            CHECK(a[10 + i] == val(left, i + round), "dynamic round %d: a[%d] = %d", round,
                  10 + i, a[10 + i]);
        MPI_Win_detach(win, a);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
        int err = MPI_Put(src, 1, MPI_INT, right, addr[right], 1, MPI_INT, win);
        int err2 = MPI_Win_unlock(right, win);
        int cls = -1;
        MPI_Error_class(err ? err : err2, &cls);
        CHECK(cls == MPI_ERR_RMA_RANGE, "dynamic round %d: a put to detached memory gave "
              "class %d (put %d, unlock %d), want MPI_ERR_RMA_RANGE", round, cls, err, err2);
        MPI_Barrier(MPI_COMM_WORLD);
        free(addr);
        free(a);
    }
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win win;
    int *mem = malloc(N * sizeof *mem);
    MPI_Win_create(mem, N * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    run(win, mem, rank, size, "Win_create");
    MPI_Win_free(&win);
    free(mem);
    MPI_Win_allocate(N * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    run(win, mem, rank, size, "Win_allocate");
    MPI_Win_free(&win);
    dynamic(rank, size);
    int all;
    MPI_Allreduce(&mtest_errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED: %d\n" : "ok\n", all);
    MPI_Finalize();
    return all != 0;
}
