/* Accumulates and locks over the network transport's remote atomics
 * (src/core/rma/rma_atomic.c), run by tests/ofi with TERN_RMA_ATOMICS on
 * (the provider applies them; a window that cannot have them fails to be
 * made, and the test then skips with 77 saying why) and off (active
 * messages), on Win_create and Win_allocate windows:
 *  - every operation on several basic types, results checked: Accumulate
 *    with each reduction and MPI_REPLACE, Get_accumulate, Fetch_and_op
 *    with MPI_NO_OP and MPI_REPLACE, Compare_and_swap that hits and misses,
 *    a strided target layout, a count larger than one call;
 *  - every rank at once: Fetch_and_op(SUM) and Accumulate(SUM) to one
 *    location, exact totals and distinct fetched values;
 *  - an exclusive lock as the only guard of a Get, increment, Put counter
 *    (taken as a lock word by remote atomics when on): exact total. */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 100
static int rank, size;


/* The window: 256 longs per rank; doubles and ints overlay its bytes. */
#define SLOTS 256

static MPI_Win make(int flavor, long **mem)
{
    MPI_Win win;
    MPI_Aint bytes = SLOTS * sizeof(long);
    int err;
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        err = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, mem, &win);
    } else {
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, mem);
        err = MPI_Win_create(*mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len, cls;
        MPI_Error_class(err, &cls);
        MPI_Error_string(err, msg, &len);
        if (rank == 0)
            printf("skipped: the window cannot use remote atomics here (%s)\n", msg);
        MPI_Finalize();
        exit(cls == MPI_ERR_UNSUPPORTED_OPERATION ? 77 : 1);
    }
    memset(*mem, 0, (size_t)bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    return win;
}

static void unmake(int flavor, MPI_Win *win, long *mem)
{
    MPI_Win_free(win);
    if (flavor != MPI_WIN_FLAVOR_ALLOCATE)
        MPI_Free_mem(mem);
}

/* Each operation from rank (size - 1) into rank 0 (or itself alone). */
static void each_op(int flavor)
{
    long *mem;
    MPI_Win win = make(flavor, &mem);
    int origin = size - 1;
    if (rank == 0) {
        for (int i = 0; i < 8; i++)
            mem[i] = 10 + i;
        double *d = (double *)&mem[16];
        for (int i = 0; i < 4; i++)
            d[i] = 1.5 + i;
        int *n = (int *)&mem[32];
        for (int i = 0; i < 4; i++)
            n[i] = 0xf0 + i;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == origin) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        long v = 3, r = -1, c;
        MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR,
                        MPI_REPLACE};
        for (int i = 0; i < 8; i++)
            MPI_Accumulate(&v, 1, MPI_LONG, 0, i * 8, 1, MPI_LONG, ops[i], win);
        MPI_Win_flush(0, win);
        long want[] = {13, 33, 12, 3, 14 & 3, 15 | 3, 16 ^ 3, 3};
        long got[8];
        MPI_Get(got, 8, MPI_LONG, 0, 0, 8, MPI_LONG, win);
        MPI_Win_flush(0, win);
        for (int i = 0; i < 8; i++)
            CHECK(got[i] == want[i], "accumulate %d: %ld, want %ld", i, got[i], want[i]);
        /* Fetching: NO_OP reads, REPLACE swaps, SUM adds. */
        MPI_Fetch_and_op(NULL, &r, MPI_LONG, 0, 0, MPI_NO_OP, win);
        MPI_Win_flush(0, win);
        CHECK(r == 13, "fetch_and_op(NO_OP) %ld, want 13", r);
        v = 100;
        MPI_Fetch_and_op(&v, &r, MPI_LONG, 0, 0, MPI_REPLACE, win);
        MPI_Win_flush(0, win);
        CHECK(r == 13, "fetch_and_op(REPLACE) %ld, want 13", r);
        MPI_Fetch_and_op(&v, &r, MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
        CHECK(r == 100, "fetch_and_op(SUM) %ld, want 100", r);
        /* Compare-and-swap: hit (200 -> 7), then miss (compare 200). */
        c = 200, v = 7;
        MPI_Compare_and_swap(&v, &c, &r, MPI_LONG, 0, 0, win);
        MPI_Win_flush(0, win);
        CHECK(r == 200, "cas hit: old %ld, want 200", r);
        v = 9;
        MPI_Compare_and_swap(&v, &c, &r, MPI_LONG, 0, 0, win);
        MPI_Win_flush(0, win);
        CHECK(r == 7, "cas miss: old %ld, want 7", r);
        /* Doubles: Get_accumulate(SUM) of 4, old values back. */
        double dv[4] = {1, 2, 3, 4}, dr[4];
        MPI_Get_accumulate(dv, 4, MPI_DOUBLE, dr, 4, MPI_DOUBLE, 0, 128, 4, MPI_DOUBLE,
                           MPI_SUM, win);
        MPI_Win_flush(0, win);
        for (int i = 0; i < 4; i++)
            CHECK(dr[i] == 1.5 + i, "get_accumulate double %d: old %g", i, dr[i]);
        /* Ints, strided target (every other one): MAX. */
        MPI_Datatype every_other;
        MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
        MPI_Type_commit(&every_other);
        int iv[2] = {0x1000, 0}, ir[2];
        MPI_Get_accumulate(iv, 2, MPI_INT, ir, 2, MPI_INT, 0, 256, 1, every_other, MPI_MAX, win);
        MPI_Win_flush(0, win);
        CHECK(ir[0] == 0xf0 && ir[1] == 0xf2, "get_accumulate strided: %x %x", ir[0], ir[1]);
        MPI_Type_free(&every_other);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        double *d = (double *)&mem[16];
        int *n = (int *)&mem[32];
        CHECK(mem[0] == 7, "location 0 holds %ld, want 7", mem[0]);
        for (int i = 0; i < 4; i++)
            CHECK(d[i] == 2.5 + 2 * i, "double %d holds %g", i, d[i]);
        CHECK(n[0] == 0x1000 && n[1] == 0xf1 && n[2] == 0xf2 && n[3] == 0xf3,
              "ints hold %x %x %x %x", n[0], n[1], n[2], n[3]);
        MPI_Win_unlock(0, win);
    }
    unmake(flavor, &win, mem);
}

/* Everyone at once into rank 0: fetch-and-add, accumulate, a large
 * accumulate (more elements than one call takes on some providers). */
static void concurrent(int flavor)
{
    long *mem;
    MPI_Win win = make(flavor, &mem);
    long one = 1, mine[ROUNDS], v = rank + 1;
    long big[SLOTS - 8];
    for (int i = 0; i < SLOTS - 8; i++)
        big[i] = i;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Fetch_and_op(&one, &mine[i], MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Accumulate(&v, 1, MPI_LONG, 0, 8, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Accumulate(big, SLOTS - 8, MPI_LONG, 0, 64, SLOTS - 8, MPI_LONG, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    long *all = malloc((size_t)ROUNDS * (size_t)size * sizeof *all);
    char *seen = calloc((size_t)ROUNDS * (size_t)size, 1);
    MPI_Allgather(mine, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, MPI_COMM_WORLD);
    for (int i = 0; i < ROUNDS * size; i++)
        if (all[i] < 0 || all[i] >= ROUNDS * size || seen[all[i]]++) {
            CHECK(0, "fetched value %ld repeated or out of range", all[i]);
            break;
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK(mem[0] == (long)ROUNDS * size, "fetch-and-add total %ld, want %ld", mem[0],
              (long)ROUNDS * size);
        CHECK(mem[1] == (long)ROUNDS * size * (size + 1) / 2, "accumulate total %ld, want %ld",
              mem[1], (long)ROUNDS * size * (size + 1) / 2);
        for (int i = 0; i < SLOTS - 8; i++)
            if (mem[8 + i] != (long)i * size) {
                CHECK(0, "large accumulate: element %d holds %ld, want %ld", i, mem[8 + i],
                      (long)i * size);
                break;
            }
        MPI_Win_unlock(0, win);
    }
    free(all);
    free(seen);
    unmake(flavor, &win, mem);
}

/* The exclusive lock alone keeps a read-modify-write by Get and Put whole. */
static void exclusive_counter(int flavor)
{
    long *mem;
    MPI_Win win = make(flavor, &mem);
    int target = size > 1 ? 1 : 0;
    for (int i = 0; i < ROUNDS / 2; i++) {
        long c;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
        MPI_Get(&c, 1, MPI_LONG, target, 0, 1, MPI_LONG, win);
        MPI_Win_flush(target, win);
        c++;
        MPI_Put(&c, 1, MPI_LONG, target, 0, 1, MPI_LONG, win);
        MPI_Win_unlock(target, win);
        /* A shared epoch between, so shared and exclusive holders meet. */
        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
        MPI_Get(&c, 1, MPI_LONG, target, 8, 1, MPI_LONG, win);
        MPI_Win_unlock(target, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
        CHECK(mem[0] == (long)ROUNDS / 2 * size, "locked counter %ld, want %ld", mem[0],
              (long)ROUNDS / 2 * size);
        MPI_Win_unlock(target, win);
    }
    unmake(flavor, &win, mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int flavors[] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE};
    for (int f = 0; f < 2; f++) {
        each_op(flavors[f]);
        concurrent(flavors[f]);
        exclusive_counter(flavors[f]);
    }
    int all;
    MPI_Allreduce(&mtest_errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED: %d\n" : "ok\n", all);
    MPI_Finalize();
    return all != 0;
}
