/* The MPI program of the fault set (fault_test.sh): it says where it is on
 * stdout (flushed line by line) and then waits at one point of its life for
 * the script to kill it, or its mpiexec, or its host's proxy.
 *   fault_prog <point> [bytes]
 * points:
 *   before_init  "pid R P", then sleeps before MPI_Init
 *   init         "pid R P", then MPI_Init at once (killed at a random offset)
 *   after_init   MPI_Init, "ready R", sleeps (no MPI call)
 *   collective   MPI_Init, "ready R", MPI_Allreduce without end
 *   comm_churn   MPI_Init, "ready R", without end: MPI_Comm_dup, a barrier
 *                and an MPI_Allreduce on the copy (which make its shm
 *                collective region), MPI_Comm_free
 *   p2p_wait     MPI_Init, "ready R", MPI_Irecv of a message never sent, MPI_Wait
 *   finalize     MPI_Init, "ready R"; rank 0 sleeps, the others enter
 *                MPI_Finalize (which waits for rank 0)
 *   undumpable_before / undumpable_after   PR_SET_DUMPABLE 0 (CMA into this
 *                process denied) before / after MPI_Init, then `bytes`
 *                (default 64 MB) exchanged between ranks 0 and 1 and checked
 *   big          the same exchange with nothing denied
 *   io_collective MPI_Init, "ready R", collective writes without end to
 *                <dir>/data (argv[2]) through interleaved views, collective
 *                buffering and atomic mode on (aggregators, locks)
 * R is the world rank (PMI_RANK before MPI_Init), P the pid. Ranks never
 * leave a point by themselves before 30 s: the test ends them. */
#include <mpi.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int env_rank(void)
{
    const char *r = getenv("PMI_RANK");
    return r ? atoi(r) : -1;
}

/* A line the script waits for: flushed at once. */
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

/* Ranks 0 and 1 swap `bytes` of a pattern and check every byte. */
static int exchange(size_t bytes)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank > 1)
        return 0;
    unsigned char *out = malloc(bytes), *in = malloc(bytes);
    if (!out || !in)
        return 1;
    for (size_t i = 0; i < bytes; i++)
        out[i] = (unsigned char)(i * 31 + (size_t)rank);
    memset(in, 0, bytes);
    int peer = 1 - rank;
    MPI_Sendrecv(out, (int)bytes, MPI_BYTE, peer, 7, in, (int)bytes, MPI_BYTE, peer, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (size_t i = 0; i < bytes; i++)
        if (in[i] != (unsigned char)(i * 31 + (size_t)peer)) {
            printf("rank %d: byte %zu is %u, expected %u\n", rank, i, in[i],
                   (unsigned char)(i * 31 + (size_t)peer));
            return 1;
        }
    printf("rank %d received %zu bytes intact\n", rank, bytes);
    free(out);
    free(in);
    return 0;
}

static int io_forever(const char *dir, int rank)
{
    char path[512];
    snprintf(path, sizeof path, "%s/data", dir);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "cb_buffer_size", "65536");
    MPI_File fh;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh))
        return 1;
    MPI_File_set_atomicity(fh, 1);
    MPI_Datatype run, ft;
    MPI_Type_contiguous(256, MPI_INT, &run);
    MPI_Type_create_resized(run, 0, (MPI_Aint)size * 1024, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, (MPI_Offset)rank * 1024, MPI_INT, ft, "native", info);
    static int buf[256 * 64];
    for (int i = 0; i < 256 * 64; i++)
        buf[i] = rank;
    for (;;)
        MPI_File_write_at_all(fh, 0, buf, 256 * 64, MPI_INT, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    const char *point = argc > 1 ? argv[1] : "after_init";
    size_t bytes = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : (size_t)64 << 20;
    say("pid %d %ld\n", env_rank(), (long)getpid());
    if (strcmp(point, "before_init") == 0)
        sleep(30);
    if (strcmp(point, "undumpable_before") == 0)
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    say("ready %d\n", rank);
    int rc = 0;
    if (strcmp(point, "after_init") == 0 || strcmp(point, "init") == 0 ||
        strcmp(point, "before_init") == 0) {
        sleep(30);
    } else if (strcmp(point, "collective") == 0) {
        for (long i = 0;; i++) {
            long in = i, sum;
            MPI_Allreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        }
    } else if (strcmp(point, "comm_churn") == 0) {
        for (long i = 0;; i++) {
            MPI_Comm c;
            long in = i, sum;
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
            MPI_Barrier(c);
            MPI_Allreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, c);
            MPI_Comm_free(&c);
        }
    } else if (strcmp(point, "io_collective") == 0) {
        rc = io_forever(argc > 2 ? argv[2] : ".", rank);
    } else if (strcmp(point, "p2p_wait") == 0) {
        int x;
        MPI_Request req;
        MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (strcmp(point, "finalize") == 0) {
        if (rank == 0)
            sleep(30);
        else
            say("finalize %d\n", rank);
    } else if (strcmp(point, "undumpable_after") == 0) {
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        rc = exchange(bytes);
    } else if (strcmp(point, "undumpable_before") == 0 || strcmp(point, "big") == 0) {
        rc = exchange(bytes);
    }
    MPI_Finalize();
    return rc;
}
