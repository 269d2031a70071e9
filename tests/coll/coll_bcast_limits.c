/* Bcast through the default selection table at the sizes where its rows
 * or the shm bcast's geometry change (256 B and 12 KB rows, 16 KB: a slot
 * and a cell at more than 2 ranks, the 32 KB cell of a 2-rank bcast ring,
 * 128 KB: a full ring of four cells and the old 2-rank shm limit, 1 MB),
 * one byte either side of each; roots 0, 1 and
 * p - 1; contiguous bytes and a strided (derived) type; each size three
 * times and then the sizes interleaved, so the ring wraps inside and
 * between bcasts with the root running ahead. Every byte is checked, and
 * the gaps of the strided type stay untouched. An argument caps the
 * sizes (the 256-byte-cell runs: a 1 MB bcast there takes 4096 steps, a
 * minute of waits for descheduled ranks on a loaded 2-core machine). */
#include "../mpi/mtest.h"

static const size_t sizes[] = {255,   256,   257,   12287,  12288,  12289,   16383,  16384,
                               16385, 32767, 32768, 32769,  131071, 131072, 131073, 1048575,
                               1048576};
enum { N_SIZES = sizeof sizes / sizeof sizes[0] };

static unsigned char bv(int root, size_t n, int rep, size_t i)
{
    return (unsigned char)(root * 37 + n * 11 + (size_t)rep * 101 + i * 7 + i / 251);
}

/* n bytes as one element: contiguous, or every other byte of 2n. */
static MPI_Datatype bytes_type(size_t n, int strided)
{
    MPI_Datatype t;
    if (strided)
        MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &t);
    else
        MPI_Type_contiguous((int)n, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

static void run(size_t n, int strided, int root, int rep, int me)
{
    size_t span = strided ? 2 * n : n, step = strided ? 2 : 1;
    unsigned char *b = malloc(span);
    MPI_Datatype t = bytes_type(n, strided);
    memset(b, 0xee, span);
    if (me == root)
        for (size_t i = 0; i < n; i++)
            b[i * step] = bv(root, n, rep, i);
    CHECK_RC(MPI_Bcast(b, 1, t, root, MPI_COMM_WORLD));
    for (size_t i = 0; i < n; i++)
        if (b[i * step] != bv(root, n, rep, i)) {
            CHECK(0, "bcast of %zu bytes (%s), root %d, rep %d: byte %zu = %u, want %u", n,
                  strided ? "strided" : "contiguous", root, rep, i, b[i * step],
                  bv(root, n, rep, i));
            break;
        }
    if (strided)
        for (size_t i = 1; i < span; i += 2)
            if (b[i] != 0xee) {
                CHECK(0, "bcast of %zu bytes (strided), root %d: gap byte %zu written", n, root, i);
                break;
            }
    MPI_Type_free(&t);
    free(b);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p = mtest_size, me = mtest_rank;
    int roots[3] = {0, 1 % p, p - 1};
    size_t max = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : SIZE_MAX;
    int n_sizes = 0;
    while (n_sizes < N_SIZES && sizes[n_sizes] <= max)
        n_sizes++;
    for (int k = 0; k < n_sizes; k++)
        for (int strided = 0; strided < 2; strided++)
            for (int r = 0; r < 3; r++)
                for (int rep = 0; rep < 3; rep++)
                    run(sizes[k], strided, roots[r], rep, me);
    /* Interleaved: a small bcast behind a large one reuses cells whose
     * readers may still be copying out. */
    for (int rep = 0; rep < 4; rep++)
        for (int k = 0; k < n_sizes; k++)
            run(sizes[(k * 7 + rep) % n_sizes], rep & 1, roots[(k + rep) % 3], rep, me);
    return mtest_finalize();
}
