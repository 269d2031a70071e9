/* The MPI-4 large-count (_c) constructors and external32 calls on one
 * rank: each builds the same layout as its int form (same bounds, same
 * packed bytes), keeps counts beyond INT_MAX whole (extents), records its
 * envelope with the counts as large counts (MPI_Type_get_envelope_c),
 * rejects bad arguments with the right class and a message naming the _c
 * function, and answers MPI_UNDEFINED for a size or extent past what
 * MPI_Count holds. */
#include "dtype_common.h"

#include <limits.h>
#include <string.h>

static int ints[256];

/* a and b have the same bounds and pack the same bytes from ints[]. */
static void expect_same(MPI_Datatype a, MPI_Datatype b, int line)
{
    MPI_Count la, ea, lb, eb, tla, tea, tlb, teb, sa, sb;
    OK(MPI_Type_get_extent_c(a, &la, &ea));
    OK(MPI_Type_get_extent_c(b, &lb, &eb));
    OK(MPI_Type_get_true_extent_c(a, &tla, &tea));
    OK(MPI_Type_get_true_extent_c(b, &tlb, &teb));
    OK(MPI_Type_size_c(a, &sa));
    OK(MPI_Type_size_c(b, &sb));
    REQUIRE(la == lb && ea == eb && tla == tlb && tea == teb && sa == sb,
          "line %d: bounds differ: lb %lld/%lld extent %lld/%lld true %lld,%lld/%lld,%lld "
          "size %lld/%lld", line, la, lb, ea, eb, tla, tea, tlb, teb, sa, sb);
    char pa[1024], pb[1024];
    MPI_Count qa = 0, qb = 0;
    OK(MPI_Pack_c(ints, 1, a, pa, sizeof pa, &qa, MPI_COMM_WORLD));
    OK(MPI_Pack_c(ints, 1, b, pb, sizeof pb, &qb, MPI_COMM_WORLD));
    REQUIRE(qa == qb && qa == sa && memcmp(pa, pb, (size_t)qa) == 0,
          "line %d: packed bytes differ (%lld and %lld bytes)", line, qa, qb);
}
#define SAME(a, b) expect_same(a, b, __LINE__)

/* The envelope of a _c type (MPI_Type_get_envelope_c): nint integers, no
 * addresses, its counts and displacements as large counts, and their
 * values. */
static void expect_envelope(MPI_Datatype t, int combiner, int nint, const MPI_Count *counts,
                            int ncounts, int ntypes, int line)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    REQUIRE(comb == combiner && ni == nint && na == 0 && nc == ncounts && nd == ntypes,
          "line %d: envelope combiner %d ni %lld na %lld nc %lld nd %lld, want %d %d 0 %d %d",
          line, comb, ni, na, nc, nd, combiner, nint, ncounts, ntypes);
    int ci[16];
    MPI_Aint ca[16];
    MPI_Count cc[16];
    MPI_Datatype ct[4];
    OK(MPI_Type_get_contents_c(t, 16, 16, 16, 4, ci, ca, cc, ct));
    for (int i = 0; i < ncounts; i++)
        REQUIRE(cc[i] == counts[i], "line %d: large count %d = %lld, want %lld", line, i, cc[i],
              counts[i]);
    for (int i = 0; i < nd && i < 4; i++)
        if (ct[i] != MPI_INT && ct[i] != MPI_DOUBLE && ct[i] != MPI_CHAR)
            MPI_Type_free(&ct[i]);
}
#define ENVELOPE(t, comb, nint, ntypes, ...)                                               \
    do {                                                                                   \
        MPI_Count want_[] = {__VA_ARGS__};                                                  \
        expect_envelope(t, comb, nint, want_, (int)(sizeof want_ / sizeof *want_), ntypes, \
                        __LINE__);                                                         \
    } while (0)

static void commit2(MPI_Datatype *a, MPI_Datatype *b)
{
    OK(MPI_Type_commit(a));
    OK(MPI_Type_commit(b));
}

static void free2(MPI_Datatype *a, MPI_Datatype *b)
{
    OK(MPI_Type_free(a));
    OK(MPI_Type_free(b));
}

static void test_indexed_family(void)
{
    MPI_Datatype a, b;
    int bl[3] = {2, 1, 3}, dp[3] = {5, 0, 9};
    MPI_Count blc[3] = {2, 1, 3}, dpc[3] = {5, 0, 9};
    OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &a));
    OK(MPI_Type_indexed_c(3, blc, dpc, MPI_INT, &b));
    commit2(&a, &b);
    SAME(a, b);
    ENVELOPE(b, MPI_COMBINER_INDEXED, 0, 1, 3, 2, 1, 3, 5, 0, 9);
    free2(&a, &b);

    MPI_Aint hd[3] = {20, 0, 36};
    MPI_Count hdc[3] = {20, 0, 36};
    OK(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &a));
    OK(MPI_Type_create_hindexed_c(3, blc, hdc, MPI_INT, &b));
    commit2(&a, &b);
    SAME(a, b);
    ENVELOPE(b, MPI_COMBINER_HINDEXED, 0, 1, 3, 2, 1, 3, 20, 0, 36);
    free2(&a, &b);

    int bd[3] = {6, 0, 3};
    MPI_Count bdc[3] = {6, 0, 3};
    OK(MPI_Type_create_indexed_block(3, 2, bd, MPI_INT, &a));
    OK(MPI_Type_create_indexed_block_c(3, 2, bdc, MPI_INT, &b));
    commit2(&a, &b);
    SAME(a, b);
    ENVELOPE(b, MPI_COMBINER_INDEXED_BLOCK, 0, 1, 3, 2, 6, 0, 3);
    free2(&a, &b);

    MPI_Aint hbd[2] = {12, 40};
    MPI_Count hbdc[2] = {12, 40};
    OK(MPI_Type_create_hindexed_block(2, 1, hbd, MPI_INT, &a));
    OK(MPI_Type_create_hindexed_block_c(2, 1, hbdc, MPI_INT, &b));
    commit2(&a, &b);
    SAME(a, b);
    ENVELOPE(b, MPI_COMBINER_HINDEXED_BLOCK, 0, 1, 2, 1, 12, 40);
    free2(&a, &b);

    /* Counts past INT_MAX stay whole: a block 1e9 ints away, a byte
     * displacement of 3e9. */
    MPI_Count one[1] = {1}, far[2] = {0, 1000000000};
    MPI_Count lb, ext;
    OK(MPI_Type_indexed_c(2, (MPI_Count[]){1, 1}, far, MPI_INT, &a));
    OK(MPI_Type_get_extent_c(a, &lb, &ext));
    REQUIRE(lb == 0 && ext == 4000000004LL, "indexed_c extent %lld", ext);
    OK(MPI_Type_free(&a));
    MPI_Count hfar[2] = {0, 3000000000LL};
    OK(MPI_Type_create_hindexed_block_c(2, 1, hfar, MPI_INT, &a));
    OK(MPI_Type_get_extent_c(a, &lb, &ext));
    REQUIRE(lb == 0 && ext == 3000000004LL, "hindexed_block_c extent %lld", ext);
    OK(MPI_Type_free(&a));
    OK(MPI_Type_create_hindexed_c(1, one, (MPI_Count[]){3000000000LL}, MPI_CHAR, &a));
    OK(MPI_Type_get_true_extent_c(a, &lb, &ext));
    REQUIRE(lb == 3000000000LL && ext == 1, "hindexed_c true lb %lld", lb);
    OK(MPI_Type_free(&a));
    printf("test indexed family ok\n");
}

struct cdi {
    char c;
    double d;
    int i[2];
};

static void test_struct(void)
{
    MPI_Datatype a, b;
    int bl[3] = {1, 1, 2};
    MPI_Count blc[3] = {1, 1, 2};
    MPI_Aint dp[3] = {offsetof(struct cdi, c), offsetof(struct cdi, d), offsetof(struct cdi, i)};
    MPI_Count dpc[3] = {dp[0], dp[1], dp[2]};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    OK(MPI_Type_create_struct(3, bl, dp, ty, &a));
    OK(MPI_Type_create_struct_c(3, blc, dpc, ty, &b));
    commit2(&a, &b);
    SAME(a, b);
    ENVELOPE(b, MPI_COMBINER_STRUCT, 0, 3, 3, 1, 1, 2, dp[0], dp[1], dp[2]);
    free2(&a, &b);
    printf("test struct ok\n");
}

static void test_subarray_darray(void)
{
    MPI_Datatype a, b;
    int sizes[2] = {4, 5}, sub[2] = {2, 3}, starts[2] = {1, 2};
    MPI_Count sizesc[2] = {4, 5}, subc[2] = {2, 3}, startsc[2] = {1, 2};
    for (int order = 0; order < 2; order++) {
        int o = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        OK(MPI_Type_create_subarray(2, sizes, sub, starts, o, MPI_INT, &a));
        OK(MPI_Type_create_subarray_c(2, sizesc, subc, startsc, o, MPI_INT, &b));
        commit2(&a, &b);
        SAME(a, b);
        ENVELOPE(b, MPI_COMBINER_SUBARRAY, 2, 1, 4, 5, 2, 3, 1, 2);
        free2(&a, &b);
    }
    /* A dimension of 3e9 elements: the extent is the whole array. */
    MPI_Count big[1] = {3000000000LL}, two[1] = {2}, five[1] = {5}, lb, ext;
    OK(MPI_Type_create_subarray_c(1, big, two, five, MPI_ORDER_C, MPI_CHAR, &a));
    OK(MPI_Type_get_extent_c(a, &lb, &ext));
    REQUIRE(lb == 0 && ext == 3000000000LL, "subarray_c extent %lld", ext);
    OK(MPI_Type_get_true_extent_c(a, &lb, &ext));
    REQUIRE(lb == 5 && ext == 2, "subarray_c true extent %lld %lld", lb, ext);
    OK(MPI_Type_free(&a));

    int gs[2] = {4, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    MPI_Count gsc[2] = {4, 6};
    for (int r = 0; r < 4; r++) {
        OK(MPI_Type_create_darray(4, r, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &a));
        OK(MPI_Type_create_darray_c(4, r, 2, gsc, dist, darg, ps, MPI_ORDER_C, MPI_INT, &b));
        commit2(&a, &b);
        SAME(a, b);
        ENVELOPE(b, MPI_COMBINER_DARRAY, 3 * 2 + 4, 1, 4, 6);
        free2(&a, &b);
    }
    printf("test subarray darray ok\n");
}

static void test_external32(void)
{
    struct {
        double d;
        short s;
    } v = {1.0, 0x0a0b};
    MPI_Datatype st;
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_SHORT};
    OK(MPI_Type_create_struct(2, bl, dp, ty, &st));
    OK(MPI_Type_commit(&st));
    MPI_Count size, pos = 3;
    OK(MPI_Pack_external_size_c("external32", 2, st, &size));
    REQUIRE(size == 20, "external32 size of 2 structs %lld", size);
    unsigned char out[32] = {0};
    OK(MPI_Pack_external_c("external32", &v, 1, st, out, sizeof out, &pos));
    const unsigned char wd[10] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x0a, 0x0b};
    REQUIRE(pos == 13 && memcmp(out + 3, wd, 10) == 0, "external32 bytes at position 3 (pos %lld)",
          pos);
    memset(&v, 0, sizeof v);
    pos = 3;
    OK(MPI_Unpack_external_c("external32", out, 13, &pos, &v, 1, st));
    REQUIRE(pos == 13 && v.d == 1.0 && v.s == 0x0a0b, "external32 round trip (pos %lld)", pos);
    MPI_Type_free(&st);
    printf("test external32 ok\n");
}

static void expect_class(int rc, int want, const char *func, int line)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    REQUIRE(rc != MPI_SUCCESS && cls == want, "line %d: %s returned class %d, expected %d", line,
          func, rc == MPI_SUCCESS ? 0 : cls, want);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    char named[64];
    snprintf(named, sizeof named, "%s:", func);
    REQUIRE(strstr(msg, named) != NULL, "line %d: message \"%s\" does not name %s", line, msg, func);
}
#define EXPECT(call, cls, func) expect_class((call), cls, func, __LINE__)

static void test_errors(void)
{
    MPI_Datatype t;
    MPI_Count bl[2] = {1, -1}, dp[2] = {0, 4}, ok2[2] = {1, 1};
    EXPECT(MPI_Type_indexed_c(-1, ok2, dp, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_indexed_c");
    EXPECT(MPI_Type_indexed_c(2, bl, dp, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_indexed_c");
    EXPECT(MPI_Type_indexed_c(2, ok2, NULL, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_indexed_c");
    EXPECT(MPI_Type_create_hindexed_c(2, NULL, dp, MPI_INT, &t), MPI_ERR_ARG,
           "MPI_Type_create_hindexed_c");
    /* The int form shares the checks (a NULL blocklength array once passed
     * as "blocks of length 0"). */
    int idp[2] = {0, 4};
    EXPECT(MPI_Type_indexed(2, NULL, idp, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_indexed");
    EXPECT(MPI_Type_create_indexed_block_c(2, -3, dp, MPI_INT, &t), MPI_ERR_ARG,
           "MPI_Type_create_indexed_block_c");
    EXPECT(MPI_Type_create_hindexed_block_c(2, 1, dp, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE,
           "MPI_Type_create_hindexed_block_c");
    MPI_Datatype tys[2] = {MPI_INT, MPI_DATATYPE_NULL};
    EXPECT(MPI_Type_create_struct_c(2, ok2, dp, tys, &t), MPI_ERR_TYPE,
           "MPI_Type_create_struct_c");
    EXPECT(MPI_Type_create_struct_c(-2, ok2, dp, tys, &t), MPI_ERR_COUNT,
           "MPI_Type_create_struct_c");
    MPI_Count sz[1] = {4}, sub[1] = {3}, st[1] = {2};
    EXPECT(MPI_Type_create_subarray_c(1, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
           "MPI_Type_create_subarray_c");
    EXPECT(MPI_Type_create_subarray_c(0, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_DIMS,
           "MPI_Type_create_subarray_c");
    MPI_Count gs[1] = {0};
    int dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {1};
    EXPECT(MPI_Type_create_darray_c(1, 0, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG, "MPI_Type_create_darray_c");
    int iv[2] = {1, 2};
    char out[8];
    MPI_Count pos = 0, size;
    EXPECT(MPI_Pack_external_c("native", iv, 2, MPI_INT, out, 8, &pos),
           MPI_ERR_UNSUPPORTED_DATAREP, "MPI_Pack_external_c");
    pos = 4;
    EXPECT(MPI_Pack_external_c("external32", iv, 2, MPI_INT, out, 8, &pos), MPI_ERR_TRUNCATE,
           "MPI_Pack_external_c");
    EXPECT(MPI_Pack_external_c("external32", iv, -1, MPI_INT, out, 8, &pos), MPI_ERR_COUNT,
           "MPI_Pack_external_c");
    pos = 0;
    EXPECT(MPI_Unpack_external_c("external32", out, 4, &pos, iv, 2, MPI_INT), MPI_ERR_TRUNCATE,
           "MPI_Unpack_external_c");
    EXPECT(MPI_Unpack_external_c("external32", out, 8, NULL, iv, 2, MPI_INT), MPI_ERR_ARG,
           "MPI_Unpack_external_c");
    EXPECT(MPI_Pack_external_size_c("external32", 2, MPI_INT, NULL), MPI_ERR_ARG,
           "MPI_Pack_external_size_c");
    EXPECT(MPI_Pack_external_size_c("xdr", 2, MPI_INT, &size), MPI_ERR_UNSUPPORTED_DATAREP,
           "MPI_Pack_external_size_c");
    printf("test errors ok\n");
}

/* A type of more than 2^63 bytes (contiguous of contiguous; it is never
 * sent): MPI_Count cannot hold its size, so the size and extent queries
 * give MPI_UNDEFINED, never a wrapped negative value. */
static void test_huge_type(void)
{
    MPI_Datatype a, b, c;
    OK(MPI_Type_contiguous(1 << 30, MPI_CHAR, &a));
    OK(MPI_Type_contiguous(1 << 30, a, &b));
    OK(MPI_Type_contiguous(9, b, &c)); /* 9 * 2^60 bytes > 2^63 */
    OK(MPI_Type_commit(&c));
    MPI_Count sx = 0, sc = 0, lb = 0, ext = 0;
    int si = 0;
    OK(MPI_Type_size_x(c, &sx));
    REQUIRE(sx == MPI_UNDEFINED, "MPI_Type_size_x of 9 * 2^60 bytes gave %lld", (long long)sx);
    OK(MPI_Type_size_c(c, &sc));
    REQUIRE(sc == MPI_UNDEFINED, "MPI_Type_size_c of 9 * 2^60 bytes gave %lld", (long long)sc);
    OK(MPI_Type_size(c, &si));
    REQUIRE(si == MPI_UNDEFINED, "MPI_Type_size of 9 * 2^60 bytes gave %d", si);
    OK(MPI_Type_get_extent_x(c, &lb, &ext));
    REQUIRE(ext == MPI_UNDEFINED, "MPI_Type_get_extent_x of 9 * 2^60 bytes gave %lld",
          (long long)ext);
    /* 2^62 bytes still fits. */
    MPI_Datatype d;
    OK(MPI_Type_contiguous(4, b, &d));
    OK(MPI_Type_commit(&d));
    OK(MPI_Type_size_x(d, &sx));
    REQUIRE(sx == (MPI_Count)1 << 62, "MPI_Type_size_x of 2^62 bytes gave %lld", (long long)sx);
    OK(MPI_Type_free(&d));
    OK(MPI_Type_free(&c));
    OK(MPI_Type_free(&b));
    OK(MPI_Type_free(&a));
    printf("test huge type ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < 256; i++)
        ints[i] = i;
    test_indexed_family();
    test_struct();
    test_subarray_darray();
    test_external32();
    test_errors();
    test_huge_type();
    MPI_Finalize();
    return 0;
}
