/* Allreduce around TERN_COLL_SHM_ALLREDUCE_WHOLE (at two ranks one per
 * core the shm row: chunks up to that size folded whole by each rank,
 * larger ones in halves; a non-commutative op always in halves): vectors
 * one element either side of 8, 16, 32 and 64 KB and of the 128 KB slot
 * (two steps), odd counts, many calls in a row with each call's values
 * different (stale bytes of an earlier call in the same slot do not
 * match), contiguous and MPI_IN_PLACE in turn, nonblocking calls between
 * blocking ones; MPI_SUM and MPI_MAX on unsigned ints and an affine-map
 * composition. Every element is checked. */
#include "../mpi/mtest.h"
#include "affine_op.h"

static unsigned uv(int q, size_t i, int call)
{
    return (unsigned)q * 1000003u + (unsigned)i * 7u + (unsigned)(i / 509) + (unsigned)call * 13u;
}

enum { SUM, MAX, AFFINE, N_OPS };
static const char *const op_names[N_OPS] = {"MPI_SUM", "MPI_MAX", "affine"};

/* One allreduce of n elements, call `call`; 0 when an element was wrong
 * (reported). */
static int one(int op, size_t n, int in_place, int nonblocking, int call, int p, int me,
               MPI_Op affine, MPI_Datatype pair, void *s, void *g)
{
    unsigned *su = s, *gu = g;
    affine_t *sa = s, *ga = g;
    for (size_t i = 0; i < n; i++) {
        if (op == AFFINE) {
            affine_t x = affine_of(me, i + (size_t)call);
            (in_place ? ga : sa)[i] = x;
        } else {
            (in_place ? gu : su)[i] = uv(me, i, call);
        }
    }
    MPI_Datatype t = op == AFFINE ? pair : MPI_UNSIGNED;
    MPI_Op o = op == SUM ? MPI_SUM : op == MAX ? MPI_MAX : affine;
    const void *src = in_place ? MPI_IN_PLACE : s;
    if (nonblocking) {
        MPI_Request rq;
        CHECK_RC(MPI_Iallreduce(src, g, (int)n, t, o, MPI_COMM_WORLD, &rq));
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        CHECK_RC(MPI_Allreduce(src, g, (int)n, t, o, MPI_COMM_WORLD));
    }
    for (size_t i = 0; i < n; i++) {
        if (op == AFFINE) {
            affine_t want = affine_of(0, i + (size_t)call);
            for (int q = 1; q < p; q++) { /* x_0 then x_1 ... : rank order */
                affine_t x = affine_of(q, i + (size_t)call);
                want = (affine_t){want.a * x.a, want.b * x.a + x.b};
            }
            if (ga[i].a != want.a || ga[i].b != want.b) {
                CHECK(0, "affine call %d, %zu elements%s%s: element %zu = (%u, %u), want (%u, %u)",
                      call, n, in_place ? ", in place" : "", nonblocking ? ", nonblocking" : "", i,
                      ga[i].a, ga[i].b, want.a, want.b);
                return 0;
            }
            continue;
        }
        unsigned want = 0;
        for (int q = 0; q < p; q++) {
            unsigned x = uv(q, i, call);
            want = op == SUM ? want + x : (q == 0 || x > want ? x : want);
        }
        if (gu[i] != want) {
            CHECK(0, "%s call %d, %zu elements%s%s: element %zu = %u, want %u", op_names[op], call,
                  n, in_place ? ", in place" : "", nonblocking ? ", nonblocking" : "", i, gu[i],
                  want);
            return 0;
        }
    }
    return 1;
}

/* Element counts of 4-byte ints (affine elements are 8 bytes: twice the
 * bytes). */
static const size_t counts[] = {2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193,
                                16383, 16384, 16385, 32767, 32768, 32769, 1, 3001};
enum { N_COUNTS = sizeof counts / sizeof counts[0] };

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int p = mtest_size, me = mtest_rank;
    MPI_Op affine;
    MPI_Datatype pair;
    CHECK_RC(MPI_Op_create(compose, 0, &affine));
    CHECK_RC(MPI_Type_contiguous(2, MPI_UNSIGNED, &pair));
    CHECK_RC(MPI_Type_commit(&pair));
    size_t most = 32769 * sizeof(affine_t);
    void *s = malloc(most), *g = malloc(most);
    int call = 0, ok = 1;
    /* Each count alone, 12 calls in a row: both slots rewritten. */
    for (int k = 0; k < N_COUNTS && ok; k++)
        for (int c = 0; c < 12 && ok; c++, call++)
            ok = one(c % N_OPS, counts[k], (c / 3) & 1, 0, call, p, me, affine, pair, s, g);
    /* Counts mixed call by call, a nonblocking call every fifth. */
    for (int c = 0; c < 120 && ok; c++, call++)
        ok = one((c / 2) % N_OPS, counts[(size_t)(c * 7) % N_COUNTS], (c / 4) & 1, c % 5 == 4, call,
                 p, me, affine, pair, s, g);
    free(s);
    free(g);
    MPI_Type_free(&pair);
    MPI_Op_free(&affine);
    return mtest_finalize();
}
