/* ping_pong: latency and bandwidth between ranks 0 and 1.
 *
 * Latency: 8-byte messages bounced back and forth; reports half the average
 * round trip. Bandwidth: 1 MiB messages bounced the same way; reports bytes
 * moved per second one way. Every message carries a pattern that the
 * receiver checks, so a wrong byte fails the run. Other ranks only wait.
 *
 *   mpicc -O2 -o ping_pong ping_pong.c && mpiexec -n 2 ./ping_pong */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAT_SIZE 8
#define LAT_WARMUP 200
#define LAT_ITERS 5000
#define BW_SIZE (1 << 20)
#define BW_WARMUP 10
#define BW_ITERS 100

static unsigned char pattern(size_t i, int iter)
{
    return (unsigned char)(i * 31u + (unsigned)iter * 7u + 1u);
}

static void fill(unsigned char *buf, size_t n, int iter)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = pattern(i, iter);
}

/* Checks the whole buffer when full, else its first and last 64 bytes (the
 * timed loop must not be dominated by the check). */
static int check(const unsigned char *buf, size_t n, int iter, int full)
{
    for (size_t i = 0; i < n; i++) {
        if (!full && i == 64 && n > 128)
            i = n - 64;
        if (buf[i] != pattern(i, iter)) {
            fprintf(stderr, "data error at byte %zu of a %zu-byte message (iteration %d): got %u, want %u\n",
                    i, n, iter, buf[i], pattern(i, iter));
            return 0;
        }
    }
    return 1;
}

/* Bounces size-byte messages iters times (after warmup untimed ones);
 * returns the average one-way time in seconds on rank 0. */
static double bounce(int rank, unsigned char *buf, size_t size, int warmup, int iters)
{
    double t0 = 0;
    for (int it = -warmup; it < iters; it++) {
        int full = it < 0 || it == iters - 1; /* warm-up and last: full check */
        if (it == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        int iter = it + warmup;
        if (rank == 0) {
            if (full || size <= 128) {
                fill(buf, size, iter);
            } else { /* only the bytes the receiver checks */
                fill(buf, 64, iter);
                for (size_t i = size - 64; i < size; i++)
                    buf[i] = pattern(i, iter);
            }
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!check(buf, size, iter, full))
                MPI_Abort(MPI_COMM_WORLD, 2);
        } else {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (!check(buf, size, iter, full))
                MPI_Abort(MPI_COMM_WORLD, 2);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / (2.0 * iters);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "ping_pong needs at least 2 ranks (mpiexec -n 2 %s)\n", argv[0]);
        MPI_Finalize();
        return 1;
    }

    unsigned char *buf = malloc(BW_SIZE);
    if (buf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 0, BW_SIZE);

    if (rank > 1) {
        /* Idle ranks take part in the barriers of the timed loops only. */
        for (int i = 0; i < 2; i++)
            MPI_Barrier(MPI_COMM_WORLD);
    } else {
        double lat = bounce(rank, buf, LAT_SIZE, LAT_WARMUP, LAT_ITERS);
        if (rank == 0) {
            printf("latency   %7d bytes: %8.2f us one way (%d round trips)\n", LAT_SIZE, lat * 1e6,
                   LAT_ITERS);
            fflush(stdout);
        }
        double t = bounce(rank, buf, BW_SIZE, BW_WARMUP, BW_ITERS);
        if (rank == 0) {
            printf("bandwidth %7d bytes: %8.1f MB/s (%8.2f us per message, %d round trips)\n", BW_SIZE,
                   BW_SIZE / t / 1e6, t * 1e6, BW_ITERS);
            printf("data verified\n");
            fflush(stdout);
        }
    }

    free(buf);
    MPI_Finalize();
    return 0;
}
