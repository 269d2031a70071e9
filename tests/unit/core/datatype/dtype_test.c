/* Unit test of the datatype engine: packing and unpacking a derived type a
 * fragment at a time, at arbitrary offsets of the packed stream (what the
 * rendezvous and shared-memory paths do), must give the same bytes as one
 * whole pack, and element counts must match the layout. */
#include "core/datatype/dtype_build.h"
#include "base/test_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Packs in fragments of frag bytes and unpacks them into a fresh buffer. */
static void fragments(const char *what, MPI_Datatype dt, size_t count, const void *src,
                      size_t span, size_t frag)
{
    size_t total = tern_datatype_packed_size(dt, count);
    unsigned char *whole = malloc(total + 1), *pieces = malloc(total + 1);
    unsigned char *back = calloc(1, span), *ref = calloc(1, span);
    CHECK_MSG(tern_datatype_pack(src, count, dt, whole) == TERN_OK, "%s: pack", what);
    for (size_t off = 0; off < total; off += frag) {
        size_t n = total - off < frag ? total - off : frag;
        CHECK_MSG(tern_datatype_pack_range(src, count, dt, off, pieces + off, n) == TERN_OK,
               "%s: pack range %zu+%zu", what, off, n);
        CHECK_MSG(tern_datatype_unpack_range(pieces + off, n, back, count, dt, off) == TERN_OK,
               "%s: unpack range %zu+%zu", what, off, n);
    }
    CHECK_MSG(memcmp(whole, pieces, total) == 0, "%s: fragments of %zu differ from one pack", what,
           frag);
    CHECK_MSG(tern_datatype_unpack(whole, total, ref, count, dt) == TERN_OK, "%s: unpack", what);
    CHECK_MSG(memcmp(back, ref, span) == 0, "%s: fragment unpack of %zu differs", what, frag);
    free(whole);
    free(pieces);
    free(back);
    free(ref);
}

int main(void)
{
    /* vector(5, 3, 7) of int: 15 ints of 35, packed in order. */
    MPI_Datatype v, s, r;
    tern_dtype_args_t a = {.combiner = MPI_COMBINER_VECTOR};
    CHECK_MSG(tern_dtype_build_vector(5, 3, 7 * 4, MPI_INT, &a, &v) == TERN_OK, "vector");
    CHECK_MSG(!tern_datatype_is_valid(v), "an uncommitted type is not valid for transfers");
    CHECK_MSG(tern_dtype_commit(v) == TERN_OK, "commit");
    CHECK_MSG(tern_datatype_is_valid(v) && !tern_datatype_is_contig(v), "committed, scattered");
    CHECK_MSG(tern_datatype_size(v) == 60 && tern_datatype_extent(v) == (4 * 7 + 3) * 4,
           "size %ld extent %ld", tern_datatype_size(v), tern_datatype_extent(v));
    CHECK_MSG(tern_datatype_basic(v) == MPI_INT, "basic of a vector of int");
    int ints[400];
    for (int i = 0; i < 400; i++)
        ints[i] = i;
    int packed[60];
    tern_datatype_pack(ints, 2, v, packed);
    /* Second element starts one extent (31 ints) after the first. */
    CHECK_MSG(packed[0] == 0 && packed[3] == 7 && packed[14] == 30 && packed[15] == 31 &&
               packed[29] == 61,
           "packed %d %d %d %d %d", packed[0], packed[3], packed[14], packed[15], packed[29]);
    size_t frags[] = {1, 3, 5, 12, 13, 59, 60, 4096};
    for (unsigned k = 0; k < sizeof frags / sizeof *frags; k++)
        fragments("vector", v, 10, ints, sizeof ints, frags[k]);
    /* Elements: 7 ints in 28 bytes; 30 bytes end inside an int (-1). */
    CHECK_MSG(tern_datatype_elements(v, 28) == 7, "elements of 28 bytes: %lld",
           tern_datatype_elements(v, 28));
    CHECK_MSG(tern_datatype_elements(v, 30) == -1, "elements of 30 bytes: %lld",
           tern_datatype_elements(v, 30));
    CHECK_MSG(tern_datatype_elements(v, 120) == 30, "elements of 2 vectors");

    /* struct {char; double; MPI_DOUBLE_INT[2]} with padding everywhere. */
    size_t bl[3] = {1, 1, 2};
    MPI_Aint dp[3] = {0, 8, 16};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_DOUBLE_INT};
    tern_dtype_args_t sa = {.combiner = MPI_COMBINER_STRUCT};
    CHECK_MSG(tern_dtype_build_blocks(3, bl, dp, ty, 0, 1, &sa, &s) == TERN_OK, "struct");
    tern_dtype_commit(s);
    CHECK_MSG(tern_datatype_size(s) == 1 + 8 + 2 * 12 && tern_datatype_extent(s) == 48,
           "struct size %ld extent %ld", tern_datatype_size(s), tern_datatype_extent(s));
    CHECK_MSG(tern_datatype_basic(s) == MPI_DATATYPE_NULL, "a struct of mixed types has no basic");
    /* Its elements: char, double, then double, int twice (6 a copy); 15
     * elements are 2 copies and char, double, double (2 * 33 + 17 bytes). */
    size_t eb = 0;
    CHECK_MSG(tern_datatype_elements_bytes(s, 15, &eb) == 0 && eb == 83, "bytes of 15 elements: %zu",
           eb);
    CHECK_MSG(tern_datatype_elements(s, 83) == 15, "elements of 83 bytes: %lld",
           tern_datatype_elements(s, 83));
    CHECK_MSG(tern_datatype_elements(s, 84) == -1, "84 bytes end inside an int");
    CHECK_MSG(tern_datatype_elements_bytes(s, 0, &eb) == 0 && eb == 0, "no elements");
    unsigned char bytes[48 * 6];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)(i * 13 + 1);
    for (unsigned k = 0; k < sizeof frags / sizeof *frags; k++)
        fragments("struct", s, 6, bytes, sizeof bytes, frags[k]);

    /* A resized contiguous int pair is contiguous again when extent = size. */
    tern_dtype_args_t ra = {.combiner = MPI_COMBINER_RESIZED};
    CHECK_MSG(tern_dtype_build_resized(MPI_2INT, 0, 8, &ra, &r) == TERN_OK, "resized");
    tern_dtype_commit(r);
    CHECK_MSG(tern_datatype_is_contig(r) && tern_datatype_basic(r) == MPI_2INT,
           "resized 2INT: contig %d", tern_datatype_is_contig(r));
    CHECK_MSG(tern_datatype_elements(r, 16) == 4, "MPI_2INT counts two elements each");

    /* Freeing keeps a type alive while something holds a reference. */
    tern_datatype_retain(v);
    tern_datatype_release(v);
    CHECK_MSG(tern_datatype_is_valid(v), "still referenced");
    tern_datatype_release(v);
    CHECK_MSG(!tern_datatype_is_valid(v), "released");
    tern_datatype_release(s);
    tern_datatype_release(r);
    return tern_check_result("dtype_test");
}
