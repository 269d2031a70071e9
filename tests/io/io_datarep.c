/* MPI-IO data representations (MPI-5.0 14.5): external32 through views
 * and user representations registered with MPI_Register_datarep(_c). The
 * file's bytes are read with plain POSIX calls and compared with bytes
 * written out by hand (big-endian, the standard's sizes); data read back
 * through the view must be the program's values again. Errors: a second
 * registration of a name (MPI_ERR_DUP_DATAREP, on MPI_FILE_NULL's
 * handler), an unknown name in MPI_File_set_view
 * (MPI_ERR_UNSUPPORTED_DATAREP), a conversion function that fails and a
 * long that does not fit external32 (MPI_ERR_CONVERSION). Nonblocking,
 * collective and split accesses through external32 too, and collective
 * writes that each rank moves itself (converted once). */
#include "../mpi/mtest.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

static int rank, size;
static char dir[256];

static void fname(char *out, size_t n, const char *tag, int who)
{
    snprintf(out, n, "%s/%s_%d.dat", dir, tag, who);
}

/* The whole file, read with POSIX (NULL and *len = 0 if unreadable). */
static unsigned char *slurp(const char *path, size_t *len)
{
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        return NULL;
    }
    unsigned char *p = calloc(1, (size_t)sb.st_size + 1);
    ssize_t got = p ? read(fd, p, (size_t)sb.st_size) : -1;
    close(fd);
    if (got != sb.st_size) {
        free(p);
        return NULL;
    }
    *len = (size_t)got;
    return p;
}

/* Compares the file's bytes with want; prints the first difference. */
static void check_bytes(const char *path, const unsigned char *want, size_t n, const char *what)
{
    size_t len;
    unsigned char *got = slurp(path, &len);
    CHECK(got != NULL, "%s: %s could be read", what, path);
    if (!got)
        return;
    CHECK(len == n, "%s: the file has %zu bytes, expected %zu", what, len, n);
    for (size_t i = 0; i < len && i < n; i++)
        if (got[i] != want[i]) {
            CHECK(0, "%s: byte %zu is 0x%02x, expected 0x%02x", what, i, got[i], want[i]);
            break;
        }
    free(got);
}

static MPI_File open_self(const char *path)
{
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh);
    if (rc != MPI_SUCCESS)
        FATAL("MPI_File_open(%s) failed: %d", path, rc);
    return fh;
}

/* ---- external32 --------------------------------------------------------- */

static void test_ext32_ints_doubles(void)
{
    mtest_begin("external32 ints and doubles");
    char path[512];
    fname(path, sizeof path, "ext32_scalars", rank);
    MPI_File fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    int ints[3] = {0x01020304, -2, 1000};
    double dbl[3] = {1.5, -2.25, 1024.0};
    MPI_Status st;
    CHECK_RC(MPI_File_write_at(fh, 0, ints, 3, MPI_INT, &st));
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 3, "ints written (status count, native)");
    CHECK_RC(MPI_File_write_at(fh, 12, dbl, 3, MPI_DOUBLE, MPI_STATUS_IGNORE));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    CHECK_RC(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(strcmp(rep, "external32") == 0, "get_view names external32: %s", rep);
    CHECK_RC(MPI_File_close(&fh));
    static const unsigned char want[36] = {
        0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x03, 0xe8,
        0x3f, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1.5 */
        0xc0, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* -2.25 */
        0x40, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1024.0 */
    };
    check_bytes(path, want, sizeof want, "ints and doubles in external32");

    fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    int ri[3] = {0, 0, 0};
    double rd[3] = {0, 0, 0};
    CHECK_RC(MPI_File_read_at(fh, 0, ri, 3, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_read_at(fh, 12, rd, 3, MPI_DOUBLE, &st));
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK_INT(count, 3, "doubles read");
    for (int i = 0; i < 3; i++) {
        CHECK_INT(ri[i], ints[i], "int read back");
        CHECK(rd[i] == dbl[i], "double %d read back: %g", i, rd[i]);
    }
    /* Past the end: only the whole doubles there are. */
    CHECK_RC(MPI_File_read_at(fh, 20, rd, 3, MPI_DOUBLE, &st));
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK_INT(count, 2, "doubles read at the end of the file");
    CHECK(rd[0] == -2.25 && rd[1] == 1024.0, "the last two doubles");
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    mtest_end();
}

struct pair {
    int i;
    double d;
};

static void test_ext32_struct(void)
{
    mtest_begin("external32 struct of int and double");
    char path[512];
    fname(path, sizeof path, "ext32_struct", rank);
    MPI_Datatype pt;
    int blens[2] = {1, 1};
    MPI_Aint displs[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, blens, displs, types, &pt);
    MPI_Type_commit(&pt);
    struct pair out[2] = {{7, 1.5}, {-2, -2.25}};
    MPI_File fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    /* The extent in the file: byte displacements are kept (int at 0,
     * double at 8), so 16 bytes; MPI_LONG is 4 bytes in external32. */
    MPI_Aint ext;
    CHECK_RC(MPI_File_get_type_extent(fh, pt, &ext));
    CHECK_INT(ext, 16, "struct's extent in external32");
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK_INT(ext, 4, "MPI_LONG's extent in external32");
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_DOUBLE_INT, &ext));
    CHECK_INT(ext, 12, "MPI_DOUBLE_INT's extent in external32 (no padding)");
    MPI_Status st;
    CHECK_RC(MPI_File_write(fh, out, 2, pt, &st));
    int count;
    MPI_Get_count(&st, pt, &count);
    CHECK_INT(count, 2, "structs written");
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, 24, "the pointer moved by the file's 24 bytes (not the native 32)");
    CHECK_RC(MPI_File_close(&fh));
    static const unsigned char want[24] = {
        0x00, 0x00, 0x00, 0x07, 0x3f, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0xff, 0xfe, 0xc0, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    check_bytes(path, want, sizeof want, "structs packed in external32");

    fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    struct pair in[2];
    memset(in, 0, sizeof in);
    CHECK_RC(MPI_File_read(fh, in, 2, pt, MPI_STATUS_IGNORE));
    CHECK(in[0].i == 7 && in[0].d == 1.5 && in[1].i == -2 && in[1].d == -2.25,
          "structs read back: {%d, %g} {%d, %g}", in[0].i, in[0].d, in[1].i, in[1].d);
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Type_free(&pt);
    mtest_end();
}

/* A portable filetype scales with external32's sizes: a vector of longs
 * with a stride of 2 longs lays 4-byte values 8 bytes apart. */
static void test_ext32_view_layout(void)
{
    mtest_begin("external32 filetype layout");
    char path[512];
    fname(path, sizeof path, "ext32_vector", rank);
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    MPI_File fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 4, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    MPI_Aint ext;
    CHECK_RC(MPI_File_get_type_extent(fh, vec, &ext));
    CHECK_INT(ext, 12, "vector's extent in external32");
    long vals[4] = {1, -1, 0x11223344L, 65536};
    CHECK_RC(MPI_File_write_all(fh, vals, 4, MPI_LONG, MPI_STATUS_IGNORE));
    MPI_Offset pos, byte;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, 4, "4 etypes");
    CHECK_RC(MPI_File_get_byte_offset(fh, 3, &byte));
    CHECK_INT(byte, 4 + 12 + 8, "the file byte of etype 3");
    if (sizeof(long) == 8) {
        long big = 1L << 40;
        int rc = MPI_File_write_at(fh, 4, &big, 1, MPI_LONG, MPI_STATUS_IGNORE);
        CHECK_CLASS(rc, MPI_ERR_CONVERSION, "a long past external32's 4 bytes");
    }
    CHECK_RC(MPI_File_close(&fh));
    /* disp 4; file type extent 12: values at 4, 12, 16, 24 (4 bytes each). */
    static const unsigned char want[28] = {
        0, 0, 0, 0, 0x00, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
        0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, 0x00, 0x01, 0x00, 0x00,
    };
    check_bytes(path, want, sizeof want, "vector of longs in external32");

    fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 4, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    long back[4] = {0, 0, 0, 0};
    CHECK_RC(MPI_File_read_all(fh, back, 4, MPI_LONG, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(back[i] == vals[i], "long %d read back: %ld", i, back[i]);
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Type_free(&vec);
    mtest_end();
}

/* Filetypes of each kind of constructor in external32: element counts
 * scale with the 4-byte long, byte displacements are kept as given. */
static void test_ext32_constructors(void)
{
    mtest_begin("external32 layouts of constructors");
    char path[512];
    fname(path, sizeof path, "ext32_layouts", rank);
    MPI_File fh = open_self(path);
    MPI_Datatype t[4];
    int sizes[1] = {4}, subs[1] = {2}, starts[1] = {1};
    MPI_Type_create_subarray(1, sizes, subs, starts, MPI_ORDER_C, MPI_LONG, &t[0]);
    int blens[2] = {1, 1};
    MPI_Aint displs[2] = {0, 10};
    MPI_Type_create_hindexed(2, blens, displs, MPI_LONG, &t[1]);
    MPI_Type_create_resized(MPI_LONG, 0, 6, &t[2]);
    int gs[1] = {8}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG},
        ps[1] = {2};
    MPI_Type_create_darray(2, 1, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_LONG, &t[3]);
    /* extent in the file; file bytes of etypes 0, 1 and 2 */
    static const long want[4][4] = {{16, 4, 8, 20}, {14, 0, 10, 14}, {6, 0, 6, 12},
                                    {32, 16, 20, 24}};
    static const char *const names[4] = {"subarray", "hindexed", "resized", "darray"};
    for (int k = 0; k < 4; k++) {
        MPI_Type_commit(&t[k]);
        CHECK_RC(MPI_File_set_view(fh, 0, MPI_LONG, t[k], "external32", MPI_INFO_NULL));
        MPI_Aint ext;
        CHECK_RC(MPI_File_get_type_extent(fh, t[k], &ext));
        CHECK(ext == want[k][0], "%s: extent %ld in external32, expected %ld", names[k],
              (long)ext, want[k][0]);
        for (int e = 0; e < 3; e++) {
            MPI_Offset b;
            CHECK_RC(MPI_File_get_byte_offset(fh, e, &b));
            CHECK(b == want[k][1 + e], "%s: etype %d at byte %lld, expected %ld", names[k], e,
                  (long long)b, want[k][1 + e]);
        }
    }
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    for (int k = 0; k < 4; k++)
        MPI_Type_free(&t[k]);
    mtest_end();
}

/* The shared pointer counts etypes in the file's representation: ranks
 * write two longs each in order, 8 bytes a rank. */
static void test_ext32_ordered(void)
{
    mtest_begin("external32 ordered");
    char path[512];
    fname(path, sizeof path, "ext32_ordered", 0);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    long mine[2] = {rank * 100 + 1, rank * 100 + 2};
    CHECK_RC(MPI_File_write_ordered(fh, mine, 2, MPI_LONG, MPI_STATUS_IGNORE));
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT(pos, 2 * size, "the shared pointer after the ordered write");
    CHECK_RC(MPI_File_close(&fh));
    if (rank == 0) {
        unsigned char *want = calloc((size_t)size, 8);
        for (int r = 0; r < size; r++) {
            want[8 * r + 2] = (unsigned char)((r * 100 + 1) >> 8);
            want[8 * r + 3] = (unsigned char)(r * 100 + 1);
            want[8 * r + 6] = (unsigned char)((r * 100 + 2) >> 8);
            want[8 * r + 7] = (unsigned char)(r * 100 + 2);
        }
        check_bytes(path, want, 8 * (size_t)size, "ordered longs in external32");
        free(want);
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    }
    mtest_end();
}

/* Collective buffering with a converting view: the ranks' longs
 * interleave (4 bytes each in external32) and go through the aggregators. */
static void test_ext32_collective(void)
{
    mtest_begin("external32 collective buffering");
    char path[512];
    fname(path, sizeof path, "ext32_coll", 0);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, size, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    CHECK_RC(MPI_File_set_view(fh, 4 * rank, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    long mine[3] = {rank * 10 + 1, rank * 10 + 2, -(rank * 10 + 3)};
    MPI_Status st;
    CHECK_RC(MPI_File_write_all(fh, mine, 3, MPI_LONG, &st));
    int count;
    MPI_Get_count(&st, MPI_LONG, &count);
    CHECK_INT(count, 3, "longs written");
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, 3, "the pointer after write_all");
    long back[3] = {0, 0, 0};
    CHECK_RC(MPI_File_read_at_all(fh, 0, back, 3, MPI_LONG, &st));
    MPI_Get_count(&st, MPI_LONG, &count);
    CHECK_INT(count, 3, "longs read");
    for (int i = 0; i < 3; i++)
        CHECK(back[i] == mine[i], "long %d read back: %ld", i, back[i]);
    CHECK_RC(MPI_File_close(&fh));
    if (rank == 0) {
        size_t n = 12 * (size_t)size;
        unsigned char *want = calloc(n, 1);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 3; i++) {
                uint32_t v = (uint32_t)(i < 2 ? r * 10 + 1 + i : -(r * 10 + 3));
                unsigned char *p = want + 4 * ((size_t)i * (size_t)size + (size_t)r);
                p[0] = (unsigned char)(v >> 24);
                p[1] = (unsigned char)(v >> 16);
                p[2] = (unsigned char)(v >> 8);
                p[3] = (unsigned char)v;
            }
        check_bytes(path, want, n, "interleaved longs through the aggregators");
        free(want);
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MPI_Type_free(&vec);
    mtest_end();
}

/* Nonblocking accesses through external32 (they queue like native ones:
 * a write converted in the call, a read when its request completes): the
 * bytes on disk, the values read back, the status counts in native
 * elements and the pointers moved in file bytes. Independent on a file of
 * this rank's, collective and split collective on a shared one. */
static void test_ext32_nonblocking(void)
{
    mtest_begin("external32 nonblocking");
    char path[512];
    fname(path, sizeof path, "ext32_nb", rank);
    MPI_File fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    int ints[3] = {0x01020304, -2, 1000};
    double dbl[3] = {1.5, -2.25, 1024.0};
    long lv = 7;
    MPI_Request r[3];
    MPI_Status sts[3];
    CHECK_RC(MPI_File_iwrite_at(fh, 0, ints, 3, MPI_INT, &r[0]));
    CHECK_RC(MPI_File_iwrite_at(fh, 12, dbl, 3, MPI_DOUBLE, &r[1]));
    CHECK_RC(MPI_File_seek(fh, 36, MPI_SEEK_SET));
    CHECK_RC(MPI_File_iwrite(fh, &lv, 1, MPI_LONG, &r[2]));
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, 40, "the pointer after iwrite of a long (4 file bytes)");
    CHECK_RC(MPI_Waitall(3, r, sts));
    int count;
    MPI_Get_count(&sts[0], MPI_INT, &count);
    CHECK_INT(count, 3, "ints written (status count, native)");
    MPI_Get_count(&sts[1], MPI_DOUBLE, &count);
    CHECK_INT(count, 3, "doubles written");
    MPI_Get_count(&sts[2], MPI_LONG, &count);
    CHECK_INT(count, 1, "long written");
    CHECK_RC(MPI_File_sync(fh));
    static const unsigned char want[40] = {
        0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x03, 0xe8,
        0x3f, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1.5 */
        0xc0, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* -2.25 */
        0x40, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1024.0 */
        0x00, 0x00, 0x00, 0x07,                         /* the long */
    };
    check_bytes(path, want, sizeof want, "nonblocking writes in external32");

    int ri[3] = {0, 0, 0};
    double rd[3] = {0, 0, 0}, tail[3] = {0, 0, 0};
    long rl = 0;
    CHECK_RC(MPI_File_iread_at(fh, 0, ri, 3, MPI_INT, &r[0]));
    CHECK_RC(MPI_File_iread_at(fh, 12, rd, 3, MPI_DOUBLE, &r[1]));
    CHECK_RC(MPI_File_seek(fh, 36, MPI_SEEK_SET));
    CHECK_RC(MPI_File_iread(fh, &rl, 1, MPI_LONG, &r[2]));
    CHECK_RC(MPI_Waitall(3, r, sts));
    for (int i = 0; i < 3; i++) {
        CHECK_INT(ri[i], ints[i], "int read back");
        CHECK(rd[i] == dbl[i], "double %d read back: %g", i, rd[i]);
    }
    CHECK(rl == 7, "long read back: %ld", rl);
    MPI_Get_count(&sts[2], MPI_LONG, &count);
    CHECK_INT(count, 1, "long read (status count)");
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, 40, "the pointer after iread of a long");
    /* Past the end: only the whole doubles there are (20 bytes: 2 and a half). */
    CHECK_RC(MPI_File_iread_at(fh, 20, tail, 3, MPI_DOUBLE, &r[0]));
    CHECK_RC(MPI_Wait(&r[0], &sts[0]));
    MPI_Get_count(&sts[0], MPI_DOUBLE, &count);
    CHECK_INT(count, 2, "doubles read at the end of the file");
    CHECK(tail[0] == -2.25 && tail[1] == 1024.0, "the last two doubles");
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));

    /* Collective: the ranks' longs interleave through the aggregators. */
    fname(path, sizeof path, "ext32_nbcoll", 0);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, size, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    CHECK_RC(MPI_File_set_view(fh, 4 * rank, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    long mine[3] = {rank * 10 + 1, rank * 10 + 2, -(rank * 10 + 3)};
    CHECK_RC(MPI_File_iwrite_all(fh, mine, 3, MPI_LONG, &r[0]));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, 3, "the pointer after iwrite_all (at once)");
    CHECK_RC(MPI_Wait(&r[0], &sts[0]));
    MPI_Get_count(&sts[0], MPI_LONG, &count);
    CHECK_INT(count, 3, "longs written by iwrite_all");
    long back[3] = {0, 0, 0}, again[3] = {0, 0, 0};
    CHECK_RC(MPI_File_iread_at_all(fh, 0, back, 3, MPI_LONG, &r[0]));
    CHECK_RC(MPI_Wait(&r[0], &sts[0]));
    MPI_Get_count(&sts[0], MPI_LONG, &count);
    CHECK_INT(count, 3, "longs read by iread_at_all");
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_read_all_begin(fh, again, 3, MPI_LONG));
    CHECK_RC(MPI_File_read_all_end(fh, again, &sts[0]));
    MPI_Get_count(&sts[0], MPI_LONG, &count);
    CHECK_INT(count, 3, "longs read by the split collective");
    for (int i = 0; i < 3; i++) {
        CHECK(back[i] == mine[i], "long %d read back by iread_at_all: %ld", i, back[i]);
        CHECK(again[i] == mine[i], "long %d read back by read_all_begin: %ld", i, again[i]);
    }
    CHECK_RC(MPI_File_close(&fh));
    if (rank == 0) {
        size_t n = 12 * (size_t)size;
        unsigned char *wantc = calloc(n, 1);
        for (int q = 0; q < size; q++)
            for (int i = 0; i < 3; i++) {
                uint32_t v = (uint32_t)(i < 2 ? q * 10 + 1 + i : -(q * 10 + 3));
                unsigned char *p = wantc + 4 * ((size_t)i * (size_t)size + (size_t)q);
                p[0] = (unsigned char)(v >> 24);
                p[1] = (unsigned char)(v >> 16);
                p[2] = (unsigned char)(v >> 8);
                p[3] = (unsigned char)v;
            }
        check_bytes(path, wantc, n, "interleaved longs by iwrite_all");
        free(wantc);
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&vec);
    mtest_end();
}

/* ---- user representations ------------------------------------------------- */

/* "swap": an int is stored big-endian plus 1000 (a conversion that is not
 * a plain byte copy, so a missed call shows in the bytes). Only MPI_INT
 * buffers, contiguous. */
static int swap_calls, swap_max_pos;

static uint32_t bswap(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

static uint32_t to_be(uint32_t v)
{
    const unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                                (unsigned char)(v >> 8), (unsigned char)v};
    uint32_t out;
    memcpy(&out, b, 4);
    return out;
}

static int swap_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                      MPI_Offset position, void *extra)
{
    (void)bswap;
    if (dt != MPI_INT || *(int *)extra != 42)
        return MPI_ERR_TYPE;
    swap_calls++;
    if ((int)position > swap_max_pos)
        swap_max_pos = (int)position;
    const int *u = (const int *)userbuf + position;
    for (int i = 0; i < count; i++) {
        uint32_t v = to_be((uint32_t)(u[i] + 1000));
        memcpy((char *)filebuf + 4 * i, &v, 4);
    }
    return MPI_SUCCESS;
}

static int swap_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                     MPI_Offset position, void *extra)
{
    if (dt != MPI_INT || *(int *)extra != 42)
        return MPI_ERR_TYPE;
    swap_calls++;
    int *u = (int *)userbuf + position;
    for (int i = 0; i < count; i++) {
        uint32_t v;
        memcpy(&v, (char *)filebuf + 4 * i, 4);
        u[i] = (int)to_be(v) - 1000;
    }
    return MPI_SUCCESS;
}

static int int_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)extra;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    *extent = 4;
    return MPI_SUCCESS;
}

/* "wide": an int takes 8 bytes in the file (big-endian int64). */
static int wide_write_c(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                        MPI_Offset position, void *extra)
{
    (void)extra;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    const int *u = (const int *)userbuf + position;
    unsigned char *f = filebuf;
    for (MPI_Count i = 0; i < count; i++) {
        int64_t v = u[i];
        for (int b = 0; b < 8; b++)
            f[8 * i + b] = (unsigned char)((uint64_t)v >> (56 - 8 * b));
    }
    return MPI_SUCCESS;
}

static int wide_read_c(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                       MPI_Offset position, void *extra)
{
    (void)extra;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    int *u = (int *)userbuf + position;
    const unsigned char *f = filebuf;
    for (MPI_Count i = 0; i < count; i++) {
        uint64_t v = 0;
        for (int b = 0; b < 8; b++)
            v = v << 8 | f[8 * i + b];
        u[i] = (int)(int64_t)v;
    }
    return MPI_SUCCESS;
}

static int wide_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)extra;
    *extent = dt == MPI_INT ? 8 : 16;
    return MPI_SUCCESS;
}

static int fail_conv(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                     MPI_Offset position, void *extra)
{
    (void)userbuf, (void)dt, (void)count, (void)filebuf, (void)position, (void)extra;
    return MPI_ERR_OTHER;
}

static int extra_42 = 42;

static void test_user_swap(void)
{
    mtest_begin("user datarep with conversion");
    CHECK_RC(MPI_Register_datarep("tern_swap", swap_read, swap_write, int_extent, &extra_42));
    char path[512];
    fname(path, sizeof path, "user_swap", rank);
    MPI_File fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tern_swap", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    CHECK_RC(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(strcmp(rep, "tern_swap") == 0, "get_view names the datarep: %s", rep);
    int vals[3] = {1, -5, 0x10000};
    swap_calls = 0;
    CHECK_RC(MPI_File_write(fh, vals, 3, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(swap_calls == 1, "write_conversion_fn called once (%d)", swap_calls);
    CHECK_RC(MPI_File_close(&fh));
    /* 1001, 995, 66536 big-endian. */
    static const unsigned char want[12] = {0x00, 0x00, 0x03, 0xe9, 0x00, 0x00, 0x03, 0xe3,
                                           0x00, 0x01, 0x03, 0xe8};
    check_bytes(path, want, sizeof want, "ints through write_conversion_fn");
    fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tern_swap", MPI_INFO_NULL));
    int back[3] = {0, 0, 0};
    CHECK_RC(MPI_File_read(fh, back, 3, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < 3; i++)
        CHECK_INT(back[i], vals[i], "int read back through read_conversion_fn");

    /* More than one conversion buffer: the functions see later positions. */
    const int n = 1500000;
    int *big = malloc((size_t)n * sizeof *big), *big2 = calloc((size_t)n, sizeof *big2);
    for (int i = 0; i < n; i++)
        big[i] = i * 7 - 3;
    swap_calls = 0;
    swap_max_pos = 0;
    CHECK_RC(MPI_File_write_at(fh, 3, big, n, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(swap_calls >= 2 && swap_max_pos > 0, "chunked conversion: %d calls, last position %d",
          swap_calls, swap_max_pos);
    CHECK_RC(MPI_File_read_at(fh, 3, big2, n, MPI_INT, MPI_STATUS_IGNORE));
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (big2[i] != big[i])
            bad = i;
    CHECK(bad < 0, "chunked read back differs at %d", bad);
    free(big);
    free(big2);
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    mtest_end();
}

/* ---- collective writes that no aggregator moves --------------------------- */

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* Collective writes through converting views where each rank has a range
 * of its own (automatic buffering moves nothing through aggregators): the
 * rank's own access moves the bytes converted for the collective. Through
 * a view without holes (write_at_all, iwrite_at_all) and one with holes
 * (write_all, after the exchange of extents); the bytes on disk against
 * big-endian values by hand, read back; tern_swap's write function runs
 * once per write_at_all (twice before: converted for the collective, then
 * again by the independent path). */
static void test_ext32_own_ranges(void)
{
    mtest_begin("collective writes through converting views, each rank its own range");
    char path[512];
    fname(path, sizeof path, "own_ranges", 0);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int dense[6], holed[3];
    for (int i = 0; i < 3; i++) {
        dense[i] = 0x01020304 * (rank + 1) + i;
        dense[3 + i] = -(rank * 100 + i + 1);
        holed[i] = 0x7f000000 + rank * 16 + i;
    }
    MPI_Status st;
    MPI_Request req;
    int count = -1;
    CHECK_RC(MPI_File_write_at_all(fh, 6 * rank, dense, 3, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 3, "ints written by write_at_all");
    CHECK_RC(MPI_File_iwrite_at_all(fh, 6 * rank + 3, dense + 3, 3, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 3, "ints written by iwrite_at_all");
    /* Every other int from byte 24 * (size + rank): ranges apart, with holes. */
    MPI_Datatype every_other;
    MPI_Type_create_resized(MPI_INT, 0, 8, &every_other);
    MPI_Type_commit(&every_other);
    CHECK_RC(MPI_File_set_view(fh, 24 * (MPI_Offset)(size + rank), MPI_INT, every_other,
                               "external32", MPI_INFO_NULL));
    CHECK_RC(MPI_File_write_all(fh, holed, 3, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 3, "ints written by write_all through holes");
    MPI_Offset pos = -1;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, 3, "the pointer after write_all");
    int back[6] = {0, 0, 0, 0, 0, 0};
    CHECK_RC(MPI_File_read_at_all(fh, 0, back, 3, MPI_INT, &st));
    for (int i = 0; i < 3; i++)
        CHECK_INT(back[i], holed[i], "int read back through holes");
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    CHECK_RC(MPI_File_read_at_all(fh, 6 * rank, back, 6, MPI_INT, &st));
    for (int i = 0; i < 6; i++)
        CHECK_INT(back[i], dense[i], "int read back without holes");
    CHECK_RC(MPI_File_close(&fh));
    if (rank == 0) {
        size_t n = 48 * (size_t)size - 4;
        unsigned char *want = calloc(n, 1);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 3; i++) {
                put_be32(want + 24 * r + 4 * i, (uint32_t)(0x01020304 * (r + 1) + i));
                put_be32(want + 24 * r + 12 + 4 * i, (uint32_t)-(r * 100 + i + 1));
                put_be32(want + 24 * (size + r) + 8 * i, (uint32_t)(0x7f000000 + r * 16 + i));
            }
        check_bytes(path, want, n, "each rank's ints in external32");
        free(want);
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&every_other);

    /* tern_swap (test_user_swap registered it) counts its calls. */
    fname(path, sizeof path, "own_ranges_swap", 0);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tern_swap", MPI_INFO_NULL));
    int vals[3] = {rank, -rank - 7, 0x10000 + rank};
    swap_calls = 0;
    CHECK_RC(MPI_File_write_at_all(fh, 3 * rank, vals, 3, MPI_INT, &st));
    CHECK(swap_calls == 1, "write_conversion_fn called once by write_at_all (%d)", swap_calls);
    int got[3] = {0, 0, 0};
    swap_calls = 0;
    CHECK_RC(MPI_File_read_at_all(fh, 3 * rank, got, 3, MPI_INT, &st));
    CHECK(swap_calls == 1, "read_conversion_fn called once by read_at_all (%d)", swap_calls);
    for (int i = 0; i < 3; i++)
        CHECK_INT(got[i], vals[i], "int read back through tern_swap");
    CHECK_RC(MPI_File_close(&fh));
    if (rank == 0) {
        size_t n = 12 * (size_t)size;
        unsigned char *want = calloc(n, 1);
        for (int r = 0; r < size; r++) {
            put_be32(want + 12 * r, (uint32_t)(r + 1000));
            put_be32(want + 12 * r + 4, (uint32_t)(-r - 7 + 1000));
            put_be32(want + 12 * r + 8, (uint32_t)(0x10000 + r + 1000));
        }
        check_bytes(path, want, n, "each rank's ints through tern_swap");
        free(want);
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mtest_end();
}

static void test_user_wide_and_null(void)
{
    mtest_begin("user datarep: file extents, _c form, MPI_CONVERSION_FN_NULL");
    CHECK_RC(MPI_Register_datarep_c("tern_wide", wide_read_c, wide_write_c, wide_extent, NULL));
    char path[512];
    fname(path, sizeof path, "user_wide", rank);
    MPI_File fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tern_wide", MPI_INFO_NULL));
    MPI_Aint ext;
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK_INT(ext, 8, "MPI_INT's extent from dtype_file_extent_fn");
    int vals[2] = {-1, 258};
    CHECK_RC(MPI_File_write_at(fh, 1, vals, 2, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Offset sz;
    CHECK_RC(MPI_File_get_size(fh, &sz));
    CHECK_INT(sz, 24, "three 8-byte etypes");
    int back[2] = {0, 0};
    CHECK_RC(MPI_File_read_at(fh, 1, back, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(back[0] == -1 && back[1] == 258, "read back %d %d", back[0], back[1]);
    CHECK_RC(MPI_File_close(&fh));
    static const unsigned char want[24] = {0, 0, 0, 0, 0, 0, 0, 0,
                                           0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                           0, 0, 0, 0, 0, 0, 0x01, 0x02};
    check_bytes(path, want, sizeof want, "ints 8 bytes wide");
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));

    /* No conversion: the file holds the native bytes. */
    CHECK_RC(MPI_Register_datarep("tern_null", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                  int_extent, NULL));
    fname(path, sizeof path, "user_null", rank);
    fh = open_self(path);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tern_null", MPI_INFO_NULL));
    CHECK_RC(MPI_File_write(fh, vals, 2, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_close(&fh));
    check_bytes(path, (const unsigned char *)vals, sizeof vals, "native bytes");
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    mtest_end();
}

static int dup_calls, dup_code;
static void dup_handler(MPI_File *fh, int *code, ...)
{
    (void)fh;
    dup_calls++;
    dup_code = *code;
}

static void test_errors(void)
{
    mtest_begin("datarep errors");
    /* The second registration of a name, and the predefined names. */
    CHECK_RC(MPI_Register_datarep("tern_once", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                  int_extent, NULL));
    int rc = MPI_Register_datarep("tern_once", swap_read, swap_write, int_extent, NULL);
    CHECK_CLASS(rc, MPI_ERR_DUP_DATAREP, "a name registered twice");
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, text, &len);
    CHECK(strstr(text, "MPI_Register_datarep") && strstr(text, "tern_once"),
          "the message names the call and the datarep: %s", text);
    rc = MPI_Register_datarep("external32", swap_read, swap_write, int_extent, NULL);
    CHECK_CLASS(rc, MPI_ERR_DUP_DATAREP, "external32 is defined");
    rc = MPI_Register_datarep_c("native", MPI_CONVERSION_FN_NULL_C, MPI_CONVERSION_FN_NULL_C,
                                int_extent, NULL);
    CHECK_CLASS(rc, MPI_ERR_DUP_DATAREP, "native is defined");
    /* They go to MPI_FILE_NULL's handler. */
    MPI_Errhandler eh;
    MPI_File_create_errhandler(dup_handler, &eh);
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    dup_calls = 0;
    rc = MPI_Register_datarep("tern_once", swap_read, swap_write, int_extent, NULL);
    CHECK(dup_calls == 1, "MPI_FILE_NULL's handler called (%d)", dup_calls);
    int cls = -1;
    MPI_Error_class(dup_code, &cls);
    CHECK_INT(cls, MPI_ERR_DUP_DATAREP, "the handler's class");
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);

    /* An unknown name in set_view. */
    char path[512];
    fname(path, sizeof path, "errors", rank);
    MPI_File fh = open_self(path);
    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tern_never_registered", MPI_INFO_NULL);
    CHECK_CLASS(rc, MPI_ERR_UNSUPPORTED_DATAREP, "an unknown datarep");
    MPI_Error_string(rc, text, &len);
    CHECK(strstr(text, "tern_never_registered"), "the message names the datarep: %s", text);

    /* A conversion function that fails. */
    CHECK_RC(MPI_Register_datarep("tern_fail", fail_conv, fail_conv, int_extent, NULL));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tern_fail", MPI_INFO_NULL));
    int x = 5;
    rc = MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_CONVERSION, "write_conversion_fn failed");
    MPI_Error_string(rc, text, &len);
    CHECK(strstr(text, "tern_fail") && strstr(text, "errors_"),
          "the message names the datarep and the file: %s", text);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_RC(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tern_fail", MPI_INFO_NULL));
    rc = MPI_File_read_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_CONVERSION, "read_conversion_fn failed");
    /* A type the extent function refuses. */
    double d = 1;
    rc = MPI_File_write_at(fh, 0, &d, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_CONVERSION, "dtype_file_extent_fn failed");
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    mtest_end();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mtest_watchdog(120);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_rank = rank;
    mtest_size = size;
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "io_datarep_%d", pid);
    if (rank == 0)
        mkdir(dir, 0777);
    MPI_Barrier(MPI_COMM_WORLD);
    test_ext32_ints_doubles();
    test_ext32_struct();
    test_ext32_view_layout();
    test_ext32_constructors();
    test_ext32_ordered();
    test_ext32_collective();
    test_ext32_nonblocking();
    test_user_swap();
    test_ext32_own_ranges();
    test_user_wide_and_null();
    test_errors();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(rmdir(dir) == 0, "every file was removed (rmdir %s)", dir);
    return mtest_finalize();
}
