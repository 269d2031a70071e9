/* Data sieving for independent non-contiguous access (core/io/io_sieve.h):
 * reads and writes through strided views under every setting of
 * romio_ds_read/romio_ds_write and buffer sizes smaller than the access,
 * the gaps' bytes kept, a short read at the end of the file, the hints
 * reported, automatic sieving seen in the bytes the process read (the
 * tern_io_read_bytes counter), and ranks writing interleaved views at the
 * same time without losing each other's bytes (in atomic mode too). */
#include "../mpi/mtest.h"

#include <sys/stat.h>

static int rank, size;
static char dir[256];

static void fname(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "%s/%s.dat", dir, tag);
}

static MPI_Info hints(const char *mode, const char *bufsize)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", mode);
    MPI_Info_set(info, "romio_ds_write", mode);
    if (bufsize) {
        MPI_Info_set(info, "ind_rd_buffer_size", bufsize);
        MPI_Info_set(info, "ind_wr_buffer_size", bufsize);
    }
    return info;
}

/* The byte each rank writes at file byte i of its own part. */
static unsigned char pattern(int r, long i)
{
    return (unsigned char)(r * 37 + i * 7 + 1);
}

/* Rank-private file, view of BLK bytes every STRIDE bytes: writes NB
 * blocks, checks the file byte by byte (gaps keep 0xEE), reads back
 * through the view, and reads past the end of the file. */
#define BLK 3
#define STRIDE 11
#define NB 2000

static void check_one(const char *mode, const char *bufsize, int wronly)
{
    char path[512], tag[64];
    snprintf(tag, sizeof tag, "one_%s_%s_%d_%d", mode, bufsize ? bufsize : "dflt", wronly, rank);
    fname(path, sizeof path, tag);
    long fbytes = (long)NB * STRIDE;
    unsigned char *file = malloc((size_t)fbytes), *data = malloc((size_t)NB * BLK + 64);
    memset(file, 0xEE, (size_t)fbytes);
    MPI_File fh;
    MPI_Info info = hints(mode, bufsize);
    /* Prefill: every byte 0xEE. */
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_RC(MPI_File_write_at(fh, 0, file, (int)fbytes, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, wronly ? MPI_MODE_WRONLY : MPI_MODE_RDWR, info,
                           &fh));
    MPI_Datatype vec, ft;
    MPI_Type_vector(1, BLK, STRIDE, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, STRIDE, &ft);
    MPI_Type_commit(&ft);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", info));
    for (long i = 0; i < (long)NB * BLK; i++)
        data[i] = pattern(rank, i);
    /* In two calls, the second at the individual pointer. */
    int first = NB * BLK / 3;
    CHECK_RC(MPI_File_write_at(fh, 0, data, first, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_seek(fh, first, MPI_SEEK_SET));
    CHECK_RC(MPI_File_write(fh, data + first, NB * BLK - first, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_close(&fh));

    /* The file's bytes, read plainly. */
    unsigned char *got = malloc((size_t)fbytes);
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, info, &fh));
    CHECK_RC(MPI_File_read_at(fh, 0, got, (int)fbytes, MPI_BYTE, MPI_STATUS_IGNORE));
    long bad = -1;
    for (long b = 0; b < (long)NB; b++)
        for (int j = 0; j < BLK; j++)
            file[b * STRIDE + j] = data[b * BLK + j];
    for (long i = 0; i < fbytes && bad < 0; i++)
        if (got[i] != file[i])
            bad = i;
    CHECK(bad < 0, "%s/%s%s: file byte %ld is %#x, expected %#x", mode, bufsize ? bufsize : "-",
          wronly ? " WRONLY" : "", bad, bad < 0 ? 0 : got[bad], bad < 0 ? 0 : file[bad]);

    /* Back through the view: all of it, then from the middle past the
     * end (the count says how many bytes there were). */
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", info));
    unsigned char *back = malloc((size_t)NB * BLK + 64);
    memset(back, 0, (size_t)NB * BLK + 64);
    CHECK_RC(MPI_File_read_at(fh, 0, back, NB * BLK, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(memcmp(back, data, (size_t)NB * BLK) == 0, "%s: read back through the view", mode);
    MPI_Status st;
    int count = -1, from = NB * BLK - 10;
    memset(back, 0, 64);
    CHECK_RC(MPI_File_read_at(fh, from, back, 40, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    /* The last block ends the file: the gap after it is not there. */
    CHECK(count == 10, "%s: a read past the end got %d bytes, expected 10", mode, count);
    CHECK(memcmp(back, data + from, 10) == 0, "%s: the bytes before the end", mode);
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    MPI_Type_free(&vec);
    MPI_Info_free(&info);
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    free(file);
    free(data);
    free(got);
    free(back);
}

static void test_settings(void)
{
    mtest_begin("sieving settings");
    const char *modes[] = {"enable", "disable", "automatic"};
    const char *sizes[] = {NULL, "64", "1000", "4096"};
    for (int m = 0; m < 3; m++)
        for (int s = 0; s < 4; s++)
            check_one(modes[m], sizes[s], 0);
    check_one("enable", "100", 1);
    check_one("automatic", NULL, 1);
    mtest_end();
}

/* Memory that is not contiguous either: a strided view written from a
 * vector in memory, read into another. */
static void test_both_noncontig(void)
{
    mtest_begin("non-contiguous memory and file");
    char path[512], tag[64];
    snprintf(tag, sizeof tag, "both_%d", rank);
    fname(path, sizeof path, tag);
    MPI_Info info = hints("enable", "512");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Datatype ft, mt, vec;
    MPI_Type_vector(1, 2, 5, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 5 * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_vector(300, 1, 3, MPI_INT, &mt);
    MPI_Type_commit(&mt);
    int src[900], dst[900];
    for (int i = 0; i < 900; i++)
        src[i] = i * 3 + rank, dst[i] = -1;
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", info));
    CHECK_RC(MPI_File_write_at(fh, 0, src, 1, mt, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_read_at(fh, 0, dst, 1, mt, MPI_STATUS_IGNORE));
    int bad = 0;
    for (int i = 0; i < 900; i++)
        bad += dst[i] != (i % 3 == 0 ? src[i] : -1);
    CHECK(bad == 0, "%d ints wrong after a vector through a vector", bad);
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
    MPI_Type_free(&vec);
    MPI_Info_free(&info);
    mtest_end();
}

/* The hints come back from MPI_File_get_info as set (and the defaults
 * when not). */
static void test_hints(void)
{
    mtest_begin("hints reported");
    char path[512], v[MPI_MAX_INFO_VAL + 1];
    int flag;
    fname(path, sizeof path, "hints");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                           MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    MPI_Info used;
    CHECK_RC(MPI_File_get_info(fh, &used));
    MPI_Info_get(used, "romio_ds_read", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && !strcmp(v, "automatic"), "romio_ds_read defaults to automatic (%s)", v);
    MPI_Info_get(used, "ind_wr_buffer_size", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && atoll(v) > 0, "ind_wr_buffer_size reported (%s)", v);
    MPI_Info_free(&used);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", "disable");
    MPI_Info_set(info, "romio_ds_write", "enable");
    MPI_Info_set(info, "ind_rd_buffer_size", "8192");
    MPI_Info_set(info, "ind_wr_buffer_size", "1024");
    CHECK_RC(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    CHECK_RC(MPI_File_get_info(fh, &used));
    const char *want[][2] = {{"romio_ds_read", "disable"}, {"romio_ds_write", "enable"},
                             {"ind_rd_buffer_size", "8192"}, {"ind_wr_buffer_size", "1024"}};
    for (int i = 0; i < 4; i++) {
        MPI_Info_get(used, want[i][0], MPI_MAX_INFO_VAL, v, &flag);
        CHECK(flag && !strcmp(v, want[i][1]), "%s is \"%s\", expected \"%s\"", want[i][0],
              flag ? v : "(unset)", want[i][1]);
    }
    MPI_Info_free(&used);
    CHECK_RC(MPI_File_close(&fh));
    mtest_end();
}

/* Automatic sieving reads the covering span when the gaps are small (the
 * process reads more bytes than it asked for) and reads piece by piece
 * when they are large (exactly the bytes asked for); disable never
 * sieves. Seen in the tern_io_read_bytes counter. */
static MPI_T_pvar_session sess;
static MPI_T_pvar_handle read_bytes;

static unsigned long long bytes_read(void)
{
    unsigned long long v = 0;
    CHECK_RC(MPI_T_pvar_read(sess, read_bytes, &v));
    return v;
}

static unsigned long long strided_read(const char *mode, int gap)
{
    char path[512], tag[64];
    snprintf(tag, sizeof tag, "auto_%d", rank);
    fname(path, sizeof path, tag);
    MPI_Info info = hints(mode, NULL);
    MPI_File fh;
    int stride = 8 + gap, n = 1000;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    char *buf = calloc((size_t)n * (size_t)stride, 1);
    CHECK_RC(MPI_File_write_at(fh, 0, buf, n * stride, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Datatype vec, ft;
    MPI_Type_vector(1, 8, stride, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, stride, &ft);
    MPI_Type_commit(&ft);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", info));
    unsigned long long before = bytes_read();
    CHECK_RC(MPI_File_read_at(fh, 0, buf, n * 8, MPI_BYTE, MPI_STATUS_IGNORE));
    unsigned long long read = bytes_read() - before;
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Type_free(&ft);
    MPI_Type_free(&vec);
    MPI_Info_free(&info);
    free(buf);
    return read;
}

static void test_automatic(void)
{
    mtest_begin("automatic choice");
    int provided, idx = -1, count = 0;
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK_RC(MPI_T_pvar_session_create(&sess));
    CHECK_RC(MPI_T_pvar_get_index("tern_io_read_bytes", MPI_T_PVAR_CLASS_COUNTER, &idx));
    CHECK_RC(MPI_T_pvar_handle_alloc(sess, idx, NULL, &read_bytes, &count));
    MPI_T_pvar_start(sess, read_bytes); /* continuous counters refuse: fine */
    unsigned long long small = strided_read("automatic", 8);
    unsigned long long large = strided_read("automatic", 1 << 16);
    unsigned long long off = strided_read("disable", 8);
    unsigned long long on = strided_read("enable", 1 << 16);
    CHECK(small > 8000, "small gaps: %llu bytes read for 8000 (sieved)", small);
    CHECK(large == 8000, "large gaps: %llu bytes read for 8000 (piece by piece)", large);
    CHECK(off == 8000, "disable: %llu bytes read for 8000", off);
    CHECK(on > 8000, "enable: %llu bytes read for 8000 (sieved)", on);
    MPI_T_pvar_handle_free(sess, &read_bytes);
    MPI_T_pvar_session_free(&sess);
    MPI_T_finalize();
    mtest_end();
}

/* Every rank writes its own BLK-byte blocks of a shared file, rank r's at
 * r * BLK every size * BLK, all at once, many times over, with sieving
 * forced on and a buffer that holds several blocks of every rank: each
 * read-modify-write covers the others' bytes, so without the lock one
 * rank's write-back would undo another's. */
#define IBLK 4
#define INB 4096
#define ROUNDS 20

static void test_interleaved(const char *mode, int atomic)
{
    mtest_begin(atomic ? "interleaved writers, atomic mode" : "interleaved writers");
    char path[512];
    fname(path, sizeof path, "interleaved");
    MPI_Info info = hints(mode, "2048");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Datatype vec, ft;
    MPI_Type_vector(1, IBLK, IBLK * size, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, IBLK * size, &ft);
    MPI_Type_commit(&ft);
    CHECK_RC(MPI_File_set_view(fh, rank * IBLK, MPI_BYTE, ft, "native", info));
    /* Atomic: the access's span is locked already (no second lock). */
    CHECK_RC(MPI_File_set_atomicity(fh, atomic));
    unsigned char *data = malloc((size_t)INB * IBLK);
    for (int r = 0; r < ROUNDS; r++) {
        for (long i = 0; i < (long)INB * IBLK; i++)
            data[i] = pattern(rank, i + r);
        /* Each round in pieces from the back, so the ranks' spans cross. */
        for (int part = 3; part >= 0; part--) {
            int n = INB * IBLK / 4;
            CHECK_RC(MPI_File_write_at(fh, part * n, data + part * n, n, MPI_BYTE,
                                       MPI_STATUS_IGNORE));
        }
    }
    CHECK_RC(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_sync(fh));
    CHECK_RC(MPI_File_close(&fh));
    if (rank == 0) {
        long total = (long)INB * IBLK * size, bad = 0, first = -1;
        unsigned char *all = malloc((size_t)total);
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        MPI_Status st;
        int count = 0;
        CHECK_RC(MPI_File_read_at(fh, 0, all, (int)total, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == total, "the file has %d bytes, expected %ld", count, total);
        for (long b = 0; b < total; b++) {
            long blk = b / IBLK, r = blk % size, i = (blk / size) * IBLK + b % IBLK;
            if (all[b] != pattern((int)r, i + ROUNDS - 1)) {
                bad++;
                if (first < 0)
                    first = b;
            }
        }
        CHECK(bad == 0, "%s: %ld bytes lost, the first at %ld (rank %ld's)", mode, bad, first,
              first < 0 ? 0 : (first / IBLK) % size);
        CHECK_RC(MPI_File_close(&fh));
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
        free(all);
    }
    MPI_Type_free(&ft);
    MPI_Type_free(&vec);
    MPI_Info_free(&info);
    free(data);
    mtest_end();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mtest_watchdog(150);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_rank = rank;
    mtest_size = size;
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "io_sieve_%d", pid);
    if (rank == 0)
        mkdir(dir, 0777);
    MPI_Barrier(MPI_COMM_WORLD);
    test_settings();
    test_both_noncontig();
    test_hints();
    test_automatic();
    test_interleaved("enable", 0);
    test_interleaved("automatic", 0);
    test_interleaved("enable", 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(rmdir(dir) == 0, "every file was removed (rmdir %s)", dir);
    return mtest_finalize();
}
