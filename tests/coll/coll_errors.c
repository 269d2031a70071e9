/* Reduction operations and error cases: MPI_Reduce_local on every
 * predefined op x type pair (the allowed ones compute the right value, the
 * others fail with MPI_ERR_OP), op handles, and bad roots (MPI_ERR_ROOT)
 * and ops (MPI_ERR_OP) on collectives, with the function named in the
 * message, and aliased send and receive buffers (MPI_ERR_BUFFER). */
#include "../mpi/mtest.h"

#include <complex.h>
#include <stdbool.h>

enum { C_INT = 1, C_FLOAT = 2, C_COMPLEX = 4, C_LOGICAL = 8, C_BYTE = 16, C_PAIR = 32, C_NONE = 64 };

typedef struct {
    MPI_Datatype dt;
    const char *name;
    int cls;
} type_t;

static const type_t types[] = {
    {MPI_INT, "INT", C_INT}, {MPI_UNSIGNED, "UNSIGNED", C_INT}, {MPI_SHORT, "SHORT", C_INT},
    {MPI_UNSIGNED_SHORT, "USHORT", C_INT}, {MPI_LONG, "LONG", C_INT},
    {MPI_UNSIGNED_LONG, "ULONG", C_INT}, {MPI_LONG_LONG, "LLONG", C_INT},
    {MPI_UNSIGNED_LONG_LONG, "ULLONG", C_INT}, {MPI_SIGNED_CHAR, "SCHAR", C_INT},
    {MPI_UNSIGNED_CHAR, "UCHAR", C_INT}, {MPI_INT8_T, "INT8", C_INT},
    {MPI_INT16_T, "INT16", C_INT}, {MPI_INT32_T, "INT32", C_INT}, {MPI_INT64_T, "INT64", C_INT},
    {MPI_UINT8_T, "UINT8", C_INT}, {MPI_UINT16_T, "UINT16", C_INT},
    {MPI_UINT32_T, "UINT32", C_INT}, {MPI_UINT64_T, "UINT64", C_INT},
    {MPI_AINT, "AINT", C_INT}, {MPI_OFFSET, "OFFSET", C_INT}, {MPI_COUNT, "COUNT", C_INT},
    {MPI_FLOAT, "FLOAT", C_FLOAT}, {MPI_DOUBLE, "DOUBLE", C_FLOAT},
    {MPI_LONG_DOUBLE, "LDOUBLE", C_FLOAT}, {MPI_C_FLOAT_COMPLEX, "CFLOAT", C_COMPLEX},
    {MPI_C_DOUBLE_COMPLEX, "CDOUBLE", C_COMPLEX}, {MPI_C_BOOL, "BOOL", C_LOGICAL},
    {MPI_BYTE, "BYTE", C_BYTE}, {MPI_2INT, "2INT", C_PAIR}, {MPI_DOUBLE_INT, "DOUBLE_INT", C_PAIR},
    {MPI_FLOAT_INT, "FLOAT_INT", C_PAIR}, {MPI_LONG_INT, "LONG_INT", C_PAIR},
    {MPI_SHORT_INT, "SHORT_INT", C_PAIR},
    /* MPI_CHAR reduces as C's char, as in MPICH and Open MPI (coll_char). */
    {MPI_CHAR, "CHAR", C_INT}, {MPI_WCHAR, "WCHAR", C_NONE}, {MPI_PACKED, "PACKED", C_NONE},
};

typedef struct {
    MPI_Op op;
    const char *name;
    int allowed; /* classes */
} op_t;

static const op_t ops[] = {
    {MPI_MAX, "MAX", C_INT | C_FLOAT}, {MPI_MIN, "MIN", C_INT | C_FLOAT},
    {MPI_SUM, "SUM", C_INT | C_FLOAT | C_COMPLEX}, {MPI_PROD, "PROD", C_INT | C_FLOAT | C_COMPLEX},
    {MPI_LAND, "LAND", C_INT | C_LOGICAL}, {MPI_LOR, "LOR", C_INT | C_LOGICAL},
    {MPI_LXOR, "LXOR", C_INT | C_LOGICAL}, {MPI_BAND, "BAND", C_INT | C_BYTE},
    {MPI_BOR, "BOR", C_INT | C_BYTE}, {MPI_BXOR, "BXOR", C_INT | C_BYTE},
    {MPI_MAXLOC, "MAXLOC", C_PAIR}, {MPI_MINLOC, "MINLOC", C_PAIR}, {MPI_REPLACE, "REPLACE", 0},
};

/* Expected value of (a op b) for small non-negative integers. */
static long expect(MPI_Op op, long a, long b)
{
    if (op == MPI_MAX) return a > b ? a : b;
    if (op == MPI_MIN) return a < b ? a : b;
    if (op == MPI_SUM) return a + b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_LAND) return a && b;
    if (op == MPI_LOR) return a || b;
    if (op == MPI_LXOR) return !a != !b;
    if (op == MPI_BAND) return a & b;
    if (op == MPI_BOR) return a | b;
    return a ^ b;
}

/* Stores v into element i of a buffer of type dt; reads it back. */
#define SCALAR_CASES(X)                                                        \
    X(MPI_INT, int) X(MPI_UNSIGNED, unsigned) X(MPI_SHORT, short)              \
    X(MPI_UNSIGNED_SHORT, unsigned short) X(MPI_LONG, long)                    \
    X(MPI_UNSIGNED_LONG, unsigned long) X(MPI_LONG_LONG, long long)            \
    X(MPI_UNSIGNED_LONG_LONG, unsigned long long) X(MPI_SIGNED_CHAR, signed char) \
    X(MPI_UNSIGNED_CHAR, unsigned char) X(MPI_INT8_T, int8_t) X(MPI_INT16_T, int16_t) \
    X(MPI_INT32_T, int32_t) X(MPI_INT64_T, int64_t) X(MPI_UINT8_T, uint8_t)    \
    X(MPI_UINT16_T, uint16_t) X(MPI_UINT32_T, uint32_t) X(MPI_UINT64_T, uint64_t) \
    X(MPI_AINT, MPI_Aint) X(MPI_OFFSET, MPI_Offset) X(MPI_COUNT, MPI_Count)    \
    X(MPI_FLOAT, float) X(MPI_DOUBLE, double) X(MPI_LONG_DOUBLE, long double)  \
    X(MPI_C_FLOAT_COMPLEX, float _Complex) X(MPI_C_DOUBLE_COMPLEX, double _Complex) \
    X(MPI_C_BOOL, bool) X(MPI_BYTE, unsigned char) X(MPI_CHAR, char)

static void put(MPI_Datatype dt, void *buf, int i, long v)
{
#define PUT(d, T) if (dt == d) { ((T *)buf)[i] = (T)v; return; }
    SCALAR_CASES(PUT)
#undef PUT
}
static long get(MPI_Datatype dt, const void *buf, int i)
{
#define GET(d, T) if (dt == d) return (long)creall((long double _Complex)((const T *)buf)[i]);
    SCALAR_CASES(GET)
#undef GET
    return -999;
}

static void test_reduce_local(void)
{
    const long av[4] = {0, 1, 3, 6}, bv[4] = {0, 5, 3, 2};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            char in[256], inout[256];
            memset(in, 0, sizeof in);
            memset(inout, 0, sizeof inout);
            int is_pair = types[t].cls == C_PAIR;
            if (!is_pair)
                for (int i = 0; i < 4; i++) {
                    long a = av[i], b = bv[i];
                    if (types[t].cls == C_LOGICAL) {
                        a = a != 0;
                        b = b != 0;
                    }
                    put(types[t].dt, in, i, a);
                    put(types[t].dt, inout, i, b);
                }
            else if (types[t].dt == MPI_2INT) {
                int x[4][2] = {{1, 0}, {5, 1}, {3, 2}, {3, 3}}, y[4][2] = {{2, 9}, {5, 0}, {1, 1}, {3, 1}};
                memcpy(in, x, sizeof x);
                memcpy(inout, y, sizeof y);
            }
            int rc = MPI_Reduce_local(in, inout, 4, types[t].dt, ops[o].op);
            int allowed = (ops[o].allowed & types[t].cls) != 0;
            char what[96];
            snprintf(what, sizeof what, "Reduce_local(%s, %s)", ops[o].name, types[t].name);
            if (!allowed) {
                CHECK_CLASS(rc, MPI_ERR_OP, what);
                continue;
            }
            CHECK(rc == MPI_SUCCESS, "%s failed: %s", what, mtest_errstr(rc));
            if (rc != MPI_SUCCESS)
                continue;
            if (!is_pair) {
                for (int i = 0; i < 4; i++) {
                    long a = av[i], b = bv[i];
                    if (types[t].cls == C_LOGICAL) {
                        a = a != 0;
                        b = b != 0;
                    }
                    long e = expect(ops[o].op, a, b);
                    CHECK(get(types[t].dt, inout, i) == e, "%s element %d: got %ld want %ld", what,
                          i, get(types[t].dt, inout, i), e);
                }
            } else if (types[t].dt == MPI_2INT) {
                int(*y)[2] = (int(*)[2])inout;
                /* MAXLOC: (2,9) (5,0) (3,2) (3,1); MINLOC: (1,0) (5,0) (1,1) (3,1). */
                const int mx[4][2] = {{2, 9}, {5, 0}, {3, 2}, {3, 1}}, mn[4][2] = {{1, 0}, {5, 0}, {1, 1}, {3, 1}};
                const int(*e)[2] = ops[o].op == MPI_MAXLOC ? mx : mn;
                for (int i = 0; i < 4; i++)
                    CHECK(y[i][0] == e[i][0] && y[i][1] == e[i][1], "%s pair %d: (%d,%d)", what, i,
                          y[i][0], y[i][1]);
            }
        }
    }
    /* The padded pair type in the user's layout. */
    struct { double v; int i; } x[2] = {{1.5, 4}, {2.0, 1}}, y[2] = {{1.5, 2}, {1.0, 7}};
    CHECK_RC(MPI_Reduce_local(x, y, 2, MPI_DOUBLE_INT, MPI_MINLOC));
    CHECK(y[0].v == 1.5 && y[0].i == 2 && y[1].v == 1.0 && y[1].i == 7, "DOUBLE_INT minloc");
    /* MPI_IN_PLACE for either buffer, or one buffer as both: MPI_ERR_BUFFER
     * naming the argument (MPICH's reduce_local; this segfaulted). */
    int b[4] = {1, 2, 3, 4};
    int rc = MPI_Reduce_local(MPI_IN_PLACE, b, 4, MPI_INT, MPI_SUM);
    CHECK_CLASS(rc, MPI_ERR_BUFFER, "Reduce_local(MPI_IN_PLACE, b)");
    if (rc != MPI_SUCCESS)
        CHECK(strstr(mtest_errstr(rc), "MPI_Reduce_local") && strstr(mtest_errstr(rc), "inbuf"),
              "message names the function and inbuf: %s", mtest_errstr(rc));
    CHECK_CLASS(MPI_Reduce_local(b, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
                "Reduce_local(b, MPI_IN_PLACE)");
    CHECK_CLASS(MPI_Reduce_local(b, b, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER, "Reduce_local(b, b)");
    CHECK(b[0] == 1 && b[3] == 4, "a refused Reduce_local changed inoutbuf");
}

static void noncomm(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i] * 10 + ((int *)inout)[i];
}

static void test_user_ops(void)
{
    MPI_Op op;
    int commute = -1;
    CHECK_RC(MPI_Op_create(noncomm, 0, &op));
    CHECK_RC(MPI_Op_commutative(op, &commute));
    CHECK_INT(commute, 0, "user op commutative flag");
    CHECK_RC(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK_INT(commute, 1, "MPI_SUM commutative");
    int a[2] = {1, 2}, b[2] = {3, 4};
    CHECK_RC(MPI_Reduce_local(a, b, 2, MPI_INT, op));
    CHECK(b[0] == 13 && b[1] == 24, "user op via Reduce_local: %d %d", b[0], b[1]);
    CHECK_RC(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "Op_free sets MPI_OP_NULL");
    MPI_Op sum = MPI_SUM;
    CHECK_CLASS(MPI_Op_free(&sum), MPI_ERR_OP, "Op_free(MPI_SUM)");
}

static void test_collective_errors(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double d = 1, dr;
    int i = 1, ir;
    char msg[MPI_MAX_ERROR_STRING];
    int len, rc;
    rc = MPI_Allreduce(&d, &dr, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_OP, "Allreduce(MPI_DOUBLE, MPI_BAND)");
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        CHECK(strstr(msg, "MPI_Allreduce") != NULL, "message names the function: %s", msg);
    }
    CHECK_CLASS(MPI_Reduce(&i, &ir, 1, MPI_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD), MPI_ERR_OP,
                "Reduce(MPI_INT, MPI_MAXLOC)");
    CHECK_CLASS(MPI_Allreduce(&i, &ir, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP,
                "Allreduce(MPI_OP_NULL)");
    CHECK_CLASS(MPI_Allreduce(&i, &ir, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP,
                "Allreduce(MPI_REPLACE)");
    CHECK_CLASS(MPI_Scan(&d, &dr, 1, MPI_DOUBLE, MPI_LXOR, MPI_COMM_WORLD), MPI_ERR_OP,
                "Scan(MPI_DOUBLE, MPI_LXOR)");
    rc = MPI_Bcast(&i, 1, MPI_INT, size, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_ROOT, "Bcast(root = size)");
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        CHECK(strstr(msg, "MPI_Bcast") != NULL && strstr(msg, "root") != NULL,
              "message names the function and the root: %s", msg);
    }
    CHECK_CLASS(MPI_Bcast(&i, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT, "Bcast(root = -1)");
    CHECK_CLASS(MPI_Reduce(&i, &ir, 1, MPI_INT, MPI_SUM, size + 3, MPI_COMM_WORLD), MPI_ERR_ROOT,
                "Reduce(bad root)");
    CHECK_CLASS(MPI_Gather(&i, 1, MPI_INT, &ir, 1, MPI_INT, -2, MPI_COMM_WORLD), MPI_ERR_ROOT,
                "Gather(bad root)");
    MPI_Request req;
    CHECK_CLASS(MPI_Iscatter(&i, 1, MPI_INT, &ir, 1, MPI_INT, size, MPI_COMM_WORLD, &req),
                MPI_ERR_ROOT, "Iscatter(bad root)");
    CHECK_CLASS(MPI_Bcast(&i, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "Bcast(count -1)");
    CHECK_CLASS(MPI_Bcast(&i, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE,
                "Bcast(MPI_DATATYPE_NULL)");
    CHECK_CLASS(MPI_Allreduce(&i, &ir, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM,
                "Allreduce(MPI_COMM_NULL)");
    /* The communicator still works after the errors. */
    i = rank;
    CHECK_RC(MPI_Allreduce(&i, &ir, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(ir, size * (size - 1) / 2, "allreduce after errors");
}

/* The same buffer as sendbuf and recvbuf (no MPI_IN_PLACE) is aliasing,
 * which MPI forbids: MPI_ERR_BUFFER on every rank that uses both (MPICH
 * does the same), and nothing is sent, so the ranks stay in step. */
static void test_aliased_buffers(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int buf[64] = {0};
    int rc = MPI_Allreduce(buf, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_BUFFER, "Allreduce(buf, buf)");
    if (rc != MPI_SUCCESS) {
        const char *msg = mtest_errstr(rc);
        CHECK(strstr(msg, "MPI_Allreduce") && strstr(msg, "MPI_IN_PLACE"),
              "message names the function and MPI_IN_PLACE: %s", msg);
    }
    MPI_Request req;
    CHECK_CLASS(MPI_Iallreduce(buf, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req),
                MPI_ERR_BUFFER, "Iallreduce(buf, buf)");
    /* Only the root uses recvbuf; on WORLD the other ranks would send to a
     * root that has returned, so SELF, where every rank is the root. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Reduce(buf, buf, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_SELF), MPI_ERR_BUFFER,
                "Reduce(buf, buf) at the root");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    CHECK_CLASS(MPI_Allgather(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                "Allgather(buf, buf)");
    CHECK_CLASS(MPI_Alltoall(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                "Alltoall(buf, buf)");
    CHECK_CLASS(MPI_Scan(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                "Scan(buf, buf)");
    CHECK_CLASS(MPI_Reduce_scatter_block(buf, buf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                MPI_ERR_BUFFER, "Reduce_scatter_block(buf, buf)");
    /* sendbuf at this rank's own block of recvbuf is aliasing too, on
     * every rank (MPICH's noalias2: Allgather(&buf[rank], buf) hung every
     * rank but 0); as the root of a gather or scatter. */
    CHECK_CLASS(MPI_Allgather(&buf[2 * rank], 2, MPI_INT, buf, 2, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_BUFFER, "Allgather(&buf[own block], buf)");
    int counts[8], displs[8];
    for (int r = 0; r < size && r < 8; r++) {
        counts[r] = 1;
        displs[r] = size - 1 - r;
    }
    CHECK_CLASS(MPI_Allgatherv(&buf[size - 1 - rank], 1, MPI_INT, buf, counts, displs, MPI_INT,
                               MPI_COMM_WORLD),
                MPI_ERR_BUFFER, "Allgatherv(&buf[displs[rank]], buf)");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Gather(buf, 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_BUFFER,
                "Gather(buf, buf) at the root");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    if (rank == 1) { /* a root whose block is not the first; the check is local */
        CHECK_CLASS(MPI_Gather(&buf[1], 1, MPI_INT, buf, 1, MPI_INT, 1, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER, "Gather(&buf[root], buf) at root 1");
        CHECK_CLASS(MPI_Scatter(buf, 1, MPI_INT, &buf[1], 1, MPI_INT, 1, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER, "Scatter(buf, &buf[root]) at root 1");
    }
    /* Different blocks are fine. */
    for (int r = 0; r < 2 * size && r < 64; r++)
        buf[r] = -1;
    int mine[2] = {rank, rank};
    CHECK_RC(MPI_Allgather(mine, 2, MPI_INT, buf, 2, MPI_INT, MPI_COMM_WORLD));
    CHECK_INT(buf[2 * (size - 1)], size - 1, "allgather after the aliasing errors");
    /* No data on one side is no aliasing; neither is MPI_IN_PLACE. */
    CHECK_RC(MPI_Allreduce(buf, buf, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    buf[0] = 1;
    CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(buf[0], size, "in-place allreduce after the aliasing errors");
}

/* Counts that differ between the root and the others (MPICH's bcastlength,
 * ibcastlength): each non-root rank fails with MPI_ERR_TRUNCATE, whether its
 * message was longer or shorter than its buffer, and so do the ranks a
 * failing rank forwards to (4+ ranks); nothing hangs and the communicator
 * works afterwards. Small (binomial) and large messages, each pair on one
 * side of every size limit of the default table (at 2 ranks: 4 KB and the
 * shm row's 128 KB): counts on both sides of a limit pick different
 * algorithms, which do not meet (docs/design.md, "Collectives"). */
static void test_bcast_length(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static int buf[400000];
    const int small[2] = {1, 10}, large[2] = {40000, 400000};
    for (int nb = 0; nb < 2; nb++)
        for (int big = 0; big < 2; big++)
            for (int longer = 0; longer < 2; longer++) {
                const int *n = big ? large : small;
                int count = (rank == 0) == longer ? n[0] : n[1];
                int rc;
                if (nb) {
                    MPI_Request req;
                    rc = MPI_Ibcast(buf, count, MPI_INT, 0, MPI_COMM_WORLD, &req);
                    if (rc == MPI_SUCCESS)
                        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
                } else {
                    rc = MPI_Bcast(buf, count, MPI_INT, 0, MPI_COMM_WORLD);
                }
                char what[96];
                snprintf(what, sizeof what, "%s of %d ints, the root's %s", nb ? "Ibcast" : "Bcast",
                         count, longer ? "shorter" : "longer");
                /* The root may learn of it too (large messages: it
                 * receives in the allgather phase). */
                if (rank == 0 && rc == MPI_SUCCESS)
                    continue;
                CHECK_CLASS(rc, MPI_ERR_TRUNCATE, what);
                if (rc != MPI_SUCCESS)
                    CHECK(strstr(mtest_errstr(rc), "same amount of data on every rank"),
                          "%s: message says why: %s", what, mtest_errstr(rc));
            }
    buf[0] = rank == 0 ? 77 : 0;
    CHECK_RC(MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK_INT(buf[0], 77, "bcast after the mismatches");
}

/* A rank whose count is shorter than the root's gets the error, and
 * nothing is written past its buffer; under the shm bcast (which copies
 * what fits) it holds the root's first bytes. Message sizes of 1 to many
 * slot-sized chunks (TERN_COLL_SHM_SLOT). */
static void test_bcast_length_data(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *algo = getenv("TERN_BCAST_ALGORITHM");
    int shm = algo && !strcmp(algo, "shm");
    static int buf[20001];
    const int counts[3] = {10, 3000, 20000};
    for (int i = 0; i < 3; i++) {
        int n = counts[i], count = rank == 0 ? n : n / 2;
        for (int k = 0; k <= n; k++)
            buf[k] = rank == 0 ? 100 + k : -1;
        int rc = MPI_Bcast(buf, count, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0)
            continue;
        char what[64];
        snprintf(what, sizeof what, "Bcast of %d ints, the root's %d", count, n);
        CHECK_CLASS(rc, MPI_ERR_TRUNCATE, what);
        for (int k = count; k <= n; k++)
            if (buf[k] != -1) {
                CHECK_INT(buf[k], -1, "no byte written past a shorter buffer");
                break;
            }
        for (int k = 0; shm && k < count; k++)
            if (buf[k] != 100 + k) {
                CHECK_INT(buf[k], 100 + k, "the root's first bytes in a shorter buffer");
                break;
            }
    }
    int v = rank == 0 ? 5 : 0;
    CHECK_RC(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK_INT(v, 5, "bcast after the mismatches");
}

/* Allreduce counts that differ (erroneous): at 2 ranks the default table
 * sends every size above 8 KB through shm, whose ranks agree on the
 * shortest count in the first step, so counts of one and several steps
 * (the 2-rank slot is 128 KB), blocking or not, return instead of one
 * rank waiting for steps the other never runs; the communicator works
 * afterwards. The result is undefined, not checked. Elsewhere (other
 * sizes, forced algorithms, no shm transport) mismatched counts may hang:
 * not run. */
static void test_allreduce_length(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *algo = getenv("TERN_ALLREDUCE_ALGORITHM"), *tl = getenv("TERN_TRANSPORTS");
    if (size != 2 || (algo && strcmp(algo, "shm") != 0) || (tl && !strstr(tl, "shm")))
        return;
    static int in[100000], out[100000];
    const int pairs[3][2] = {{3000, 20000}, {20000, 100000}, {40000, 70000}};
    for (int k = 0; k < 3; k++)
        for (int nb = 0; nb < 2; nb++) {
            int count = pairs[k][rank ^ (nb & 1)];
            MPI_Request req;
            if (nb) {
                CHECK_RC(MPI_Iallreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
                CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
            } else {
                CHECK_RC(MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            }
        }
    for (int i = 0; i < 50000; i++)
        in[i] = rank + i;
    CHECK_RC(MPI_Allreduce(in, out, 50000, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 50000; i++)
        if (out[i] != 1 + 2 * i) {
            CHECK_INT(out[i], 1 + 2 * i, "allreduce after the mismatches");
            break;
        }
}

/* The block collectives' buffer, count and type checks (mpi_coll.c's
 * check_data: the common predefined types take an inline path, the rest
 * the full one), each at the root and off it; every error is local, raised
 * before anything moves. Then a type of size 12 and extent 16
 * (MPI_DOUBLE_INT: not one block of bytes) and a plain one still deliver. */
static void test_block_args(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double blocks[64], one = -1;
    MPI_Datatype loose;
    MPI_Type_contiguous(2, MPI_INT, &loose); /* not committed */
    for (int root = 0; root < size && root < 2; root++) {
        int me = rank == root;
        CHECK_CLASS(MPI_Scatter(blocks, 1, MPI_DOUBLE, NULL, 1, MPI_DOUBLE, root, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER, "Scatter(recvbuf NULL, 1 element)");
        CHECK_CLASS(MPI_Scatter(blocks, 1, MPI_DOUBLE, &one, -1, MPI_DOUBLE, root, MPI_COMM_WORLD),
                    MPI_ERR_COUNT, "Scatter(recvcount -1)");
        CHECK_CLASS(MPI_Scatter(blocks, 1, MPI_DOUBLE, &one, 1, MPI_DATATYPE_NULL, root,
                                MPI_COMM_WORLD),
                    MPI_ERR_TYPE, "Scatter(recvtype MPI_DATATYPE_NULL)");
        CHECK_CLASS(MPI_Scatter(blocks, 1, MPI_DOUBLE, &one, 1, loose, root, MPI_COMM_WORLD),
                    MPI_ERR_TYPE, "Scatter(recvtype not committed)");
        CHECK_CLASS(MPI_Gather(NULL, 1, MPI_DOUBLE, blocks, 1, MPI_DOUBLE, root, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER, "Gather(sendbuf NULL, 1 element)");
        if (me) {
            CHECK_CLASS(MPI_Scatter(NULL, 1, MPI_DOUBLE, &one, 1, MPI_DOUBLE, root,
                                    MPI_COMM_WORLD),
                        MPI_ERR_BUFFER, "Scatter(sendbuf NULL at the root)");
            CHECK_CLASS(MPI_Scatter(blocks, -2, MPI_DOUBLE, &one, 1, MPI_DOUBLE, root,
                                    MPI_COMM_WORLD),
                        MPI_ERR_COUNT, "Scatter(sendcount -2 at the root)");
            CHECK_CLASS(MPI_Gather(&one, 1, MPI_DOUBLE, blocks, 1, loose, root, MPI_COMM_WORLD),
                        MPI_ERR_TYPE, "Gather(recvtype not committed at the root)");
            /* The root's own block of a double buffer, by the double's extent. */
            CHECK_CLASS(MPI_Scatter(blocks, 1, MPI_DOUBLE, &blocks[root], 1, MPI_DOUBLE, root,
                                    MPI_COMM_WORLD),
                        MPI_ERR_BUFFER, "Scatter(blocks, &blocks[root]) of doubles");
        }
    }
    MPI_Type_free(&loose);
    /* No elements at NULL is no error. */
    CHECK_RC(MPI_Scatter(NULL, 0, MPI_DOUBLE, NULL, 0, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    struct { double v; int i; } di[64], mine = {-1, -1};
    for (int q = 0; q < size && q < 64; q++) {
        di[q].v = q * 0.5;
        di[q].i = q + 7;
    }
    if (size <= 64) {
        CHECK_RC(MPI_Scatter(di, 1, MPI_DOUBLE_INT, &mine, 1, MPI_DOUBLE_INT, 0, MPI_COMM_WORLD));
        CHECK(mine.v == rank * 0.5 && mine.i == rank + 7,
              "scatter of MPI_DOUBLE_INT: got (%g, %d), want (%g, %d)", mine.v, mine.i,
              rank * 0.5, rank + 7);
        for (int q = 0; q < size; q++)
            blocks[q] = -1;
        double v = rank + 0.25;
        CHECK_RC(MPI_Gather(&v, 1, MPI_DOUBLE, blocks, 1, MPI_DOUBLE, size - 1, MPI_COMM_WORLD));
        for (int q = 0; rank == size - 1 && q < size; q++)
            CHECK(blocks[q] == q + 0.25, "gather of doubles: block %d is %g", q, blocks[q]);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mtest_begin("reduce_local");
    test_reduce_local();
    mtest_end();
    mtest_begin("user_ops");
    test_user_ops();
    mtest_end();
    mtest_begin("collective_errors");
    test_collective_errors();
    mtest_end();
    mtest_begin("aliased_buffers");
    test_aliased_buffers();
    mtest_end();
    mtest_begin("bcast_length");
    test_bcast_length();
    mtest_end();
    mtest_begin("bcast_length_data");
    test_bcast_length_data();
    mtest_end();
    mtest_begin("allreduce_length");
    test_allreduce_length();
    mtest_end();
    mtest_begin("block_args");
    test_block_args();
    mtest_end();
    return mtest_finalize();
}
