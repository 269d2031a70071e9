/* Rendezvous traffic in both directions at once between every pair of
 * ranks: each rank posts a window of receives from every peer and sends a
 * window to every peer, of sizes from 64 KB + 1 (just above the eager size
 * over TCP) to 3 MB + 5 (several RDMA-read chunks), then checks every byte
 * and count. Over the ofi transport each message is an RDMA read of the
 * sender's buffer; with TERN_OFI_RMA_EP=1 the reads leave on a second
 * endpoint, so each direction's data takes its own connection. */
#include "windows.h"

#define WINDOW 6

static const size_t sizes[] = {65537, 131072, 524296, 1048576, 3145733};

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
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++)
        window_exchange(sbuf, rbuf, req, sizes[s], s, WINDOW);
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
