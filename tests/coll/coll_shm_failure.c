/* A rank that dies while the others wait in a shared-memory collective:
 * they must not wait forever. Rank 1 kills itself after the region exists;
 * the others, under MPI_ERRORS_RETURN, get an error naming rank 1 from
 * MPI_Allreduce and MPI_Bcast (blocking, shm forced) and an error from an
 * MPI_Ibarrier's wait, then finalize; rank 0 prints "coll_shm_failure: ok".
 * With argument "fatal" the errors stay fatal: the job must end with a
 * message naming MPI_Allreduce and rank 1.
 *
 * mpiexec ends the job when a rank dies (SIGTERM, SIGKILL a second later):
 * the survivors ignore SIGTERM so what they do in that second shows. Run
 * through tests/mpi/expect_fatal.sh. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

/* names: the text must name rank 1 (a request's error from MPI_Wait names
 * only its status, as for every nonblocking collective). */
static void expect_peer_error(int rank, const char *what, int code, int names)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_SUCCESS;
    MPI_Error_class(code, &cls);
    MPI_Error_string(code, text, &len);
    printf("coll_shm_failure: rank %d: %s returned class %d: %s\n", rank, what, cls, text);
    fflush(stdout);
    if (cls == MPI_SUCCESS || (names && !strstr(text, "rank 1"))) {
        printf("coll_shm_failure: FAIL: %s: expected an error naming rank 1\n", what);
        failures++;
    }
}

int main(int argc, char **argv)
{
    int fatal = argc > 1 && strcmp(argv[1], "fatal") == 0;
    setenv("TERN_BARRIER_ALGORITHM", "shm", 0);
    setenv("TERN_BCAST_ALGORITHM", "shm", 0);
    setenv("TERN_ALLREDUCE_ALGORITHM", "shm", 0);
    int rank, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    signal(SIGTERM, SIG_IGN);
    alarm(30);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!fatal)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD); /* creates the region */
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 1) {
        usleep(100000); /* the others wait in the next collective */
        raise(SIGKILL);
    }
    int rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (fatal) {
        printf("ERRFATAL-NOT-FATAL: MPI_Allreduce with a dead rank returned %d\n", rc);
        fflush(stdout);
        return 0;
    }
    expect_peer_error(rank, "MPI_Allreduce", rc, 1);
    expect_peer_error(rank, "MPI_Bcast", MPI_Bcast(&x, 1, MPI_INT, 1, MPI_COMM_WORLD), 1);
    MPI_Request req;
    rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    expect_peer_error(rank, "MPI_Ibarrier", rc, 0);
    MPI_Finalize();
    if (rank == 0 && failures == 0)
        printf("coll_shm_failure: ok (the survivors saw every error and finalized)\n");
    fflush(stdout);
    return failures != 0;
}
