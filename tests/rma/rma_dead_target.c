/* A window's target dies (SIGKILL) while an origin's RDMA write to it is
 * still in flight: the origin's flush, unlock or fence must not hang.
 *
 * Rank 1 exposes 32 MB (MPI_Win_create, or MPI_Win_allocate with argument
 * "allocate"); rank 0 locks it (or opens a fence epoch with "fence"), and
 * after a barrier puts all 32 MB (over TERN_TRANSPORTS=self,ofi with
 * TERN_RMA_RDMA=on: RDMA writes, which libfabric's TCP providers complete
 * only when the target's provider is progressed), while rank 1 sleeps
 * without calling MPI, then kills itself. Rank 0 at once ends the epoch
 * (waiting for the write when rank 1 dies):
 *   flush    MPI_Win_flush, then MPI_Win_unlock
 *   get      the same after an MPI_Get of the 32 MB (RDMA reads) instead
 *   unlock   MPI_Win_unlock
 *   fence    MPI_Win_fence
 * Under MPI_ERRORS_RETURN (the window's handler) each call must return an
 * error whose text names rank 1, and rank 0 must then reach MPI_Finalize
 * and print "rma_dead_target: ok"; with "fatal" as second argument the
 * window keeps MPI_ERRORS_ARE_FATAL and the call must end the job with a
 * message naming it and rank 1.
 *
 * mpiexec ends the job when a rank is killed (SIGTERM to the others,
 * SIGKILL a second later): rank 0 ignores SIGTERM so that what it does in
 * that second shows, and reports how long the call took. Run through
 * rma_dead_target_test.sh, which also checks the job's status, its end in
 * time and that no process is left. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIN_BYTES (32 << 20)

static int failures;

static void expect_peer_error(const char *what, int code, double took)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_SUCCESS;
    MPI_Error_class(code, &cls);
    MPI_Error_string(code, text, &len);
    printf("rma_dead_target: %s returned class %d after %.3f s: %s\n", what, cls, took,
           cls == MPI_SUCCESS ? "(success)" : text);
    if (cls == MPI_SUCCESS || !strstr(text, "rank 1")) {
        printf("rma_dead_target: FAIL: %s: expected an error naming rank 1\n", what);
        failures++;
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "flush";
    int allocate = argc > 2 && strcmp(argv[2], "allocate") == 0;
    int fatal = (argc > 2 && strcmp(argv[2], "fatal") == 0) ||
                (argc > 3 && strcmp(argv[3], "fatal") == 0);
    int rank, size;
    MPI_Init(&argc, &argv);
    /* After MPI_Init: libfabric's providers may install handlers. */
    signal(SIGTERM, SIG_IGN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            printf("rma_dead_target: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    alarm(50); /* a hang shows as SIGALRM, not as the test's timeout */
    char *mem = NULL, *src = malloc(WIN_BYTES);
    memset(src, 0x5a, WIN_BYTES);
    MPI_Aint len = rank == 1 ? WIN_BYTES : 0;
    MPI_Win win;
    if (allocate) {
        MPI_Win_allocate(len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    } else {
        mem = rank == 1 ? calloc(WIN_BYTES, 1) : NULL;
        MPI_Win_create(mem, len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    if (!fatal)
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int is_fence = strcmp(mode, "fence") == 0;
    if (is_fence)
        MPI_Win_fence(0, win);
    else if (rank == 0)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win); /* granted in rank 1's barrier */
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 1) {
        printf("rma_dead_target: rank 1 (pid %ld) sleeps, then dies\n", (long)getpid());
        fflush(stdout);
        usleep(300000); /* no MPI call: the put stays in flight */
        raise(SIGKILL);
    }
    int is_get = strcmp(mode, "get") == 0;
    int rc = is_get ? MPI_Get(src, WIN_BYTES, MPI_CHAR, 1, 0, WIN_BYTES, MPI_CHAR, win)
                    : MPI_Put(src, WIN_BYTES, MPI_CHAR, 1, 0, WIN_BYTES, MPI_CHAR, win);
    printf("rma_dead_target: rank 0 %s %d bytes to rank 1: rc %d\n", is_get ? "get" : "put",
           WIN_BYTES, rc);
    fflush(stdout);
    /* At once: the call waits for the write while rank 1 sleeps and dies. */
    double t0 = MPI_Wtime();
    if (strcmp(mode, "flush") == 0 || is_get) {
        rc = MPI_Win_flush(1, win);
        if (fatal)
            printf("ERRFATAL-NOT-FATAL: MPI_Win_flush returned %d\n", rc);
        expect_peer_error("MPI_Win_flush", rc, MPI_Wtime() - t0);
        t0 = MPI_Wtime();
        rc = MPI_Win_unlock(1, win);
        /* The epoch's operations failed; the unlock may report it again
         * or succeed (nothing is left to wait for). */
        printf("rma_dead_target: then MPI_Win_unlock returned %d after %.3f s\n", rc,
               MPI_Wtime() - t0);
    } else if (strcmp(mode, "unlock") == 0) {
        rc = MPI_Win_unlock(1, win);
        if (fatal)
            printf("ERRFATAL-NOT-FATAL: MPI_Win_unlock returned %d\n", rc);
        expect_peer_error("MPI_Win_unlock", rc, MPI_Wtime() - t0);
    } else {
        rc = MPI_Win_fence(0, win);
        if (fatal)
            printf("ERRFATAL-NOT-FATAL: MPI_Win_fence returned %d\n", rc);
        expect_peer_error("MPI_Win_fence", rc, MPI_Wtime() - t0);
    }
    fflush(stdout);
    /* Win_free is collective with a dead rank: not called. */
    MPI_Finalize();
    if (failures == 0)
        printf("rma_dead_target: ok (rank 0 saw the error and finalized)\n");
    fflush(stdout);
    free(src);
    return failures != 0;
}
