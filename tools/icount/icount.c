/* One path of 8-byte traffic, for instruction counts (scripts/icount.sh):
 * icount <path>, 2 ranks. The program runs 20 warm-up iterations, then N
 * inside bench_loop, which callgrind collects in (--toggle-collect):
 *   pingpong (N = 1000): rank 0 MPI_Send then MPI_Recv, rank 1 the reverse;
 *   rate (N = 300): rank 0 64 MPI_Isend + MPI_Waitall, then a 1-byte
 *     MPI_Recv ack; rank 1 64 MPI_Irecv + MPI_Waitall, then the ack;
 *   a collective (N = 1000): one call on one MPI_DOUBLE; rooted ones take
 *     root i % 2, so that neither rank runs ahead into the other's
 *     unexpected queue. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { PINGPONG, RATE, ALLREDUCE, ALLGATHER, ALLTOALL, BCAST, REDUCE, GATHER, SCATTER, BARRIER };
static const char *const paths[] = {"pingpong", "rate",   "allreduce", "allgather", "alltoall",
                                    "bcast",    "reduce", "gather",    "scatter",   "barrier"};
enum { N_PATHS = sizeof paths / sizeof paths[0], WINDOW = 64 };

static int rank, path;
static char buf[8];
static MPI_Request reqs[WINDOW];

static void pingpong(void)
{
    if (rank == 0) {
        MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
}

static void rate(void)
{
    for (int k = 0; k < WINDOW; k++) {
        if (rank == 0)
            MPI_Isend(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &reqs[k]);
        else
            MPI_Irecv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &reqs[k]);
    }
    MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
    if (rank == 0)
        MPI_Recv(buf, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Send(buf, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
}

static void one(int i)
{
    double d = 1.0, e[4] = {0};
    MPI_Comm w = MPI_COMM_WORLD;
    switch (path) {
    case PINGPONG: pingpong(); break;
    case RATE: rate(); break;
    case ALLREDUCE: MPI_Allreduce(&d, e, 1, MPI_DOUBLE, MPI_SUM, w); break;
    case ALLGATHER: MPI_Allgather(&d, 1, MPI_DOUBLE, e, 1, MPI_DOUBLE, w); break;
    case ALLTOALL: MPI_Alltoall(e, 1, MPI_DOUBLE, e + 2, 1, MPI_DOUBLE, w); break;
    case BCAST: MPI_Bcast(&d, 1, MPI_DOUBLE, i % 2, w); break;
    case REDUCE: MPI_Reduce(&d, e, 1, MPI_DOUBLE, MPI_SUM, i % 2, w); break;
    case GATHER: MPI_Gather(&d, 1, MPI_DOUBLE, e, 1, MPI_DOUBLE, i % 2, w); break;
    case SCATTER: MPI_Scatter(e, 1, MPI_DOUBLE, &d, 1, MPI_DOUBLE, i % 2, w); break;
    case BARRIER: MPI_Barrier(w); break;
    }
}

/* Not inlined: callgrind collects inside it only. */
__attribute__((noinline)) void bench_loop(int n);
void bench_loop(int n)
{
    for (int i = 0; i < n; i++)
        one(i);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (path = 0; argc > 1 && path < N_PATHS && strcmp(paths[path], argv[1]); path++)
        ;
    if (argc < 2 || path == N_PATHS || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 icount <pingpong|rate|allreduce|allgather|"
                            "alltoall|bcast|reduce|gather|scatter|barrier>\n");
        MPI_Finalize();
        return 2;
    }
    for (int i = 0; i < 20; i++)
        one(i);
    bench_loop(path == RATE ? 300 : 1000);
    MPI_Finalize();
    return 0;
}
