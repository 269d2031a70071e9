/* A 2-rank allgather, alltoall or allreduce step of 16 KB turns over 16
 * places of the shm region's two slots (core/coll/shm_coll_copy.c): the
 * first such call maps every page of the slots, so the calls after it
 * take no page fault (without the mapping each of the next 15 calls met a
 * new page every 4 KB of its copies). Each call's bytes are checked; the
 * minor faults of 32 calls after the first are counted per collective,
 * each on a communicator of its own (a region of its own). */
#include "../mpi/mtest.h"

#include <sys/resource.h>

enum { BLOCK = 16384, N = BLOCK / (int)sizeof(int), CALLS = 32, MOST_FAULTS = 8 };

/* AddressSanitizer maps the shadow of the slots at their first access,
 * page faults of its own: the bytes are checked there, the count not. */
#if defined(__SANITIZE_ADDRESS__)
#define COUNT_FAULTS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNT_FAULTS 0
#endif
#endif
#ifndef COUNT_FAULTS
#define COUNT_FAULTS 1
#endif

static int rank;

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

static int val(int q, int call, int i) { return call * 7919 + q * 104729 + i; }

/* kind 0 allgather, 1 alltoall, 2 allreduce: call `call` on comm, checked. */
static int one_call(MPI_Comm comm, int kind, int call, int *s, int *r)
{
    for (int i = 0; i < 2 * N; i++)
        s[i] = val(rank, call, i);
    if (kind == 0)
        CHECK_RC(MPI_Allgather(s, N, MPI_INT, r, N, MPI_INT, comm));
    else if (kind == 1)
        CHECK_RC(MPI_Alltoall(s, N, MPI_INT, r, N, MPI_INT, comm));
    else
        CHECK_RC(MPI_Allreduce(s, r, N, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < (kind == 2 ? N : 2 * N); i++) {
        int q = i / N, want = kind == 0   ? val(q, call, i % N)
                             : kind == 1 ? val(q, call, rank * N + i % N)
                                         : val(0, call, i) + val(1, call, i);
        if (r[i] != want) {
            CHECK(0, "kind %d call %d: element %d is %d, not %d", kind, call, i, r[i], want);
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        FATAL("run with 2 ranks");
    int *s = malloc(2 * BLOCK), *r = malloc(2 * BLOCK);
    if (!s || !r)
        FATAL("out of memory");
    static const char *names[] = {"allgather", "alltoall", "allreduce"};
    for (int kind = 0; kind < 3; kind++) {
        mtest_begin(names[kind]);
        MPI_Comm comm;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        int ok = one_call(comm, kind, 0, s, r);
        memset(r, 0, 2 * BLOCK); /* our own buffers' pages mapped before counting */
        CHECK_RC(MPI_Barrier(comm));
        long before = minor_faults();
        for (int call = 1; call <= CALLS && ok; call++)
            ok = one_call(comm, kind, call, s, r);
        long faults = minor_faults() - before;
        CHECK(!COUNT_FAULTS || faults <= MOST_FAULTS,
              "%s: %ld page faults in %d calls after the first (at most %d)", names[kind], faults,
              CALLS, MOST_FAULTS);
        CHECK_RC(MPI_Comm_free(&comm));
        mtest_end();
    }
    free(s);
    free(r);
    return mtest_finalize();
}
