/* Floods of unexpected messages, checked for correctness (memory bounds are
 * flood_memory's business):
 * - every rank but 0 sends 10000 messages (fewer above 4 ranks) of 64 B to rank 0, which sleeps 1 s
 *   before receiving them, source by source, in order;
 * - the same again, received with MPI_ANY_SOURCE (per-source order checked);
 * - rank 1 posts 200 nonblocking 64 KB sends to rank 0, which sleeps 1 s and
 *   then receives them in order. */
#include "../mpi/mtest.h"

enum { SMALL = 64, NBIG = 200, BIG = 64 * 1024 };
/* 10000 per sender; above 4 ranks (oversubscribed on small machines) the
 * total is capped at 30000 so the test stays short. */
static int NSMALL = 10000;

static void small_flood(int any_source)
{
    mtest_begin(any_source ? "flood_small_any_source" : "flood_small");
    unsigned char buf[SMALL];
    if (mtest_rank == 0) {
        mtest_sleep(1.0);
        if (!any_source) {
            for (int src = 1; src < mtest_size; src++)
                for (int i = 0; i < NSMALL; i++) {
                    MPI_Status st;
                    CHECK_RC(MPI_Recv(buf, SMALL, MPI_BYTE, src, 1, MPI_COMM_WORLD, &st));
                    long long bad = mtest_verify(buf, SMALL, (uint32_t)(src * NSMALL + i));
                    if (bad >= 0 || st.MPI_SOURCE != src) {
                        CHECK(0, "message %d from %d: wrong data (byte %lld) or source %d", i, src, bad, st.MPI_SOURCE);
                        src = mtest_size;
                        break;
                    }
                }
        } else {
            int *next = calloc((size_t)mtest_size, sizeof(int));
            for (int k = 0; k < NSMALL * (mtest_size - 1); k++) {
                MPI_Status st;
                CHECK_RC(MPI_Recv(buf, SMALL, MPI_BYTE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st));
                int src = st.MPI_SOURCE;
                if (src <= 0 || src >= mtest_size || next[src] >= NSMALL ||
                    mtest_verify(buf, SMALL, (uint32_t)(src * NSMALL + next[src])) >= 0) {
                    CHECK(0, "message %d: source %d, expected sequence %d from it: wrong data or order", k, src,
                          src > 0 && src < mtest_size ? next[src] : -1);
                    break;
                }
                next[src]++;
            }
            free(next);
        }
    } else {
        for (int i = 0; i < NSMALL; i++) {
            mtest_fill(buf, SMALL, (uint32_t)(mtest_rank * NSMALL + i));
            CHECK_RC(MPI_Send(buf, SMALL, MPI_BYTE, 0, any_source ? 2 : 1, MPI_COMM_WORLD));
        }
    }
    mtest_end();
}

static void big_flood(void)
{
    mtest_begin("flood_big");
    if (mtest_rank == 1) {
        char *bufs = malloc((size_t)NBIG * BIG);
        MPI_Request *reqs = malloc(NBIG * sizeof(MPI_Request));
        for (int i = 0; i < NBIG; i++) {
            mtest_fill(bufs + (size_t)i * BIG, BIG, (uint32_t)(77 + i));
            CHECK_RC(MPI_Isend(bufs + (size_t)i * BIG, BIG, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &reqs[i]));
        }
        CHECK_RC(MPI_Waitall(NBIG, reqs, MPI_STATUSES_IGNORE));
        free(bufs);
        free(reqs);
    } else if (mtest_rank == 0) {
        char *buf = malloc(BIG);
        mtest_sleep(1.0);
        for (int i = 0; i < NBIG; i++) {
            MPI_Status st;
            char what[64];
            snprintf(what, sizeof what, "64 KB message %d", i);
            CHECK_RC(MPI_Recv(buf, BIG, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, 1, 3, BIG, what);
            CHECK_PATTERN(buf, BIG, (uint32_t)(77 + i), what);
        }
        free(buf);
    }
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    if (mtest_size < 2) {
        if (mtest_rank == 0)
            printf("p2p_flood needs 2 ranks: nothing to do\n");
        return mtest_finalize();
    }
    if (mtest_size > 4)
        NSMALL = 30000 / (mtest_size - 1);
    small_flood(0);
    small_flood(1);
    big_flood();
    return mtest_finalize();
}
