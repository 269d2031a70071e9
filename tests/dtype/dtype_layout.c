/* Derived datatypes on one rank: bounds, sizes and packed bytes of every
 * constructor against hand-computed layouts; envelopes and contents;
 * Pack/Unpack positions; external32 bytes; names. */
#include "dtype_common.h"

#include <stddef.h>
#include <string.h>

static int ints[256];

/* Packs count elements of t from src and checks the packed ints. */
static void expect_packed_ints(const void *src, int count, MPI_Datatype t, const int *want, int n,
                               int line)
{
    int buf[64], pos = 0, psize;
    OK(MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize));
    REQUIRE(psize == n * (int)sizeof(int), "line %d: pack size %d, want %d", line, psize,
          n * (int)sizeof(int));
    OK(MPI_Pack(src, count, t, buf, (int)sizeof buf, &pos, MPI_COMM_WORLD));
    REQUIRE(pos == psize, "line %d: position %d after pack, want %d", line, pos, psize);
    for (int i = 0; i < n; i++)
        REQUIRE(buf[i] == want[i], "line %d: packed[%d] = %d, want %d", line, i, buf[i], want[i]);
    /* Round trip: unpack into a zeroed copy; only the layout's ints return. */
    static int back[256];
    memset(back, 0, sizeof back);
    pos = 0;
    OK(MPI_Unpack(buf, psize, &pos, back + ((const int *)src - ints), count, t,
                  MPI_COMM_WORLD));
    REQUIRE(pos == psize, "line %d: position %d after unpack", line, pos);
    for (int i = 0; i < n; i++)
        REQUIRE(back[want[i]] == want[i], "line %d: unpacked int %d missing", line, want[i]);
    int nonzero = 0, expect = 0;
    for (int i = 0; i < 256; i++)
        nonzero += back[i] != 0;
    for (int i = 0; i < n; i++)
        expect += want[i] != 0;
    REQUIRE(nonzero == expect, "line %d: unpack wrote %d ints, the layout has %d", line, nonzero,
          expect);
}
#define PACKED(src, count, t, ...)                                                    \
    do {                                                                              \
        int want_[] = {__VA_ARGS__};                                                  \
        expect_packed_ints(src, count, t, want_, (int)(sizeof want_ / sizeof *want_), \
                           __LINE__);                                                 \
    } while (0)


static void test_vector(void)
{
    MPI_Datatype v, hv, c, cv;
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    SHAPE(v, 0, 40, 0, 40, 24);
    PACKED(ints, 1, v, 0, 1, 4, 5, 8, 9);
    /* Two vectors: the second starts one extent (10 ints) later. */
    PACKED(ints, 2, v, 0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19);
    /* Negative stride: blocks at 8, 4, 0 (lb -32 bytes). */
    MPI_Datatype nv;
    OK(MPI_Type_vector(3, 1, -4, MPI_INT, &nv));
    OK(MPI_Type_commit(&nv));
    SHAPE(nv, -32, 36, -32, 36, 12);
    PACKED(ints + 8, 1, nv, 8, 4, 0);
    OK(MPI_Type_create_hvector(2, 3, 20, MPI_INT, &hv));
    OK(MPI_Type_commit(&hv));
    SHAPE(hv, 0, 32, 0, 32, 24);
    PACKED(ints, 1, hv, 0, 1, 2, 5, 6, 7);
    OK(MPI_Type_contiguous(4, MPI_INT, &c));
    OK(MPI_Type_commit(&c));
    SHAPE(c, 0, 16, 0, 16, 16);
    PACKED(ints, 2, c, 0, 1, 2, 3, 4, 5, 6, 7);
    /* A vector of contiguous blocks of a vector. */
    OK(MPI_Type_contiguous(2, v, &cv));
    OK(MPI_Type_commit(&cv));
    SHAPE(cv, 0, 80, 0, 80, 48);
    PACKED(ints, 1, cv, 0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19);
    MPI_Type_free(&v);
    MPI_Type_free(&nv);
    MPI_Type_free(&hv);
    /* cv stays usable after its member v was freed. */
    PACKED(ints, 1, cv, 0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19);
    MPI_Type_free(&c);
    MPI_Type_free(&cv);
    REQUIRE(cv == MPI_DATATYPE_NULL, "Type_free leaves the handle set");
    if (1) printf("test vector ok\n");
}

static void test_indexed(void)
{
    MPI_Datatype ix, hx, ib, hb;
    int bl[3] = {2, 1, 3}, dp[3] = {5, 0, 9};
    OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &ix));
    OK(MPI_Type_commit(&ix));
    SHAPE(ix, 0, 48, 0, 48, 24);
    PACKED(ints, 1, ix, 5, 6, 0, 9, 10, 11);
    PACKED(ints, 2, ix, 5, 6, 0, 9, 10, 11, 17, 18, 12, 21, 22, 23);
    MPI_Aint hd[3] = {20, 0, 36};
    OK(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &hx));
    OK(MPI_Type_commit(&hx));
    SHAPE(hx, 0, 48, 0, 48, 24);
    PACKED(ints, 1, hx, 5, 6, 0, 9, 10, 11);
    int bd[3] = {6, 0, 3};
    OK(MPI_Type_create_indexed_block(3, 2, bd, MPI_INT, &ib));
    OK(MPI_Type_commit(&ib));
    SHAPE(ib, 0, 32, 0, 32, 24);
    PACKED(ints, 1, ib, 6, 7, 0, 1, 3, 4);
    MPI_Aint hbd[2] = {12, 40};
    OK(MPI_Type_create_hindexed_block(2, 1, hbd, MPI_INT, &hb));
    OK(MPI_Type_commit(&hb));
    SHAPE(hb, 12, 32, 12, 32, 8);
    PACKED(ints, 1, hb, 3, 10);
    /* Envelope and contents of the indexed type. */
    int ni, na, nd, comb, ci[7];
    MPI_Aint ca[1];
    MPI_Datatype ct[1];
    OK(MPI_Type_get_envelope(ix, &ni, &na, &nd, &comb));
    REQUIRE(comb == MPI_COMBINER_INDEXED && ni == 7 && na == 0 && nd == 1, "envelope %d %d %d %d",
          comb, ni, na, nd);
    OK(MPI_Type_get_contents(ix, 7, 0, 1, ci, ca, ct));
    int want[7] = {3, 2, 1, 3, 5, 0, 9};
    for (int i = 0; i < 7; i++)
        REQUIRE(ci[i] == want[i], "contents int %d = %d", i, ci[i]);
    REQUIRE(ct[0] == MPI_INT, "contents type 0x%x", (unsigned)ct[0]);
    OK(MPI_Type_get_envelope(hb, &ni, &na, &nd, &comb));
    REQUIRE(comb == MPI_COMBINER_HINDEXED_BLOCK && ni == 2 && na == 2 && nd == 1, "hb envelope");
    MPI_Type_free(&ix);
    MPI_Type_free(&hx);
    MPI_Type_free(&ib);
    MPI_Type_free(&hb);
    printf("test indexed ok\n");
}

struct cdi {
    char c;
    double d;
    int i[2];
};

struct dc {
    double d;
    char c;
};

static void test_struct(void)
{
    MPI_Datatype s, s2, sv;
    int bl[3] = {1, 1, 2};
    MPI_Aint dp[3] = {offsetof(struct cdi, c), offsetof(struct cdi, d), offsetof(struct cdi, i)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    OK(MPI_Type_create_struct(3, bl, dp, ty, &s));
    OK(MPI_Type_commit(&s));
    SHAPE(s, 0, (MPI_Aint)sizeof(struct cdi), 0, (MPI_Aint)sizeof(struct cdi), 17);
    struct cdi in[2] = {{'x', 1.5, {7, 8}}, {'y', -2.25, {9, 10}}}, out[2];
    unsigned char packed[64];
    int pos = 0;
    OK(MPI_Pack(in, 2, s, packed, (int)sizeof packed, &pos, MPI_COMM_WORLD));
    REQUIRE(pos == 34, "struct packs %d bytes", pos);
    double d;
    int iv[2];
    memcpy(&d, packed + 1, 8);
    memcpy(iv, packed + 9, 8);
    REQUIRE(packed[0] == 'x' && d == 1.5 && iv[0] == 7 && iv[1] == 8, "packed struct 0 wrong");
    REQUIRE(packed[17] == 'y', "second struct starts at byte 17");
    memset(out, 0, sizeof out);
    pos = 0;
    OK(MPI_Unpack(packed, 34, &pos, out, 2, s, MPI_COMM_WORLD));
    REQUIRE(out[1].c == 'y' && out[1].d == -2.25 && out[1].i[1] == 10, "unpacked struct");
    /* {double, char}: extent padded to the double's alignment, as in C. */
    int bl2[2] = {1, 1};
    MPI_Aint dp2[2] = {0, 8};
    MPI_Datatype ty2[2] = {MPI_DOUBLE, MPI_CHAR};
    OK(MPI_Type_create_struct(2, bl2, dp2, ty2, &s2));
    OK(MPI_Type_commit(&s2));
    SHAPE(s2, 0, (MPI_Aint)sizeof(struct dc), 0, 9, 9);
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(s, &ni, &na, &nd, &comb));
    REQUIRE(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3, "struct envelope");
    /* A vector of structs. */
    OK(MPI_Type_vector(2, 1, 2, s, &sv));
    OK(MPI_Type_commit(&sv));
    SHAPE(sv, 0, 3 * (MPI_Aint)sizeof(struct cdi), 0, 3 * (MPI_Aint)sizeof(struct cdi), 34);
    MPI_Type_free(&s);
    MPI_Type_free(&s2);
    MPI_Type_free(&sv);
    printf("test struct ok\n");
}

static void test_resized_dup(void)
{
    MPI_Datatype r, rc, dup, vec;
    OK(MPI_Type_create_resized(MPI_INT, -4, 12, &r));
    OK(MPI_Type_commit(&r));
    SHAPE(r, -4, 12, 0, 4, 4);
    /* Consecutive elements one extent (3 ints) apart. */
    PACKED(ints, 3, r, 0, 3, 6);
    OK(MPI_Type_contiguous(2, r, &rc));
    OK(MPI_Type_commit(&rc));
    SHAPE(rc, -4, 24, 0, 16, 8);
    PACKED(ints, 1, rc, 0, 3);
    OK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    OK(MPI_Type_dup(vec, &dup));
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb));
    REQUIRE(comb == MPI_COMBINER_DUP && ni == 0 && na == 0 && nd == 1, "dup envelope");
    OK(MPI_Type_commit(&dup));
    SHAPE(dup, 0, 16, 0, 16, 8);
    PACKED(ints, 1, dup, 0, 3);
    OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    REQUIRE(comb == MPI_COMBINER_NAMED, "MPI_INT is named");
    MPI_Count lbx, extx, sx;
    OK(MPI_Type_get_extent_x(r, &lbx, &extx));
    OK(MPI_Type_size_x(rc, &sx));
    REQUIRE(lbx == -4 && extx == 12 && sx == 8, "_x forms %lld %lld %lld", (long long)lbx, (long long)extx, (long long)sx);
    OK(MPI_Type_get_true_extent_x(rc, &lbx, &extx));
    REQUIRE(lbx == 0 && extx == 16, "true extent x %lld %lld", (long long)lbx, (long long)extx);
    MPI_Type_free(&r);
    MPI_Type_free(&rc);
    MPI_Type_free(&dup);
    MPI_Type_free(&vec);
    printf("test resized_dup ok\n");
}

static void test_subarray_darray(void)
{
    MPI_Datatype sa, sf, da, d2;
    int sizes[2] = {4, 5}, sub[2] = {2, 3}, starts[2] = {1, 2};
    OK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &sa));
    OK(MPI_Type_commit(&sa));
    SHAPE(sa, 0, 80, 28, 32, 24);
    PACKED(ints, 1, sa, 7, 8, 9, 12, 13, 14);
    OK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &sf));
    OK(MPI_Type_commit(&sf));
    PACKED(ints, 1, sf, 9, 10, 13, 14, 17, 18);
    int gs[1] = {10}, dist[1] = {MPI_DISTRIBUTE_CYCLIC}, darg[1] = {2}, ps[1] = {4};
    OK(MPI_Type_create_darray(4, 0, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &da));
    OK(MPI_Type_commit(&da));
    SHAPE(da, 0, 40, 0, 40, 16);
    PACKED(ints, 1, da, 0, 1, 8, 9);
    int gs2[2] = {4, 6}, dist2[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int darg2[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps2[2] = {2, 2};
    OK(MPI_Type_create_darray(4, 3, 2, gs2, dist2, darg2, ps2, MPI_ORDER_C, MPI_INT, &d2));
    OK(MPI_Type_commit(&d2));
    SHAPE(d2, 0, 96, 60, 36, 24);
    PACKED(ints, 1, d2, 15, 16, 17, 21, 22, 23);
    MPI_Type_free(&sa);
    MPI_Type_free(&sf);
    MPI_Type_free(&da);
    MPI_Type_free(&d2);
    printf("test subarray_darray ok\n");
}

static void test_pack_positions(void)
{
    MPI_Datatype v;
    OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &v));
    OK(MPI_Type_commit(&v));
    double dv[3] = {1.0, 2.0, 3.0}, x = 9.5, back[3] = {0, 0, 0}, y = 0;
    int n = 7;
    char buf[64];
    int pos = 0, nb = 0;
    OK(MPI_Pack(&n, 1, MPI_INT, buf, 64, &pos, MPI_COMM_WORLD));
    OK(MPI_Pack(dv, 1, v, buf, 64, &pos, MPI_COMM_WORLD));
    OK(MPI_Pack(&x, 1, MPI_DOUBLE, buf, 64, &pos, MPI_COMM_WORLD));
    REQUIRE(pos == 28, "positions add up: %d", pos);
    int total = pos;
    pos = 0;
    OK(MPI_Unpack(buf, total, &pos, &nb, 1, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Unpack(buf, total, &pos, back, 1, v, MPI_COMM_WORLD));
    OK(MPI_Unpack(buf, total, &pos, &y, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    REQUIRE(nb == 7 && back[0] == 1.0 && back[1] == 0.0 && back[2] == 3.0 && y == 9.5,
          "unpacked %d %g %g %g %g", nb, back[0], back[1], back[2], y);
    MPI_Type_free(&v);
    printf("test pack_positions ok\n");
}

static void test_external32(void)
{
    int iv[2] = {1, 0x01020304};
    unsigned char out[32];
    MPI_Aint pos = 0, size;
    OK(MPI_Pack_external_size("external32", 2, MPI_INT, &size));
    REQUIRE(size == 8, "external32 size of 2 ints %ld", (long)size);
    OK(MPI_Pack_external("external32", iv, 2, MPI_INT, out, sizeof out, &pos));
    const unsigned char want[8] = {0, 0, 0, 1, 1, 2, 3, 4};
    REQUIRE(pos == 8 && memcmp(out, want, 8) == 0, "external32 ints are big-endian");
#ifdef MPICH_VERSION
    /* MPICH 4.0 (Debian bookworm) dies with SIGILL in Pack_external_size
     * on a struct; the check below ran against Tern only. */
    printf("test external32 ok\n");
    return;
#endif
    /* A double 1.0 and a short through a struct. */
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
    OK(MPI_Pack_external_size("external32", 1, st, &size));
    REQUIRE(size == 10, "external32 struct size %ld", (long)size);
    pos = 0;
    OK(MPI_Pack_external("external32", &v, 1, st, out, sizeof out, &pos));
    const unsigned char wd[10] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x0a, 0x0b};
    REQUIRE(pos == 10 && memcmp(out, wd, 10) == 0, "external32 double/short bytes");
    memset(&v, 0, sizeof v);
    pos = 0;
    OK(MPI_Unpack_external("external32", out, 10, &pos, &v, 1, st));
    REQUIRE(pos == 10 && v.d == 1.0 && v.s == 0x0a0b, "external32 round trip");
    MPI_Type_free(&st);
    printf("test external32 ok\n");
}

static void test_get_elements(void)
{
    /* Self-sends: a short message into a larger derived receive. */
    MPI_Datatype c3, sdi;
    OK(MPI_Type_contiguous(3, MPI_INT, &c3));
    OK(MPI_Type_commit(&c3));
    int src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8] = {0};
    MPI_Status st;
    MPI_Request rq;
    OK(MPI_Irecv(dst, 2, c3, 0, 1, MPI_COMM_WORLD, &rq));
    OK(MPI_Send(src, 5, MPI_INT, 0, 1, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq, &st));
    int cnt, el;
    MPI_Count elx;
    OK(MPI_Get_count(&st, c3, &cnt));
    OK(MPI_Get_elements(&st, c3, &el));
    OK(MPI_Get_elements_x(&st, c3, &elx));
    REQUIRE(cnt == MPI_UNDEFINED && el == 5 && elx == 5, "count %d elements %d %lld", cnt, el,
          (long long)elx);
    REQUIRE(dst[4] == 5 && dst[5] == 0, "partial receive wrote 5 ints");
    /* {int, double}: 16 bytes are 3 basic elements, 6 bytes one and a part. */
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, bl, dp, ty, &sdi));
    OK(MPI_Type_commit(&sdi));
    char raw[32] = {0}, sink[64];
    OK(MPI_Irecv(sink, 2, sdi, 0, 2, MPI_COMM_WORLD, &rq));
    OK(MPI_Send(raw, 12 + 4, MPI_BYTE, 0, 2, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq, &st));
    OK(MPI_Get_elements(&st, sdi, &el));
    OK(MPI_Get_count(&st, sdi, &cnt));
    REQUIRE(el == 3 && cnt == MPI_UNDEFINED, "struct elements %d count %d", el, cnt);
    OK(MPI_Irecv(sink, 2, sdi, 0, 3, MPI_COMM_WORLD, &rq));
    OK(MPI_Send(raw, 6, MPI_BYTE, 0, 3, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq, &st));
    OK(MPI_Get_elements(&st, sdi, &el));
    /* 6 bytes end inside the double: no matching type signature sent
     * them, so MPI_UNDEFINED (as Open MPI; MPICH counts the int). */
    REQUIRE(el == MPI_UNDEFINED, "6 bytes of {int, double}: elements %d, expected MPI_UNDEFINED",
          el);
    MPI_Type_free(&c3);
    MPI_Type_free(&sdi);
    printf("test get_elements ok\n");
}

/* Names: a predefined type's is its handle's name and may be changed (MPI
 * does not forbid it; mpi4py sets every type's name), while messages keep
 * the standard name; a derived type's is what it was given. */
static void test_names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_get_name(MPI_BYTE, name, &len));
    REQUIRE(!strcmp(name, "MPI_BYTE") && len == 8, "name of MPI_BYTE: \"%s\" (%d)", name, len);
    OK(MPI_Type_set_name(MPI_BYTE, "octet"));
    OK(MPI_Type_get_name(MPI_BYTE, name, &len));
    REQUIRE(!strcmp(name, "octet") && len == 5, "renamed MPI_BYTE: \"%s\" (%d)", name, len);
    OK(MPI_Type_get_name(MPI_INT, name, &len));
    REQUIRE(!strcmp(name, "MPI_INT"), "MPI_INT keeps its name: \"%s\"", name);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char a = 1, b = 2;
    int rc = MPI_Reduce_local(&a, &b, 1, MPI_BYTE, MPI_SUM);
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_string(rc, msg, &len);
    REQUIRE(rc != MPI_SUCCESS && strstr(msg, "MPI_BYTE"), "message keeps the standard name: %s",
          msg);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    OK(MPI_Type_set_name(MPI_BYTE, "MPI_BYTE"));
    MPI_Datatype t;
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_set_name(t, "pair"));
    OK(MPI_Type_get_name(t, name, &len));
    REQUIRE(!strcmp(name, "pair"), "derived name \"%s\"", name);
    OK(MPI_Type_free(&t));
    printf("test names ok\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int i = 0; i < 256; i++)
        ints[i] = i;
    test_vector();
    test_indexed();
    test_struct();
    test_resized_dup();
    test_subarray_darray();
    test_pack_positions();
    test_external32();
    test_get_elements();
    test_names();
    MPI_Finalize();
    return 0;
}
