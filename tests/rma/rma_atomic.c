/* Atomicity: every rank accumulates (MPI_SUM) and fetch-and-adds many times
 * into one location of rank 0's window under shared locks, and takes a
 * compare-and-swap mutex to increment a plain counter with Get and Put; the
 * final values must count every operation, and each fetch_and_op must have
 * seen a distinct value. Run on each window flavor that has memory. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 200
static int rank, size, failures;

static void run(int flavor)
{
    long *mem;
    MPI_Win win;
    MPI_Aint bytes = 4 * sizeof(long);
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE)
        MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    else if (flavor == MPI_WIN_FLAVOR_SHARED)
        MPI_Win_allocate_shared(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    else {
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem);
        MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    /* mem[0]: accumulate target, mem[1]: fetch-and-add counter, mem[2]:
     * the mutex (0 free, rank + 1 held), mem[3]: the counter it guards. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < 4; i++)
        mem[i] = 0;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    long one = 1, prev, *seen = calloc((size_t)ITERS * (size_t)size, 1);
    long *mine = malloc(ITERS * sizeof *mine);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ITERS; i++) {
        long v = rank + 1;
        MPI_Accumulate(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &mine[i], MPI_LONG, 0, 1, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    /* The mutex: spin on compare-and-swap, then read-modify-write. */
    for (int i = 0; i < ITERS / 4; i++) {
        long want = rank + 1, free_ = 0, unlock = 0;
        do {
            MPI_Compare_and_swap(&want, &free_, &prev, MPI_LONG, 0, 2, win);
            MPI_Win_flush(0, win);
        } while (prev != 0);
        long c;
        MPI_Get(&c, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        c++;
        MPI_Put(&c, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        MPI_Compare_and_swap(&unlock, &want, &prev, MPI_LONG, 0, 2, win);
        MPI_Win_flush(0, win);
        if (prev != want) {
            fprintf(stderr, "rank %d: the mutex was %ld while held\n", rank, prev);
            failures++;
        }
    }
    MPI_Win_unlock_all(win);

    /* Every fetched value distinct over all ranks. */
    long *all = malloc((size_t)ITERS * (size_t)size * sizeof *all);
    MPI_Allgather(mine, ITERS, MPI_LONG, all, ITERS, MPI_LONG, MPI_COMM_WORLD);
    for (int i = 0; i < ITERS * size; i++) {
        if (all[i] < 0 || all[i] >= ITERS * size || ((char *)seen)[all[i]]++) {
            fprintf(stderr, "rank %d: fetch_and_op value %ld repeated or out of range\n", rank,
                    all[i]);
            failures++;
            break;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        long want_acc = (long)ITERS * size * (size + 1) / 2;
        if (mem[0] != want_acc || mem[1] != (long)ITERS * size || mem[2] != 0 ||
            mem[3] != (long)(ITERS / 4) * size) {
            fprintf(stderr, "flavor %d: acc %ld (want %ld) fop %ld (want %ld) mutex %ld "
                    "counter %ld (want %ld)\n", flavor, mem[0], want_acc, mem[1],
                    (long)ITERS * size, mem[2], mem[3], (long)(ITERS / 4) * size);
            failures++;
        }
        MPI_Win_unlock(0, win);
    }
    free(all);
    free(seen);
    free(mine);
    MPI_Win_free(&win);
    if (flavor == MPI_WIN_FLAVOR_CREATE)
        MPI_Free_mem(mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    run(MPI_WIN_FLAVOR_CREATE);
    run(MPI_WIN_FLAVOR_ALLOCATE);
    run(MPI_WIN_FLAVOR_SHARED);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED: %d\n" : "ok\n", all);
    MPI_Finalize();
    return all != 0;
}
