/* Puts and gets on a Win_allocate window (ranks of one node: direct
 * access, one copy at the call, rma_shm.c): plain predefined types (decoded
 * from the handle), origin and target types that differ, a pair type and
 * derived types (looked up; types with holes go the general way), a
 * true_lb on one side only, a zero-size type, zero counts, MPI_PROC_NULL,
 * the inline copies' sizes and those beside them, copies from
 * TERN_RMA_MOVSB_MIN (the string copy) at odd offsets and lengths, flush
 * and flush_all publishing puts, and range errors naming the function and
 * the window. Every byte is checked, the bytes around
 * each target range too. */
#include "../mpi/mtest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN_BYTES ((4 << 20) + 4096)

static int rank, size;

static unsigned char pattern(int seed, size_t i)
{
    return (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

typedef struct {
    const char *name;
    MPI_Datatype otype, ttype;
    int ocount, tcount;
    MPI_Aint disp;
    size_t extent; /* bytes the target range spans from disp */
    int holes;     /* a pair type: per 16-byte element only bytes 0-11 move */
} shape_t;

/* Whether byte i of a shape's range moves. */
static int moves(const shape_t *s, size_t i)
{
    return !s->holes || i % 16 < 12;
}

static MPI_Datatype three_ints, vec, shifted, dup_int, empty;
static shape_t shapes[24];
static int nshapes;

static void add(const char *name, MPI_Datatype o, int oc, MPI_Datatype t, int tc, MPI_Aint disp,
                size_t extent, int holes)
{
    shapes[nshapes++] = (shape_t){name, o, t, oc, tc, disp, extent, holes};
}

static void make_shapes(void)
{
    MPI_Type_contiguous(3, MPI_INT, &three_ints);
    MPI_Type_commit(&three_ints);
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec); /* holes: the general way */
    MPI_Type_commit(&vec);
    int len = 4;
    MPI_Aint at = 12;
    MPI_Type_create_hindexed(1, &len, &at, MPI_INT, &shifted); /* true_lb 12 */
    MPI_Type_commit(&shifted);
    MPI_Type_dup(MPI_INT, &dup_int); /* contiguous, not a plain handle */
    MPI_Type_commit(&dup_int);
    MPI_Type_contiguous(0, MPI_INT, &empty); /* no bytes: nothing moves */
    MPI_Type_commit(&empty);
    /* Disjoint target ranges, odd offsets and lengths among them. */
    add("byte", MPI_BYTE, 8, MPI_BYTE, 8, 0, 8, 0);
    add("int", MPI_INT, 25, MPI_INT, 25, 64, 100, 0);
    add("double", MPI_DOUBLE, 3, MPI_DOUBLE, 3, 1001, 24, 0);
    add("2int", MPI_2INT, 5, MPI_2INT, 5, 1200, 40, 0);
    add("int to byte", MPI_INT, 250, MPI_BYTE, 1000, 2001, 1000, 0);
    add("double_int", MPI_DOUBLE_INT, 10, MPI_DOUBLE_INT, 10, 4096, 160, 1);
    add("contiguous", three_ints, 7, three_ints, 7, 5003, 84, 0);
    add("vector", vec, 1, MPI_INT, 8, 6000, 32, 0);
    add("true_lb", shifted, 1, shifted, 1, 7000, 28, 0);
    add("true_lb origin only", shifted, 1, MPI_INT, 4, 7100, 16, 0);
    add("true_lb target only", MPI_INT, 4, shifted, 1, 7200, 28, 0);
    add("int to dup int", MPI_INT, 6, dup_int, 6, 7300, 24, 0);
    add("zero-size type", empty, 5, empty, 5, 7400, 0, 0);
    /* Either side of each of the inline copy's sizes (8-16, 17-32, 33-64
     * bytes, base/copy_small.h), at odd offsets. */
    add("5 bytes", MPI_BYTE, 5, MPI_BYTE, 5, 7501, 5, 0);
    add("17 bytes", MPI_CHAR, 17, MPI_CHAR, 17, 7601, 17, 0);
    add("33 bytes", MPI_BYTE, 33, MPI_BYTE, 33, 7701, 33, 0);
    add("64 bytes", MPI_BYTE, 64, MPI_BYTE, 64, 7801, 64, 0);
    add("65 bytes", MPI_BYTE, 65, MPI_BYTE, 65, 7901, 65, 0);
    add("64 KB", MPI_BYTE, 65536, MPI_BYTE, 65536, 8192, 65536, 0);
    add("1 MB + 3, odd", MPI_CHAR, (1 << 20) + 3, MPI_CHAR, (1 << 20) + 3, 80001,
        (1 << 20) + 3, 0);
    add("2 MB doubles", MPI_DOUBLE, 1 << 18, MPI_DOUBLE, 1 << 18, 1130000, 2 << 20, 0);
}

/* Where a shape's origin bytes lie: for vector, the packed ints are the
 * blocks of the origin layout; the check compares target bytes only. */
static void fill_origin(const shape_t *s, unsigned char *buf, int seed)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(s->otype, &lb, &extent);
    size_t span = (size_t)(lb + extent * s->ocount) + 64;
    for (size_t i = 0; i < span; i++)
        buf[i] = pattern(seed, i);
}

/* What a target range must hold after the put of s from seed's origin:
 * the packed origin stream laid into the target type's layout. */
static void expected(const shape_t *s, int seed, unsigned char *out, unsigned char *scratch)
{
    fill_origin(s, scratch, seed);
    int packed = 0, pos = 0;
    MPI_Pack_size(s->ocount, s->otype, MPI_COMM_SELF, &packed);
    unsigned char *p = malloc((size_t)packed);
    MPI_Pack(scratch, s->ocount, s->otype, p, packed, &pos, MPI_COMM_SELF);
    pos = 0;
    MPI_Unpack(p, packed, &pos, out, s->tcount, s->ttype, MPI_COMM_SELF);
    free(p);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    make_shapes();

    unsigned char *mem;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_set_name(win, "direct-copy-window");
    unsigned char *buf = calloc(WIN_BYTES + 4096, 1), *want = calloc(WIN_BYTES + 4096, 1),
                  *scratch = calloc(WIN_BYTES + 4096, 1);
    for (size_t i = 0; i < WIN_BYTES; i++)
        mem[i] = pattern(rank, i);

    /* Gets: the target's bytes land in the origin layout. */
    mtest_begin("gets");
    MPI_Win_fence(0, win);
    for (int k = 0; k < nshapes; k++) {
        const shape_t *s = &shapes[k];
        memset(buf, 0xee, WIN_BYTES);
        CHECK_RC(MPI_Get(buf, s->ocount, s->otype, to, s->disp, s->tcount, s->ttype, win));
        MPI_Win_fence(0, win);
        /* The target range as the target holds it, into the origin layout. */
        for (size_t i = 0; i < s->extent; i++)
            scratch[i] = pattern(to, (size_t)s->disp + i);
        int packed = 0, pos = 0;
        MPI_Pack_size(s->tcount, s->ttype, MPI_COMM_SELF, &packed);
        unsigned char *p = malloc((size_t)packed);
        MPI_Pack(scratch, s->tcount, s->ttype, p, packed, &pos, MPI_COMM_SELF);
        memset(want, 0xee, WIN_BYTES);
        pos = 0;
        MPI_Unpack(p, packed, &pos, want, s->ocount, s->otype, MPI_COMM_SELF);
        free(p);
        size_t bad = 0;
        for (size_t i = 0; i < s->extent + 64; i++)
            bad += buf[i] != want[i];
        CHECK(bad == 0, "get %s: %zu bytes differ", s->name, bad);
    }
    mtest_end();

    /* Nothing moves: zero counts, MPI_PROC_NULL. */
    mtest_begin("nothing");
    CHECK_RC(MPI_Put(buf, 0, MPI_INT, to, 0, 0, MPI_INT, win));
    CHECK_RC(MPI_Get(buf, 0, MPI_INT, to, 0, 0, MPI_INT, win));
    CHECK_RC(MPI_Put(buf, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win));
    CHECK_RC(MPI_Get(buf, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win));
    MPI_Win_fence(0, win);
    mtest_end();

    /* Puts: each range holds the origin's bytes, the rest of the window
     * its own (no byte written outside a range). */
    mtest_begin("puts");
    for (int k = 0; k < nshapes; k++) {
        const shape_t *s = &shapes[k];
        fill_origin(s, buf, 100 * (rank + 1) + k);
        CHECK_RC(MPI_Put(buf, s->ocount, s->otype, to, s->disp, s->tcount, s->ttype, win));
    }
    MPI_Win_fence(0, win);
    for (size_t i = 0; i < WIN_BYTES; i++)
        want[i] = pattern(rank, i);
    for (int k = 0; k < nshapes; k++) {
        const shape_t *s = &shapes[k];
        expected(s, 100 * (from + 1) + k, want + s->disp, scratch);
        for (size_t i = 0; i < s->extent; i++)
            if (!moves(s, i))
                want[s->disp + i] = pattern(rank, (size_t)s->disp + i);
    }
    size_t bad = 0, first = 0;
    for (size_t i = WIN_BYTES; i-- > 0;)
        if (mem[i] != want[i]) {
            bad++;
            first = i;
        }
    CHECK(bad == 0, "after the puts %zu window bytes differ, the first at %zu", bad, first);
    mtest_end();

    /* Passive target: a flushed put is in the target's memory when a
     * message sent after the flush arrives. */
    mtest_begin("flush");
    for (int round = 0; round < 2; round++) {
        MPI_Win_lock_all(0, win);
        double v = 1000.0 * round + rank;
        CHECK_RC(MPI_Put(&v, 1, MPI_DOUBLE, to, 16, 1, MPI_DOUBLE, win));
        CHECK_RC(round ? MPI_Win_flush_all(win) : MPI_Win_flush(to, win));
        int token = 1;
        MPI_Sendrecv_replace(&token, 1, MPI_INT, to, 7, from, 7, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
        MPI_Win_sync(win);
        double got;
        memcpy(&got, mem + 16, sizeof got);
        CHECK(got == 1000.0 * round + from, "round %d: the window holds %g after the flush",
              round, got);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    mtest_end();

    /* Out of range: MPI_ERR_RMA_RANGE, the message naming the call and
     * the window; nothing written. */
    mtest_begin("range");
    MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win);
    int rc = MPI_Put(buf, 8, MPI_BYTE, to, WIN_BYTES - 4, 8, MPI_BYTE, win);
    CHECK_CLASS(rc, MPI_ERR_RMA_RANGE, "put past the window's end");
    CHECK(strstr(mtest_errstr(rc), "MPI_Put") != NULL, "message \"%s\" names no MPI_Put",
          mtest_errstr(rc));
    CHECK(strstr(mtest_errstr(rc), "direct-copy-window") != NULL,
          "message \"%s\" names no window", mtest_errstr(rc));
    rc = MPI_Get(buf, 2, MPI_INT, to, WIN_BYTES - 7, 2, MPI_INT, win);
    CHECK_CLASS(rc, MPI_ERR_RMA_RANGE, "get past the window's end");
    CHECK(strstr(mtest_errstr(rc), "MPI_Get") != NULL, "message \"%s\" names no MPI_Get",
          mtest_errstr(rc));
    CHECK(strstr(mtest_errstr(rc), "direct-copy-window") != NULL,
          "message \"%s\" names no window", mtest_errstr(rc));
    rc = MPI_Get(buf, 2, MPI_INT, to, WIN_BYTES / 4, 2, MPI_INT, win);
    CHECK_RC(rc); /* disp counts bytes here: in range */
    rc = MPI_Get(buf, 2, MPI_DOUBLE, to, -1, 2, MPI_DOUBLE, win);
    CHECK_CLASS(rc, MPI_ERR_DISP, "negative displacement");
    MPI_Win_unlock(to, win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[WIN_BYTES - 1] == want[WIN_BYTES - 1], "the refused put wrote the window");
    mtest_end();

    MPI_Win_free(&win);
    MPI_Type_free(&three_ints);
    MPI_Type_free(&vec);
    MPI_Type_free(&shifted);
    MPI_Type_free(&dup_int);
    MPI_Type_free(&empty);
    free(buf);
    free(want);
    free(scratch);
    return mtest_finalize();
}
