// MPI's C++ bindings (MPI::, removed in MPI-3.0 but still in MPICH) built
// with Debian's mpicxx.mpich: the program links MPICH's own
// libmpichcxx.so.12, which runs over Tern's libmpich.so.12 and calls the
// program's C++ callbacks through the face's three hooks (MPII_*, src/mpich/
// mpich_abi.c): a user op, a communicator error handler, a keyval's copy and
// delete functions. Also point-to-point with MPI::Status, a derived type, and
// a C call in the same program. Checks that the libmpich.so.12 in the
// process is Tern's (argv[1]: its directory).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits.h>
#include <stdlib.h>
#include <string>

#define CHECK(c)                                                                           \
    do {                                                                                   \
        if (!(c)) {                                                                        \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);    \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

static int rank, size;

static void check_loaded(const char *dir)
{
    std::string want = std::string(dir) + "/libmpich.so.12";
    char *real = realpath(want.c_str(), NULL);
    FILE *f = std::fopen("/proc/self/maps", "r");
    CHECK(f && real);
    char line[4096];
    int tern = 0, other = 0, cxx = 0;
    while (std::fgets(line, sizeof line, f)) {
        char *path = std::strchr(line, '/');
        if (!path)
            continue;
        path[std::strcspn(path, "\n")] = '\0';
        if (std::strstr(path, "libmpichcxx.so"))
            cxx = 1;
        else if (std::strstr(path, "libmpich.so"))
            (std::strcmp(path, real) ? other : tern) = 1;
    }
    std::fclose(f);
    std::free(real);
    CHECK(tern && !other && cxx);
}

// inout = in + inout + 1: commutative and associative, so n ranks give
// the sum plus n - 1 whatever the order.
static int op_calls;
static void plus_one(const void *in, void *inout, int len, const MPI::Datatype &dt)
{
    CHECK(dt == MPI::INT);
    op_calls++;
    for (int i = 0; i < len; i++)
        ((int *)inout)[i] += ((const int *)in)[i] + 1;
}

static int eh_calls, eh_code;
static void on_error(MPI::Comm &comm, int *code, ...)
{
    CHECK(comm.Get_size() == size);
    eh_calls++;
    eh_code = *code;
}

static int copies, deletes;
static int copy_attr(const MPI::Comm &old, int keyval, void *extra, void *in, void *out,
                     bool &flag)
{
    (void)keyval;
    CHECK(old.Get_size() == size && *(int *)extra == 42);
    copies++;
    *(void **)out = (char *)in + 1;
    flag = true;
    return MPI::SUCCESS;
}

static int delete_attr(MPI::Comm &comm, int keyval, void *value, void *extra)
{
    (void)keyval;
    (void)value;
    CHECK(comm.Get_size() == size && *(int *)extra == 42);
    deletes++;
    return MPI::SUCCESS;
}

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    CHECK(argc > 1);
    check_loaded(argv[1]);
    rank = MPI::COMM_WORLD.Get_rank();
    size = MPI::COMM_WORLD.Get_size();
    int crank;
    MPI_Comm_rank(MPI_COMM_WORLD, &crank);
    CHECK(crank == rank);

    // Point-to-point around a ring, with the status's fields.
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[3] = {rank, 10 * rank, 100 * rank}, in[3] = {-1, -1, -1};
    MPI::Status st;
    MPI::COMM_WORLD.Sendrecv(out, 3, MPI::INT, next, 7, in, 3, MPI::INT, MPI::ANY_SOURCE,
                             MPI::ANY_TAG, st);
    CHECK(st.Get_source() == prev && st.Get_tag() == 7 && st.Get_count(MPI::INT) == 3);
    CHECK(in[0] == prev && in[1] == 10 * prev && in[2] == 100 * prev);

    // A derived type broadcast from the last rank.
    MPI::Datatype three = MPI::INT.Create_contiguous(3);
    three.Commit();
    CHECK(three.Get_size() == 3 * (int)sizeof(int));
    int b[6] = {0};
    if (rank == size - 1)
        for (int i = 0; i < 6; i++)
            b[i] = i + 1;
    MPI::COMM_WORLD.Bcast(b, 2, three, size - 1);
    for (int i = 0; i < 6; i++)
        CHECK(b[i] == i + 1);
    three.Free();

    // A user op: the C++ function is called with a C++ datatype.
    MPI::Op op;
    op.Init(plus_one, true);
    int v[2] = {rank, 1}, r[2];
    MPI::COMM_WORLD.Allreduce(v, r, 2, MPI::INT, op);
    CHECK(r[0] == size * (size - 1) / 2 + size - 1 && r[1] == 2 * size - 1);
    CHECK(size == 1 || op_calls > 0);
    op.Free();

    // An error handler on a duplicate of MPI::COMM_WORLD.
    MPI::Intracomm comm = MPI::COMM_WORLD.Dup();
    MPI::Errhandler eh = MPI::Comm::Create_errhandler(on_error);
    comm.Set_errhandler(eh);
    comm.Call_errhandler(MPI::ERR_OTHER);
    CHECK(eh_calls == 1 && eh_code == MPI::ERR_OTHER);
    // A real error: the handler sees MPI_ERR_RANK's code (C++'s wrapper
    // calls it again with the code it got back: MPICH's binding does so).
    int x = 0;
    comm.Send(&x, 1, MPI::INT, size + 3, 0);
    CHECK(eh_calls >= 2 && MPI::Get_error_class(eh_code) == MPI::ERR_RANK);
    eh.Free();

    // Attributes: a copy function on Dup, delete functions on Free and
    // Delete_attr.
    static int extra = 42;
    int kv = MPI::Comm::Create_keyval(copy_attr, delete_attr, &extra);
    static char value[2];
    comm.Set_attr(kv, value);
    MPI::Intracomm dup = comm.Dup();
    CHECK(copies == 1);
    void *got = NULL;
    CHECK(dup.Get_attr(kv, &got) && got == value + 1);
    dup.Free();
    CHECK(deletes == 1);
    comm.Delete_attr(kv);
    CHECK(deletes == 2);
    MPI::Comm::Free_keyval(kv);
    comm.Free();

    MPI::COMM_WORLD.Barrier();
    if (rank == 0)
        std::printf("mpich_cxx: %d ranks passed\n", size);
    MPI::Finalize();
    return 0;
}
