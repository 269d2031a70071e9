// A C++ program calling MPI's C procedures, built with Debian's
// mpicxx.mpich: it needs libmpich.so.12 and not MPICH's C++ library
// (mpicxx.mpich names -lmpichcxx, and the linker's --as-needed drops it),
// so it runs on Tern's face. Containers, a template over MPI types, an
// exception across MPI calls; checks that the libmpich.so.12 in the process
// is Tern's (argv[1]: its directory).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <stdlib.h>
#include <string>
#include <vector>

#define CHECK(c)                                                                           \
    do {                                                                                   \
        if (!(c)) {                                                                        \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);    \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

template <typename T> MPI_Datatype mpi_type();
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> MPI_Datatype mpi_type<long long>() { return MPI_LONG_LONG; }

template <typename T> std::vector<T> allsum(std::vector<T> v)
{
    MPI_Allreduce(MPI_IN_PLACE, v.data(), (int)v.size(), mpi_type<T>(), MPI_SUM, MPI_COMM_WORLD);
    return v;
}

static void check_loaded(const char *dir)
{
    std::string want = std::string(dir) + "/libmpich.so.12";
    char *real = realpath(want.c_str(), NULL);
    FILE *f = std::fopen("/proc/self/maps", "r");
    CHECK(f && real);
    char line[4096];
    int tern = 0, other = 0;
    while (std::fgets(line, sizeof line, f)) {
        char *path = std::strchr(line, '/');
        if (!path)
            continue;
        path[std::strcspn(path, "\n")] = '\0';
        CHECK(!std::strstr(path, "libmpichcxx.so"));
        if (std::strstr(path, "libmpich.so"))
            (std::strcmp(path, real) ? other : tern) = 1;
    }
    std::fclose(f);
    std::free(real);
    CHECK(tern && !other);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc > 1);
    check_loaded(argv[1]);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    std::vector<long long> n = allsum(std::vector<long long>{rank, 1, 1LL << 40});
    CHECK(n[0] == (long long)size * (size - 1) / 2 && n[1] == size && n[2] == size * (1LL << 40));
    std::vector<double> d = allsum(std::vector<double>(5, 0.5));
    for (double x : d)
        CHECK(x == 0.5 * size);

    // Gather names of different lengths: counts, then the characters.
    std::string mine = "rank-" + std::string((size_t)rank + 1, 'x');
    int len = (int)mine.size();
    std::vector<int> lens(size), displs(size);
    MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::partial_sum(lens.begin(), lens.end() - 1, displs.begin() + 1);
    std::string all((size_t)(displs.back() + lens.back()), '?');
    MPI_Allgatherv(mine.data(), len, MPI_CHAR, &all[0], lens.data(), displs.data(), MPI_CHAR,
                   MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        CHECK(all.substr((size_t)displs[r], (size_t)lens[r]) ==
              "rank-" + std::string((size_t)r + 1, 'x'));

    // An error returned under MPI_ERRORS_RETURN turned into an exception.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    bool caught = false;
    try {
        int x = 0, err = MPI_Send(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
        int cls;
        MPI_Error_class(err, &cls);
        if (cls == MPI_ERR_RANK)
            throw std::runtime_error("rank");
    } catch (const std::runtime_error &e) {
        caught = std::string(e.what()) == "rank";
    }
    CHECK(caught);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("mpich_cxx_capi: %d ranks passed\n", size);
    MPI_Finalize();
    return 0;
}
