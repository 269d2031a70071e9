/* Reduce_scatter and reduce_scatter_block through shared memory
 * (algorithm shm, forced unless the environment says otherwise), on
 * MPI_COMM_WORLD, a reordered split and a dup: per-rank counts from 0 to
 * several slots (TERN_COLL_SHM_SLOT), equal and unequal counts with some
 * ranks' zero, all zero, MPI_IN_PLACE, sums of ints, max of doubles,
 * bitwise xor of 8-byte integers, a strided derived type, a commutative
 * user op, a non-commutative one (shm does not serve it: the table's
 * algorithm must still keep rank order), the nonblocking and persistent
 * forms beside the blocking one, and many calls back to back (a reused slot would show as a
 * wrong value). Every result is checked against one computed locally. */
#include "../mpi/mtest.h"
#include "affine_op.h"

static int slot_bytes = 16384;

/* Rank q's input element i (of the whole vector). */
static int iv(int q, size_t i) { return (int)((size_t)q * 1000 + i % 997); }
static double dv(int q, size_t i) { return (double)((q * 37 + (int)(i % 101)) % 11) + 0.25 * q; }
static unsigned long long xv(int q, size_t i)
{
    return ((unsigned long long)(q + 1) << 40) ^ (i * 2654435761ull) ^ (unsigned long long)q;
}

/* Counts per rank: kind 0 equal (n each), 1 unequal with zeros (n * ((q *
 * 5 + 3) % 4) / 2: ranks 1, 5, ... get none), 2 everything on the last
 * rank. */
static void make_counts(int *rc, int p, int n, int kind)
{
    for (int q = 0; q < p; q++)
        rc[q] = kind == 0 ? n : kind == 1 ? n * ((q * 5 + 3) % 4) / 2 : (q == p - 1 ? n * p : 0);
}

static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] + b[i];
}


static size_t prefix(const int *rc, int r)
{
    size_t lo = 0;
    for (int q = 0; q < r; q++)
        lo += (size_t)rc[q];
    return lo;
}

/* MPI_SUM of ints; block: reduce_scatter_block (equal counts only). */
static void check_int_sum(MPI_Comm c, const int *rc, int inplace, int block, int nonblocking)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    size_t total = prefix(rc, p), lo = prefix(rc, r);
    int *in = malloc((total + 1) * sizeof *in), *out = malloc((total + 1) * sizeof *out);
    for (size_t i = 0; i < total; i++)
        in[i] = iv(r, i);
    for (size_t i = 0; i <= total; i++)
        out[i] = -7;
    const void *sb = inplace ? MPI_IN_PLACE : in;
    void *rb = inplace ? in : out;
    MPI_Request req = MPI_REQUEST_NULL;
    if (block && nonblocking)
        MPI_Ireduce_scatter_block(sb, rb, rc[0], MPI_INT, MPI_SUM, c, &req);
    else if (block)
        MPI_Reduce_scatter_block(sb, rb, rc[0], MPI_INT, MPI_SUM, c);
    else if (nonblocking)
        MPI_Ireduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, c, &req);
    else
        MPI_Reduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, c);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    const int *res = inplace ? in : out;
    for (int i = 0; i < rc[r]; i++) {
        int want = 0;
        for (int q = 0; q < p; q++)
            want += iv(q, lo + (size_t)i);
        if (res[i] != want) {
            CHECK(0, "%s%s sum of %zu ints (%d here) in place %d: [%d] = %d, want %d",
                  nonblocking ? "i" : "", block ? "reduce_scatter_block" : "reduce_scatter", total,
                  rc[r], inplace, i, res[i], want);
            break;
        }
    }
    if (!inplace)
        CHECK(out[rc[r]] == -7, "reduce_scatter wrote past this rank's block");
    free(in);
    free(out);
}

/* The persistent form, started three times with new data each time. */
static void check_persistent(MPI_Comm c, const int *rc)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    size_t total = prefix(rc, p), lo = prefix(rc, r);
    int *in = malloc((total + 1) * sizeof *in), *out = malloc(((size_t)rc[r] + 1) * sizeof *out);
    MPI_Request req;
    MPI_Reduce_scatter_init(in, out, rc, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &req);
    for (int it = 0; it < 3; it++) {
        for (size_t i = 0; i < total; i++)
            in[i] = iv(r, i) + it;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < rc[r]; i++) {
            int want = 0;
            for (int q = 0; q < p; q++)
                want += iv(q, lo + (size_t)i) + it;
            if (out[i] != want) {
                CHECK(0, "persistent reduce_scatter of %zu ints, start %d: [%d] = %d, want %d",
                      total, it, i, out[i], want);
                break;
            }
        }
    }
    MPI_Request_free(&req);
    free(in);
    free(out);
}

static void check_double_max(MPI_Comm c, const int *rc)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    size_t total = prefix(rc, p), lo = prefix(rc, r);
    double *in = malloc((total + 1) * sizeof *in), *out = malloc(((size_t)rc[r] + 1) * sizeof *out);
    for (size_t i = 0; i < total; i++)
        in[i] = dv(r, i);
    MPI_Reduce_scatter(in, out, rc, MPI_DOUBLE, MPI_MAX, c);
    for (int i = 0; i < rc[r]; i++) {
        double want = dv(0, lo + (size_t)i);
        for (int q = 1; q < p; q++)
            want = dv(q, lo + (size_t)i) > want ? dv(q, lo + (size_t)i) : want;
        if (out[i] != want) {
            CHECK(0, "reduce_scatter max of %zu doubles: [%d] = %g, want %g", total, i, out[i], want);
            break;
        }
    }
    free(in);
    free(out);
}

static void check_xor(MPI_Comm c, const int *rc, int inplace)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    size_t total = prefix(rc, p), lo = prefix(rc, r);
    unsigned long long *in = malloc((total + 1) * sizeof *in);
    unsigned long long *out = malloc(((size_t)rc[r] + 1) * sizeof *out);
    for (size_t i = 0; i < total; i++)
        in[i] = xv(r, i);
    MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : in, inplace ? in : out, rc[0],
                             MPI_UNSIGNED_LONG_LONG, MPI_BXOR, c);
    const unsigned long long *res = inplace ? in : out;
    for (int i = 0; i < rc[r]; i++) {
        unsigned long long want = 0;
        for (int q = 0; q < p; q++)
            want ^= xv(q, lo + (size_t)i);
        if (res[i] != want) {
            CHECK(0, "reduce_scatter_block xor of %zu longs in place %d: [%d] wrong", total,
                  inplace, i);
            break;
        }
    }
    free(in);
    free(out);
}

/* A strided type (2 ints, stride 2: the int between stays untouched),
 * and a commutative user op on ints. */
static void check_derived(MPI_Comm c, const int *rc, MPI_Op user_sum, int inplace)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    size_t total = prefix(rc, p), lo = prefix(rc, r);
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *in = malloc((3 * total + 1) * sizeof *in), *out = malloc((3 * (size_t)rc[r] + 1) * sizeof *out);
    for (size_t i = 0; i < 3 * total; i++)
        in[i] = i % 3 == 1 ? -3 : iv(r, i);
    for (size_t i = 0; i < 3 * (size_t)rc[r]; i++)
        out[i] = -3;
    MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : in, inplace ? in : out, rc, vec, MPI_SUM, c);
    const int *res = inplace ? in : out;
    for (size_t i = 0; i < 3 * (size_t)rc[r]; i++) {
        int want = -3;
        if (i % 3 != 1) {
            want = 0;
            for (int q = 0; q < p; q++)
                want += iv(q, 3 * lo + i);
        }
        if (res[i] != want) {
            CHECK(0, "reduce_scatter of a vector type, %zu elements, in place %d: [%zu] = %d, want %d",
                  total, inplace, i, res[i], want);
            break;
        }
    }
    MPI_Type_free(&vec);
    /* The user's commutative sum. */
    for (size_t i = 0; i < total; i++)
        in[i] = iv(r, i);
    MPI_Reduce_scatter(in, out, rc, MPI_INT, user_sum, c);
    for (int i = 0; i < rc[r]; i++) {
        int want = 0;
        for (int q = 0; q < p; q++)
            want += iv(q, lo + (size_t)i);
        if (out[i] != want) {
            CHECK(0, "reduce_scatter with a user op, %zu elements: [%d] = %d, want %d", total, i,
                  out[i], want);
            break;
        }
    }
    free(in);
    free(out);
}

static void check_noncommutative(MPI_Comm c, const int *rc, MPI_Op op, MPI_Datatype type)
{
    int r, p;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &p);
    size_t total = prefix(rc, p), lo = prefix(rc, r);
    affine_t *in = malloc((total + 1) * sizeof *in), *out = malloc(((size_t)rc[r] + 1) * sizeof *out);
    for (size_t i = 0; i < total; i++)
        in[i] = affine_of(r, i);
    MPI_Reduce_scatter(in, out, rc, type, op, c);
    for (int i = 0; i < rc[r]; i++) {
        affine_t want = affine_of(0, lo + (size_t)i);
        for (int q = 1; q < p; q++) {
            affine_t x = affine_of(q, lo + (size_t)i);
            want = (affine_t){want.a * x.a, want.b * x.a + x.b};
        }
        if (out[i].a != want.a || out[i].b != want.b) {
            CHECK(0, "reduce_scatter of a non-commutative op, %zu elements: [%d] wrong", total, i);
            break;
        }
    }
    free(in);
    free(out);
}

static void run(MPI_Comm c, MPI_Op user_sum, MPI_Op affine_op, MPI_Datatype affine_type)
{
    int p;
    MPI_Comm_size(c, &p);
    int *rc = malloc((size_t)p * sizeof *rc);
    /* Per-rank counts (ints) around a slot / p, a slot and past it. */
    int s = slot_bytes / 4;
    int ns[] = {0, 1, 3, s / p - 1, s / p + 1, s - 1, s + 3, 2 * s + 5};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int n = ns[k] < 0 ? 0 : ns[k];
        for (int kind = 0; kind < 3; kind++) {
            make_counts(rc, p, n, kind);
            for (int inplace = 0; inplace < 2; inplace++) {
                check_int_sum(c, rc, inplace, 0, 0);
                if (kind == 0)
                    check_int_sum(c, rc, inplace, 1, 0);
            }
            check_int_sum(c, rc, 0, 0, 1);
            if (kind == 0)
                check_int_sum(c, rc, 1, 1, 1);
            check_double_max(c, rc);
            if (kind == 1)
                check_persistent(c, rc);
            if (kind == 0) {
                check_xor(c, rc, 0);
                check_xor(c, rc, 1);
            }
            if (n <= s + 3) {
                check_derived(c, rc, user_sum, kind == 1);
                check_noncommutative(c, rc, affine_op, affine_type);
            }
        }
    }
    /* Back to back, alternating sizes (1 step, several steps): a slot
     * reused before every rank left it would show. */
    for (int i = 0; i < 200; i++) {
        make_counts(rc, p, i % 3 == 0 ? s / 2 + 1 : 1 + i % 7, i % 2);
        check_int_sum(c, rc, i % 4 == 1, 0, 0);
    }
    free(rc);
}

int main(int argc, char **argv)
{
    setenv("TERN_REDUCE_SCATTER_ALGORITHM", "shm", 0);
    setenv("TERN_REDUCE_SCATTER_BLOCK_ALGORITHM", "shm", 0);
    const char *slot = getenv("TERN_COLL_SHM_SLOT");
    MPI_Init(&argc, &argv);
    int wrank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    mtest_rank = wrank;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (slot && atoi(slot) > 0)
        slot_bytes = atoi(slot);
    else
        slot_bytes = p == 2 ? 131072 : 16384; /* auto */
    MPI_Op user_sum, affine_op;
    MPI_Op_create(my_sum, 1, &user_sum);
    MPI_Op_create(compose, 0, &affine_op);
    MPI_Datatype affine_type;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &affine_type);
    MPI_Type_commit(&affine_type);

    MPI_Comm comms[3];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &comms[1]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[2]);
    for (int k = 0; k < 3; k++)
        run(comms[k], user_sum, affine_op, affine_type);
    for (int k = 1; k < 3; k++)
        MPI_Comm_free(&comms[k]);
    MPI_Op_free(&user_sum);
    MPI_Op_free(&affine_op);
    MPI_Type_free(&affine_type);
    int total = 0;
    MPI_Allreduce(&mtest_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("reduce_scatter_shm: %s (%d ranks, slot %d bytes)\n", total ? "FAILED" : "ok", p,
               slot_bytes);
    MPI_Finalize();
    return total ? 1 : 0;
}
