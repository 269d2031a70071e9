/* Every synchronisation mode (fence, post-start-complete-wait, lock,
 * lock_all) with every window flavor (create, allocate, allocate_shared,
 * dynamic): Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
 * Compare_and_swap and the request-based forms between neighbours in a
 * ring, with derived datatypes on both sides; each result is checked
 * against the value computed locally. With the argument "pidns" (each rank
 * in a pid namespace of its own, tests/mpi/pidns_run.sh): allocate windows
 * whose memory the ranks cannot share, and allocate_shared refused. */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 16
static int rank, size;


enum { FENCE, PSCW, LOCK, LOCK_ALL, N_MODES };
static const char *mode_name[] = {"fence", "pscw", "lock", "lock_all"};
static const char *flavor_name[] = {"", "create", "allocate", "dynamic", "shared"};

static MPI_Group neighbours(MPI_Win win)
{
    MPI_Group g, n;
    MPI_Win_get_group(win, &g);
    int r[2] = {(rank + 1) % size, (rank + size - 1) % size};
    MPI_Group_incl(g, size > 1 && r[0] != r[1] ? 2 : 1, r, &n);
    MPI_Group_free(&g);
    return n;
}

/* Opens an access epoch to `to` (and exposure to the neighbours). */
static void open_epoch(int mode, MPI_Win win, int to)
{
    MPI_Group g;
    switch (mode) {
    case FENCE: MPI_Win_fence(0, win); break;
    case PSCW:
        g = neighbours(win);
        MPI_Win_post(g, 0, win);
        MPI_Win_start(g, 0, win);
        MPI_Group_free(&g);
        break;
    case LOCK: MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win); break;
    case LOCK_ALL: MPI_Win_lock_all(0, win); break;
    }
}

static void close_epoch(int mode, MPI_Win win, int to)
{
    switch (mode) {
    case FENCE: MPI_Win_fence(0, win); break;
    case PSCW: MPI_Win_complete(win); MPI_Win_wait(win); break;
    case LOCK: MPI_Win_unlock(to, win); break;
    case LOCK_ALL: MPI_Win_unlock_all(win); break;
    }
    /* The passive modes: the targets' memory is read after everyone ended. */
    if (mode == LOCK || mode == LOCK_ALL)
        MPI_Barrier(MPI_COMM_WORLD);
}

static void run(int flavor, int mode)
{
    int *mem = NULL;
    MPI_Win win;
    MPI_Aint bytes = N * sizeof(int);
    switch (flavor) {
    case MPI_WIN_FLAVOR_CREATE:
        mem = malloc(bytes);
        MPI_Win_create(mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    case MPI_WIN_FLAVOR_ALLOCATE:
        MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        break;
    case MPI_WIN_FLAVOR_SHARED:
        MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        break;
    case MPI_WIN_FLAVOR_DYNAMIC:
        mem = malloc(bytes);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, mem, bytes);
        break;
    }
    int *flav, flag;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flav, &flag);
    CHECK(flag && *flav == flavor, "flavor attribute %d, want %d", flag ? *flav : -1, flavor);
    /* The base address of each rank's memory (dynamic windows address
     * target memory by absolute address). */
    MPI_Aint *addr = calloc((size_t)size, sizeof *addr);
    MPI_Aint mine = 0;
    if (flavor == MPI_WIN_FLAVOR_DYNAMIC)
        MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Aint rbase = addr[right];
    /* disp in elements from the target's base (dynamic: bytes from address 0). */
#define DISP(i) (flavor == MPI_WIN_FLAVOR_DYNAMIC ? rbase + (MPI_Aint)(i) * (MPI_Aint)sizeof(int) : (MPI_Aint)(i))

    for (int i = 0; i < N; i++)
        mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    /* 1. Put a strided origin (every other int of src) into a contiguous
     *    run at the right neighbour: mem[0..7] = rank*100 + 2k. */
    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = rank * 100 + i;
    MPI_Datatype every_other;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    open_epoch(mode, win, right);
    MPI_Put(src, 1, every_other, right, DISP(0), N / 2, MPI_INT, win);
    close_epoch(mode, win, right);
    for (int k = 0; k < N / 2; k++)
        CHECK(mem[k] == left * 100 + 2 * k, "%s/%s put: mem[%d]=%d, want %d",
              flavor_name[flavor], mode_name[mode], k, mem[k], left * 100 + 2 * k);

    /* 2. Get with a strided target type: the right neighbour's mem[0,2,4,6]
     *    (rank*100 + 0,4,8,12) into a contiguous buffer. */
    int got[N / 4];
    MPI_Datatype tvec;
    MPI_Type_vector(N / 4, 1, 2, MPI_INT, &tvec);
    MPI_Type_commit(&tvec);
    open_epoch(mode, win, right);
    MPI_Get(got, N / 4, MPI_INT, right, DISP(0), 1, tvec, win);
    close_epoch(mode, win, right);
    for (int k = 0; k < N / 4; k++)
        CHECK(got[k] == rank * 100 + 4 * k, "%s/%s get: got[%d]=%d, want %d",
              flavor_name[flavor], mode_name[mode], k, got[k], rank * 100 + 4 * k);

    /* 3. Accumulate (SUM) into a strided target, then Get_accumulate,
     *    Fetch_and_op and Compare_and_swap on mem[8..]. */
    for (int i = 0; i < N; i++)
        mem[i] = i;
    MPI_Barrier(MPI_COMM_WORLD);
    int ones[N / 4] = {1, 1, 1, 1}, old[N / 4], one = 1, fetched = -1, swapped = -1;
    int cmp = 10, newv = 77, cas_old = -1;
    open_epoch(mode, win, right);
    MPI_Accumulate(ones, N / 4, MPI_INT, right, DISP(0), 1, tvec, MPI_SUM, win);
    MPI_Get_accumulate(ones, N / 4, MPI_INT, old, N / 4, MPI_INT, right, DISP(8), N / 4,
                       MPI_INT, MPI_SUM, win);
    MPI_Fetch_and_op(&one, &fetched, MPI_INT, right, DISP(12), MPI_SUM, win);
    MPI_Compare_and_swap(&newv, &cmp, &cas_old, MPI_INT, right, DISP(10), win);
    MPI_Fetch_and_op(NULL, &swapped, MPI_INT, right, DISP(13), MPI_NO_OP, win);
    close_epoch(mode, win, right);
    for (int k = 0; k < N / 4; k++)
        CHECK(mem[2 * k] == 2 * k + 1, "%s/%s acc: mem[%d]=%d", flavor_name[flavor],
              mode_name[mode], 2 * k, mem[2 * k]);
    CHECK(old[0] == 8 && old[3] == 11, "%s/%s get_acc: old %d %d", flavor_name[flavor],
          mode_name[mode], old[0], old[3]);
    CHECK(mem[8] == 9 && mem[9] == 10 && mem[11] == 12, "%s/%s get_acc: mem %d %d %d",
          flavor_name[flavor], mode_name[mode], mem[8], mem[9], mem[11]);
    /* Ordered: the CAS saw Get_accumulate's 10 + 1 = 11, not 10: no swap. */
    CHECK(cas_old == 11 && mem[10] == 11, "%s/%s cas: old %d mem %d", flavor_name[flavor],
          mode_name[mode], cas_old, mem[10]);
    CHECK(fetched == 12 && mem[12] == 13, "%s/%s fop: fetched %d mem %d", flavor_name[flavor],
          mode_name[mode], fetched, mem[12]);
    CHECK(swapped == 13, "%s/%s fop no_op: %d", flavor_name[flavor], mode_name[mode], swapped);

    /* 4. Request-based operations (passive epochs only). */
    if (mode == LOCK || mode == LOCK_ALL) {
        MPI_Request r[3];
        int v = 1000 + rank, back = -1, racc_old = -1;
        open_epoch(mode, win, right);
        MPI_Rput(&v, 1, MPI_INT, right, DISP(14), 1, MPI_INT, win, &r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        MPI_Win_flush(right, win);
        MPI_Rget(&back, 1, MPI_INT, right, DISP(14), 1, MPI_INT, win, &r[1]);
        MPI_Raccumulate(&v, 1, MPI_INT, right, DISP(15), 1, MPI_INT, MPI_REPLACE, win, &r[2]);
        MPI_Waitall(2, &r[1], MPI_STATUSES_IGNORE);
        MPI_Rget_accumulate(NULL, 0, MPI_INT, &racc_old, 1, MPI_INT, right, DISP(15), 1,
                            MPI_INT, MPI_NO_OP, win, &r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        close_epoch(mode, win, right);
        CHECK(back == 1000 + rank, "%s/%s rget: %d", flavor_name[flavor], mode_name[mode], back);
        CHECK(racc_old == 1000 + rank, "%s/%s rget_accumulate: %d", flavor_name[flavor],
              mode_name[mode], racc_old);
        CHECK(mem[14] == 1000 + left && mem[15] == 1000 + left, "%s/%s rput: %d %d",
              flavor_name[flavor], mode_name[mode], mem[14], mem[15]);
    }
    MPI_Type_free(&every_other);
    MPI_Type_free(&tvec);
    if (flavor == MPI_WIN_FLAVOR_DYNAMIC)
        MPI_Win_detach(win, mem);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "Win_free left the handle");
    if (flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_DYNAMIC)
        free(mem);
    free(addr);
}

/* Ranks that cannot share memory (pid namespaces of their own): an
 * allocate_shared window is refused with MPI_ERR_RMA_SHARED, and the
 * program goes on under MPI_ERRORS_RETURN. */
static void shared_refused(void)
{
    int *mem = NULL, cls = MPI_SUCCESS;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                     &mem, &win);
    MPI_Error_class(rc, &cls);
    CHECK(size == 1 ? rc == MPI_SUCCESS : cls == MPI_ERR_RMA_SHARED,
          "Win_allocate_shared across pid namespaces: class %d, want MPI_ERR_RMA_SHARED", cls);
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    /* pidns: tests/mpi/pidns_run.sh, every flavor but shared. */
    int pidns = argc > 1 && strcmp(argv[1], "pidns") == 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int flavors[] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_SHARED,
                     MPI_WIN_FLAVOR_DYNAMIC};
    for (int f = 0; f < 4; f++) {
        if (pidns && flavors[f] == MPI_WIN_FLAVOR_SHARED) {
            shared_refused();
            continue;
        }
        for (int m = 0; m < N_MODES; m++)
            run(flavors[f], m);
    }
    int all;
    MPI_Allreduce(&mtest_errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "FAILED: %d\n" : "ok\n", all);
    MPI_Finalize();
    return all != 0;
}
