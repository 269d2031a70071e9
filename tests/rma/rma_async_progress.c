/* Passive target over the network while the target computes: rank 0 makes
 * a window with MPI_Win_create (not shared memory: over TERN_TRANSPORTS=ofi
 * every operation goes through the network transport, puts and gets as
 * RDMA, accumulates and locks as active messages) and then loops without
 * any MPI call, watching its own memory, while every other rank locks it,
 * puts, gets back, accumulates and unlocks. On TCP the provider emulates
 * RDMA in software and the engine applies the rest, so only a progress
 * thread (TERN_ASYNC_PROGRESS=on) lets the others finish while rank 0
 * computes. Rank 0 gives up after the deadline (argument 1, seconds;
 * default 20) and the test fails: with the thread off it does, which the
 * variant rma_async_progress_off expects. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 20

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double deadline = argc > 1 ? atof(argv[1]) : 20;
    /* mem[0]: ranks done; mem[1 + r]: rank r's slot. */
    long *mem = calloc((size_t)size + 1, sizeof *mem);
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)(size + 1) * (MPI_Aint)sizeof(long), sizeof(long),
                   MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t0 = now(), sink = 0;
        while (__atomic_load_n(&mem[0], __ATOMIC_ACQUIRE) < size - 1) {
            for (int i = 0; i < 100000; i++)
                sink += i * 1e-9;
            if (now() - t0 > deadline) {
                fprintf(stderr, "rank 0: others did not finish in %.0f s without my help "
                        "(done %ld of %d)\n", deadline, mem[0], size - 1);
                failures++;
                break;
            }
        }
        if (sink < 0)
            printf("%f\n", sink);
    } else {
        for (int i = 1; i <= ROUNDS; i++) {
            long v = (long)i * rank, back = -1;
            MPI_Win_lock(i % 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, win);
            MPI_Put(&v, 1, MPI_LONG, 0, 1 + rank, 1, MPI_LONG, win);
            MPI_Win_flush(0, win);
            MPI_Get(&back, 1, MPI_LONG, 0, 1 + rank, 1, MPI_LONG, win);
            MPI_Win_unlock(0, win);
            if (back != v) {
                fprintf(stderr, "rank %d: got back %ld, want %ld\n", rank, back, v);
                failures++;
            }
        }
        long one = 1;
        MPI_Win_lock_all(0, win);
        MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 1; r < size; r++)
            if (mem[1 + r] != (long)ROUNDS * r) {
                fprintf(stderr, "rank 0: slot %d holds %ld, want %ld\n", r, mem[1 + r],
                        (long)ROUNDS * r);
                failures++;
            }
    MPI_Win_free(&win);
    free(mem);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED: %d\n" : "ok\n", all);
    MPI_Finalize();
    return all != 0;
}
