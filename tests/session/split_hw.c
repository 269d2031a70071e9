/* MPI_Comm_split_type by hardware resource (HW_GUIDED, HW_UNGUIDED) and by
 * process set (RESOURCE_GUIDED), and MPI_Get_hw_resource_info, run unbound and under mpiexec
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

/* The value of key in info ("" when absent). */
static const char *info_value(MPI_Info info, const char *key)
{
    static char v[MPI_MAX_INFO_VAL];
    int flag = 0;
    v[0] = 0;
    MPI_Info_get(info, key, sizeof v - 1, v, &flag);
    return flag ? v : "";
}

/* MPI_Get_hw_resource_info: "hwloc://<type>" keys, "true" where this rank
 * is bound within one instance; each key, as mpi_hw_resource_type, splits
 * as its value says. */
static void hw_resource_info(int bound)
{
    MPI_Info info = MPI_INFO_NULL;
    CHECK_RC(MPI_Get_hw_resource_info(&info));
    if (info == MPI_INFO_NULL)
        return;
    CHECK(strcmp(info_value(info, "hwloc://Package"), "true") == 0,
          "one package holds everyone: Package is \"%s\"", info_value(info, "hwloc://Package"));
    const char *want = bound ? "true" : "false";
    CHECK(strcmp(info_value(info, "hwloc://Core"), want) == 0, "Core is \"%s\", expected %s",
          info_value(info, "hwloc://Core"), want);
    CHECK(strcmp(info_value(info, "hwloc://PU"), want) == 0, "PU is \"%s\", expected %s",
          info_value(info, "hwloc://PU"), want);
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    CHECK(nkeys >= 3, "%d keys", nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        MPI_Info_get_nthkey(info, i, key);
        CHECK(strncmp(key, "hwloc://", 8) == 0, "key \"%s\"", key);
        int restricted = strcmp(info_value(info, key), "true") == 0;
        MPI_Comm c = split(MPI_COMM_TYPE_HW_GUIDED, "mpi_hw_resource_type", key);
        CHECK((c != MPI_COMM_NULL) == restricted, "%s is %s but the split gave %s", key,
              info_value(info, key), c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
    }
    MPI_Info_free(&info);

    /* The answer is for the moment of the call: bound to one CPU now. */
    cpu_set_t old, one;
    sched_getaffinity(0, sizeof old, &old);
    int cpu = 0;
    while (!CPU_ISSET(cpu, &old))
        cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
    CHECK_RC(MPI_Get_hw_resource_info(&info));
    CHECK(strcmp(info_value(info, "hwloc://Core"), "true") == 0, "Core after binding: \"%s\"",
          info_value(info, "hwloc://Core"));
    MPI_Info_free(&info);
    sched_setaffinity(0, sizeof old, &old);
    CHECK_CLASS(MPI_Get_hw_resource_info(NULL), MPI_ERR_ARG, "hw_info");
}

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
    /* Without a pset name, HW_GUIDED's key (MPI-4.1; mpi4py's test_comm). */
    expect_members(split(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_hw_resource_type",
                         "mpi_shared_memory"), everyone, "resource guided, shared memory");
    expect_members(split(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_hw_resource_type", "@no-such@"),
                   nobody, "resource guided, an unknown resource type");
    expect_members(split(MPI_COMM_TYPE_RESOURCE_GUIDED, NULL, NULL), nobody,
                   "resource guided without a key");
    mtest_end();

    mtest_begin("hw_resource_info");
    hw_resource_info(bound);
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
