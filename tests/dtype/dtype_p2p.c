/* Derived datatypes through point-to-point: every rank sends to the next
 * and receives from the previous (itself with one rank), eager and
 * rendezvous sizes, non-contiguous on either side or both, MPI_BOTTOM with
 * absolute addresses, pair types, synchronous / buffered / persistent
 * sends, a type freed while its send is pending, Sendrecv_replace. */
#include "dtype_common.h"

#include <string.h>

static int rank, size, next, prev;

#define M 3 /* matrix columns */

static double val(int r, long i) { return r * 1e7 + (double)i; }

/* A column of an n x M matrix of doubles, to a contiguous array and back. */
static void test_column(int n)
{
    MPI_Datatype col, blk;
    OK(MPI_Type_vector(n, 1, M, MPI_DOUBLE, &col));
    OK(MPI_Type_commit(&col));
    double *mat = malloc(sizeof(double) * (size_t)n * M);
    double *in = malloc(sizeof(double) * (size_t)n * M);
    double *flat = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < (long)n * M; i++)
        mat[i] = val(rank, i);
    /* Non-contiguous send (column 1), contiguous receive. */
    MPI_Request rq;
    MPI_Status st;
    OK(MPI_Irecv(flat, n, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, &rq));
    OK(MPI_Send(mat + 1, 1, col, next, 1, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq, &st));
    int cnt;
    OK(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
    REQUIRE(cnt == n, "n=%d: received %d doubles", n, cnt);
    for (long i = 0; i < n; i++)
        REQUIRE(flat[i] == val(prev, i * M + 1), "n=%d: flat[%ld] = %g", n, i, flat[i]);
    /* Contiguous send, non-contiguous receive into column 2. */
    for (long i = 0; i < (long)n * M; i++)
        in[i] = -1;
    OK(MPI_Irecv(in + 2, 1, col, prev, 2, MPI_COMM_WORLD, &rq));
    OK(MPI_Send(flat, n, MPI_DOUBLE, next, 2, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq, &st));
    OK(MPI_Get_count(&st, col, &cnt));
    REQUIRE(cnt == 1, "n=%d: Get_count(col) = %d", n, cnt);
    int prevprev = (prev - 1 + size) % size;
    for (long i = 0; i < (long)n * M; i++) {
        double want = i % M == 2 ? val(prevprev, (i / M) * M + 1) : -1;
        REQUIRE(in[i] == want, "n=%d: in[%ld] = %g, want %g", n, i, in[i], want);
    }
    /* Both sides non-contiguous, different layouts: column 0 into blocks
     * of 2 doubles every 5 (an indexed-block type). */
    int nb = (n + 1) / 2;
    int *disp = malloc(sizeof(int) * (size_t)nb);
    for (int b = 0; b < nb; b++)
        disp[b] = 5 * b;
    double *sparse = malloc(sizeof(double) * (size_t)(5 * nb + 2));
    for (int i = 0; i < 5 * nb + 2; i++)
        sparse[i] = -2;
    OK(MPI_Type_create_indexed_block(nb, 2, disp, MPI_DOUBLE, &blk));
    OK(MPI_Type_commit(&blk));
    /* Receive only n doubles' worth: the last block may be half full. */
    OK(MPI_Irecv(sparse, 1, blk, prev, 3, MPI_COMM_WORLD, &rq));
    OK(MPI_Ssend(mat, 1, col, next, 3, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq, &st));
    int el;
    OK(MPI_Get_elements(&st, blk, &el));
    REQUIRE(el == n, "n=%d: Get_elements(blk) = %d", n, el);
    for (int k = 0; k < n; k++) {
        int at = 5 * (k / 2) + k % 2;
        REQUIRE(sparse[at] == val(prev, (long)k * M), "n=%d: sparse[%d] = %g", n, at, sparse[at]);
    }
    for (int b = 0; b < nb; b++)
        for (int g = 2; g < 5 && 5 * b + g < 5 * nb; g++)
            REQUIRE(sparse[5 * b + g] == -2, "n=%d: gap %d written", n, 5 * b + g);
    MPI_Type_free(&col);
    MPI_Type_free(&blk);
    free(mat);
    free(in);
    free(flat);
    free(disp);
    free(sparse);
}

/* Absolute addresses from MPI_BOTTOM, on both sides. */
static int g_i[2];
static double g_d;
static char g_c[3];

static void test_bottom(void)
{
    MPI_Datatype t;
    int bl[3] = {2, 1, 3};
    MPI_Aint dp[3];
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    OK(MPI_Get_address(g_i, &dp[0]));
    OK(MPI_Get_address(&g_d, &dp[1]));
    OK(MPI_Get_address(g_c, &dp[2]));
    OK(MPI_Type_create_struct(3, bl, dp, ty, &t));
    OK(MPI_Type_commit(&t));
    g_i[0] = rank;
    g_i[1] = rank + 100;
    g_d = rank + 0.5;
    memcpy(g_c, "abc", 3);
    g_c[0] = (char)('a' + rank);
    /* Send from the globals into a packed byte buffer, then from that buffer
     * back into the globals (MPI_BOTTOM on the receive side). */
    char packed[64];
    MPI_Request rq;
    MPI_Status st;
    OK(MPI_Irecv(packed, 64, MPI_PACKED, prev, 4, MPI_COMM_WORLD, &rq));
    OK(MPI_Send(MPI_BOTTOM, 1, t, next, 4, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq, &st));
    int cnt;
    OK(MPI_Get_count(&st, MPI_PACKED, &cnt));
    REQUIRE(cnt == 19, "struct at MPI_BOTTOM packs to %d bytes", cnt);
    memset(g_i, 0, sizeof g_i);
    g_d = 0;
    memset(g_c, 0, sizeof g_c);
    OK(MPI_Irecv(MPI_BOTTOM, 1, t, prev, 5, MPI_COMM_WORLD, &rq));
    OK(MPI_Send(packed, cnt, MPI_PACKED, next, 5, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq, &st));
    int p2 = (prev - 1 + size) % size;
    REQUIRE(g_i[0] == p2 && g_i[1] == p2 + 100 && g_d == p2 + 0.5 && g_c[0] == 'a' + p2 &&
              g_c[2] == 'c',
          "MPI_BOTTOM receive: %d %d %g %c", g_i[0], g_i[1], g_d, g_c[0]);
    MPI_Type_free(&t);
}

/* MPI_DOUBLE_INT has padding: only its data crosses. */
static void test_pair(void)
{
    struct {
        double v;
        int i;
    } out[3], in[3];
    for (int k = 0; k < 3; k++) {
        out[k].v = rank + k * 0.25;
        out[k].i = rank * 10 + k;
        in[k].v = -1;
        in[k].i = -1;
    }
    MPI_Status st;
    OK(MPI_Sendrecv(out, 3, MPI_DOUBLE_INT, next, 6, in, 3, MPI_DOUBLE_INT, prev, 6,
                    MPI_COMM_WORLD, &st));
    int cnt;
    OK(MPI_Get_count(&st, MPI_DOUBLE_INT, &cnt));
    REQUIRE(cnt == 3, "Get_count(MPI_DOUBLE_INT) = %d", cnt);
    for (int k = 0; k < 3; k++)
        REQUIRE(in[k].v == prev + k * 0.25 && in[k].i == prev * 10 + k, "pair %d: %g %d", k,
              in[k].v, in[k].i);
}

/* Buffered and persistent sends, a type freed while its send is pending,
 * Sendrecv_replace. */
static void test_modes(int n)
{
    MPI_Datatype v;
    OK(MPI_Type_vector(n, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    int *a = malloc(sizeof(int) * (size_t)(2 * n)), *b = malloc(sizeof(int) * (size_t)(2 * n));
    for (int i = 0; i < 2 * n; i++)
        a[i] = rank * 1000000 + i;
    int bsz = n * 4 + MPI_BSEND_OVERHEAD;
    void *bbuf = malloc((size_t)bsz);
    OK(MPI_Buffer_attach(bbuf, bsz));
    MPI_Request rq, ps;
    OK(MPI_Irecv(b, n, MPI_INT, prev, 7, MPI_COMM_WORLD, &rq));
    OK(MPI_Bsend(a, 1, v, next, 7, MPI_COMM_WORLD));
    /* The buffered copy was taken: changing a must not matter. */
    a[0] = -5;
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        REQUIRE(b[i] == prev * 1000000 + 2 * i, "bsend n=%d: b[%d] = %d", n, i, b[i]);
    a[0] = rank * 1000000;
    void *dummy;
    int dsz;
    OK(MPI_Buffer_detach(&dummy, &dsz));
    free(bbuf);
    /* Persistent send of the vector, twice. */
    OK(MPI_Send_init(a, 1, v, next, 8, MPI_COMM_WORLD, &ps));
    for (int it = 0; it < 2; it++) {
        a[2] = it;
        OK(MPI_Irecv(b, n, MPI_INT, prev, 8, MPI_COMM_WORLD, &rq));
        OK(MPI_Start(&ps));
        OK(MPI_Wait(&ps, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        REQUIRE(n < 2 || b[1] == it, "persistent iteration %d: b[1] = %d", it, b[1]);
    }
    OK(MPI_Request_free(&ps));
    a[2] = rank * 1000000 + 2;
    /* Free the type while an Isend uses it. */
    MPI_Request sq;
    OK(MPI_Irecv(b, n, MPI_INT, prev, 9, MPI_COMM_WORLD, &rq));
    OK(MPI_Isend(a, 1, v, next, 9, MPI_COMM_WORLD, &sq));
    OK(MPI_Type_free(&v));
    MPI_Datatype other;
    OK(MPI_Type_contiguous(7, MPI_CHAR, &other)); /* may reuse a freed slot */
    OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        REQUIRE(b[i] == prev * 1000000 + 2 * i, "freed-type send n=%d: b[%d] = %d", n, i, b[i]);
    OK(MPI_Type_free(&other));
    /* Sendrecv_replace over a vector: odd entries stay. */
    OK(MPI_Type_vector(n, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    OK(MPI_Sendrecv_replace(a, 1, v, next, 10, prev, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * n; i++) {
        int want = i % 2 ? rank * 1000000 + i : prev * 1000000 + i;
        REQUIRE(a[i] == want, "Sendrecv_replace n=%d: a[%d] = %d, want %d", n, i, a[i], want);
    }
    MPI_Type_free(&v);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;
    prev = (rank - 1 + size) % size;
    /* Eager, around a fragment, and rendezvous sizes. */
    int sizes[] = {1, 4, 333, 5000, 70001};
    for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; k++)
        test_column(sizes[k]);
    if (rank == 0)
        printf("test column ok\n");
    test_bottom();
    if (rank == 0)
        printf("test bottom ok\n");
    test_pair();
    if (rank == 0)
        printf("test pair ok\n");
    test_modes(3);
    test_modes(50000);
    if (rank == 0)
        printf("test modes ok\n");
    MPI_Finalize();
    return 0;
}
