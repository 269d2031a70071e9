/* O_DIRECT through the hints direct_write and direct_read (core/io/
 * io_posix.c): independent and collective writes and reads of ranges whose
 * offsets, lengths and user buffers are not aligned to the file system's
 * block, views with holes, file sizes that end inside a block, reads after
 * writes through the other descriptor (both hints on and off, atomic mode
 * too), the hints reported with their effective values, and a tmpfs file
 * (/dev/shm) with the hints on. Every byte is checked by reading back with
 * plain POSIX and with MPI. */
#include "../mpi/mtest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static int rank, size;
static char dir[256];

static MPI_Info direct_info(int w, int r)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "direct_write", w ? "true" : "false");
    MPI_Info_set(info, "direct_read", r ? "true" : "false");
    return info;
}

static void hint_value(MPI_File fh, const char *key, char *val)
{
    MPI_Info used;
    int flag = 0;
    CHECK_RC(MPI_File_get_info(fh, &used));
    MPI_Info_get(used, key, 63, val, &flag);
    if (!flag)
        strcpy(val, "(none)");
    MPI_Info_free(&used);
}

/* File systems that take O_DIRECT: ext2/3/4, xfs, btrfs. */
static int takes_direct(const char *path)
{
    struct statfs fs;
    if (statfs(path, &fs) != 0)
        return 0;
    return fs.f_type == 0xEF53 || fs.f_type == 0x58465342 || fs.f_type == (long)0x9123683E;
}

/* The byte a writer with seed puts at file position pos. */
static unsigned char fbyte(uint32_t seed, MPI_Offset pos)
{
    return mtest_pat(seed, (size_t)pos);
}

/* Compares the file's bytes [off, off + n) read by plain POSIX. */
static void check_posix(const char *path, MPI_Offset off, size_t n, uint32_t seed, const char *what)
{
    unsigned char *buf = malloc(n ? n : 1);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "%s: open %s", what, path);
    ssize_t got = fd >= 0 ? pread(fd, buf, n, off) : -1;
    CHECK(got == (ssize_t)n, "%s: pread %zd of %zu", what, got, n);
    for (size_t i = 0; got == (ssize_t)n && i < n; i++)
        if (buf[i] != fbyte(seed, off + (MPI_Offset)i)) {
            CHECK(0, "%s: POSIX byte %lld is %d, want %d", what, (long long)(off + (MPI_Offset)i),
                  buf[i], fbyte(seed, off + (MPI_Offset)i));
            break;
        }
    if (fd >= 0)
        close(fd);
    free(buf);
}

/* A buffer of n bytes at shift bytes past an aligned address. */
static unsigned char *shifted(void **base, size_t n, int shift)
{
    CHECK(posix_memalign(base, 4096, n + 64) == 0, "posix_memalign");
    return (unsigned char *)*base + shift;
}

/* Independent: every rank writes one range of a shared file (write_at),
 * then reads it back by POSIX and MPI; the file's size ends where the last
 * range does. */
typedef struct {
    MPI_Offset off; /* in the rank's region */
    size_t len;
    int shift; /* the user buffer's distance from alignment */
} range_t;

static const range_t ranges[] = {
    {0, 1, 0},        {5, 4095, 1},           {3, 4096, 0},         {4093, 4097, 3},
    {0, 8192, 0},     {100, 3 * 4096 + 5, 0}, {7, (2 << 20) + 123, 1},
    {4096, 9 << 20, 5}, /* more than two bounce buffers */
};

#define REGION ((MPI_Offset)(10 << 20) + 3)

static void test_independent(int w, int r)
{
    char name[64];
    snprintf(name, sizeof name, "independent_w%d_r%d", w, r);
    mtest_begin(name);
    for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/ind_%d_%d_%zu.dat", dir, w, r, k);
        const range_t *rg = &ranges[k];
        MPI_Offset off = 1 + rank * REGION + rg->off;
        uint32_t seed = (uint32_t)(k * 16 + 1);
        MPI_File fh;
        MPI_Info info = direct_info(w, r);
        CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
        MPI_Info_free(&info);
        void *b1, *b2;
        unsigned char *src = shifted(&b1, rg->len, rg->shift);
        unsigned char *dst = shifted(&b2, rg->len, rg->shift);
        for (size_t i = 0; i < rg->len; i++)
            src[i] = fbyte(seed, off + (MPI_Offset)i);
        MPI_Status st;
        CHECK_RC(MPI_File_write_at(fh, off, src, (int)rg->len, MPI_BYTE, &st));
        CHECK_RC(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(MPI_File_sync(fh));
        check_posix(path, off, rg->len, seed, name);
        memset(dst, 0, rg->len);
        CHECK_RC(MPI_File_read_at(fh, off, dst, (int)rg->len, MPI_BYTE, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)rg->len, "%s case %zu: read %d of %zu", name, k, cnt, rg->len);
        CHECK(memcmp(src, dst, rg->len) == 0, "%s case %zu: MPI read back differs", name, k);
        /* A read past the end gets the bytes up to it. */
        if (rank == size - 1) {
            memset(dst, 0, rg->len);
            CHECK_RC(MPI_File_read_at(fh, off + 1, dst, (int)rg->len, MPI_BYTE, &st));
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(cnt == (int)rg->len - 1, "%s case %zu: read at the end %d of %zu", name, k, cnt,
                  rg->len - 1);
            CHECK(memcmp(src + 1, dst, rg->len - 1) == 0, "%s case %zu: the end's bytes", name, k);
        }
        MPI_Offset fsize = 0;
        CHECK_RC(MPI_File_get_size(fh, &fsize));
        MPI_Offset want = 1 + (size - 1) * REGION + rg->off + (MPI_Offset)rg->len;
        CHECK(fsize == want, "%s case %zu: size %lld, want %lld", name, k, (long long)fsize,
              (long long)want);
        CHECK_RC(MPI_File_close(&fh));
        free(b1);
        free(b2);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    }
    mtest_end();
}

/* Collective through a view with holes: blocks of BLK bytes, rank r's at
 * DISP + (q * size + r) * BLK; then dense ranges by write_at_all, in
 * atomic mode too. */
#define BLK 5000
#define NBLK 700
#define DISP 123

static void test_collective(int w, int r, int atomic)
{
    char name[64], path[512];
    snprintf(name, sizeof name, "collective_w%d_r%d_a%d", w, r, atomic);
    mtest_begin(name);
    snprintf(path, sizeof path, "%s/coll_%d_%d_%d.dat", dir, w, r, atomic);
    MPI_File fh;
    MPI_Info info = direct_info(w, r);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    CHECK_RC(MPI_File_set_atomicity(fh, atomic));
    uint32_t seed = 99;
    MPI_Datatype blocks, ftype;
    MPI_Type_vector(NBLK, BLK, BLK * size, MPI_BYTE, &blocks);
    MPI_Type_create_resized(blocks, 0, (MPI_Aint)NBLK * BLK * size, &ftype);
    MPI_Type_commit(&ftype);
    CHECK_RC(MPI_File_set_view(fh, DISP + (MPI_Offset)rank * BLK, MPI_BYTE, ftype, "native",
                               MPI_INFO_NULL));
    size_t n = (size_t)NBLK * BLK;
    void *b1, *b2;
    unsigned char *src = shifted(&b1, n, 1), *dst = shifted(&b2, n, 1);
    for (size_t i = 0; i < n; i++) {
        MPI_Offset q = (MPI_Offset)(i / BLK);
        src[i] = fbyte(seed, DISP + (q * size + rank) * BLK + (MPI_Offset)(i % BLK));
    }
    CHECK_RC(MPI_File_write_at_all(fh, 0, src, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_sync(fh));
    memset(dst, 0, n);
    CHECK_RC(MPI_File_read_at_all(fh, 0, dst, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(memcmp(src, dst, n) == 0, "%s: read_all through the view differs", name);
    if (rank == 0) /* the whole file, every rank's blocks */
        check_posix(path, DISP, (size_t)NBLK * BLK * (size_t)size, seed, name);
    MPI_Type_free(&blocks);
    MPI_Type_free(&ftype);
    /* Dense: rank r's range at 777 + r * LEN, LEN not a block multiple. */
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    size_t len = (1 << 20) + 13;
    MPI_Offset off = 777 + (MPI_Offset)rank * (MPI_Offset)len;
    seed = 7;
    for (size_t i = 0; i < len; i++)
        src[i] = fbyte(seed, off + (MPI_Offset)i);
    CHECK_RC(MPI_File_write_at_all(fh, off, src, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_sync(fh));
    check_posix(path, off, len, seed, name);
    /* Read the neighbour's range: another rank's writes are seen. */
    MPI_Offset noff = 777 + (MPI_Offset)((rank + 1) % size) * (MPI_Offset)len;
    memset(dst, 0, len);
    CHECK_RC(MPI_File_read_at_all(fh, noff, dst, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
    for (size_t i = 0; i < len; i++)
        if (dst[i] != fbyte(seed, noff + (MPI_Offset)i)) {
            CHECK(0, "%s: neighbour's byte %zu", name, i);
            break;
        }
    CHECK_RC(MPI_File_close(&fh));
    free(b1);
    free(b2);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    mtest_end();
}

/* One handle, the hints switched by set_info between writes: what one
 * descriptor wrote the other reads (the page cache dropped or written back
 * in between). */
static void test_switching(void)
{
    mtest_begin("switching");
    char path[512];
    snprintf(path, sizeof path, "%s/switch_%d.dat", dir, rank);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh));
    size_t len = 5 * 4096 + 77;
    MPI_Offset off = 11;
    void *b1, *b2;
    unsigned char *src = shifted(&b1, len, 0), *dst = shifted(&b2, len, 2);
    for (uint32_t seed = 1; seed <= 4; seed++) {
        int w = seed & 1, r = (seed >> 1) & 1; /* write one way, read the other */
        MPI_Info info = direct_info(w, !w);
        CHECK_RC(MPI_File_set_info(fh, info));
        MPI_Info_free(&info);
        for (size_t i = 0; i < len; i++)
            src[i] = fbyte(seed, off + (MPI_Offset)i);
        CHECK_RC(MPI_File_write_at(fh, off, src, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
        info = direct_info(!w, r);
        CHECK_RC(MPI_File_set_info(fh, info));
        MPI_Info_free(&info);
        memset(dst, 0, len);
        CHECK_RC(MPI_File_read_at(fh, off, dst, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
        CHECK(memcmp(src, dst, len) == 0, "seed %u: read back after a switch differs", seed);
        check_posix(path, off, len, seed, "switching");
    }
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    free(b1);
    free(b2);
    mtest_end();
}

/* get_info reports the effective values; a value that is neither true nor
 * false changes nothing. */
static void test_hints(void)
{
    mtest_begin("hints");
    char path[512], val[64];
    snprintf(path, sizeof path, "%s/hints.dat", dir);
    int disk = takes_direct(dir);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &fh));
    hint_value(fh, "direct_write", val);
    CHECK(strcmp(val, "false") == 0, "default direct_write %s", val);
    hint_value(fh, "direct_read", val);
    CHECK(strcmp(val, "false") == 0, "default direct_read %s", val);
    MPI_Info info = direct_info(1, 0);
    CHECK_RC(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    hint_value(fh, "direct_write", val);
    CHECK(strcmp(val, disk ? "true" : val) == 0 && (!strcmp(val, "true") || !strcmp(val, "false")),
          "direct_write after set_info true: %s (disk %d)", val, disk);
    hint_value(fh, "direct_read", val);
    CHECK(strcmp(val, "false") == 0, "direct_read %s", val);
    MPI_Info_create(&info);
    MPI_Info_set(info, "direct_write", "maybe");
    CHECK_RC(MPI_File_set_info(fh, info));
    MPI_Info_free(&info);
    hint_value(fh, "direct_write", val);
    CHECK(strcmp(val, disk ? "true" : val) == 0, "direct_write after 'maybe': %s", val);
    CHECK_RC(MPI_File_close(&fh));
    info = direct_info(0, 1);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    MPI_Info_free(&info);
    hint_value(fh, "direct_write", val);
    CHECK(strcmp(val, "false") == 0, "direct_write at open false: %s", val);
    hint_value(fh, "direct_read", val);
    CHECK(strcmp(val, disk ? "true" : val) == 0, "direct_read at open true: %s", val);
    CHECK_RC(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    mtest_end();
}

/* tmpfs: with the hints on a file works whether or not the kernel takes
 * O_DIRECT there (Linux 6.6 and later do), and the hint says which. */
static void test_tmpfs(int pid)
{
    mtest_begin("tmpfs");
    char path[512], val[64];
    snprintf(path, sizeof path, "/dev/shm/tern-io-direct-%d-%d", pid, rank);
    MPI_File fh;
    MPI_Info info = direct_info(1, 1);
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) {
        hint_value(fh, "direct_write", val);
        CHECK(!strcmp(val, "true") || !strcmp(val, "false"), "tmpfs direct_write %s", val);
        size_t len = 3 * 4096 + 11;
        MPI_Offset off = 5;
        void *b1, *b2;
        unsigned char *src = shifted(&b1, len, 1), *dst = shifted(&b2, len, 0);
        for (size_t i = 0; i < len; i++)
            src[i] = fbyte(3, off + (MPI_Offset)i);
        CHECK_RC(MPI_File_write_at(fh, off, src, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_File_read_at(fh, off, dst, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
        CHECK(memcmp(src, dst, len) == 0, "tmpfs read back differs");
        check_posix(path, off, len, 3, "tmpfs");
        CHECK_RC(MPI_File_close(&fh));
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
        free(b1);
        free(b2);
    } else {
        CHECK(access("/dev/shm", W_OK) != 0, "open on /dev/shm failed with it writable");
    }
    mtest_end();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mtest_watchdog(240);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_rank = rank;
    mtest_size = size;
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "io_direct_%d", pid);
    if (rank == 0)
        mkdir(dir, 0777);
    MPI_Barrier(MPI_COMM_WORLD);
    test_hints();
    for (int m = 0; m < 4; m++)
        test_independent(m & 1, m >> 1);
    for (int m = 0; m < 4; m++)
        test_collective(m & 1, m >> 1, 0);
    test_collective(1, 1, 1);
    test_switching();
    test_tmpfs(pid);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(rmdir(dir) == 0, "every file was removed (rmdir %s)", dir);
    return mtest_finalize();
}
