/* Binomial bcast and reduce on 3-8 ranks where some ranks take the direct
 * path (contiguous data, coll_tree.h) and others the scheduled one (a
 * strided type with the same type signature), or all one of them: they
 * must meet and give the same results, at every root, in place or not,
 * with counts on both sides of the direct reduce's 1 KB limit and of the
 * eager limit (a bcast of 40 KB goes by rendezvous), on MPI_COMM_WORLD and
 * on a communicator whose ranks run backwards (the direct sends name world
 * ranks); a non-commutative op keeps rank order. */
#include "../mpi/mtest.h"
#include "affine_op.h"

static MPI_Comm comm;
static int rank, size;
/* 256 and 257 ints: either side of the direct reduce's limit. */
static const int counts[] = {0, 1, 7, 256, 257, 3000, 10000};
#define N_COUNTS ((int)(sizeof counts / sizeof counts[0]))
#define N_MODES 4

static int val(int r, int i) { return (r + 1) * 1000 + i * 3 + r; }

/* mode 0: all contiguous; 1: odd ranks strided; 2: even ranks; 3: all. */
static int strided(int mode)
{
    return mode == 3 || (mode == 1 && rank % 2) || (mode == 2 && rank % 2 == 0);
}

/* Buffers of n ints, contiguous or every second int (a vector type). */
typedef struct {
    int *mem;
    int stride;
    MPI_Datatype type; /* one element describes all n ints */
    int count;
} buf_t;

static void buf_make(buf_t *b, int n, int mode)
{
    b->stride = strided(mode) ? 2 : 1;
    b->mem = malloc((size_t)(n ? n : 1) * (size_t)b->stride * sizeof(int));
    if (!b->mem)
        FATAL("out of memory");
    for (int i = 0; i < n * b->stride; i++)
        b->mem[i] = -7;
    if (b->stride == 2 && n) {
        MPI_Type_vector(n, 1, 2, MPI_INT, &b->type);
        MPI_Type_commit(&b->type);
        b->count = 1;
    } else {
        b->type = MPI_INT;
        b->count = n;
    }
}

static void buf_free(buf_t *b)
{
    if (b->type != MPI_INT)
        MPI_Type_free(&b->type);
    free(b->mem);
}

static int *at(buf_t *b, int i) { return &b->mem[i * b->stride]; }

static void test_bcast(int mode)
{
    for (int k = 0; k < N_COUNTS; k++)
        for (int root = 0; root < size; root++) {
            int n = counts[k];
            buf_t b;
            buf_make(&b, n, mode);
            for (int i = 0; i < n; i++)
                *at(&b, i) = rank == root ? val(root, i) : -1;
            CHECK_RC(MPI_Bcast(b.mem, b.count, b.type, root, comm));
            for (int i = 0; i < n; i++)
                if (*at(&b, i) != val(root, i)) {
                    CHECK(0, "bcast of %d ints from root %d, mode %d: element %d is %d, not %d",
                          n, root, mode, i, *at(&b, i), val(root, i));
                    break;
                }
            buf_free(&b);
        }
}

static void test_reduce(int mode)
{
    for (int k = 0; k < N_COUNTS; k++)
        for (int root = 0; root < size; root++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int n = counts[k], ip = inplace && rank == root;
                buf_t s, r;
                buf_make(&s, n, mode);
                buf_make(&r, n, mode);
                for (int i = 0; i < n; i++)
                    *at(ip ? &r : &s, i) = val(rank, i);
                CHECK_RC(MPI_Reduce(ip ? MPI_IN_PLACE : s.mem, r.mem, r.count, r.type, MPI_SUM,
                                    root, comm));
                if (rank == root)
                    for (int i = 0; i < n; i++) {
                        int want = 0;
                        for (int q = 0; q < size; q++)
                            want += val(q, i);
                        if (*at(&r, i) != want) {
                            CHECK(0, "reduce of %d ints to root %d, mode %d%s: element %d is %d, "
                                  "not %d", n, root, mode, ip ? ", in place" : "", i, *at(&r, i),
                                  want);
                            break;
                        }
                    }
                buf_free(&s);
                buf_free(&r);
            }
}

/* Rank order matters: the root must get x_0 then x_1 ... then x_(p-1).
 * Contiguous affine elements on the direct path, or on the schedule when
 * the vector passes the limit (300 elements of 8 bytes). */
static void test_noncommutative(void)
{
    MPI_Datatype aff;
    MPI_Op op;
    CHECK_RC(MPI_Type_contiguous(2, MPI_UNSIGNED, &aff));
    CHECK_RC(MPI_Type_commit(&aff));
    CHECK_RC(MPI_Op_create(compose, 0, &op));
    static const int lens[] = {1, 5, 128, 300};
    for (int k = 0; k < 4; k++) {
        int n = lens[k];
        affine_t *s = malloc((size_t)n * sizeof *s), *r = malloc((size_t)n * sizeof *r);
        if (!s || !r)
            FATAL("out of memory");
        for (int root = 0; root < size; root++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int ip = inplace && rank == root;
                for (int i = 0; i < n; i++)
                    (ip ? r : s)[i] = affine_of(rank, (size_t)i);
                CHECK_RC(MPI_Reduce(ip ? MPI_IN_PLACE : s, r, n, aff, op, root, comm));
                if (rank != root)
                    continue;
                for (int i = 0; i < n; i++) {
                    affine_t want = affine_of(0, (size_t)i);
                    for (int q = 1; q < size; q++) {
                        affine_t x = affine_of(q, (size_t)i);
                        int one = 1;
                        compose(&want, &x, &one, NULL);
                        want = x;
                    }
                    if (r[i].a != want.a || r[i].b != want.b) {
                        CHECK(0, "non-commutative reduce of %d to root %d%s: element %d is "
                              "(%u, %u), not (%u, %u)", n, root, ip ? ", in place" : "", i,
                              r[i].a, r[i].b, want.a, want.b);
                        break;
                    }
                }
            }
        free(s);
        free(r);
    }
    CHECK_RC(MPI_Op_free(&op));
    CHECK_RC(MPI_Type_free(&aff));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (int c = 0; c < 2; c++) {
        if (c == 0)
            comm = MPI_COMM_WORLD;
        else
            CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comm));
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        for (int mode = 0; mode < N_MODES; mode++) {
            char name[64];
            snprintf(name, sizeof name, "%s_bcast_mode%d", c ? "reversed" : "world", mode);
            mtest_begin(name);
            test_bcast(mode);
            mtest_end();
            snprintf(name, sizeof name, "%s_reduce_mode%d", c ? "reversed" : "world", mode);
            mtest_begin(name);
            test_reduce(mode);
            mtest_end();
        }
        mtest_begin(c ? "reversed_noncommutative" : "world_noncommutative");
        test_noncommutative();
        mtest_end();
        if (c)
            CHECK_RC(MPI_Comm_free(&comm));
    }
    return mtest_finalize();
}
