/* Timer performance variables (2 ranks): the time in MPI calls and in the
 * main blocking ones, counted only while a timer handle is started. Rank
 * 0 sleeps before it sends and before it enters a barrier, each time once
 * rank 1 said it waits, so rank 1's
 * MPI_Recv and MPI_Barrier take at least that long, and its MPI_Send
 * timer, which never runs there, reads 0; stopped, a timer keeps its
 * value; a large-count receive counts with MPI_Recv. */
#include "mpit_util.h"

#include <mpi.h>
#include <stdio.h>
#include <time.h>

static MPI_T_pvar_handle timer(const char *name)
{
    return mpit_handle(name, MPI_T_PVAR_CLASS_TIMER, -1, NULL, 0);
}

static void nap_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int provided, rank, n;
    RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2) {
        MPI_Finalize();
        return 77;
    }
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    MPI_T_pvar_handle all = timer("tern_time_mpi"), recv = timer("tern_time_recv"),
                      send = timer("tern_time_send"), barrier = timer("tern_time_barrier");
    const unsigned long long ms = 1000000; /* a millisecond in the timers' unit (MPI_Wtick) */
    CHECK(MPI_Wtick() <= 1e-9 * 1.0001, "MPI_Wtick %g", MPI_Wtick());
    int v = 0;
    /* Not started: nothing counts. */
    if (rank == 0) {
        nap_ms(20);
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rd(recv) == 0 && rd(all) == 0, "stopped timers read %llu, %llu", rd(recv), rd(all));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* in step (over the network the first send connects) */
    RC(MPI_T_pvar_start(sess, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    double t0 = MPI_Wtime();
    /* Each nap starts when the other rank is known to be waiting: a
     * signal from it first (its MPI_Isend and MPI_Wait, which no timer
     * of the checks below counts). */
    int sig = 0;
    MPI_Request rq;
    if (rank == 0) {
        MPI_Recv(&sig, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        nap_ms(60);
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&sig, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        nap_ms(40);
        MPI_Barrier(MPI_COMM_WORLD);
        /* Its 100 ms of naps are not MPI's. */
        double wall = (MPI_Wtime() - t0) * 1e9;
        CHECK(rd(all) + 90 * ms <= wall, "rank 0: %llu ns in MPI of %.0f", rd(all), wall);
    } else {
        MPI_Isend(&sig, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        unsigned long long r = rd(recv);
        CHECK(r >= 50 * ms, "MPI_Recv took %llu ns, expected at least 50 ms", r);
        MPI_Isend(&sig, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        unsigned long long b = rd(barrier);
        CHECK(b >= 30 * ms, "MPI_Barrier took %llu ns, expected at least 30 ms", b);
        CHECK(rd(all) >= r + b, "time in MPI %llu < recv %llu + barrier %llu", rd(all), r, b);
        CHECK(rd(send) == 0, "rank 1 never called MPI_Send: %llu", rd(send));
    }
    /* Stopped: the value stays. */
    RC(MPI_T_pvar_stop(sess, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    unsigned long long r0 = rd(recv), a0 = rd(all);
    if (rank == 0) {
        nap_ms(30);
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    CHECK(rd(recv) == r0 && rd(all) == a0, "stopped timers moved: %llu -> %llu", a0, rd(all));
    /* Started again, after a readreset: the large-count form counts too. */
    unsigned long long got = 0;
    RC(MPI_T_pvar_readreset(sess, recv, &got), MPI_SUCCESS);
    CHECK(got == r0 && rd(recv) == 0, "readreset %llu, then %llu", got, rd(recv));
    RC(MPI_T_pvar_start(sess, recv), MPI_SUCCESS);
    if (rank == 0) {
        nap_ms(30);
        MPI_Send_c(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else {
        MPI_Recv_c(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(rd(recv) >= 20 * ms, "MPI_Recv_c took %llu ns", rd(recv));
    }
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    MPI_Finalize();
    RC(MPI_T_finalize(), MPI_SUCCESS);
    if (mtest_errors)
        fprintf(stderr, "rank %d: %d errors\n", rank, mtest_errors);
    return mtest_errors != 0;
}
