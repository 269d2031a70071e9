/* With the default handler (MPI_ERRORS_ARE_FATAL), an erroneous call ends the
 * whole job. The last rank sends to an invalid rank; the other ranks block in
 * a receive that never matches and must be torn down. Run through
 * expect_fatal.sh, which wants a non-zero exit, no NOT-FATAL marker, and the
 * function name in the output.
 *
 * With argument "abort", the last rank calls MPI_Abort(MPI_COMM_WORLD, 7)
 * instead: the job must end with a non-zero status as well. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, x = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    alarm(30);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        if (argc > 1 && strcmp(argv[1], "abort") == 0) {
            MPI_Abort(MPI_COMM_WORLD, 7);
            printf("ERRFATAL-NOT-FATAL: MPI_Abort returned\n");
        } else {
            int rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
            printf("ERRFATAL-NOT-FATAL: the erroneous call returned %d\n", rc);
        }
        fflush(stdout);
        return 0;
    }
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("ERRFATAL-NOT-FATAL: rank %d received a message nobody sent\n", rank);
    MPI_Finalize();
    return 0;
}
