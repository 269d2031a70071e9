// C++ program including mpi.h: compiled by the wrapper tests with mpicxx.
#include <mpi.h>

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<char> name(MPI_MAX_PROCESSOR_NAME);
    int len = 0;
    MPI_Get_processor_name(name.data(), &len);
    std::cout << "hello from C++, rank " << rank << " of " << size << " on "
              << std::string(name.data(), static_cast<size_t>(len)) << "\n";
    MPI_Finalize();
    return (rank >= 0 && rank < size) ? 0 : 1;
}
