/* MPI_Alloc_mem / MPI_Free_mem: usable, aligned memory (the
 * mpi_minimum_memory_alignment hint honoured), messages to and from it,
 * many blocks freed in any order, and the errors: a negative size, an
 * impossible size (MPI_ERR_NO_MEM), a bad alignment hint, freeing an
 * address that is not a block or a block twice (MPI_ERR_BASE). */
#include "mtest.h"

static void test_alloc(void)
{
    mtest_begin("alloc_mem_basic");
    int *a = NULL;
    CHECK_RC(MPI_Alloc_mem(1000 * sizeof(int), MPI_INFO_NULL, &a));
    CHECK(a != NULL, "a block");
    CHECK(((uintptr_t)a & 63) == 0, "cache-line aligned: %p", (void *)a);
    for (int i = 0; i < 1000; i++)
        a[i] = i + mtest_rank;
    /* A message from and into MPI memory. */
    int *b = NULL;
    CHECK_RC(MPI_Alloc_mem(1000 * sizeof(int), MPI_INFO_NULL, &b));
    int peer = mtest_partner();
    MPI_Sendrecv(a, 1000, MPI_INT, peer, 1, b, 1000, MPI_INT, peer, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK_INT(b[999], 999 + peer, "received into MPI memory");
    CHECK_RC(MPI_Free_mem(a));
    CHECK_RC(MPI_Free_mem(b));
    /* Size 0 gives a block that can be freed; NULL frees nothing. */
    void *z = NULL;
    CHECK_RC(MPI_Alloc_mem(0, MPI_INFO_NULL, &z));
    CHECK_RC(MPI_Free_mem(z));
    CHECK_RC(MPI_Free_mem(NULL));
    /* The alignment hint (an info key of MPI-4.1); other keys ignored. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096");
    MPI_Info_set(info, "some_other_key", "x");
    void *p = NULL;
    CHECK_RC(MPI_Alloc_mem(10, info, &p));
    CHECK(((uintptr_t)p & 4095) == 0, "4096-aligned: %p", p);
    CHECK_RC(MPI_Free_mem(p));
    /* Many blocks, freed in a scrambled order (the record of live blocks). */
    enum { N = 300 };
    static void *blk[N];
    for (int i = 0; i < N; i++)
        CHECK_RC(MPI_Alloc_mem(i + 1, MPI_INFO_NULL, &blk[i]));
    for (int i = 0; i < N; i++)
        CHECK_RC(MPI_Free_mem(blk[(i * 7) % N]));
    MPI_Info_free(&info);
    mtest_end();
}

static void test_errors(void)
{
    mtest_begin("alloc_mem_errors");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    void *p = NULL;
    CHECK_CLASS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &p), MPI_ERR_ARG, "negative size");
    CHECK_CLASS(MPI_Alloc_mem(MPI_Aint_add(0, (MPI_Aint)1 << 62), MPI_INFO_NULL, &p),
                MPI_ERR_NO_MEM, "2^62 bytes");
    CHECK_CLASS(MPI_Alloc_mem(8, MPI_INFO_NULL, NULL), MPI_ERR_ARG, "NULL baseptr");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "48");
    CHECK_CLASS(MPI_Alloc_mem(8, info, &p), MPI_ERR_ARG, "alignment not a power of two");
    MPI_Info_free(&info);
    int local;
    CHECK_CLASS(MPI_Free_mem(&local), MPI_ERR_BASE, "free of a stack address");
    char *q = NULL;
    CHECK_RC(MPI_Alloc_mem(64, MPI_INFO_NULL, &q));
    CHECK_CLASS(MPI_Free_mem(q + 8), MPI_ERR_BASE, "free of an address inside a block");
    CHECK_RC(MPI_Free_mem(q));
    CHECK_CLASS(MPI_Free_mem(q), MPI_ERR_BASE, "second free of a block");
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    test_alloc();
    test_errors();
    return mtest_finalize();
}
