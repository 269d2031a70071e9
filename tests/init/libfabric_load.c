/* libfabric is loaded only by jobs that need the network (ofi_lib.c): its
 * Debian build costs ~200 ms of constructors at load. The test reads
 * /proc/self/maps after MPI_Init and a message round, and checks libfabric
 * is mapped exactly when TERN_TEST_EXPECT_LIBFABRIC=1 says it should be
 * (set by CMake: 0 for a job on one host, 1 with TERN_TRANSPORTS=self,ofi).
 * Loaded or not, the signals' dispositions are those the program had before
 * MPI_Init: Debian's libinfinipath, under libfabric, otherwise catches
 * SIGTERM and the crash signals (ofi_lib.c). */
#include "../mpi/mtest.h"

#include <signal.h>

static const int watched[] = {SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGILL, SIGABRT};
#define N_WATCHED (int)(sizeof watched / sizeof watched[0])

static void dispositions(void (*out[N_WATCHED])(int))
{
    for (int i = 0; i < N_WATCHED; i++) {
        struct sigaction sa;
        sigaction(watched[i], NULL, &sa);
        out[i] = sa.sa_handler;
    }
}

static int libfabric_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[4096];
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "/libfabric.so"))
            found = 1;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    void (*before[N_WATCHED])(int), (*after[N_WATCHED])(int);
    dispositions(before);
    mtest_init(&argc, &argv);
    mtest_begin("libfabric_load");
    const char *want_s = getenv("TERN_TEST_EXPECT_LIBFABRIC");
    CHECK(want_s != NULL, "TERN_TEST_EXPECT_LIBFABRIC not set");
    int want = want_s ? atoi(want_s) : -1;
    /* A message to each neighbour, so a lazily connected network is used. */
    int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    int got = -1;
    CHECK_RC(MPI_Sendrecv(&mtest_rank, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_INT(got, left, "value from the left neighbour");
    int mapped = libfabric_mapped();
    CHECK(mapped >= 0, "cannot read /proc/self/maps");
    CHECK(mapped == want, "libfabric %s mapped, expected %s", mapped ? "is" : "is not",
          want ? "mapped (the job uses ofi)" : "not mapped (one host, shm)");
    dispositions(after);
    for (int i = 0; i < N_WATCHED; i++)
        CHECK(after[i] == before[i], "signal %d (%s) has another handler after MPI_Init", watched[i],
              strsignal(watched[i]));
    mtest_end();
    return mtest_finalize();
}
