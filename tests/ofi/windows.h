/* What tests/ofi/bidir.c and rndv_write.c share: one window of rendezvous
 * messages both ways at once between every pair of ranks, every count and
 * byte checked, and the buffers it runs on. */
#ifndef TERN_TESTS_OFI_WINDOWS_H
#define TERN_TESTS_OFI_WINDOWS_H

#include "../mpi/mtest.h"

static inline uint32_t window_seed(int src, int dst, int size_i, int k)
{
    return (uint32_t)(src * 1000003 + dst * 10007 + size_i * 101 + k + 1);
}

/* Each rank posts `window` receives of n bytes from every peer, then sends
 * as many to every peer (tags size_i * window + k), waits for all and
 * checks them. sbuf / rbuf: window buffers per peer, of n bytes at least;
 * req: room for two per buffer. */
static inline void window_exchange(unsigned char **sbuf, unsigned char **rbuf, MPI_Request *req,
                                   size_t n, int size_i, int window)
{
    int nreq = 0;
    for (int p = 0, slot = 0; p < mtest_size; p++) {
        if (p == mtest_rank)
            continue;
        for (int k = 0; k < window; k++, slot++) {
            memset(rbuf[slot], 0, n);
            CHECK_RC(MPI_Irecv(rbuf[slot], (int)n, MPI_BYTE, p, size_i * window + k,
                               MPI_COMM_WORLD, &req[nreq++]));
        }
    }
    for (int p = 0, slot = 0; p < mtest_size; p++) {
        if (p == mtest_rank)
            continue;
        for (int k = 0; k < window; k++, slot++) {
            mtest_fill(sbuf[slot], n, window_seed(mtest_rank, p, size_i, k));
            CHECK_RC(MPI_Isend(sbuf[slot], (int)n, MPI_BYTE, p, size_i * window + k,
                               MPI_COMM_WORLD, &req[nreq++]));
        }
    }
    MPI_Status *st = malloc((size_t)nreq * sizeof *st);
    REQUIRE(st, "out of memory");
    CHECK_RC(MPI_Waitall(nreq, req, st));
    for (int p = 0, slot = 0; p < mtest_size; p++) {
        if (p == mtest_rank)
            continue;
        for (int k = 0; k < window; k++, slot++) {
            int count = -1;
            MPI_Get_count(&st[slot], MPI_BYTE, &count);
            CHECK_INT(count, (int)n, "received count");
            char what[96];
            snprintf(what, sizeof what, "%zu bytes from rank %d, message %d", n, p, k);
            CHECK_PATTERN(rbuf[slot], n, window_seed(p, mtest_rank, size_i, k), what);
        }
    }
    free(st);
}

/* The buffers of window_exchange: `window` send and receive buffers of
 * max bytes per peer, and room for two requests per buffer. */
typedef struct {
    unsigned char **sbuf, **rbuf;
    MPI_Request *req;
    int n; /* buffers of each kind */
} window_bufs_t;

static inline window_bufs_t window_bufs_alloc(int window, size_t max)
{
    window_bufs_t b = {.n = (mtest_size - 1) * window};
    b.sbuf = malloc((size_t)b.n * sizeof *b.sbuf);
    b.rbuf = malloc((size_t)b.n * sizeof *b.rbuf);
    b.req = malloc(2 * (size_t)b.n * sizeof *b.req);
    REQUIRE(b.sbuf && b.rbuf && b.req, "out of memory");
    for (int i = 0; i < b.n; i++) {
        b.sbuf[i] = malloc(max);
        b.rbuf[i] = malloc(max);
        REQUIRE(b.sbuf[i] && b.rbuf[i], "out of memory");
    }
    return b;
}

static inline void window_bufs_free(window_bufs_t *b)
{
    for (int i = 0; i < b->n; i++) {
        free(b->sbuf[i]);
        free(b->rbuf[i]);
    }
    free(b->sbuf);
    free(b->rbuf);
    free(b->req);
}

#endif
