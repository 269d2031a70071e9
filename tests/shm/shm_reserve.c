/* The shm transport's pages reserved per pair at its first message
 * (TERN_SHM_RESERVE=pair, transport/shm/shm_reserve.c), by the allocated
 * blocks of the node's segment (stat of the file each rank keeps open):
 *   shm_reserve pairs    ranks 0 and 1 exchange a message, then every pair
 *                        talks: one pair must have reserved about one
 *                        L * (L - 1) / 2th of what all pairs reserve, and
 *                        MPI_Init little. Exits 1 otherwise.
 *   shm_reserve halo|all prints the segment's allocated bytes a second after
 *                        a ring halo (each rank with its two neighbours) or
 *                        every pair (for docs/performance.md); exits 0.
 *   shm_reserve fill <file>  rank 0 fills the file system of <file> (a
 *                        small tmpfs on /dev/shm) after MPI_Init, then sends
 *                        to rank 1: the send must fail with an MPI error
 *                        (errors return), never a SIGBUS; prints its class
 *                        and aborts with 3. Exits 1 if the send succeeds. */
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Allocated bytes of this node's shm segment (-1: not found). */
static long long segment_blocks(long long *size_p)
{
    char path[64], target[PATH_MAX];
    for (int fd = 3; fd < 1024; fd++) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strstr(target, "/tern-") == NULL || strstr(target, "-shm-") == NULL)
            continue;
        struct stat sb;
        if (fstat(fd, &sb) != 0)
            return -1;
        *size_p = (long long)sb.st_size;
        return (long long)sb.st_blocks * 512;
    }
    return -1;
}

/* Every rank sends to every other, then tells rank 0 it has heard from
 * all: once rank 0 has every word, every pair has been reserved. */
static void all_pairs(int rank, int size)
{
    MPI_Request *req = malloc(2 * (size_t)size * sizeof *req);
    int *in = calloc((size_t)size, sizeof *in), n = 0;
    for (int p = 0; p < size; p++)
        if (p != rank) {
            MPI_Irecv(&in[p], 1, MPI_INT, p, 7, MPI_COMM_WORLD, &req[n++]);
            MPI_Isend(&rank, 1, MPI_INT, p, 7, MPI_COMM_WORLD, &req[n++]);
        }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    for (int p = 0; p < size; p++)
        if (p != rank && in[p] != p)
            MPI_Abort(MPI_COMM_WORLD, 1);
    int done = 1;
    if (rank != 0)
        MPI_Send(&done, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    else
        for (int p = 1; p < size; p++)
            MPI_Recv(&done, 1, MPI_INT, p, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    free(req);
    free(in);
}

static int pairs(int rank, int size)
{
    long long seg_size = 0, init = 0, one = 0, all = 0;
    int go = 1, x = 0;
    /* Rank 1 answers rank 0 only: nothing is sent before rank 0 looks. */
    if (rank == 0) {
        init = segment_blocks(&seg_size);
        MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        one = segment_blocks(&seg_size);
        for (int p = 1; p < size; p++)
            MPI_Send(&go, 1, MPI_INT, p, 6, MPI_COMM_WORLD);
    } else {
        if (rank == 1) {
            MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        }
        MPI_Recv(&go, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    all_pairs(rank, size);
    if (rank != 0)
        return 0;
    all = segment_blocks(&seg_size);
    long long npairs = (long long)size * (size - 1) / 2;
    printf("segment %lld bytes; allocated after MPI_Init %lld, one pair %lld, all %lld pairs %lld\n", seg_size,
           init, one, npairs, all);
    if (init < 0 || one <= init || all <= one) {
        printf("FAIL: a pair that talks must reserve pages, and only then\n");
        return 1;
    }
    /* Ring boundaries share pages with their neighbours: 10% slack. */
    if ((one - init) * npairs * 9 > (all - init) * 10 || (one - init) * npairs * 11 < (all - init) * 10) {
        printf("FAIL: one pair reserved %lld bytes, all %lld pairs %lld: not one %lldth\n", one - init, npairs,
               all - init, npairs);
        return 1;
    }
    if (init * 4 > all) {
        printf("FAIL: MPI_Init reserved %lld of %lld bytes\n", init, all);
        return 1;
    }
    printf("ok pairs\n");
    return 0;
}

/* A ring halo, or every pair, then rank 0 prints the allocated bytes (a
 * measurement, not a test: the others may still be finishing). */
static int usage(int rank, int size, int halo)
{
    if (halo) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size, out = rank, in[2] = {-1, -1};
        MPI_Sendrecv(&out, 1, MPI_INT, right, 5, &in[0], 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&out, 1, MPI_INT, left, 6, &in[1], 1, MPI_INT, right, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in[0] != left || in[1] != right)
            MPI_Abort(MPI_COMM_WORLD, 1);
    } else {
        all_pairs(rank, size);
    }
    /* Rank 0 looks once the others' exchanges are over, before any of them
     * reaches MPI_Finalize (whose barrier opens pairs of its own). */
    sleep(rank == 0 ? 1 : 2);
    long long seg_size = 0, bytes = segment_blocks(&seg_size);
    if (rank == 0)
        printf("%s ranks %d: segment %lld bytes, allocated %lld\n", halo ? "halo" : "all", size, seg_size, bytes);
    return 0;
}

static int fill(int rank, const char *file)
{
    if (rank != 0) {
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return 0; /* rank 0 aborts before it sends */
    }
    int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror(file);
        return 1;
    }
    off_t off = 0;
    for (off_t chunk = 1 << 20; chunk >= 4096;)
        if (posix_fallocate(fd, off, chunk) == 0)
            off += chunk;
        else
            chunk /= 2;
    close(fd);
    printf("filled %s with %lld bytes\n", file, (long long)off);
    fflush(stdout);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 42, cls = 0, len;
    int rc = MPI_Send(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS) {
        printf("FAIL: the send succeeded with /dev/shm full\n");
        return 1;
    }
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    printf("send failed: class %d: %s\n", cls, msg);
    fflush(stdout);
    unlink(file);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, rc = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "pairs";
    if (size < 2) {
        if (rank == 0)
            printf("needs 2 or more ranks\n");
        rc = 1;
    } else if (strcmp(mode, "pairs") == 0) {
        rc = pairs(rank, size);
    } else if (strcmp(mode, "halo") == 0 || strcmp(mode, "all") == 0) {
        rc = usage(rank, size, mode[0] == 'h');
    } else if (strcmp(mode, "fill") == 0 && argc > 2) {
        rc = fill(rank, argv[2]);
    } else {
        if (rank == 0)
            printf("usage: shm_reserve pairs|halo|all|fill <file>\n");
        rc = 1;
    }
    MPI_Finalize();
    return rc;
}
