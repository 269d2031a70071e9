/* Slot reuse between the shm collectives of one region: at two ranks
 * allgather and alltoall copy into a slot once the other rank left the
 * step before, the rooted collectives and reduce_scatter once it left the
 * step two back, as allgather and alltoall do for chunks under 32 KB or
 * over 64 KB (shm_coll.c, slot_wait_back). Calls of both kinds follow
 * each other in every order on the same communicator, blocks one byte
 * either side of the shm rows' limits (1 KB, 16 KB, 64 KB, 128 KB) and odd
 * sizes, contiguous, strided and in place, a nonblocking call now and
 * then; one rank lags by a short spin before every third call, so a rank
 * that wrote into a slot still being read would change bytes the other
 * has not copied out yet. Each call's bytes differ from the last; every
 * received byte is checked. */
#include "block_exchange.h"

/* A rooted call of n bytes a block (gather, scatter, bcast, or a reduce of
 * n / 4 ints), root call % p; 0 on a wrong result (reported). */
static int rooted(int which, size_t n, int call, int p, int me, unsigned char *s, unsigned char *g)
{
    int root = call % p;
    if (which == 3) { /* reduce: sum of every rank's ints */
        int c = (int)(n / sizeof(int)), *x = (int *)(void *)s, *y = (int *)(void *)g;
        for (int i = 0; i < c; i++)
            x[i] = me * 1000 + i + call;
        CHECK_RC(MPI_Reduce(x, y, c, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        for (int i = 0; me == root && i < c; i++) {
            int want = 1000 * (p * (p - 1) / 2) + p * (i + call);
            if (y[i] != want) {
                CHECK(0, "reduce call %d, %d ints: element %d = %d, want %d", call, c, i, y[i],
                      want);
                return 0;
            }
        }
        return 1;
    }
    for (size_t i = 0; i < (size_t)p * n; i++) {
        s[i] = bv(me, (int)(i / n), i % n, call);
        g[i] = 0xee;
    }
    const char *name = which == 0 ? "gather" : which == 1 ? "scatter" : "bcast";
    if (which == 0)
        CHECK_RC(MPI_Gather(s, (int)n, MPI_BYTE, g, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
    else if (which == 1)
        CHECK_RC(MPI_Scatter(s, (int)n, MPI_BYTE, g, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
    else
        CHECK_RC(MPI_Bcast(me == root ? s : g, (int)n, MPI_BYTE, root, MPI_COMM_WORLD));
    if (which == 0 && me != root)
        return 1;
    int blocks = which == 0 ? p : 1;
    for (int q = 0; q < blocks; q++)
        for (size_t i = 0; i < n; i++) {
            unsigned char want = which == 0   ? bv(q, 0, i, call)
                                 : which == 1 ? bv(root, me, i, call)
                                              : bv(root, 0, i, call);
            if (me == root && which == 2)
                break; /* the root's buffer is its message */
            unsigned char got = g[(size_t)q * n + i];
            if (got != want) {
                CHECK(0, "%s call %d, %zu bytes, root %d: block %d byte %zu = %u, want %u", name,
                      call, n, root, q, i, got, want);
                return 0;
            }
        }
    return 1;
}

static const size_t sizes[] = {1023, 1024, 1025, 4099, 16383, 16384, 16385, 65535, 65536, 65537,
                               131072, 131073};
enum { N_SIZES = sizeof sizes / sizeof sizes[0] };

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p = mtest_size, me = mtest_rank;
    size_t most = (size_t)p * 131073 * 2;
    unsigned char *s = malloc(most), *g = malloc(most);
    volatile unsigned spin = 0;
    int call = 0, ok = 1;
    for (int c = 0; c < 480 && ok; c++, call++) {
        if (me == 1 && c % 3 == 0) /* the lagging rank */
            for (unsigned k = 0; k < 20000; k++)
                spin += k;
        size_t n = sizes[(size_t)(c * 5) % N_SIZES];
        int step = c % 4;
        if (step < 2)
            ok = block_exchange((c / 4) & 1, n, (c / 2) % N_KINDS, call, c % 7 == 6, p, me, s, g);
        else
            ok = rooted((c / 4) % 4, n, call, p, me, s, g);
    }
    free(s);
    free(g);
    return mtest_finalize();
}
