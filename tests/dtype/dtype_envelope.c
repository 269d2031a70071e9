/* Decoding every combiner (MPI-4.1 5.1.13) on one rank, for a type made by
 * the int constructor and by its large-count (_c) one: MPI_Type_get_envelope_c
 * reports each argument in the list of its C type (a _c constructor's counts
 * and displacements are large counts, its other ints stay integers), the
 * int envelope agrees with it for int-made types and refuses _c-made ones
 * with large counts (MPI_ERR_TYPE: it has no large-count list), and
 * MPI_Type_get_contents(_c) gives back the values in constructor order.
 * mpi4py's datatype tests crashed on the old int envelope, which folded the
 * large counts into the addresses. */
#include "dtype_common.h"

#include <string.h>

/* What one decode must give. */
typedef struct {
    int combiner;
    int ni, na, nc, nd;
    const int *ints;
    const MPI_Aint *aints;
    const MPI_Count *counts;
    const MPI_Datatype *types;
} want_t;

/* Contents hand out derived member types; the caller frees them. */
static void free_if_derived(MPI_Datatype *t)
{
    MPI_Count n[4];
    int comb;
    OK(MPI_Type_get_envelope_c(*t, &n[0], &n[1], &n[2], &n[3], &comb));
    if (comb != MPI_COMBINER_NAMED)
        OK(MPI_Type_free(t));
}

static void expect_decode(MPI_Datatype t, const want_t *w, int line)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    REQUIRE(comb == w->combiner && ni == w->ni && na == w->na && nc == w->nc && nd == w->nd,
          "line %d: envelope_c combiner %d ni %lld na %lld nc %lld nd %lld, want %d %d %d %d %d",
          line, comb, ni, na, nc, nd, w->combiner, w->ni, w->na, w->nc, w->nd);
    int ci[32];
    MPI_Aint ca[32];
    MPI_Count cc[32];
    MPI_Datatype ct[8];
    OK(MPI_Type_get_contents_c(t, 32, 32, 32, 8, ci, ca, cc, ct));
    for (int i = 0; i < w->ni; i++)
        REQUIRE(ci[i] == w->ints[i], "line %d: integer %d = %d, want %d", line, i, ci[i],
              w->ints[i]);
    for (int i = 0; i < w->na; i++)
        REQUIRE(ca[i] == w->aints[i], "line %d: address %d = %ld, want %ld", line, i, (long)ca[i],
              (long)w->aints[i]);
    for (int i = 0; i < w->nc; i++)
        REQUIRE(cc[i] == w->counts[i], "line %d: large count %d = %lld, want %lld", line, i,
              cc[i], w->counts[i]);
    for (int i = 0; i < w->nd; i++) {
        REQUIRE(ct[i] == w->types[i], "line %d: datatype %d differs", line, i);
        free_if_derived(&ct[i]);
    }

    int ini, ina, ind, icomb;
    int rc = MPI_Type_get_envelope(t, &ini, &ina, &ind, &icomb);
    int rc2 = MPI_Type_get_contents(t, 32, 32, 8, ci, ca, ct);
    if (w->nc) {
        /* The int forms cannot say where the large counts are. */
        int cls = -1, cls2 = -1;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        if (rc2 != MPI_SUCCESS)
            MPI_Error_class(rc2, &cls2);
        REQUIRE(cls == MPI_ERR_TYPE && cls2 == MPI_ERR_TYPE,
              "line %d: int envelope/contents of a large-count type: classes %d %d, want %d",
              line, cls, cls2, MPI_ERR_TYPE);
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        REQUIRE(strstr(msg, "MPI_Type_get_envelope") && strstr(msg, "_c"),
              "line %d: message \"%s\" does not point at MPI_Type_get_envelope_c", line, msg);
        return;
    }
    OK(rc);
    OK(rc2);
    REQUIRE(icomb == w->combiner && ini == w->ni && ina == w->na && ind == w->nd,
          "line %d: int envelope combiner %d ni %d na %d nd %d, want %d %d %d %d", line, icomb,
          ini, ina, ind, w->combiner, w->ni, w->na, w->nd);
    for (int i = 0; i < w->ni; i++)
        REQUIRE(ci[i] == w->ints[i], "line %d: int contents integer %d = %d", line, i, ci[i]);
    for (int i = 0; i < w->na; i++)
        REQUIRE(ca[i] == w->aints[i], "line %d: int contents address %d = %ld", line, i,
              (long)ca[i]);
    for (int i = 0; i < w->nd; i++) {
        REQUIRE(ct[i] == w->types[i], "line %d: int contents datatype %d differs", line, i);
        free_if_derived(&ct[i]);
    }
}

#define I(...) ((const int[]){__VA_ARGS__})
#define A(...) ((const MPI_Aint[]){__VA_ARGS__})
#define C(...) ((const MPI_Count[]){__VA_ARGS__})
#define DECODE(t, comb, ni_, ints_, na_, aints_, nc_, counts_, nd_, types_)                 \
    do {                                                                                  \
        want_t w_ = {comb, ni_, na_, nc_, nd_, ints_, aints_, counts_, types_};           \
        expect_decode(t, &w_, __LINE__);                                                  \
        OK(MPI_Type_free(&t));                                                            \
    } while (0)

static const MPI_Datatype int1[] = {MPI_INT};

static void test_simple_combiners(void)
{
    MPI_Datatype t;
    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    DECODE(t, MPI_COMBINER_CONTIGUOUS, 1, I(3), 0, NULL, 0, NULL, 1, int1);
    OK(MPI_Type_contiguous_c(3, MPI_INT, &t));
    DECODE(t, MPI_COMBINER_CONTIGUOUS, 0, NULL, 0, NULL, 1, C(3), 1, int1);

    OK(MPI_Type_vector(2, 3, 4, MPI_INT, &t));
    DECODE(t, MPI_COMBINER_VECTOR, 3, I(2, 3, 4), 0, NULL, 0, NULL, 1, int1);
    OK(MPI_Type_vector_c(2, 3, 4, MPI_INT, &t));
    DECODE(t, MPI_COMBINER_VECTOR, 0, NULL, 0, NULL, 3, C(2, 3, 4), 1, int1);

    OK(MPI_Type_create_hvector(2, 3, 40, MPI_INT, &t));
    DECODE(t, MPI_COMBINER_HVECTOR, 2, I(2, 3), 1, A(40), 0, NULL, 1, int1);
    OK(MPI_Type_create_hvector_c(2, 3, 40, MPI_INT, &t));
    DECODE(t, MPI_COMBINER_HVECTOR, 0, NULL, 0, NULL, 3, C(2, 3, 40), 1, int1);

    OK(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    DECODE(t, MPI_COMBINER_RESIZED, 0, NULL, 2, A(-4, 16), 0, NULL, 1, int1);
    OK(MPI_Type_create_resized_c(MPI_INT, -4, 16, &t));
    DECODE(t, MPI_COMBINER_RESIZED, 0, NULL, 0, NULL, 2, C(-4, 16), 1, int1);

    OK(MPI_Type_dup(MPI_INT, &t));
    DECODE(t, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 0, NULL, 1, int1);
    printf("test simple combiners ok\n");
}

static void test_indexed_combiners(void)
{
    MPI_Datatype t;
    OK(MPI_Type_indexed(3, I(2, 1, 3), I(5, 0, 9), MPI_INT, &t));
    DECODE(t, MPI_COMBINER_INDEXED, 7, I(3, 2, 1, 3, 5, 0, 9), 0, NULL, 0, NULL, 1, int1);
    OK(MPI_Type_indexed_c(3, C(2, 1, 3), C(5, 0, 9), MPI_INT, &t));
    DECODE(t, MPI_COMBINER_INDEXED, 0, NULL, 0, NULL, 7, C(3, 2, 1, 3, 5, 0, 9), 1, int1);

    OK(MPI_Type_create_hindexed(3, I(2, 1, 3), A(20, 0, 36), MPI_INT, &t));
    DECODE(t, MPI_COMBINER_HINDEXED, 4, I(3, 2, 1, 3), 3, A(20, 0, 36), 0, NULL, 1, int1);
    OK(MPI_Type_create_hindexed_c(3, C(2, 1, 3), C(20, 0, 36), MPI_INT, &t));
    DECODE(t, MPI_COMBINER_HINDEXED, 0, NULL, 0, NULL, 7, C(3, 2, 1, 3, 20, 0, 36), 1, int1);

    OK(MPI_Type_create_indexed_block(3, 2, I(6, 0, 3), MPI_INT, &t));
    DECODE(t, MPI_COMBINER_INDEXED_BLOCK, 5, I(3, 2, 6, 0, 3), 0, NULL, 0, NULL, 1, int1);
    OK(MPI_Type_create_indexed_block_c(3, 2, C(6, 0, 3), MPI_INT, &t));
    DECODE(t, MPI_COMBINER_INDEXED_BLOCK, 0, NULL, 0, NULL, 5, C(3, 2, 6, 0, 3), 1, int1);

    OK(MPI_Type_create_hindexed_block(2, 1, A(12, 40), MPI_INT, &t));
    DECODE(t, MPI_COMBINER_HINDEXED_BLOCK, 2, I(2, 1), 2, A(12, 40), 0, NULL, 1, int1);
    OK(MPI_Type_create_hindexed_block_c(2, 1, C(12, 40), MPI_INT, &t));
    DECODE(t, MPI_COMBINER_HINDEXED_BLOCK, 0, NULL, 0, NULL, 4, C(2, 1, 12, 40), 1, int1);

    /* A large count past INT_MAX comes back whole. */
    OK(MPI_Type_create_hindexed_block_c(1, 1, C(3000000000LL), MPI_CHAR, &t));
    DECODE(t, MPI_COMBINER_HINDEXED_BLOCK, 0, NULL, 0, NULL, 3, C(1, 1, 3000000000LL), 1,
           ((const MPI_Datatype[]){MPI_CHAR}));
    printf("test indexed combiners ok\n");
}

static void test_struct_and_arrays(void)
{
    MPI_Datatype t, inner;
    const MPI_Datatype tys[2] = {MPI_CHAR, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, I(1, 2), A(0, 8), tys, &t));
    DECODE(t, MPI_COMBINER_STRUCT, 3, I(2, 1, 2), 2, A(0, 8), 0, NULL, 2, tys);
    OK(MPI_Type_create_struct_c(2, C(1, 2), C(0, 8), tys, &t));
    DECODE(t, MPI_COMBINER_STRUCT, 0, NULL, 0, NULL, 5, C(2, 1, 2, 0, 8), 2, tys);

    /* A derived member comes back as a handle the caller frees. */
    OK(MPI_Type_contiguous(2, MPI_INT, &inner));
    const MPI_Datatype der[1] = {inner};
    OK(MPI_Type_create_struct_c(1, C(1), C(4), der, &t));
    DECODE(t, MPI_COMBINER_STRUCT, 0, NULL, 0, NULL, 3, C(1, 1, 4), 1, der);
    OK(MPI_Type_free(&inner));

    OK(MPI_Type_create_subarray(2, I(4, 5), I(2, 3), I(1, 2), MPI_ORDER_C, MPI_INT, &t));
    DECODE(t, MPI_COMBINER_SUBARRAY, 8, I(2, 4, 5, 2, 3, 1, 2, MPI_ORDER_C), 0, NULL, 0, NULL,
           1, int1);
    OK(MPI_Type_create_subarray_c(2, C(4, 5), C(2, 3), C(1, 2), MPI_ORDER_FORTRAN, MPI_INT,
                                  &t));
    DECODE(t, MPI_COMBINER_SUBARRAY, 2, I(2, MPI_ORDER_FORTRAN), 0, NULL, 6, C(4, 5, 2, 3, 1, 2),
           1, int1);

    const int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    OK(MPI_Type_create_darray(4, 1, 2, I(4, 6), dist, I(MPI_DISTRIBUTE_DFLT_DARG, 2), I(2, 2),
                              MPI_ORDER_C, MPI_INT, &t));
    DECODE(t, MPI_COMBINER_DARRAY, 12,
           I(4, 1, 2, 4, 6, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC,
             MPI_DISTRIBUTE_DFLT_DARG, 2, 2, 2, MPI_ORDER_C),
           0, NULL, 0, NULL, 1, int1);
    OK(MPI_Type_create_darray_c(4, 1, 2, C(4, 6), dist, I(MPI_DISTRIBUTE_DFLT_DARG, 2), I(2, 2),
                                MPI_ORDER_C, MPI_INT, &t));
    DECODE(t, MPI_COMBINER_DARRAY, 10,
           I(4, 1, 2, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_DFLT_DARG, 2,
             2, 2, MPI_ORDER_C),
           0, NULL, 2, C(4, 6), 1, int1);
    printf("test struct and arrays ok\n");
}

static void test_named_and_errors(void)
{
    MPI_Count ni = -1, na = -1, nc = -1, nd = -1;
    int comb = -1;
    OK(MPI_Type_get_envelope_c(MPI_DOUBLE, &ni, &na, &nc, &nd, &comb));
    REQUIRE(comb == MPI_COMBINER_NAMED && !ni && !na && !nc && !nd, "named envelope_c");
    int ci[1];
    MPI_Aint ca[1];
    MPI_Count cc[1];
    MPI_Datatype ct[1];
    int rc = MPI_Type_get_contents_c(MPI_DOUBLE, 1, 1, 1, 1, ci, ca, cc, ct), cls = -1;
    MPI_Error_class(rc, &cls);
    REQUIRE(cls == MPI_ERR_TYPE, "contents_c of a named type: class %d", cls);

    /* Arrays too small for the large counts: MPI_ERR_ARG. */
    MPI_Datatype t;
    OK(MPI_Type_vector_c(2, 3, 4, MPI_INT, &t));
    rc = MPI_Type_get_contents_c(t, 0, 0, 2, 1, ci, ca, cc, ct);
    MPI_Error_class(rc, &cls);
    REQUIRE(rc != MPI_SUCCESS && cls == MPI_ERR_ARG, "contents_c with 2 of 3 large counts: %d", cls);
    OK(MPI_Type_free(&t));
    rc = MPI_Type_get_envelope_c(MPI_DATATYPE_NULL, &ni, &na, &nc, &nd, &comb);
    MPI_Error_class(rc, &cls);
    REQUIRE(cls == MPI_ERR_TYPE, "envelope_c of MPI_DATATYPE_NULL: class %d", cls);
    printf("test named and errors ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    test_simple_combiners();
    test_indexed_combiners();
    test_struct_and_arrays();
    test_named_and_errors();
    MPI_Finalize();
    return 0;
}
