/* Passive target without the target's help: rank 0 allocates a window
 * (MPI_Win_allocate; the ranks share a node, so its memory is shared) and
 * then computes in a loop that makes no MPI call, watching its own memory,
 * while every other rank locks it (exclusive and shared), puts, gets back,
 * accumulates, and unlocks. Rank 0 leaves the loop when every other rank's
 * last accumulate arrived, or fails after 20 s: only direct access to the
 * shared memory lets the others finish. With argument "kill", the last
 * rank then kills itself (SIGKILL) while the window lives (the script
 * rma_kill_test.sh checks that nothing is left behind). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 50

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
    long *mem;
    MPI_Win win, shared;
    /* mem[0]: ranks done; mem[1 + r]: rank r's slot. */
    MPI_Win_allocate((MPI_Aint)(size + 1) * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &mem, &win);
    long *smem;
    MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &smem, &shared);
    for (int i = 0; i <= size; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    if (argc > 1 && !strcmp(argv[1], "kill")) {
        printf("windows live %d\n", rank);
        fflush(stdout);
        if (rank == size - 1)
            raise(SIGKILL);
        MPI_Barrier(MPI_COMM_WORLD); /* ended by the launcher */
    }

    if (rank == 0) {
        /* No MPI call until the others are done. */
        double t0 = now(), sink = 0;
        while (__atomic_load_n(&mem[0], __ATOMIC_ACQUIRE) < size - 1) {
            for (int i = 0; i < 100000; i++)
                sink += i * 1e-9;
            if (now() - t0 > 20) {
                fprintf(stderr, "rank 0: others did not finish in 20 s without my help "
                        "(done %ld of %d)\n", mem[0], size - 1);
                failures++;
                break;
            }
        }
        if (sink < 0)
            printf("%f\n", sink);
        for (int r = 1; r < size && !failures; r++)
            if (mem[1 + r] != (long)ROUNDS * r) {
                fprintf(stderr, "rank 0: slot %d holds %ld, want %ld\n", r, mem[1 + r],
                        (long)ROUNDS * r);
                failures++;
            }
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
    MPI_Win_free(&shared);
    MPI_Win_free(&win);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED: %d\n" : "ok\n", all);
    MPI_Finalize();
    return all != 0;
}
