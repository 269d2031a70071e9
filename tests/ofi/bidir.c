/* Rendezvous traffic in both directions at once between every pair of
 * ranks: each rank posts a window of receives from every peer and sends a
 * window to every peer, of sizes from 64 KB + 1 (just above the eager size
 * over TCP) to 3 MB + 5 (several RDMA-read chunks), then checks every byte
 * and count. Over the ofi transport each message is an RDMA read of the
 * sender's buffer; with TERN_OFI_RMA_EP=1 the reads leave on a second
 * endpoint, so each direction's data takes its own connection. */
#include "../mpi/mtest.h"

#define WINDOW 6

static const size_t sizes[] = {65537, 131072, 524296, 1048576, 3145733};

static uint32_t seed_of(int src, int dst, int size_i, int k)
{
    return (uint32_t)(src * 1000003 + dst * 10007 + size_i * 101 + k + 1);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_watchdog(240);
    int n_peers = mtest_size - 1;
    int per_size = n_peers * WINDOW;
    size_t max = sizes[sizeof sizes / sizeof sizes[0] - 1];
    unsigned char **sbuf = malloc((size_t)per_size * sizeof *sbuf);
    unsigned char **rbuf = malloc((size_t)per_size * sizeof *rbuf);
    MPI_Request *req = malloc(2 * (size_t)per_size * sizeof *req);
    REQUIRE(sbuf && rbuf && req, "out of memory");
    for (int i = 0; i < per_size; i++) {
        sbuf[i] = malloc(max);
        rbuf[i] = malloc(max);
        REQUIRE(sbuf[i] && rbuf[i], "out of memory");
    }

    mtest_begin("bidir_windows");
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++) {
        size_t n = sizes[s];
        int nreq = 0;
        for (int p = 0, slot = 0; p < mtest_size; p++) {
            if (p == mtest_rank)
                continue;
            for (int k = 0; k < WINDOW; k++, slot++) {
                memset(rbuf[slot], 0, n);
                CHECK_RC(MPI_Irecv(rbuf[slot], (int)n, MPI_BYTE, p, s * WINDOW + k,
                                   MPI_COMM_WORLD, &req[nreq++]));
            }
        }
        for (int p = 0, slot = 0; p < mtest_size; p++) {
            if (p == mtest_rank)
                continue;
            for (int k = 0; k < WINDOW; k++, slot++) {
                mtest_fill(sbuf[slot], n, seed_of(mtest_rank, p, s, k));
                CHECK_RC(MPI_Isend(sbuf[slot], (int)n, MPI_BYTE, p, s * WINDOW + k,
                                   MPI_COMM_WORLD, &req[nreq++]));
            }
        }
        MPI_Status *st = malloc((size_t)nreq * sizeof *st);
        REQUIRE(st, "out of memory");
        CHECK_RC(MPI_Waitall(nreq, req, st));
        for (int p = 0, slot = 0; p < mtest_size; p++) {
            if (p == mtest_rank)
                continue;
            for (int k = 0; k < WINDOW; k++, slot++) {
                int count = -1;
                MPI_Get_count(&st[slot], MPI_BYTE, &count);
                CHECK_INT(count, (int)n, "received count");
                char what[96];
                snprintf(what, sizeof what, "%zu bytes from rank %d, message %d", n, p, k);
                CHECK_PATTERN(rbuf[slot], n, seed_of(p, mtest_rank, s, k), what);
            }
        }
        free(st);
    }
    mtest_end();

    for (int i = 0; i < per_size; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
    free(sbuf);
    free(rbuf);
    free(req);
    return mtest_finalize();
}
