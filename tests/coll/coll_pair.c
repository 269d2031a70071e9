/* Two-rank collectives where one rank takes the direct pair path
 * (contiguous data) and the other the scheduled one (a strided type with
 * the same type signature), both contiguous, or both strided: bcast,
 * reduce, allreduce, gather, scatter, allgather, alltoall and
 * reduce_scatter(_block) must meet
 * and give the same results, at every root, in place or not, with counts
 * on both sides of the pair path's limits; the non-commutative op keeps
 * rank order. Runs on
 * communicators of two ranks split from the world (np 2 and 4). */
#include "../mpi/mtest.h"

static MPI_Comm comm;
static int rank;
/* 1024 and 1025 ints: either side of the 2-rank bcast's binomial row (4 KB). */
static const int counts[] = {0, 1, 7, 300, 1024, 1025, 3000};
#define N_COUNTS ((int)(sizeof counts / sizeof counts[0]))

static int val(int r, int i) { return (r + 1) * 1000 + i * 3 + r; }

/* Buffers of n ints, contiguous or every second int (a vector type). */
typedef struct {
    int *mem;
    int stride, n;
    MPI_Datatype type; /* one element describes all n ints */
    int count;
} buf_t;

static void buf_make(buf_t *b, int n, int strided)
{
    b->n = n;
    b->stride = strided ? 2 : 1;
    b->mem = malloc((size_t)(n ? n : 1) * (size_t)b->stride * sizeof(int));
    if (!b->mem)
        FATAL("out of memory");
    for (int i = 0; i < n * b->stride; i++)
        b->mem[i] = -7;
    if (strided && n) {
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

/* mode 0: both contiguous; 1: rank 0 strided; 2: rank 1 strided; 3: both. */
static int strided(int mode) { return mode == 3 || mode == rank + 1; }

static void test_bcast_reduce(int mode)
{
    for (int k = 0; k < N_COUNTS; k++) {
        int n = counts[k];
        for (int root = 0; root < 2; root++) {
            buf_t b, s, r;
            buf_make(&b, n, strided(mode));
            for (int i = 0; i < n; i++)
                *at(&b, i) = rank == root ? val(root, i) : -1;
            CHECK_RC(MPI_Bcast(b.mem, b.count, b.type, root, comm));
            for (int i = 0; i < n; i++)
                if (*at(&b, i) != val(root, i)) {
                    CHECK_INT(*at(&b, i), val(root, i), "bcast element");
                    break;
                }
            for (int inplace = 0; inplace < 2; inplace++) {
                buf_make(&s, n, strided(mode));
                buf_make(&r, n, strided(mode));
                for (int i = 0; i < n; i++)
                    *at(inplace && rank == root ? &r : &s, i) = val(rank, i);
                CHECK_RC(MPI_Reduce(inplace && rank == root ? MPI_IN_PLACE : s.mem, r.mem,
                                    r.count, r.type, MPI_SUM, root, comm));
                if (rank == root)
                    for (int i = 0; i < n; i++)
                        if (*at(&r, i) != val(0, i) + val(1, i)) {
                            CHECK_INT(*at(&r, i), val(0, i) + val(1, i), "reduce element");
                            break;
                        }
                buf_free(&s);
                buf_free(&r);
                buf_make(&s, n, strided(mode));
                buf_make(&r, n, strided(mode));
                for (int i = 0; i < n; i++)
                    *at(inplace ? &r : &s, i) = val(rank, i);
                CHECK_RC(MPI_Allreduce(inplace ? MPI_IN_PLACE : s.mem, r.mem, r.count, r.type,
                                       MPI_MAX, comm));
                for (int i = 0; i < n; i++)
                    if (*at(&r, i) != val(1, i)) {
                        CHECK_INT(*at(&r, i), val(1, i), "allreduce element");
                        break;
                    }
                buf_free(&s);
                buf_free(&r);
            }
            buf_free(&b);
        }
    }
}

static void test_gather_scatter(int mode)
{
    for (int k = 0; k < N_COUNTS; k++) {
        int n = counts[k];
        for (int root = 0; root < 2; root++)
            for (int inplace = 0; inplace < 2; inplace++) {
                /* The root's buffer of two blocks is contiguous or strided
                 * as a whole: blocks of n ints each. */
                buf_t all, one;
                buf_make(&all, 2 * n, strided(mode));
                buf_make(&one, n, strided(mode));
                MPI_Datatype blk = MPI_INT;
                int bcount = n;
                if (strided(mode) && n) {
                    MPI_Type_vector(n, 1, 2, MPI_INT, &blk);
                    MPI_Datatype rs;
                    MPI_Type_create_resized(blk, 0, (MPI_Aint)(2 * n) * (MPI_Aint)sizeof(int), &rs);
                    MPI_Type_free(&blk);
                    blk = rs;
                    MPI_Type_commit(&blk);
                    bcount = 1;
                }
                int ip = inplace && rank == root;
                for (int i = 0; i < n; i++)
                    *(ip ? at(&all, root * n + i) : at(&one, i)) = val(rank, i);
                CHECK_RC(MPI_Gather(ip ? MPI_IN_PLACE : one.mem, one.count, one.type, all.mem,
                                    bcount, blk, root, comm));
                if (rank == root)
                    for (int q = 0; q < 2; q++)
                        for (int i = 0; i < n; i++)
                            if (*at(&all, q * n + i) != val(q, i)) {
                                CHECK_INT(*at(&all, q * n + i), val(q, i), "gather element");
                                i = n;
                                q = 2;
                            }
                for (int q = 0; q < 2; q++)
                    for (int i = 0; i < n; i++)
                        *at(&all, q * n + i) = rank == root ? val(q, i) + 1 : -1;
                for (int i = 0; i < n; i++)
                    *at(&one, i) = -1;
                CHECK_RC(MPI_Scatter(all.mem, bcount, blk, ip ? MPI_IN_PLACE : one.mem, one.count,
                                     one.type, root, comm));
                for (int i = 0; i < n; i++) {
                    int got = ip ? *at(&all, root * n + i) : *at(&one, i);
                    if (got != val(rank, i) + 1) {
                        CHECK_INT(got, val(rank, i) + 1, "scatter element");
                        break;
                    }
                }
                if (blk != MPI_INT)
                    MPI_Type_free(&blk);
                buf_free(&all);
                buf_free(&one);
            }
    }
}

/* The blocks of a two-block buffer: n ints each, contiguous or every
 * second int (one resized vector per block). */
static MPI_Datatype block_type(int n, int strided_, int *bcount)
{
    *bcount = n;
    if (!strided_ || !n)
        return MPI_INT;
    MPI_Datatype v, rs;
    MPI_Type_vector(n, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n) * (MPI_Aint)sizeof(int), &rs);
    MPI_Type_free(&v);
    MPI_Type_commit(&rs);
    *bcount = 1;
    return rs;
}

/* Checks the two blocks of all: block q element i is want(q, i). */
static void check_blocks(buf_t *all, int n, int (*want)(int q, int i), const char *what)
{
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < n; i++)
            if (*at(all, q * n + i) != want(q, i)) {
                CHECK_INT(*at(all, q * n + i), want(q, i), what);
                return;
            }
}

static int gathered(int q, int i) { return val(q, i); }
/* Alltoall: block q of rank r's result is what rank q sent to r. */
static int exchanged(int q, int i) { return val(q, i) * 4 + rank; }

static void test_allgather_alltoall(int mode)
{
    for (int k = 0; k < N_COUNTS; k++) {
        int n = counts[k];
        for (int inplace = 0; inplace < 2; inplace++) {
            buf_t all, one, out;
            buf_make(&all, 2 * n, strided(mode));
            buf_make(&one, n, strided(mode));
            buf_make(&out, 2 * n, strided(mode));
            int bcount;
            MPI_Datatype blk = block_type(n, strided(mode), &bcount);
            for (int i = 0; i < n; i++)
                *(inplace ? at(&all, rank * n + i) : at(&one, i)) = val(rank, i);
            CHECK_RC(MPI_Allgather(inplace ? MPI_IN_PLACE : one.mem, one.count, one.type,
                                   all.mem, bcount, blk, comm));
            check_blocks(&all, n, gathered, "allgather element");
            /* Block q of the send buffer goes to rank q. */
            buf_t *send = inplace ? &out : &all;
            for (int q = 0; q < 2; q++)
                for (int i = 0; i < n; i++) {
                    *at(send, q * n + i) = val(rank, i) * 4 + q;
                    if (!inplace)
                        *at(&out, q * n + i) = -1;
                }
            CHECK_RC(MPI_Alltoall(inplace ? MPI_IN_PLACE : all.mem, bcount, blk, out.mem, bcount,
                                  blk, comm));
            check_blocks(&out, n, exchanged, "alltoall element");
            if (blk != MPI_INT)
                MPI_Type_free(&blk);
            buf_free(&all);
            buf_free(&one);
            buf_free(&out);
        }
    }
}

/* Segments of reduce_scatter at two ranks (ints): empty ones, both sides
 * of the 2-rank direct row (2 KB: 512 ints) and of the pair's 1 KB
 * scratch (a segment past it takes the schedule on that rank alone). */
static const int segs[][2] = {{0, 1}, {1, 0}, {1, 1}, {2, 30}, {16, 16}, {17, 15},
                              {256, 3}, {400, 112}, {512, 0}, {257, 257}, {700, 5}};
#define N_SEGS ((int)(sizeof segs / sizeof segs[0]))

/* An int whose extent is two ints: strided vectors of it, not contiguous. */
static MPI_Datatype gap_int(void)
{
    MPI_Datatype t;
    MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)(2 * sizeof(int)), &t);
    MPI_Type_commit(&t);
    return t;
}

static void test_reduce_scatter(int mode)
{
    MPI_Datatype gap = gap_int();
    int st = strided(mode) ? 2 : 1;
    MPI_Datatype dt = st == 2 ? gap : MPI_INT;
    for (int k = 0; k < N_SEGS; k++)
        for (int block = 0; block < 2; block++)
            for (int inplace = 0; inplace < 2; inplace++) {
                int rc[2] = {segs[k][0], block ? segs[k][0] : segs[k][1]};
                int n = rc[0] + rc[1], off = rank ? rc[0] : 0, mine = rc[rank];
                int *s = malloc((size_t)(n ? n : 1) * (size_t)st * sizeof(int));
                int *r = malloc((size_t)(n ? n : 1) * (size_t)st * sizeof(int));
                if (!s || !r)
                    FATAL("out of memory");
                for (int i = 0; i < n * st; i++)
                    s[i] = r[i] = -7;
                for (int i = 0; i < n; i++)
                    (inplace ? r : s)[i * st] = val(rank, i);
                const void *sb = inplace ? MPI_IN_PLACE : s;
                if (block)
                    CHECK_RC(MPI_Reduce_scatter_block(sb, r, rc[0], dt, MPI_SUM, comm));
                else
                    CHECK_RC(MPI_Reduce_scatter(sb, r, rc, dt, MPI_SUM, comm));
                for (int i = 0; i < mine; i++)
                    if (r[i * st] != val(0, off + i) + val(1, off + i)) {
                        CHECK(0, "reduce_scatter%s segments %d+%d%s: element %d is %d, not %d",
                              block ? "_block" : "", rc[0], rc[1], inplace ? ", in place" : "", i,
                              r[i * st], val(0, off + i) + val(1, off + i));
                        break;
                    }
                if (!inplace && st == 2 && mine)
                    CHECK_INT(r[1], -7, "reduce_scatter wrote a gap");
                free(s);
                free(r);
            }
    MPI_Type_free(&gap);
}

/* x -> m x + c under composition "a then b": not commutative. */
static void compose(void *in_, void *inout_, int *len, MPI_Datatype *dt)
{
    int *a = in_, *b = inout_;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        unsigned m = (unsigned)a[2 * i] * (unsigned)b[2 * i];
        unsigned c = (unsigned)b[2 * i] * (unsigned)a[2 * i + 1] + (unsigned)b[2 * i + 1];
        b[2 * i] = (int)m;
        b[2 * i + 1] = (int)c;
    }
}

static void test_noncommutative(void)
{
    MPI_Op op;
    CHECK_RC(MPI_Op_create(compose, 0, &op));
    enum { N = 5 };
    int x[2][2 * N], s[2 * N], r[2 * N], want[2 * N];
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < N; i++) {
            x[q][2 * i] = 2 * (q + i) + 1;
            x[q][2 * i + 1] = q * 11 + i;
        }
    memcpy(want, x[1], sizeof want);
    int len = N;
    compose(x[0], want, &len, NULL); /* x_0 then x_1 */
    for (int root = 0; root < 2; root++)
        for (int inplace = 0; inplace < 2; inplace++) {
            int ip = inplace && rank == root;
            memcpy(ip ? r : s, x[rank], sizeof s);
            CHECK_RC(MPI_Reduce(ip ? MPI_IN_PLACE : s, r, N, MPI_2INT, op, root, comm));
            if (rank == root)
                CHECK(!memcmp(r, want, sizeof r), "non-commutative reduce at root %d%s", root,
                      inplace ? ", in place" : "");
            memcpy(inplace ? r : s, x[rank], sizeof s);
            CHECK_RC(MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, N, MPI_2INT, op, comm));
            CHECK(!memcmp(r, want, sizeof r), "non-commutative allreduce%s",
                  inplace ? ", in place" : "");
        }
    /* reduce_scatter: rank 0 owns the first three pairs, rank 1 the rest. */
    int rc[2] = {3, N - 3};
    for (int inplace = 0; inplace < 2; inplace++) {
        memset(r, 0, sizeof r);
        memcpy(inplace ? r : s, x[rank], sizeof s);
        CHECK_RC(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : s, r, rc, MPI_2INT, op, comm));
        CHECK(!memcmp(r, want + (rank ? 2 * rc[0] : 0), (size_t)rc[rank] * 2 * sizeof(int)),
              "non-commutative reduce_scatter%s", inplace ? ", in place" : "");
    }
    CHECK_RC(MPI_Op_free(&op));
}

/* Back-to-back allreduces whose inputs come from the previous result, in
 * place every other call: a rank sends its next vector as soon as it has
 * the last result, so its message may arrive before the peer has posted
 * the receive; every element of every call is checked. Counts: one int,
 * 256 (1 KB, the largest the pair path writes out) and 2000 (the
 * schedule's). */
static void test_allreduce_chain(void)
{
    static const int chain_counts[] = {1, 256, 2000};
    enum { CALLS = 300 };
    for (int k = 0; k < 3; k++) {
        int n = chain_counts[k];
        int *s = malloc((size_t)n * sizeof(int)), *r = malloc((size_t)n * sizeof(int));
        int *prev = calloc((size_t)n, sizeof(int));
        if (!s || !r || !prev)
            FATAL("out of memory");
        for (int call = 0; call < CALLS; call++) {
            int inplace = call % 2;
            for (int i = 0; i < n; i++)
                (inplace ? r : s)[i] = prev[i] % 1000 + rank * 7 + call + i;
            CHECK_RC(MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, n, MPI_INT, MPI_SUM, comm));
            for (int i = 0; i < n; i++) {
                int want = 2 * (prev[i] % 1000) + 7 + 2 * (call + i);
                if (r[i] != want) {
                    CHECK_INT(r[i], want, "chained allreduce element");
                    call = CALLS;
                    break;
                }
            }
            memcpy(prev, r, (size_t)n * sizeof(int));
        }
        free(s);
        free(r);
        free(prev);
    }
    /* The non-commutative op chained: x_0 then x_1 in every call. */
    MPI_Op op;
    CHECK_RC(MPI_Op_create(compose, 0, &op));
    int x[2][2], want[2], r2[2] = {1, 0};
    for (int call = 0; call < CALLS; call++) {
        for (int q = 0; q < 2; q++) {
            x[q][0] = 2 * ((r2[0] + q + call) % 50) + 1;
            x[q][1] = (r2[1] + 3 * q + call) % 100;
        }
        memcpy(want, x[1], sizeof want);
        int len = 1;
        compose(x[0], want, &len, NULL);
        memcpy(r2, x[rank], sizeof r2);
        CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, r2, 1, MPI_2INT, op, comm));
        if (memcmp(r2, want, sizeof want)) {
            CHECK(0, "chained non-commutative allreduce, call %d", call);
            break;
        }
    }
    CHECK_RC(MPI_Op_free(&op));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize % 2)
        FATAL("run with an even number of ranks");
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wrank / 2, wrank, &comm));
    MPI_Comm_rank(comm, &rank);
    for (int mode = 0; mode < 4; mode++) {
        char name[64];
        snprintf(name, sizeof name, "bcast_reduce_mode%d", mode);
        mtest_begin(name);
        test_bcast_reduce(mode);
        mtest_end();
        snprintf(name, sizeof name, "gather_scatter_mode%d", mode);
        mtest_begin(name);
        test_gather_scatter(mode);
        mtest_end();
        snprintf(name, sizeof name, "allgather_alltoall_mode%d", mode);
        mtest_begin(name);
        test_allgather_alltoall(mode);
        mtest_end();
        snprintf(name, sizeof name, "reduce_scatter_mode%d", mode);
        mtest_begin(name);
        test_reduce_scatter(mode);
        mtest_end();
    }
    mtest_begin("noncommutative");
    test_noncommutative();
    mtest_end();
    mtest_begin("allreduce_chain");
    test_allreduce_chain();
    mtest_end();
    CHECK_RC(MPI_Comm_free(&comm));
    return mtest_finalize();
}
