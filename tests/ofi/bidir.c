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
    window_bufs_t bufs = window_bufs_alloc(WINDOW, sizes[sizeof sizes / sizeof sizes[0] - 1]);

    mtest_begin("bidir_windows");
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++)
        window_exchange(bufs.sbuf, bufs.rbuf, bufs.req, sizes[s], s, WINDOW);
    mtest_end();

    window_bufs_free(&bufs);
    return mtest_finalize();
}
