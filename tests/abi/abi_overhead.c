/* The instruction cost of the standard ABI's layer (docs/performance.md,
 * "The standard ABI's overhead"): the same source built with libtern's
 * mpi.h (mpicc) and with the ABI's (mpicc_abi), run with one rank under
 * callgrind, collecting in the bench_ functions (scripts/abi-overhead.sh
 * runs it and prints the cost per call of each procedure).
 * 2 ranks, 8 B: N ping-pongs (rank 0 MPI_Send then MPI_Recv, rank 1 the
 * reverse), N more with MPI_Isend + MPI_Wait for the send, N MPI_Allreduce
 * of one double, N MPI_Wtime. Not a ctest. */
#include <mpi.h>
#include <stdio.h>

#define N 1000

__attribute__((noinline)) static void bench_pingpong(int rank, char *buf, int n)
{
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
}

__attribute__((noinline)) static void bench_isend(int rank, char *buf, int n)
{
    for (int i = 0; i < n; i++) {
        MPI_Request req;
        if (rank == 0) {
            MPI_Isend(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
}

__attribute__((noinline)) static double bench_wtime(int n)
{
    double t = 0;
    for (int i = 0; i < n; i++)
        t += MPI_Wtime();
    return t;
}

__attribute__((noinline)) static void bench_allreduce(double *x, int n)
{
    for (int i = 0; i < n; i++) {
        double y;
        MPI_Allreduce(x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        *x = y * 0.5;
    }
}

int main(int argc, char **argv)
{
    int rank;
    char buf[8] = {0};
    double x = 1.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bench_pingpong(rank, buf, 20);
    bench_allreduce(&x, 20);
    MPI_Barrier(MPI_COMM_WORLD);
    bench_pingpong(rank, buf, N);
    MPI_Barrier(MPI_COMM_WORLD);
    bench_allreduce(&x, N);
    MPI_Barrier(MPI_COMM_WORLD);
    bench_isend(rank, buf, 20);
    MPI_Barrier(MPI_COMM_WORLD);
    bench_isend(rank, buf, N);
    double t = bench_wtime(N);
    MPI_Finalize();
    if (rank == 0)
        printf("abi_overhead: %d ping-pongs, %d allreduces, %d isend ping-pongs, %d wtimes (%d)\n",
               N, N, N, N, t > 0);
    return 0;
}
