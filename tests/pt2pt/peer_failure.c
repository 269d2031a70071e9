/* A peer that dies (SIGKILL) while rank 0 waits on it: the requests with it
 * complete with an error instead of hanging or killing rank 0.
 *
 * Rank 1 kills itself after a barrier. Rank 0, under MPI_ERRORS_RETURN,
 * waits on a rendezvous send to rank 1 and a receive from it (both in
 * flight when it dies), then calls MPI_Recv and MPI_Send to rank 1 again
 * (they must fail at once), then exchanges with rank 2 when there is one
 * (other peers go on), finalizes and prints "peer_failure: ok" after
 * MPI_Finalize. Every error must have a class other than MPI_SUCCESS and
 * a text naming rank 1.
 *
 * With argument "fatal" rank 0 keeps MPI_ERRORS_ARE_FATAL: its MPI_Recv
 * from rank 1 must end the job with a message naming MPI_Recv and rank 1.
 *
 * mpiexec ends the job when a rank is killed (SIGTERM to the others, then
 * SIGKILL a second later): the survivors ignore SIGTERM so that what rank
 * 0 does in that second shows. Run through expect_fatal.sh (the job's exit
 * status is the killed rank's). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG (1 << 20) /* past every eager limit: a rendezvous */

static int failures;

/* An error code of a call with the dead peer: not MPI_SUCCESS, its text
 * names rank 1. */
static void expect_peer_error(const char *what, int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_SUCCESS;
    MPI_Error_class(code, &cls);
    MPI_Error_string(code, text, &len);
    printf("peer_failure: %s returned class %d: %s\n", what, cls, text);
    if (cls == MPI_SUCCESS || !strstr(text, "rank 1")) {
        printf("peer_failure: FAIL: %s: expected an error naming rank 1\n", what);
        failures++;
    }
}

int main(int argc, char **argv)
{
    int fatal = argc > 1 && strcmp(argv[1], "fatal") == 0;
    int rank, size;
    MPI_Init(&argc, &argv);
    /* After MPI_Init: libraries it loads (libfabric's providers) may
     * install handlers of their own. */
    signal(SIGTERM, SIG_IGN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    alarm(30);
    if (!fatal)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char *big = calloc(BIG, 1);
    int x = 7, y = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 1) {
        usleep(100000); /* let rank 0 post its requests first */
        raise(SIGKILL);
    }
    if (rank == 0) {
        if (fatal) {
            MPI_Recv(&y, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("ERRFATAL-NOT-FATAL: MPI_Recv from a dead rank returned\n");
            fflush(stdout);
            return 0;
        }
        MPI_Request reqs[2];
        MPI_Status st[2];
        MPI_Isend(big, BIG, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(&y, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &reqs[1]);
        int rc = MPI_Waitall(2, reqs, st);
        if (rc != MPI_ERR_IN_STATUS) {
            printf("peer_failure: FAIL: MPI_Waitall returned %d, not MPI_ERR_IN_STATUS\n", rc);
            failures++;
        }
        expect_peer_error("MPI_Waitall: the rendezvous send", st[0].MPI_ERROR);
        expect_peer_error("MPI_Waitall: the receive", st[1].MPI_ERROR);
        expect_peer_error("MPI_Recv", MPI_Recv(&y, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        expect_peer_error("MPI_Send (eager size)", MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
        expect_peer_error("MPI_Send (rendezvous size)", MPI_Send(big, BIG, MPI_CHAR, 1, 0, MPI_COMM_WORLD));
        expect_peer_error("MPI_Ssend", MPI_Ssend(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
        /* A collective's schedule reports only a status: the error still
         * names the peer (with 3 ranks rank 2 would not join). */
        if (size == 2)
            expect_peer_error("MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
        if (size > 2) {
            rc = MPI_Sendrecv(&x, 1, MPI_INT, 2, 1, &y, 1, MPI_INT, 2, 1, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS || y != 9) {
                printf("peer_failure: FAIL: exchange with rank 2: rc %d, got %d\n", rc, y);
                failures++;
            }
        }
    } else if (rank == 2) {
        MPI_Recv(&y, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        x = 9;
        MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    free(big);
    MPI_Finalize();
    if (rank == 0 && failures == 0)
        printf("peer_failure: ok (rank 0 saw every error and finalized)\n");
    fflush(stdout);
    return failures != 0;
}
