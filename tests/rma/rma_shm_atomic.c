/* Accumulates on a shared-memory window (the direct path) stay atomic per
 * element when they mix: MPI_Accumulate of a strided type, Get_accumulate,
 * Fetch_and_op and Compare_and_swap, from every rank at once, on one int at
 * an aligned address (the fast paths), on one int at a misaligned address
 * (the general path), on doubles and with MPI_MAX; every update must be
 * counted in the end. */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ITERS 300
static int rank, size;


/* Byte offsets in rank 0's window (disp_unit 1). */
enum { INTS = 0, MISALIGNED = 41, DBL = 64, MAXV = 80, CAS8 = 88, BYTES = 96 };

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    char *mem;
    MPI_Win win;
    MPI_Win_allocate(BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(mem, 0, BYTES);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Every second int of four: ints 0 and 2. */
    MPI_Datatype strided;
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int two[2] = {1, 1}, one = 1, got, mis = 3;
    double half = 0.5, dgot;
    int64_t mine = rank + 1, cas_new, cas_old, cmp;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ITERS; i++) {
        MPI_Accumulate(two, 2, MPI_INT, 0, INTS, 1, strided, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &got, MPI_INT, 0, INTS, MPI_SUM, win);
        MPI_Get_accumulate(&one, 1, MPI_INT, &got, 1, MPI_INT, 0, INTS + 8, 1, MPI_INT, MPI_SUM,
                           win);
        MPI_Accumulate(&mis, 1, MPI_INT, 0, MISALIGNED, 1, MPI_INT, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &got, MPI_INT, 0, MISALIGNED, MPI_SUM, win);
        MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, DBL, 1, MPI_DOUBLE, MPI_SUM, win);
        MPI_Fetch_and_op(&half, &dgot, MPI_DOUBLE, 0, DBL, MPI_SUM, win);
        int64_t v = (int64_t)rank * ITERS + i;
        MPI_Fetch_and_op(&v, &cas_old, MPI_INT64_T, 0, MAXV, MPI_MAX, win);
        /* A CAS increment: retry until the value read was the one replaced. */
        MPI_Fetch_and_op(NULL, &cmp, MPI_INT64_T, 0, CAS8, MPI_NO_OP, win);
        MPI_Win_flush(0, win);
        for (;;) {
            cas_new = cmp + mine;
            MPI_Compare_and_swap(&cas_new, &cmp, &cas_old, MPI_INT64_T, 0, CAS8, win);
            MPI_Win_flush(0, win);
            if (cas_old == cmp)
                break;
            cmp = cas_old;
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        int ints[4], m;
        double d;
        int64_t mx, c;
        memcpy(ints, mem + INTS, sizeof ints);
        memcpy(&m, mem + MISALIGNED, sizeof m);
        memcpy(&d, mem + DBL, sizeof d);
        memcpy(&mx, mem + MAXV, sizeof mx);
        memcpy(&c, mem + CAS8, sizeof c);
        MPI_Win_unlock(0, win);
        const int n = size * ITERS;
        CHECK(ints[0] == 2 * n, "int 0 is %d, want %d (strided + fetch_and_op)", ints[0], 2 * n);
        CHECK(ints[1] == 0, "int 1 is %d, want 0 (not in the strided type)", ints[1]);
        CHECK(ints[2] == 2 * n, "int 2 is %d, want %d (strided + get_accumulate)", ints[2],
              2 * n);
        CHECK(m == 4 * n, "the misaligned int is %d, want %d", m, 4 * n);
        CHECK(d == (double)n, "the double is %g, want %d", d, n);
        CHECK(mx == (int64_t)(size - 1) * ITERS + ITERS - 1, "the max is %lld, want %lld",
              (long long)mx, (long long)((size - 1) * ITERS + ITERS - 1));
        CHECK(c == (int64_t)ITERS * size * (size + 1) / 2, "the CAS counter is %lld, want %lld",
              (long long)c, (long long)ITERS * size * (size + 1) / 2);
    }
    MPI_Type_free(&strided);
    MPI_Win_free(&win);
    int all = 0;
    MPI_Allreduce(&mtest_errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("rma_shm_atomic: ok\n");
    MPI_Finalize();
    return all ? 1 : 0;
}
