/* hello: every rank says who and where it is, then a token travels once
 * around a ring of all ranks (0 -> 1 -> ... -> size-1 -> 0), each rank
 * printing what it received and where it sends it next.
 *
 *   mpicc -o hello hello.c && mpiexec -n 4 ./hello */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, len;
    char name[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    printf("Hello from rank %d of %d on %s (pid %d)\n", rank, size, name, (int)getpid());
    fflush(stdout);

    if (size > 1) {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        int token;
        MPI_Barrier(MPI_COMM_WORLD); /* greetings first, then the ring */
        if (rank == 0) {
            token = 1;
            printf("rank 0: starting the token (value %d) -> rank %d\n", token, next);
            fflush(stdout);
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("rank 0: token came back from rank %d with value %d: it visited %d ranks\n", prev,
                   token, token);
            fflush(stdout);
            if (token != size) {
                fprintf(stderr, "rank 0: expected the token to be %d\n", size);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            printf("rank %d: got the token from rank %d, value now %d -> rank %d\n", rank, prev, token,
                   next);
            fflush(stdout);
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        }
    }

    MPI_Finalize();
    return 0;
}
