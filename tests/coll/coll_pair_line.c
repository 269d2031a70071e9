/* The 2-rank exchange line (core/coll/pair_line.h): allreduce, allgather,
 * alltoall and reduce_scatter_block (a segment) of up to 272 bytes go
 * through one to five lines each way
 * whose sequence numbers tell the reader the data is this call's.
 * Back-to-back calls with values that change every call (a stale line
 * gives last call's or the call before's), the four kinds interleaved,
 * sizes either side of each line's end (48, 104, 160, 216, 272 bytes;
 * the larger ones are point-to-point messages), other collectives and
 * nonblocking ones between them, in place or not, and two communicators
 * over the same two ranks used in turn (each has its own region and
 * sequence). Runs on communicators of two ranks split from the world (np
 * 2 and 4). */
#include "../mpi/mtest.h"

static int rank;

static long v(int q, int call, int i) { return (long)call * 1009 + q * 101 + i * 7 + 3; }

/* n longs (8..280 bytes) exchanged four ways on comm; 0 on a wrong value. */
static int round_of(MPI_Comm comm, int call, int n, int inplace)
{
    long s[40], r[40], want;
    int peer = 1 - rank;
    for (int i = 0; i < n; i++)
        s[i] = r[i] = v(rank, call, i);
    CHECK_RC(MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, n, MPI_LONG, MPI_SUM, comm));
    for (int i = 0; i < n; i++)
        if (r[i] != (want = v(0, call, i) + v(1, call, i))) {
            CHECK(0, "allreduce call %d n %d [%d]: %ld, want %ld", call, n, i, r[i], want);
            return 0;
        }
    /* allgather: block q is rank q's n longs. */
    long g[80];
    for (int i = 0; i < n; i++)
        g[rank * n + i] = s[i] = v(rank, call + 1, i);
    CHECK_RC(MPI_Allgather(inplace ? MPI_IN_PLACE : s, n, MPI_LONG, g, n, MPI_LONG, comm));
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < n; i++)
            if (g[q * n + i] != (want = v(q, call + 1, i))) {
                CHECK(0, "allgather call %d n %d block %d [%d]: %ld, want %ld", call, n, q, i,
                      g[q * n + i], want);
                return 0;
            }
    /* alltoall: rank q's block for rank d is v(q * 2 + d, ...). */
    long a[80], b[80];
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < n; i++)
            a[d * n + i] = b[d * n + i] = v(rank * 2 + d, call + 2, i);
    CHECK_RC(MPI_Alltoall(inplace ? MPI_IN_PLACE : a, n, MPI_LONG, b, n, MPI_LONG, comm));
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < n; i++)
            if (b[q * n + i] != (want = v(q * 2 + rank, call + 2, i))) {
                CHECK(0, "alltoall call %d n %d from %d [%d]: %ld, want %ld (peer %d)", call, n,
                      q, i, b[q * n + i], want, peer);
                return 0;
            }
    /* reduce_scatter_block: 2n longs a rank, this rank's n summed. */
    for (int i = 0; i < 2 * n; i++)
        a[i] = b[i] = v(rank, call + 3, i);
    CHECK_RC(MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : a, b, n, MPI_LONG, MPI_SUM, comm));
    for (int i = 0; i < n; i++)
        if (b[i] != (want = v(0, call + 3, rank * n + i) + v(1, call + 3, rank * n + i))) {
            CHECK(0, "reduce_scatter_block call %d n %d [%d]: %ld, want %ld", call, n, i, b[i],
                  want);
            return 0;
        }
    return 1;
}

/* Another kind of collective between the exchanges. */
static void other(MPI_Comm comm, int call)
{
    int x = call + rank, y = -1;
    switch (call % 5) {
    case 0:
        CHECK_RC(MPI_Barrier(comm));
        break;
    case 1:
        CHECK_RC(MPI_Bcast(&x, 1, MPI_INT, call % 2, comm));
        CHECK_INT(x, call + call % 2, "bcast between exchanges");
        break;
    case 2: {
        MPI_Request req;
        CHECK_RC(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &req));
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_INT(y, 2 * call + 1, "iallreduce between exchanges");
        break;
    }
    case 3:
        CHECK_RC(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_MAX, 0, comm));
        if (rank == 0)
            CHECK_INT(y, call + 1, "reduce between exchanges");
        break;
    default:
        break; /* exchanges back to back */
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize % 2)
        FATAL("run with an even number of ranks");
    MPI_Comm c[2];
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wrank / 2, wrank, &c[0]));
    MPI_Comm_rank(c[0], &rank);
    /* The same two ranks again: a region and a sequence of its own. */
    CHECK_RC(MPI_Comm_split(c[0], 0, rank, &c[1]));
    /* Longs: 1 and 6 on one line (8, 48 bytes), 7, 8 and 13 on two (56,
     * 64, 104), 14 and 20 on three (112, 160), 27 on four (216), 28 and
     * 34 on five (224, 272), 35 (280) not on the line. */
    static const int ns[] = {1, 6, 7, 13, 14, 27, 28, 8, 34, 35, 20, 32};
    mtest_begin("back_to_back");
    int ok = 1;
    for (int call = 0; call < 600 && ok; call++)
        ok = round_of(c[0], call * 4, 1, call % 3 == 2);
    mtest_end();
    mtest_begin("back_to_back_wide");
    for (int call = 0; call < 600 && ok; call++)
        ok = round_of(c[0], call * 4, call % 2 ? 34 : 8, call % 3 == 2);
    mtest_end();
    mtest_begin("mixed");
    for (int call = 0; call < 2000 && ok; call++) {
        MPI_Comm comm = c[(call / 3) % 2];
        ok = round_of(comm, call * 4, ns[call % 12], (call / 12) % 2);
        other(c[call % 2], call);
    }
    mtest_end();
    CHECK_RC(MPI_Comm_free(&c[1]));
    CHECK_RC(MPI_Comm_free(&c[0]));
    return mtest_finalize();
}
