/* The shared file pointer's life (src/core/io/io_shared.h): made by the
 * first rank that uses it, gone at close. Files opened and closed in a
 * loop, with and without the pointer used, leave no descriptor and no
 * /dev/shm name of this job behind; a file opened again on a communicator
 * that gets the same context id starts its pointer at 0; seek_shared and
 * ordered access before any independent use, set_view's reset and
 * MPI_MODE_APPEND's start place the pointer where the standard says. */
#include "../mpi/mtest.h"

#include <dirent.h>
#include <sys/stat.h>

#define LOOPS 64

static int rank, size;
static char dir[256];

static void fname(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "%s/%s.dat", dir, tag);
}

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* This job's shared-pointer words in /dev/shm (-1: the launcher gave no
 * TERN_JOBID, so they cannot be told from other jobs'). */
static int words_left(void)
{
    const char *job = getenv("TERN_JOBID");
    if (!job)
        return -1;
    char prefix[300];
    snprintf(prefix, sizeof prefix, "tern-%s-sp-", job);
    int n = 0;
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* Whether every rank is on this node: across nodes the transport opens
 * connections to peers lazily (a few descriptors that stay), so there a
 * leak shows only as a descriptor per open. */
static int one_node;

static void check_nothing_left(int fds_before, const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    int fds = open_fds(), slack = one_node ? 0 : LOOPS / 2;
    CHECK(fds <= fds_before + slack, "%s: %d descriptors open, %d before", what, fds,
          fds_before);
    int left = words_left();
    CHECK(left <= 0, "%s: %d shared-pointer words left in /dev/shm", what, left);
}

static void test_open_loop(void)
{
    mtest_begin("open and close in a loop");
    char path[512];
    fname(path, sizeof path, "loop");
    /* One open first: the transport may connect to peers on other nodes
     * lazily, and those descriptors stay. */
    MPI_File warm;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &warm));
    CHECK_RC(MPI_File_close(&warm));
    int fds = open_fds();
    for (int i = 0; i < LOOPS; i++) {
        MPI_File fh;
        CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &fh));
        CHECK_RC(MPI_File_close(&fh));
    }
    check_nothing_left(fds, "opens without the shared pointer");
    /* Every rank moves the pointer in every open: each open starts at 0
     * (the same context id comes back, its word must not). */
    for (int i = 0; i < LOOPS; i++) {
        MPI_File fh;
        MPI_Offset pos = -1;
        int rec = rank;
        CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &fh));
        CHECK_RC(MPI_File_get_position_shared(fh, &pos));
        CHECK(pos == 0, "open %d: the shared pointer starts at %lld", i, (long long)pos);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(MPI_File_write_shared(fh, &rec, 1, MPI_INT, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(MPI_File_get_position_shared(fh, &pos));
        CHECK(pos == 4LL * size, "open %d: after a write by each rank %lld", i, (long long)pos);
        CHECK_RC(MPI_File_close(&fh));
    }
    check_nothing_left(fds, "opens that used the shared pointer");
    if (rank == 0)
        CHECK(unlink(path) == 0, "unlink %s", path);
    mtest_end();
}

static void test_collective_first(void)
{
    mtest_begin("seek_shared and ordered before any use");
    char path[512];
    fname(path, sizeof path, "first");
    int fds = open_fds();
    MPI_File fh;
    MPI_Offset pos = -1;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    /* seek_shared is the first use: every rank sees where it went. */
    CHECK_RC(MPI_File_seek_shared(fh, 12, MPI_SEEK_SET));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 12, "after seek_shared to 12: %lld", (long long)pos);
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_close(&fh));
    /* Ordered access is the first use: rank order from 0. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    int mine[2] = {rank, rank}, all[128];
    CHECK_RC(MPI_File_write_ordered(fh, mine, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 8LL * size, "after write_ordered %lld", (long long)pos);
    CHECK_RC(MPI_File_read_at_all(fh, 0, all, 2 * size, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * size; i++)
        CHECK(all[i] == i / 2, "write_ordered: int %d is %d", i, all[i]);
    /* set_view puts the pointer back at 0, in etypes of the new view. */
    CHECK_RC(MPI_File_set_view(fh, 4, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 0, "after set_view %lld", (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has looked before rank 0 moves it */
    int one = -1;
    if (rank == 0)
        CHECK_RC(MPI_File_read_shared(fh, &one, 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Bcast(&one, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(one == 0, "the first int of the view (the file's second) is %d, not 0", one);
    CHECK_RC(MPI_File_close(&fh));
    check_nothing_left(fds, "seek_shared and ordered");
    mtest_end();
}

static void test_append(void)
{
    mtest_begin("MPI_MODE_APPEND");
    char path[512];
    fname(path, sizeof path, "append");
    if (rank == 0) {
        FILE *fp = fopen(path, "w");
        REQUIRE(fp && fwrite("0123456789", 1, 10, fp) == 10 && fclose(fp) == 0, "write %s", path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    MPI_Offset pos = -1;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path,
                           MPI_MODE_WRONLY | MPI_MODE_APPEND | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 10, "the shared pointer of an appending open starts at %lld", (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_write_shared(fh, "x", 1, MPI_CHAR, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset fsize = 0;
    CHECK_RC(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 10 + size, "size after a byte from each rank %lld", (long long)fsize);
    CHECK_RC(MPI_File_close(&fh));
    mtest_end();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mtest_watchdog(120);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_rank = rank;
    mtest_size = size;
    if (size > 64)
        FATAL("at most 64 ranks");
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    one_node = node_size == size;
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "io_shared_%d", pid);
    if (rank == 0)
        mkdir(dir, 0777);
    MPI_Barrier(MPI_COMM_WORLD);
    test_open_loop();
    test_collective_first();
    test_append();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(rmdir(dir) == 0, "every file was removed (rmdir %s)", dir);
    return mtest_finalize();
}
