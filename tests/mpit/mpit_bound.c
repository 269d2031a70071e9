/* Performance variables bound to a communicator or a window (2 ranks):
 * a handle allocated for an object reads that object's counts, counted
 * from its allocation on. The test knows every number: the messages and
 * bytes it sends and receives on one duplicate of MPI_COMM_WORLD and not
 * on another (eager ones that wait unexpected, eager ones into a posted
 * receive, a persistent send started twice, one rendezvous), the
 * collectives it calls there (whose own messages are not the program's),
 * the one-sided operations on a window (MPI_PROC_NULL ones not counted);
 * a handle whose communicator was freed keeps its last counts; wrong
 * object handles get their MPI_T_ERR_* codes. */
#include "mpit_util.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
static int index_of(const char *name, int want_bind)
{
    return mpit_index(name, MPI_T_PVAR_CLASS_COUNTER, want_bind);
}

static MPI_T_pvar_handle bound(const char *name, int bind, void *obj)
{
    return mpit_handle(name, MPI_T_PVAR_CLASS_COUNTER, bind, obj, 1);
}

enum { BIG = 1 << 20 };

static void comm_counts(void)
{
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    /* Wrong objects. */
    int idx = index_of("tern_comm_msgs_sent", MPI_T_BIND_MPI_COMM), count;
    MPI_T_pvar_handle h;
    MPI_Comm null = MPI_COMM_NULL;
    RC(MPI_T_pvar_handle_alloc(sess, idx, &null, &h, &count), MPI_T_ERR_INVALID_HANDLE);
    RC(MPI_T_pvar_handle_alloc(sess, idx, NULL, &h, &count), MPI_T_ERR_INVALID);

    MPI_T_pvar_handle sent = bound("tern_comm_msgs_sent", MPI_T_BIND_MPI_COMM, &a);
    MPI_T_pvar_handle sent_b = bound("tern_comm_bytes_sent", MPI_T_BIND_MPI_COMM, &a);
    MPI_T_pvar_handle recvd = bound("tern_comm_msgs_recvd", MPI_T_BIND_MPI_COMM, &a);
    MPI_T_pvar_handle recvd_b = bound("tern_comm_bytes_recvd", MPI_T_BIND_MPI_COMM, &a);
    MPI_T_pvar_handle colls = bound("tern_comm_coll_calls", MPI_T_BIND_MPI_COMM, &a);
    MPI_T_pvar_handle other = bound("tern_comm_msgs_sent", MPI_T_BIND_MPI_COMM, &b);
    MPI_T_pvar_handle other_r = bound("tern_comm_msgs_recvd", MPI_T_BIND_MPI_COMM, &b);
    /* A second handle on a, started later, counts from its start. */
    MPI_T_pvar_handle late = MPI_T_PVAR_HANDLE_NULL;
    RC(MPI_T_pvar_handle_alloc(sess, idx, &a, &late, &count), MPI_SUCCESS);

    char buf[4][100];
    char *big = calloc(1, BIG);
    memset(buf, rank + 1, sizeof buf);
    if (rank == 0) {
        for (int i = 0; i < 3; i++)
            MPI_Send(buf[i], 100, MPI_BYTE, 1, 1, a); /* wait unexpected */
        MPI_Send(buf[3], 10, MPI_BYTE, 1, 1, b);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        RC(MPI_T_pvar_start(sess, late), MPI_SUCCESS);
        MPI_Send(buf[0], 50, MPI_BYTE, 1, 2, a); /* into a posted receive */
        MPI_Request p;
        MPI_Send_init(buf[1], 8, MPI_BYTE, 1, 3, a, &p);
        for (int i = 0; i < 2; i++) {
            MPI_Start(&p);
            MPI_Wait(&p, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&p);
        MPI_Send(big, BIG, MPI_BYTE, 1, 4, a); /* rendezvous */
        MPI_Send(buf[0], 1, MPI_BYTE, MPI_PROC_NULL, 0, a);
    } else {
        MPI_Barrier(MPI_COMM_WORLD); /* the three are here (in order: the barrier's came after) */
        MPI_Request r;
        MPI_Irecv(buf[3], 100, MPI_BYTE, 0, 2, a, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < 3; i++)
            MPI_Recv(buf[i], 100, MPI_BYTE, 0, 1, a, MPI_STATUS_IGNORE);
        MPI_Recv(buf[0], 100, MPI_BYTE, 0, 1, b, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < 2; i++)
            MPI_Recv(buf[1], 8, MPI_BYTE, 0, 3, a, MPI_STATUS_IGNORE);
        MPI_Recv(big, BIG, MPI_BYTE, 0, 4, a, MPI_STATUS_IGNORE);
        MPI_Recv(buf[0], 1, MPI_BYTE, MPI_PROC_NULL, 0, a, MPI_STATUS_IGNORE);
    }
    unsigned long long bytes = 300 + 50 + 2 * 8 + BIG;
    CHECK(rd(colls) == 0, "collectives on a before any: %llu", rd(colls));
    double x = 1, y = 0;
    MPI_Barrier(a);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, a);
    MPI_Bcast(big, BIG, MPI_BYTE, 0, a); /* messages of its own, not the program's */
    CHECK(y == 2, "allreduce %g", y);
    CHECK(rd(colls) == 3, "collectives on a: %llu", rd(colls));
    if (rank == 0) {
        CHECK(rd(sent) == 7, "messages sent on a: %llu", rd(sent));
        CHECK(rd(sent_b) == bytes, "bytes sent on a: %llu, not %llu", rd(sent_b), bytes);
        CHECK(rd(late) == 4, "messages sent on a since the late start: %llu", rd(late));
        CHECK(rd(other) == 1, "messages sent on b: %llu", rd(other));
        CHECK(rd(recvd) == 0 && rd(recvd_b) == 0, "received on a: %llu", rd(recvd));
    } else {
        CHECK(rd(recvd) == 7, "messages received on a: %llu", rd(recvd));
        CHECK(rd(recvd_b) == bytes, "bytes received on a: %llu, not %llu", rd(recvd_b), bytes);
        CHECK(rd(other_r) == 1, "messages received on b: %llu", rd(other_r));
        CHECK(rd(sent) == 0, "sent on a: %llu", rd(sent));
    }
    /* The communicator ends; its handles keep the last counts, and a
     * new communicator (which may reuse its context id) counts apart. */
    unsigned long long last = rd(sent);
    MPI_Comm_free(&a);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    if (rank == 0)
        MPI_Send(buf[0], 1, MPI_BYTE, 1, 5, c);
    else
        MPI_Recv(buf[0], 1, MPI_BYTE, 0, 5, c, MPI_STATUS_IGNORE);
    CHECK(rd(sent) == last, "a freed: %llu, was %llu", rd(sent), last);
    MPI_Comm_free(&c);
    MPI_Comm_free(&b);
    free(big);
}

static void win_counts(void)
{
    int mem[4] = {0}, got = 0;
    MPI_Win w;
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    MPI_T_pvar_handle ops = bound("tern_win_ops", MPI_T_BIND_MPI_WIN, &w);
    MPI_Win null = MPI_WIN_NULL;
    MPI_T_pvar_handle h;
    int count;
    RC(MPI_T_pvar_handle_alloc(sess, index_of("tern_win_ops", MPI_T_BIND_MPI_WIN), &null, &h,
                               &count), MPI_T_ERR_INVALID_HANDLE);
    MPI_Win_fence(0, w);
    int peer = 1 - rank, one = rank + 1;
    MPI_Put(&one, 1, MPI_INT, peer, 0, 1, MPI_INT, w);
    MPI_Put(&one, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w);
    MPI_Accumulate(&one, 1, MPI_INT, peer, 1, 1, MPI_INT, MPI_SUM, w);
    MPI_Win_fence(0, w);
    MPI_Get(&got, 1, MPI_INT, peer, 0, 1, MPI_INT, w);
    MPI_Win_fence(0, w);
    CHECK(got == rank + 1 && mem[0] == peer + 1, "get %d, mem %d", got, mem[0]);
    CHECK(rd(ops) == 3, "operations on the window: %llu", rd(ops));
    RC(MPI_T_pvar_handle_free(sess, &ops), MPI_SUCCESS);
    MPI_Win_free(&w);
}

int main(int argc, char **argv)
{
    int provided, n;
    RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2) {
        if (rank == 0)
            fprintf(stderr, "mpit_bound runs on 2 ranks\n");
        MPI_Finalize();
        return 77;
    }
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    comm_counts();
    win_counts();
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    MPI_Finalize();
    RC(MPI_T_finalize(), MPI_SUCCESS);
    if (mtest_errors)
        fprintf(stderr, "rank %d: %d errors\n", rank, mtest_errors);
    return mtest_errors != 0;
}
