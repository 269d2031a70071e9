/* Accumulate-class operations from every rank at once on rank 0's memory,
 * large ones and single elements mixed on the same elements, stay atomic
 * per element (on a direct window: under the accumulate stripes, 4 KB of
 * target memory each; rma_shm_acc.c). Each round runs under one
 * synchronisation (shared locks, fence, an exclusive lock per iteration)
 * and checks exact values:
 *   - SUM: a 64 KB MPI_INT accumulate, a strided type spanning every
 *     stripe, Fetch_and_op (also in bursts on one int), bursts of 8 and 32
 *     B accumulates (the small sums added inline) and a compare-and-swap
 *     increment on elements the large ones cover; every update counted;
 *   - SUM of 8-byte integers: an 8 KB accumulate across stripes beside
 *     bursts of 16 B ones on the same elements;
 *   - misaligned ints (displacement unit 1) of which one straddles a
 *     stripe's edge: a contiguous accumulate over them and Fetch_and_op on
 *     the straddling one;
 *   - Get_accumulate of +1 over 12 KB: per element, the values fetched by
 *     all ranks are exactly 0..N-1 (their sum) and rise at each rank;
 *   - MPI_REPLACE of 16-byte elements (double complex, re == -im) beside
 *     MPI_NO_OP reads: no element read or left torn. */
#include "../mpi/mtest.h"

#include <complex.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ITERS 200
#define STRIPE 4096

/* Byte offsets in rank 0's window (disp_unit 1). */
enum {
    NA = 16384,                     /* SUM ints at 0: 64 KB */
    OFF_B = NA * 4 + 2 * STRIPE - 2, /* misaligned ints; the first straddles */
    NB = 2048,
    OFF_C = OFF_B + NB * 4 + 2 + 1000 * 4, /* Get_accumulate ints */
    NC = 3072,
    OFF_D = OFF_C + NC * 4 + 256,   /* double complex, 16-byte aligned */
    ND = 600,
    OFF_E = OFF_D + ND * 16,        /* int64_t */
    NE = 1024,
    BYTES = OFF_E + NE * 8,
};
_Static_assert(OFF_C % 4 == 0 && OFF_D % 16 == 0 && OFF_E % 8 == 0, "aligned regions");

/* The strided type: VEC_N blocks of 3 ints every VEC_STRIDE ints, from int
 * VEC_AT. */
enum { VEC_N = 40, VEC_STRIDE = 409, VEC_AT = 5 };
/* Every rank's burst of Fetch_and_op on one int per iteration. */
enum { HOT = 100, HOT_FOPS = 200 };
/* Every rank's burst of small accumulates per iteration: SMALL_ACCS of 2
 * ints at int SMALL_AT, one in SMALL_EVERY of 8 ints after them and of 2
 * int64_t at int64_t HOT_E of region E (few: the message paths' variants
 * run this test too, at a message an accumulate). */
enum { SMALL_AT = 300, SMALL_ACCS = 64, SMALL_EVERY = 8, HOT_E = 700 };

static int rank, size;

static int fop_at(int r, int i) { return (i * 37 + r * 1031) % NA; }
static int cas_at(int i) { return (i * 53 + 7) % NA; }

enum sync { SHARED, FENCE, EXCLUSIVE };
static const char *sync_name[] = {"shared locks", "fence", "exclusive locks"};

static void epoch_begin(MPI_Win win, enum sync s)
{
    if (s == SHARED)
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    else if (s == EXCLUSIVE)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
}

static void epoch_end(MPI_Win win, enum sync s)
{
    if (s == FENCE)
        MPI_Win_fence(0, win);
    else
        MPI_Win_unlock(0, win);
}

/* A compare-and-swap increment of int at (MPI_INT): retried until the value
 * read was the one replaced. Passive epochs only (results at the flush). */
static void cas_increment(MPI_Win win, MPI_Aint at)
{
    int one = 0, cmp, old, next;
    MPI_Fetch_and_op(&one, &cmp, MPI_INT, 0, at, MPI_NO_OP, win);
    MPI_Win_flush(0, win);
    for (;;) {
        next = cmp + 1;
        MPI_Compare_and_swap(&next, &cmp, &old, MPI_INT, 0, at, win);
        MPI_Win_flush(0, win);
        if (old == cmp)
            return;
        cmp = old;
    }
}

static void round_of(MPI_Win win, char *mem, enum sync s, MPI_Datatype vec)
{
    static int ones[NA], twos[VEC_N * 3], got[NC], prev[NC];
    static int64_t ones64[NE];
    static long long fetched[NC], fetched_all[NC];
    static double complex mine[ND], seen[ND];
    int one = 1, fgot;
    for (int k = 0; k < NA; k++)
        ones[k] = 1;
    for (int k = 0; k < VEC_N * 3; k++)
        twos[k] = 2;
    for (int k = 0; k < NE; k++)
        ones64[k] = 1;
    memset(fetched, 0, sizeof fetched);
    for (int k = 0; k < NC; k++)
        prev[k] = -1;
    if (s == FENCE)
        MPI_Win_fence(0, win);
    for (int i = 0; i < ITERS; i++) {
        /* Every rank starts the iteration together: the operations meet. */
        if (s != FENCE)
            MPI_Barrier(MPI_COMM_WORLD);
        epoch_begin(win, s);
        /* The small accumulates first, all ranks' at once: they meet each
         * other's and the large ones'. */
        for (int k = 0; k < SMALL_ACCS; k++) {
            MPI_Accumulate(ones, 2, MPI_INT, 0, SMALL_AT * 4, 2, MPI_INT, MPI_SUM, win);
            if (k % SMALL_EVERY)
                continue;
            MPI_Accumulate(ones, 8, MPI_INT, 0, (SMALL_AT + 2) * 4, 8, MPI_INT, MPI_SUM, win);
            MPI_Accumulate(ones64, 2, MPI_INT64_T, 0, OFF_E + HOT_E * 8, 2, MPI_INT64_T, MPI_SUM,
                           win);
            if (k == SMALL_ACCS / 2)
                MPI_Accumulate(ones64, NE, MPI_INT64_T, 0, OFF_E, NE, MPI_INT64_T, MPI_SUM, win);
        }
        MPI_Accumulate(ones, NA, MPI_INT, 0, 0, NA, MPI_INT, MPI_SUM, win);
        MPI_Accumulate(twos, VEC_N * 3, MPI_INT, 0, VEC_AT * 4, 1, vec, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &fgot, MPI_INT, 0, (MPI_Aint)fop_at(rank, i) * 4, MPI_SUM, win);
        for (int k = 0; k < HOT_FOPS; k++)
            MPI_Fetch_and_op(&one, &fgot, MPI_INT, 0, HOT * 4, MPI_SUM, win);
        MPI_Accumulate(ones, NB, MPI_INT, 0, OFF_B, NB, MPI_INT, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &fgot, MPI_INT, 0, OFF_B, MPI_SUM, win);
        MPI_Get_accumulate(ones, NC, MPI_INT, got, NC, MPI_INT, 0, OFF_C, NC, MPI_INT, MPI_SUM,
                           win);
        const double v = rank + 1 + i * size;
        for (int k = 0; k < ND; k++)
            mine[k] = v + k - (v + k) * I;
        MPI_Accumulate(mine, ND, MPI_C_DOUBLE_COMPLEX, 0, OFF_D, ND, MPI_C_DOUBLE_COMPLEX,
                       MPI_REPLACE, win);
        MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, seen, ND, MPI_C_DOUBLE_COMPLEX, 0, OFF_D,
                           ND, MPI_C_DOUBLE_COMPLEX, MPI_NO_OP, win);
        if (s != FENCE)
            cas_increment(win, (MPI_Aint)cas_at(i) * 4);
        epoch_end(win, s);
        for (int k = 0; k < NC; k++) {
            CHECK(got[k] > prev[k], "%s: Get_accumulate fetched %d at int %d after %d",
                  sync_name[s], got[k], k, prev[k]);
            prev[k] = got[k];
            fetched[k] += got[k];
        }
        for (int k = 0; k < ND; k++)
            CHECK(creal(seen[k]) == -cimag(seen[k]), "%s: complex %d read torn: %g%+gi",
                  sync_name[s], k, creal(seen[k]), cimag(seen[k]));
    }
    MPI_Reduce(fetched, fetched_all, NC, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        return;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    const int n = size * ITERS;
    static int want[NA];
    for (int k = 0; k < NA; k++)
        want[k] = n;
    for (int b = 0; b < VEC_N; b++)
        for (int j = 0; j < 3; j++)
            want[VEC_AT + b * VEC_STRIDE + j] += 2 * n;
    want[HOT] += HOT_FOPS * n;
    for (int k = SMALL_AT; k < SMALL_AT + 10; k++)
        want[k] += (k < SMALL_AT + 2 ? SMALL_ACCS : SMALL_ACCS / SMALL_EVERY) * n;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < ITERS; i++) {
            want[fop_at(r, i)]++;
            if (s != FENCE)
                want[cas_at(i)]++;
        }
    int bad = 0;
    for (int k = 0; k < NA; k++) {
        int v;
        memcpy(&v, mem + 4 * k, 4);
        if (v != want[k] && bad++ < 5)
            CHECK(0, "%s: SUM int %d is %d, want %d", sync_name[s], k, v, want[k]);
    }
    for (int k = 0; k < NB; k++) {
        int v;
        memcpy(&v, mem + OFF_B + 4 * k, 4);
        const int w = n + (k == 0 ? n : 0);
        if (v != w && bad++ < 10)
            CHECK(0, "%s: misaligned int %d is %d, want %d", sync_name[s], k, v, w);
    }
    const long long sum = (long long)n * (n - 1) / 2;
    for (int k = 0; k < NC; k++) {
        int v;
        memcpy(&v, mem + OFF_C + 4 * k, 4);
        if ((v != n || fetched_all[k] != sum) && bad++ < 15)
            CHECK(0, "%s: Get_accumulate int %d is %d (want %d), fetched values sum to %lld "
                  "(want %lld)", sync_name[s], k, v, n, fetched_all[k], sum);
    }
    for (int k = 0; k < NE; k++) {
        int64_t v;
        memcpy(&v, mem + OFF_E + 8 * k, 8);
        const int64_t w =
            n + (k == HOT_E || k == HOT_E + 1 ? (int64_t)(SMALL_ACCS / SMALL_EVERY) * n : 0);
        if (v != w && bad++ < 20)
            CHECK(0, "%s: int64_t %d is %lld, want %lld", sync_name[s], k, (long long)v,
                  (long long)w);
    }
    for (int k = 0; k < ND; k++) {
        double complex c;
        memcpy(&c, mem + OFF_D + 16 * k, 16);
        CHECK(creal(c) == -cimag(c), "%s: complex %d left torn: %g%+gi", sync_name[s], k,
              creal(c), cimag(c));
    }
    memset(mem, 0, BYTES);
    MPI_Win_unlock(0, win);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    char *mem;
    MPI_Win win;
    MPI_Win_allocate(rank == 0 ? BYTES : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        memset(mem, 0, BYTES);
        MPI_Win_unlock(0, win);
    }
    MPI_Datatype vec;
    MPI_Type_vector(VEC_N, 3, VEC_STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = SHARED; s <= EXCLUSIVE; s++) {
        round_of(win, mem, (enum sync)s, vec);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Type_free(&vec);
    MPI_Win_free(&win);
    int all = 0;
    MPI_Allreduce(&mtest_errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("rma_shm_acc: ok\n");
    MPI_Finalize();
    return all ? 1 : 0;
}
