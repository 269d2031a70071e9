/* Linear scatter and gather and direct (or, forced, recursive halving)
 * reduce_scatter on 3-8 ranks where some ranks take the direct path
 * (contiguous data, coll_tree.h) and others the scheduled one (a strided type
 * with the same type signature), or all one of them: they must meet and give
 * the same results, at every root, in place or not, with vectors on both
 * sides of the direct reduce_scatter's 1 KB limit and of the eager limit (a
 * block of 40 KB goes by rendezvous), segments that differ per rank (some
 * empty), on MPI_COMM_WORLD and on a communicator whose ranks run backwards
 * (the direct sends name world ranks); a non-commutative op keeps rank order. */
#include "../mpi/mtest.h"
#include "affine_op.h"

static MPI_Comm comm;
static int rank, size;
static MPI_Datatype every_other; /* an int, then a gap of one int */
/* Ints per rank: 256 ints over 3-8 ranks pass the 1 KB limit. */
static const int counts[] = {0, 1, 7, 40, 256, 10000};
#define N_COUNTS ((int)(sizeof counts / sizeof counts[0]))
#define N_MODES 4

static int val(int r, int i) { return (r + 1) * 1000 + i * 3 + r; }

/* mode 0: all contiguous; 1: odd ranks strided; 2: even ranks; 3: all. */
static int strided(int mode)
{
    return mode == 3 || (mode == 1 && rank % 2) || (mode == 2 && rank % 2 == 0);
}

/* n ints, contiguous (MPI_INT) or every second int (every_other). */
typedef struct {
    int *mem;
    int stride;
    MPI_Datatype type;
} buf_t;

static void buf_make(buf_t *b, int n, int mode)
{
    b->stride = strided(mode) ? 2 : 1;
    b->type = b->stride == 2 ? every_other : MPI_INT;
    b->mem = malloc((size_t)(n ? n : 1) * (size_t)b->stride * sizeof(int));
    if (!b->mem)
        FATAL("out of memory");
    for (int i = 0; i < n * b->stride; i++)
        b->mem[i] = -7;
}

static int *at(buf_t *b, int i) { return &b->mem[i * b->stride]; }

static void test_scatter(int mode)
{
    for (int k = 0; k < N_COUNTS; k++)
        for (int root = 0; root < size; root++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int n = counts[k], ip = inplace && rank == root;
                buf_t s, r;
                buf_make(&s, rank == root ? n * size : 0, mode);
                buf_make(&r, n, mode);
                if (rank == root)
                    for (int q = 0; q < size; q++)
                        for (int i = 0; i < n; i++)
                            *at(&s, q * n + i) = val(q, i);
                CHECK_RC(MPI_Scatter(s.mem, n, s.type, ip ? MPI_IN_PLACE : r.mem, n, r.type, root,
                                     comm));
                buf_t *got = ip ? &s : &r;
                int first = ip ? rank * n : 0;
                for (int i = 0; i < n; i++)
                    if (*at(got, first + i) != val(rank, i)) {
                        CHECK(0, "scatter of %d ints from root %d, mode %d%s: element %d is %d, "
                              "not %d", n, root, mode, ip ? ", in place" : "", i,
                              *at(got, first + i), val(rank, i));
                        break;
                    }
                /* The root's other blocks stay as they were. */
                if (ip)
                    for (int i = 0; i < n * size; i++)
                        if (*at(&s, i) != val(i / n, i % n)) {
                            CHECK(0, "in-place scatter from root %d changed element %d", root, i);
                            break;
                        }
                free(s.mem);
                free(r.mem);
            }
}

/* The mirror of test_scatter: the root's blocks in rank order, in place
 * or not, and its buffer past them untouched. */
static void test_gather(int mode)
{
    for (int k = 0; k < N_COUNTS; k++)
        for (int root = 0; root < size; root++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int n = counts[k], ip = inplace && rank == root;
                buf_t s, r;
                buf_make(&s, n, mode);
                buf_make(&r, rank == root ? n * size + 1 : 0, mode);
                for (int i = 0; i < n; i++)
                    *(ip ? at(&r, rank * n + i) : at(&s, i)) = val(rank, i);
                CHECK_RC(MPI_Gather(ip ? MPI_IN_PLACE : s.mem, n, s.type, r.mem, n, r.type, root,
                                    comm));
                if (rank == root) {
                    for (int i = 0; i < n * size; i++)
                        if (*at(&r, i) != val(i / n, i % n)) {
                            CHECK(0, "gather of %d ints to root %d, mode %d%s: element %d is "
                                  "%d, not %d", n, root, mode, ip ? ", in place" : "", i,
                                  *at(&r, i), val(i / n, i % n));
                            break;
                        }
                    CHECK(*at(&r, n * size) == -7, "gather to root %d wrote past its blocks",
                          root);
                }
                free(s.mem);
                free(r.mem);
            }
}

/* Rank q's segment in pattern k: block counts n, or counts that differ per
 * rank with some empty (the vector's length near n * size). */
static int seg(int k, int n, int q)
{
    return k == 0 ? n : (q % 3 == 1 ? 0 : n + q * (n / 4 + 1));
}

static void test_reduce_scatter(int mode)
{
    int *rc = malloc((size_t)size * sizeof *rc);
    if (!rc)
        FATAL("out of memory");
    for (int kc = 0; kc < N_COUNTS; kc++)
        for (int pattern = 0; pattern < 2; pattern++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int n = counts[kc], total = 0, off = 0;
                for (int q = 0; q < size; q++) {
                    rc[q] = seg(pattern, n, q);
                    if (q < rank)
                        off += rc[q];
                    total += rc[q];
                }
                buf_t s, r;
                buf_make(&s, total, mode);
                buf_make(&r, inplace ? total : rc[rank], mode);
                for (int i = 0; i < total; i++)
                    *at(inplace ? &r : &s, i) = val(rank, i);
                const void *sb = inplace ? MPI_IN_PLACE : s.mem;
                if (pattern == 0)
                    CHECK_RC(MPI_Reduce_scatter_block(sb, r.mem, n, r.type, MPI_SUM, comm));
                else
                    CHECK_RC(MPI_Reduce_scatter(sb, r.mem, rc, r.type, MPI_SUM, comm));
                for (int i = 0; i < rc[rank]; i++) {
                    int want = 0;
                    for (int q = 0; q < size; q++)
                        want += val(q, off + i);
                    if (*at(&r, i) != want) {
                        CHECK(0, "reduce_scatter%s of %d ints, mode %d%s: element %d of rank %d "
                              "is %d, not %d", pattern ? "" : "_block", total, mode,
                              inplace ? ", in place" : "", i, rank, *at(&r, i), want);
                        break;
                    }
                }
                free(s.mem);
                free(r.mem);
            }
    free(rc);
}

/* Rank order matters: segment i must be x_0 then x_1 ... then x_(p-1).
 * Contiguous affine elements on the direct path, or on the schedule when
 * the vector passes the limit (8 bytes an element). */
static void test_noncommutative(void)
{
    MPI_Datatype aff;
    MPI_Op op;
    CHECK_RC(MPI_Type_contiguous(2, MPI_UNSIGNED, &aff));
    CHECK_RC(MPI_Type_commit(&aff));
    CHECK_RC(MPI_Op_create(compose, 0, &op));
    static const int lens[] = {1, 5, 40};
    int *rc = malloc((size_t)size * sizeof *rc);
    if (!rc)
        FATAL("out of memory");
    for (int k = 0; k < 3; k++)
        for (int inplace = 0; inplace < 2; inplace++) {
            int total = 0, off = 0;
            for (int q = 0; q < size; q++) {
                rc[q] = seg(1, lens[k], q);
                if (q < rank)
                    off += rc[q];
                total += rc[q];
            }
            affine_t *s = malloc((size_t)total * sizeof *s);
            affine_t *r = malloc((size_t)total * sizeof *r);
            if (!s || !r)
                FATAL("out of memory");
            for (int i = 0; i < total; i++)
                (inplace ? r : s)[i] = affine_of(rank, (size_t)i);
            CHECK_RC(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : s, r, rc, aff, op, comm));
            for (int i = 0; i < rc[rank]; i++) {
                affine_t want = affine_of(0, (size_t)(off + i));
                for (int q = 1; q < size; q++) {
                    affine_t x = affine_of(q, (size_t)(off + i));
                    int one = 1;
                    compose(&want, &x, &one, NULL);
                    want = x;
                }
                if (r[i].a != want.a || r[i].b != want.b) {
                    CHECK(0, "non-commutative reduce_scatter of %d%s: element %d of rank %d is "
                          "(%u, %u), not (%u, %u)", total, inplace ? ", in place" : "", i, rank,
                          r[i].a, r[i].b, want.a, want.b);
                    break;
                }
            }
            free(s);
            free(r);
        }
    free(rc);
    CHECK_RC(MPI_Op_free(&op));
    CHECK_RC(MPI_Type_free(&aff));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK_RC(MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &every_other));
    CHECK_RC(MPI_Type_commit(&every_other));
    for (int c = 0; c < 2; c++) {
        if (c == 0)
            comm = MPI_COMM_WORLD;
        else
            CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comm));
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        for (int mode = 0; mode < N_MODES; mode++) {
            char name[64];
            snprintf(name, sizeof name, "%s_scatter_mode%d", c ? "reversed" : "world", mode);
            mtest_begin(name);
            test_scatter(mode);
            mtest_end();
            snprintf(name, sizeof name, "%s_gather_mode%d", c ? "reversed" : "world", mode);
            mtest_begin(name);
            test_gather(mode);
            mtest_end();
            snprintf(name, sizeof name, "%s_reduce_scatter_mode%d", c ? "reversed" : "world",
                     mode);
            mtest_begin(name);
            test_reduce_scatter(mode);
            mtest_end();
        }
        mtest_begin(c ? "reversed_noncommutative" : "world_noncommutative");
        test_noncommutative();
        mtest_end();
        if (c)
            CHECK_RC(MPI_Comm_free(&comm));
    }
    CHECK_RC(MPI_Type_free(&every_other));
    return mtest_finalize();
}
