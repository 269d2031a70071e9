/* MPI_Win_create windows on one node with shared lock words and
 * accumulate locks (rma_shm.c, rma_cma_acc.c); every result checked.
 *  1. Atomicity: every rank accumulates at once into rank 0's window
 *     (MPI_SUM on a counter and on a 300 KB array, more than one chunk of
 *     the read-modify-write; a strided target type; MPI_DOUBLE_INT MINLOC;
 *     Fetch_and_op tickets, which must all differ; a Compare_and_swap
 *     mutex guarding a non-atomic increment).
 *  2. Locks without target progress (unless TERN_RMA_DIRECT or
 *     TERN_RMA_CMA is off): rank 0 computes without calling MPI while the
 *     others take its exclusive lock, accumulate and unlock; it fails after
 *     20 s.
 *  3. 500 windows made and freed, one accumulate each, checked. */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG (300 * 1024 / (int)sizeof(int))
#define ROUNDS 200


static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int knob_off(const char *name)
{
    const char *v = getenv(name);
    return v && !strcmp(v, "off");
}

/* Rank 0's window: [0] counter, [1] ticket, [2] mutex, [3] guarded,
 * [4..4+2*16) strided, then BIG ints; minloc separately. */
enum { COUNTER = 0, TICKET = 1, MUTEX = 2, GUARDED = 3, STRIDED = 4, ARRAY = 4 + 32 };

static void atomicity(int rank, int size)
{
    int n = ARRAY + BIG;
    int *mem = calloc((size_t)n, sizeof *mem);
    int *ones = malloc((size_t)BIG * sizeof *ones);
    for (int i = 0; i < BIG; i++)
        ones[i] = i % 7 + 1;
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    MPI_Datatype every_other;
    MPI_Type_vector(16, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int one = 1, sixteen[16];
    for (int i = 0; i < 16; i++)
        sixteen[i] = i;
    int *tickets = malloc(ROUNDS * sizeof *tickets);

    MPI_Win_lock_all(0, win);
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Accumulate(&one, 1, MPI_INT, 0, COUNTER, 1, MPI_INT, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &tickets[k], MPI_INT, 0, TICKET, MPI_SUM, win);
        MPI_Accumulate(sixteen, 16, MPI_INT, 0, STRIDED, 1, every_other, MPI_SUM, win);
        /* The mutex: a CAS spin, then a get-increment-put by plain RMA. */
        int got, zero = 0, me = rank + 1;
        do {
            MPI_Compare_and_swap(&me, &zero, &got, MPI_INT, 0, MUTEX, win);
            MPI_Win_flush(0, win);
        } while (got != 0);
        int v;
        MPI_Get(&v, 1, MPI_INT, 0, GUARDED, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_INT, 0, GUARDED, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        MPI_Compare_and_swap(&zero, &me, &got, MPI_INT, 0, MUTEX, win);
        MPI_Win_flush(0, win);
        CHECK(got == me, "rank %d: the mutex held %d, not mine (%d)", rank, got, me);
        if (k % 50 == 0)
            MPI_Accumulate(ones, BIG, MPI_INT, 0, ARRAY, BIG, MPI_INT, MPI_SUM, win);
    }
    MPI_Win_unlock_all(win);

    /* MINLOC on (double, int) pairs: the smallest value wins, the lowest
     * rank on ties. */
    struct {
        double v;
        int i;
    } pairs[3], mine[3];
    for (int i = 0; i < 3; i++) {
        pairs[i].v = 1e9;
        pairs[i].i = -1;
        mine[i].v = i == 1 ? 5.0 : (double)(size - rank);
        mine[i].i = rank;
    }
    MPI_Win pwin;
    MPI_Win_create(pairs, sizeof pairs, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &pwin);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, pwin);
    MPI_Accumulate(mine, 3, MPI_DOUBLE_INT, 0, 0, 3, MPI_DOUBLE_INT, MPI_MINLOC, pwin);
    MPI_Win_unlock(0, pwin);

    /* Everyone's tickets: all different, 0 .. size*ROUNDS-1. */
    int *all = rank == 0 ? malloc((size_t)size * ROUNDS * sizeof *all) : NULL;
    MPI_Gather(tickets, ROUNDS, MPI_INT, all, ROUNDS, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        int want = size * ROUNDS;
        CHECK(mem[COUNTER] == want, "counter %d, want %d", mem[COUNTER], want);
        CHECK(mem[TICKET] == want, "ticket counter %d, want %d", mem[TICKET], want);
        CHECK(mem[GUARDED] == want, "guarded count %d, want %d (the CAS mutex leaked)",
              mem[GUARDED], want);
        CHECK(mem[MUTEX] == 0, "mutex left at %d", mem[MUTEX]);
        for (int i = 0; i < 32; i++) {
            int w = i % 2 ? 0 : size * ROUNDS * (i / 2);
            CHECK(mem[STRIDED + i] == w, "strided[%d] = %d, want %d", i, mem[STRIDED + i], w);
        }
        int bad = 0;
        for (int i = 0; i < BIG && bad < 5; i++) {
            int w = size * (ROUNDS / 50) * (i % 7 + 1);
            if (mem[ARRAY + i] != w) {
                CHECK(0, "array[%d] = %d, want %d", i, mem[ARRAY + i], w);
                bad++;
            }
        }
        MPI_Win_unlock(0, win);
        char *seen = calloc((size_t)want, 1);
        for (int i = 0; i < want; i++) {
            int t = all[i];
            CHECK(t >= 0 && t < want && !seen[t], "ticket %d repeated or out of range", t);
            if (t >= 0 && t < want)
                seen[t] = 1;
        }
        free(seen);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, pwin);
        CHECK(pairs[0].v == 1.0 && pairs[0].i == size - 1, "minloc[0] (%g, %d)", pairs[0].v,
              pairs[0].i);
        CHECK(pairs[1].v == 5.0 && pairs[1].i == 0, "minloc[1] (%g, %d), want the lowest rank",
              pairs[1].v, pairs[1].i);
        MPI_Win_unlock(0, pwin);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(all);
    MPI_Win_free(&pwin);
    MPI_Type_free(&every_other);
    MPI_Win_free(&win);
    free(tickets);
    free(ones);
    free(mem);
}

static void busy_target(int rank, int size)
{
    long *mem = calloc(2, sizeof *mem);
    MPI_Win win;
    MPI_Win_create(mem, 2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* No MPI call until every other rank has been through its epochs. */
        double t0 = now(), sink = 0;
        long want = 10L * (size - 1);
        while (__atomic_load_n(&mem[1], __ATOMIC_ACQUIRE) < want) {
            for (int i = 0; i < 10000; i++)
                sink += i * 1e-9;
            if (now() - t0 > 20) {
                CHECK(0, "rank 0: %ld of %ld locked epochs in 20 s without my help",
                      __atomic_load_n(&mem[1], __ATOMIC_ACQUIRE), want);
                break;
            }
        }
        if (sink < 0)
            printf("%g\n", sink);
    } else {
        long one = 1, got;
        for (int k = 0; k < 10; k++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Get_accumulate(&one, 1, MPI_LONG, &got, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM,
                               win);
            MPI_Win_flush(0, win);
            /* Exclusive: nobody else moved it between the two. */
            long again;
            MPI_Fetch_and_op(&one, &again, MPI_LONG, 0, 1, MPI_SUM, win);
            MPI_Win_unlock(0, win);
            (void)got;
            (void)again;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(mem[0] == 10L * (size - 1), "rank 0: %ld accumulates, want %ld", mem[0],
              10L * (size - 1));
    MPI_Win_free(&win);
    free(mem);
}

static void many_windows(int rank, int size)
{
    int bad = 0;
    for (int k = 0; k < 500; k++) {
        int cell = 0, v = k + rank;
        MPI_Win win;
        MPI_Win_create(&cell, sizeof cell, sizeof cell, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % size, 0, win);
        MPI_Accumulate(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_unlock((rank + 1) % size, win);
        MPI_Win_free(&win);
        int from = (rank + size - 1) % size;
        if (cell != k + from && bad++ < 3)
            CHECK(0, "rank %d, window %d: %d, want %d", rank, k, cell, k + from);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    atomicity(rank, size);
    if (size > 1 && !knob_off("TERN_RMA_DIRECT") && !knob_off("TERN_RMA_CMA"))
        busy_target(rank, size);
    many_windows(rank, size);
    int total = 0;
    MPI_Allreduce(&mtest_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "rma_cma_acc: %d failures\n" : "rma_cma_acc: ok\n", total);
    MPI_Finalize();
    return total != 0;
}
