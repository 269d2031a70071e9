/* MPI_Barrier: no rank leaves before every rank has entered. Each rank
 * records CLOCK_MONOTONIC (system-wide on one node) just before entering and
 * just after leaving each of 1000 barriers; now and then one rank sleeps
 * 20 ms before entering. Rank 0 then checks, for every barrier, that the
 * latest entry precedes the earliest exit. Also 100 rounds in which every
 * rank posts a receive, meets the others in a barrier, and a root then uses
 * MPI_Rsend (correct only if the barrier really waited for all receives to be
 * posted); and MPI_Barrier(MPI_COMM_SELF). */
#include "../mpi/mtest.h"

enum { ITERS = 1000 };

static void test_order(void)
{
    mtest_begin("barrier_entry_exit");
    double *in = malloc(2 * ITERS * sizeof(double)), *out = in + ITERS;
    for (int i = 0; i < ITERS; i++) {
        if (i % 100 == 50 && mtest_rank == (i / 100) % mtest_size)
            mtest_sleep(0.02);
        in[i] = mtest_now();
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        out[i] = mtest_now();
    }
    if (mtest_rank == 0) {
        double *max_in = malloc(ITERS * sizeof(double)), *min_out = malloc(ITERS * sizeof(double));
        int *who_in = calloc(ITERS, sizeof(int)), *who_out = calloc(ITERS, sizeof(int));
        double *other = malloc(2 * ITERS * sizeof(double));
        memcpy(max_in, in, ITERS * sizeof(double));
        memcpy(min_out, out, ITERS * sizeof(double));
        for (int r = 1; r < mtest_size; r++) {
            CHECK_RC(MPI_Recv(other, 2 * ITERS, MPI_DOUBLE, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < ITERS; i++) {
                if (other[i] > max_in[i]) {
                    max_in[i] = other[i];
                    who_in[i] = r;
                }
                if (other[ITERS + i] < min_out[i]) {
                    min_out[i] = other[ITERS + i];
                    who_out[i] = r;
                }
            }
        }
        int bad = 0;
        for (int i = 0; i < ITERS; i++)
            if (max_in[i] > min_out[i] && bad++ < 5)
                CHECK(0, "barrier %d: rank %d left %.6f s before rank %d entered", i, who_out[i],
                      max_in[i] - min_out[i], who_in[i]);
        CHECK_INT(bad, 0, "barriers left early");
        free(max_in);
        free(min_out);
        free(who_in);
        free(who_out);
        free(other);
    } else {
        CHECK_RC(MPI_Send(in, 2 * ITERS, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD));
    }
    free(in);
    mtest_end();
}

static void test_rounds(void)
{
    mtest_begin("barrier_rounds");
    /* Round i: everyone but the root posts a receive, barrier, then the
     * root ready-sends the round number to everyone. */
    for (int i = 0; i < 100; i++) {
        int root = i % mtest_size;
        MPI_Request r = MPI_REQUEST_NULL;
        int v = -1;
        if (mtest_rank != root)
            CHECK_RC(MPI_Irecv(&v, 1, MPI_INT, root, 2, MPI_COMM_WORLD, &r));
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        if (mtest_rank == root) {
            for (int d = 0; d < mtest_size; d++)
                if (d != root)
                    CHECK_RC(MPI_Rsend(&i, 1, MPI_INT, d, 2, MPI_COMM_WORLD)); /* receives are posted */
        } else {
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
            if (v != i) {
                CHECK(0, "round %d: got value %d from root %d", i, v, root);
                break;
            }
        }
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_SELF));
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    test_order();
    test_rounds();
    return mtest_finalize();
}
