/* The trivial MPI program whose `mpiexec -n 8` wall-clock time the compare
 * tool measures: start-up and shutdown of a job, nothing else. */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
