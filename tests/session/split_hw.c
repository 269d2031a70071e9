/* MPI_Comm_split_type by hardware resource (HW_GUIDED, HW_UNGUIDED) and by
 * process set (RESOURCE_GUIDED), run unbound and under mpiexec
 * --bind-to core. The expectations are computed from each rank's CPU
 * affinity, for a machine like this one: one node, one package, one L3,
 * an L2 per core (on a machine with several packages the unbound Package
 * split would give MPI_COMM_NULL). */
#include "../mpi/mtest.h"

#include <sched.h>

static int my_cpu = -1; /* the one CPU this rank may run on, or -1 */
static int *cpus;       /* every rank's */

static void read_binding(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    if (CPU_COUNT(&set) == 1)
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set))
                my_cpu = i;
    cpus = malloc((size_t)mtest_size * sizeof *cpus);
    MPI_Allgather(&my_cpu, 1, MPI_INT, cpus, 1, MPI_INT, MPI_COMM_WORLD);
}

static MPI_Comm split(int type, const char *key, const char *value)
{
    MPI_Info info = MPI_INFO_NULL;
    if (key) {
        MPI_Info_create(&info);
        MPI_Info_set(info, key, value);
    }
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, type, mtest_rank, info, &c));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return c;
}

/* c holds exactly the world ranks for which member(r) is true, in order. */
static void expect_members(MPI_Comm c, int (*member)(int), const char *what)
{
    int want = 0;
    for (int r = 0; r < mtest_size; r++)
        want += member(r);
    if (!want) {
        CHECK(c == MPI_COMM_NULL, "%s: a communicator where MPI_COMM_NULL was expected", what);
        return;
    }
    CHECK(c != MPI_COMM_NULL, "%s: MPI_COMM_NULL, expected %d ranks", what, want);
    if (c == MPI_COMM_NULL)
        return;
    int n, rank;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &rank);
    CHECK_INT(n, want, what);
    int below = 0;
    for (int r = 0; r < mtest_rank; r++)
        below += member(r);
    CHECK_INT(rank, below, what);
    MPI_Comm_free(&c);
}

static int everyone(int r) { (void)r; return 1; }
static int only_me(int r) { return r == mtest_rank; }
static int nobody(int r) { (void)r; return 0; }
/* Ranks on my CPU when bound; nobody when unbound (several cores). */
static int same_cpu(int r) { return my_cpu >= 0 && cpus[r] == my_cpu; }

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    read_binding();
    int bound = my_cpu >= 0;

    mtest_begin("hw_guided");
    expect_members(split(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "mpi_shared_memory"),
                   everyone, "mpi_shared_memory");
    expect_members(split(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "Machine"), everyone,
                   "Machine");
    expect_members(split(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "Package"), everyone,
                   "Package");
    expect_members(split(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "NUMANode"), everyone,
                   "NUMANode");
    expect_members(split(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "L3Cache"), everyone,
                   "L3Cache");
    expect_members(split(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "Core"), same_cpu,
                   "Core");
    expect_members(split(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "HWThread"), same_cpu,
                   "HWThread");
    expect_members(split(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", "Flux capacitor"),
                   nobody, "an unknown resource");
    expect_members(split(MPI_COMM_TYPE_HW_GUIDED, NULL, NULL), nobody, "no info");
    mtest_end();

    mtest_begin("hw_unguided");
    /* Node, package, NUMA node and L3 hold everyone: L2 is the first
     * level that splits, and only bound ranks have one. */
    expect_members(split(MPI_COMM_TYPE_HW_UNGUIDED, NULL, NULL), same_cpu, "unguided");
    (void)bound;
    mtest_end();

    mtest_begin("resource_guided");
    expect_members(split(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "mpi://WORLD"),
                   everyone, "mpi://WORLD");
    expect_members(split(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "mpi://SELF"), only_me,
                   "mpi://SELF");
    expect_members(split(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "tern://node"),
                   everyone, "tern://node");
    expect_members(split(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", "mpi://nothing"),
                   nobody, "an unknown pset");
    mtest_end();

    mtest_begin("split_type errors");
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 99, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG,
                "split_type 99");
    expect_members(split(MPI_UNDEFINED, NULL, NULL), nobody, "MPI_UNDEFINED");
    mtest_end();
    free(cpus);
    return mtest_finalize();
}
