/* MPI starts again in a process (MPI-4.1 11.3: sessions may be initialized
 * any number of times): 100 cycles of MPI_Session_init, a communicator from
 * mpi://WORLD, an allreduce and a ring sendrecv on it, MPI_Comm_free,
 * MPI_Session_finalize, each the last session, so MPI ends and starts
 * again every cycle. Between the end of the warm-up cycles and the end of
 * the last (MPI down at both) the open file descriptors must not grow and
 * the heap in use (mallinfo2) by less than 64 KB (over ofi alone: see below) (without ASan, whose allocator keeps freed memory; LSan
 * checks leaks there); at the end no /dev/shm file of the job is left.
 *   sessions:    the cycles alone
 *   after-world: MPI_Init, MPI_Finalize first (MPI_Init may not come again,
 *                sessions may), then the cycles
 *   nested:      each cycle also opens a second session while the first
 *                runs and finalizes it first (only the last one ends MPI) */
#include "stest.h"

#include <dirent.h>
#include <malloc.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

enum { CYCLES = 100, WARMUP = 10 };

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Files in /dev/shm that name the job (Tern's mpiexec sets TERN_JOBID,
 * which the segment names carry). */
static int count_shm(void)
{
    const char *job = getenv("TERN_JOBID");
    DIR *d = opendir("/dev/shm");
    int n = 0;
    if (!d || !job)
        return d ? (closedir(d), 0) : 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, job)) {
            fprintf(stderr, "left in /dev/shm: %s\n", e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

static void communicate(MPI_Session s, int cycle)
{
    MPI_Group g;
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_RC(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    CHECK_RC(MPI_Comm_create_from_group(g, "tern.test.restart", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &c));
    MPI_Group_free(&g);
    if (c == MPI_COMM_NULL)
        return;
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int v = rank + cycle, sum = -1;
    CHECK_RC(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2 + size * cycle, "cycle %d: allreduce gave %d", cycle, sum);
    int to = (rank + 1) % size, from = (rank + size - 1) % size, got = -1;
    int out[64];
    for (int i = 0; i < 64; i++)
        out[i] = rank * 1000 + cycle;
    int in[64];
    CHECK_RC(MPI_Sendrecv(out, 64, MPI_INT, to, cycle, in, 64, MPI_INT, from, cycle, c,
                          MPI_STATUS_IGNORE));
    got = in[63];
    CHECK(got == from * 1000 + cycle, "cycle %d: sendrecv from %d gave %d", cycle, from, got);
    CHECK_RC(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    stest_watchdog();
    alarm(200);
    const char *mode = argc > 1 ? argv[1] : "sessions";
    stest_where = mode;
    if (strcmp(mode, "after-world") == 0) {
        MPI_Init(NULL, NULL);
        int sum = 0, one = 1;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK_RC(MPI_Finalize());
    }
    int nested = strcmp(mode, "nested") == 0;
    int fds0 = -1;
    size_t heap0 = 0;
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        if (cycle == WARMUP) {
            fds0 = count_fds();
            heap0 = mallinfo2().uordblks;
        }
        MPI_Session s = MPI_SESSION_NULL, s2 = MPI_SESSION_NULL;
        int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
        CHECK(rc == MPI_SUCCESS, "cycle %d: MPI_Session_init returned %d (%s)", cycle, rc,
              stest_errstr(rc));
        if (rc != MPI_SUCCESS)
            break;
        if (nested)
            CHECK_RC(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
        communicate(s, cycle);
        if (nested) {
            communicate(s2, cycle);
            CHECK_RC(MPI_Session_finalize(&s2));
        }
        rc = MPI_Session_finalize(&s);
        CHECK(rc == MPI_SUCCESS, "cycle %d: MPI_Session_finalize returned %d", cycle, rc);
    }
    /* MPI is down again, as it was when the counts were taken. */
    int fds = count_fds();
    CHECK(fds == fds0, "open file descriptors: %d after %d cycles, %d after %d", fds0, WARMUP,
          fds, CYCLES);
    size_t heap = mallinfo2().uordblks;
    /* Over the network transport alone, libfabric's tcp provider (Debian's
     * 1.17) keeps about 1.3 KB per endpoint it opened after fi_close (its
     * connection handling's fi_dupinfo copies and endpoint state, found
     * with heaptrack): a fixed allowance per cycle for it. */
    const char *tls = getenv("TERN_TRANSPORTS");
    size_t allowed = tls && strcmp(tls, "ofi") == 0 ? 4096 * (CYCLES - WARMUP) : 65536;
    if (!UNDER_ASAN)
        CHECK(heap < heap0 + allowed, "heap in use grew from %zu to %zu bytes over %d cycles",
              heap0, heap, CYCLES - WARMUP);
    /* Every process has finalized: the job's shared memory is gone. */
    CHECK(count_shm() == 0, "files of the job left in /dev/shm");
    if (stest_errors)
        fprintf(stderr, "session_restart %s: %d checks failed\n", mode, stest_errors);
    else
        printf("session_restart %s: ok\n", mode);
    return stest_errors ? 1 : 0;
}
