/* Allgather, alltoall and scatter through the default selection table at
 * the block sizes where its rows change (1, 2, 8, 16, 64 and 128 KB: at 2
 * ranks one per core the shm rows of allgather and alltoall end at 128 KB,
 * a 2-rank region's slot, scatter's at 64 KB, and oversubscribed all
 * three at 64 KB; scatter leaves binomial at 2 KB and, oversubscribed,
 * linear at 8 KB), one byte either side of each: contiguous blocks,
 * strided (derived) send and receive types, and MPI_IN_PLACE. Every
 * received byte is checked. */
#include "../mpi/mtest.h"
#include "byte_blocks.h"

/* Byte i of the block rank `from` sends to rank `to` (allgather: to 0). */
static unsigned char bv(int from, int to, size_t i)
{
    return (unsigned char)(from * 131 + to * 71 + i * 7 + i / 251);
}

static const size_t sizes[] = {1023,  1024,  1025,  2047,  2048,   2049,   8191,   8192,   8193,
                               16383, 16384, 16385, 65535, 65536, 65537, 131071, 131072, 131073};

enum { CONTIG, STRIDED, IN_PLACE, N_KINDS };
static const char *const kind_names[N_KINDS] = {"contiguous", "strided", "in place"};

static void check_blocks(const char *coll, unsigned char *g, size_t n, int strided, int kind,
                         int p, int me, int a2a)
{
    for (int q = 0; q < p; q++)
        for (size_t i = 0; i < n; i++) {
            unsigned char want = bv(q, a2a ? me : 0, i), got = *at(g, n, strided, q, i);
            if (got != want) {
                CHECK(0, "%s, %zu-byte blocks, %s: block %d byte %zu = %u, want %u", coll, n,
                      kind_names[kind], q, i, got, want);
                return;
            }
        }
    if (strided) /* the gaps between the strided bytes stay untouched */
        for (size_t i = 0; i < (size_t)p * n; i++)
            if (g[2 * i + 1] != 0xee) {
                CHECK(0, "%s, %zu-byte blocks, strided: gap byte %zu written", coll, n, 2 * i + 1);
                return;
            }
}

/* Scatter from root: block d of the root's buffer goes to rank d; in
 * place the root's own block stays where it is, unread and unwritten. */
static void run_scatter(size_t n, int kind, int p, int me, int root)
{
    int strided = kind == STRIDED;
    size_t one = n * (strided ? 2 : 1), span = (size_t)p * one;
    unsigned char *s = malloc(span), *g = malloc(one);
    MPI_Datatype t = block_type(n, strided);
    memset(s, 0xee, span);
    memset(g, 0xee, one);
    if (me == root)
        for (int d = 0; d < p; d++)
            for (size_t i = 0; i < n; i++)
                *at(s, n, strided, d, i) = bv(root, d, i);
    if (kind == IN_PLACE && me == root)
        CHECK_RC(MPI_Scatter(s, 1, t, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
    else
        CHECK_RC(MPI_Scatter(s, 1, t, g, 1, t, root, MPI_COMM_WORLD));
    const unsigned char *mine = kind == IN_PLACE && me == root ? at(s, n, strided, me, 0) : g;
    for (size_t i = 0; i < n; i++) {
        unsigned char want = bv(root, me, i), got = mine[strided ? 2 * i : i];
        if (got != want) {
            CHECK(0, "scatter from %d, %zu-byte blocks, %s: byte %zu = %u, want %u", root, n,
                  kind_names[kind], i, got, want);
            break;
        }
    }
    if (strided)
        for (size_t i = 0; i < n; i++)
            if (mine[2 * i + 1] != 0xee) {
                CHECK(0, "scatter, %zu-byte blocks, strided: gap byte %zu written", n, 2 * i + 1);
                break;
            }
    MPI_Type_free(&t);
    free(s);
    free(g);
}

static void run(size_t n, int kind, int p, int me)
{
    int strided = kind == STRIDED;
    size_t span = (size_t)p * n * (strided ? 2 : 1);
    unsigned char *s = malloc(span), *g = malloc(span);
    MPI_Datatype t = block_type(n, strided);

    /* Allgather. */
    memset(g, 0xee, span);
    memset(s, 0xee, span);
    for (size_t i = 0; i < n; i++)
        *at(kind == IN_PLACE ? g : s, n, strided, kind == IN_PLACE ? me : 0, i) = bv(me, 0, i);
    if (kind == IN_PLACE)
        CHECK_RC(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, 1, t, MPI_COMM_WORLD));
    else
        CHECK_RC(MPI_Allgather(s, 1, t, g, 1, t, MPI_COMM_WORLD));
    check_blocks("allgather", g, n, strided, kind, p, me, 0);

    /* Alltoall: block d of this rank goes to rank d. */
    memset(g, 0xee, span);
    memset(s, 0xee, span);
    for (int d = 0; d < p; d++)
        for (size_t i = 0; i < n; i++)
            *at(kind == IN_PLACE ? g : s, n, strided, d, i) = bv(me, d, i);
    if (kind == IN_PLACE)
        CHECK_RC(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, 1, t, MPI_COMM_WORLD));
    else
        CHECK_RC(MPI_Alltoall(s, 1, t, g, 1, t, MPI_COMM_WORLD));
    check_blocks("alltoall", g, n, strided, kind, p, me, 1);

    MPI_Type_free(&t);
    free(s);
    free(g);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p = mtest_size, me = mtest_rank;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int kind = 0; kind < N_KINDS; kind++)
            for (int rep = 0; rep < 3; rep++) { /* steps and slots reused */
                run(sizes[k], kind, p, me);
                run_scatter(sizes[k], kind, p, me, (rep + 1) % p);
            }
    return mtest_finalize();
}
