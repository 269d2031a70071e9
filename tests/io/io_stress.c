/* MPI-IO under stress, one case per run (io_stress <case> [file]); the
 * scripts in io_jobs_test.sh run the cases that need a setting of their
 * own (two jobs at once, a full file system, a rank killed):
 *   shared  every rank appends records through the shared file pointer at
 *           once (MPI_File_write_shared), then the job reads them back in
 *           rank order (MPI_File_read_ordered): each record exactly once,
 *           none torn; file: the file to use (deleted after).
 *   large   a sparse file past 4 GB: explicit offsets and views past 2^31
 *           and 2^32 with the _c large-count forms, the bytes at the far
 *           offsets read back, the size and byte offsets past 2^31, and a
 *           read of more than INT_MAX bytes that meets the end of the file.
 *   nospace a collective write of more than the file system holds: every
 *           rank gets MPI_ERR_NO_SPACE naming the file and the call; the
 *           program goes on (MPI_ERRORS_RETURN), deletes the file and
 *           writes a small one. file: a name on the small file system.
 *   readonly  file: a directory on a read-only file system holding ro.dat
 *           (16 bytes, "0123456789abcdef"): opening it for writing,
 *           creating a file and deleting give MPI_ERR_READ_ONLY naming the
 *           file and the call; reading works.
 *   kill    collective writes in a loop; rank 1 kills itself (SIGKILL)
 *           in the middle of one, printing the wall clock of the kill:
 *           the job must end (the script checks how). file: the file
 *           to use.
 * Exit status 0: every check passed. */
#include "../mpi/mtest.h"

#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

static int rank, size;

/* ---- shared ------------------------------------------------------------ */

#define REC 16     /* ints per record */
#define RECORDS 400 /* records per rank */

static void run_shared(const char *path)
{
    mtest_begin("shared pointer hammered");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                           MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    int rec[REC];
    for (int r = 0; r < RECORDS; r++) {
        for (int i = 0; i < REC; i++)
            rec[i] = rank * 100000 + r;
        /* Some nonblocking too: the pointer moves at the call. */
        if (r % 4 == 3) {
            MPI_Request req;
            CHECK_RC(MPI_File_iwrite_shared(fh, rec, REC, MPI_INT, &req));
            CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            CHECK_RC(MPI_File_write_shared(fh, rec, REC, MPI_INT, MPI_STATUS_IGNORE));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos = -1, fsize = -1;
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT(pos, (MPI_Offset)size * RECORDS * REC * 4, "shared pointer after the appends");
    CHECK_RC(MPI_File_get_size(fh, &fsize));
    CHECK_INT(fsize, (MPI_Offset)size * RECORDS * REC * 4, "file size");
    /* Back in rank order, each rank an equal share. */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int *mine = malloc((size_t)RECORDS * REC * sizeof *mine);
    MPI_Status st;
    CHECK_RC(MPI_File_read_ordered(fh, mine, RECORDS * REC, MPI_INT, &st));
    int got = 0;
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK_INT(got, RECORDS * REC, "ints read_ordered");
    int *all = rank == 0 ? malloc((size_t)size * RECORDS * REC * sizeof *all) : NULL;
    MPI_Gather(mine, RECORDS * REC, MPI_INT, all, RECORDS * REC, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int n = size * RECORDS, torn = 0, dup = 0, missing = 0;
        int *seen = calloc((size_t)n, sizeof *seen);
        for (int k = 0; k < n; k++) {
            int v = all[k * REC], r = v / 100000, i = v % 100000, whole = 1;
            for (int j = 1; j < REC; j++)
                whole &= all[k * REC + j] == v;
            if (!whole || r < 0 || r >= size || i >= RECORDS)
                torn++;
            else
                seen[r * RECORDS + i]++;
        }
        for (int k = 0; k < n; k++) {
            dup += seen[k] > 1;
            missing += seen[k] == 0;
        }
        CHECK(torn == 0 && dup == 0 && missing == 0,
              "%d records torn, %d twice, %d missing of %d", torn, dup, missing, n);
        free(seen);
        free(all);
    }
    free(mine);
    CHECK_RC(MPI_File_close(&fh));
    struct stat sb; /* gone on every rank when close returns */
    CHECK(stat(path, &sb) != 0, "MPI_MODE_DELETE_ON_CLOSE removed %s", path);
    mtest_end();
}

/* ---- large ------------------------------------------------------------- */

static void fill(unsigned char *b, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)((seed + i) * 2654435761u >> 13);
}

static void run_large(const char *path)
{
    mtest_begin("a sparse file past 4 GB");
    const MPI_Offset G = (MPI_Offset)1 << 30;
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                           MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    /* Each rank its own far places: past 2^31 and past 2^32. */
    MPI_Offset at[2] = {2 * G + 4096 * (MPI_Offset)rank + 7, 4 * G + 8192 * (MPI_Offset)rank + 3};
    unsigned char w[3000], r[3000];
    for (int k = 0; k < 2; k++) {
        fill(w, sizeof w, (uint64_t)at[k]);
        MPI_Status st;
        MPI_Count c = -1;
        CHECK_RC(MPI_File_write_at_c(fh, at[k], w, (MPI_Count)sizeof w, MPI_BYTE, &st));
        MPI_Get_count_c(&st, MPI_BYTE, &c);
        CHECK_INT(c, sizeof w, "bytes written at a far offset");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset fsize = 0, want = 4 * G + 8192 * (MPI_Offset)(size - 1) + 3 + 3000;
    CHECK_RC(MPI_File_get_size(fh, &fsize));
    CHECK_INT(fsize, want, "size of the sparse file");
    for (int k = 0; k < 2; k++) {
        fill(w, sizeof w, (uint64_t)at[k]);
        memset(r, 0, sizeof r);
        MPI_Status st;
        MPI_Count c = -1;
        CHECK_RC(MPI_File_read_at_all_c(fh, at[k], r, (MPI_Count)sizeof r, MPI_BYTE, &st));
        MPI_Get_count_c(&st, MPI_BYTE, &c);
        CHECK_INT(c, sizeof r, "bytes read back at a far offset");
        CHECK(memcmp(r, w, sizeof w) == 0, "the bytes at %lld", (long long)at[k]);
    }
    /* The hole between reads as zeros. */
    CHECK_RC(MPI_File_read_at_c(fh, 3 * G, r, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    int nonzero = 0;
    for (int i = 0; i < 100; i++)
        nonzero += r[i] != 0;
    CHECK(nonzero == 0, "the hole at 3 GB reads as zeros");

    /* A view whose etype offsets reach past 2^32 bytes: etype of 1 KB
     * (contiguous doubles), filetype a resized one-etype block with an
     * extent of 1.5 GB, displacement past 2^31. */
    MPI_Datatype et, ft;
    MPI_Type_contiguous(128, MPI_DOUBLE, &et);
    MPI_Type_commit(&et);
    MPI_Type_create_resized_c(et, 0, (MPI_Count)(3 * G / 2), &ft);
    MPI_Type_commit(&ft);
    MPI_Offset disp = 2 * G + 512 * 1024 + 1024 * (MPI_Offset)rank;
    /* The ranks' extents interleave over 1.5 GB: each writes its own (no
     * aggregator walks the hole). */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "disable");
    CHECK_RC(MPI_File_set_view(fh, disp, et, ft, "native", info));
    MPI_Info_free(&info);
    double dv[2 * 128], dr[2 * 128];
    for (int i = 0; i < 2 * 128; i++)
        dv[i] = rank * 1e6 + i + 0.5;
    /* Etypes 0 and 1: bytes disp and disp + 1.5 GB. */
    CHECK_RC(MPI_File_write_all_c(fh, dv, 2, et, MPI_STATUS_IGNORE));
    MPI_Offset pos = -1, byte = -1;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK_INT(pos, 2, "individual pointer after two etypes");
    CHECK_RC(MPI_File_get_byte_offset(fh, 1, &byte));
    CHECK_INT(byte, disp + 3 * G / 2, "byte offset of etype 1");
    CHECK_RC(MPI_File_read_at_c(fh, 0, dr, 2, et, MPI_STATUS_IGNORE));
    CHECK(memcmp(dr, dv, sizeof dv) == 0, "doubles back through the far view");
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    double d0 = 0;
    CHECK_RC(MPI_File_read_at_c(fh, disp + 3 * G / 2 + 8 * 127, &d0, 1, MPI_DOUBLE,
                                MPI_STATUS_IGNORE));
    CHECK(d0 == dv[255], "the last double at %lld: %g", (long long)(disp + 3 * G / 2), d0);
    MPI_Type_free(&ft);
    MPI_Type_free(&et);

    /* More than INT_MAX bytes asked for, near the end: what is there. The
     * buffer is address space only (nothing touched but what is read). */
    size_t big = (size_t)INT32_MAX + 4096;
    void *buf = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
                     MAP_NORESERVE, -1, 0);
    if (buf != MAP_FAILED) {
        MPI_Status st;
        MPI_Count c = -1;
        CHECK_RC(MPI_File_read_at_c(fh, fsize - 5000, buf, (MPI_Count)big, MPI_BYTE, &st));
        MPI_Get_count_c(&st, MPI_BYTE, &c);
        CHECK_INT(c, 5000, "a read of INT_MAX + 4096 bytes 5000 before the end");
        int cnt = 0;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK_INT(cnt, 5000, "the same count through MPI_Get_count");
        fill(w, sizeof w, (uint64_t)(4 * G + 8192 * (MPI_Offset)(size - 1) + 3));
        CHECK(memcmp((char *)buf + 2000, w, sizeof w) == 0, "the last rank's bytes at the end");
        munmap(buf, big);
    }
    CHECK_RC(MPI_File_close(&fh));
    mtest_end();
}

/* ---- nospace ------------------------------------------------------------ */

static void run_nospace(const char *path)
{
    mtest_begin("no space left");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh));
    /* 4 MB per rank, on a file system of 1 MB. */
    size_t n = (size_t)4 << 20;
    char *b = malloc(n);
    memset(b, 'a' + rank, n);
    int rc = MPI_File_write_at_all(fh, (MPI_Offset)n * rank, b, (int)n, MPI_BYTE,
                                   MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_NO_SPACE, "collective write on a full file system");
    const char *text = mtest_errstr(rc);
    CHECK(strstr(text, "MPI_File_write_at_all") && strstr(text, path),
          "the message names the call and the file: %s", text);
    printf("rank %d: %s\n", rank, text);
    /* Independent too. */
    rc = MPI_File_write_at(fh, (MPI_Offset)n * (rank + size), b, (int)n, MPI_BYTE,
                           MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_NO_SPACE, "independent write on a full file system");
    CHECK(strstr(mtest_errstr(rc), "MPI_File_write_at") && strstr(mtest_errstr(rc), path),
          "the message names the call and the file: %s", mtest_errstr(rc));
    CHECK_RC(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    /* Room again: a small file works. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                           MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_write_at_all(fh, 1024 * rank, b, 1024, MPI_BYTE, MPI_STATUS_IGNORE));
    char back[1024];
    CHECK_RC(MPI_File_read_at(fh, 1024 * rank, back, 1024, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(memcmp(back, b, 1024) == 0, "a small write after the full one");
    CHECK_RC(MPI_File_close(&fh));
    free(b);
    mtest_end();
}

/* ---- readonly ----------------------------------------------------------- */

static void expect(int rc, int cls, const char *call, const char *file, const char *what)
{
    CHECK_CLASS(rc, cls, what);
    const char *text = mtest_errstr(rc);
    CHECK(rc == MPI_SUCCESS || (strstr(text, call) && strstr(text, file)),
          "%s: the message names %s and %s: %s", what, call, file, text);
}

static void run_readonly(const char *dir)
{
    mtest_begin("a read-only file system");
    char path[600], fresh[600];
    snprintf(path, sizeof path, "%s/ro.dat", dir);
    snprintf(fresh, sizeof fresh, "%s/new.dat", dir);
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    expect(rc, MPI_ERR_READ_ONLY, "MPI_File_open", "ro.dat", "RDWR open");
    rc = MPI_File_open(MPI_COMM_WORLD, fresh, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                       &fh);
    expect(rc, MPI_ERR_READ_ONLY, "MPI_File_open", "new.dat", "CREATE on a read-only system");
    CHECK(fh == MPI_FILE_NULL, "no file after the failed opens");
    rc = MPI_File_delete(path, MPI_INFO_NULL);
    expect(rc, MPI_ERR_READ_ONLY, "MPI_File_delete", "ro.dat", "delete");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    char b[17] = {0};
    CHECK_RC(MPI_File_read_at_all(fh, 0, b, 16, MPI_CHAR, MPI_STATUS_IGNORE));
    CHECK(!strcmp(b, "0123456789abcdef"), "read back: %s", b);
    rc = MPI_File_write_at(fh, 0, b, 1, MPI_CHAR, MPI_STATUS_IGNORE);
    expect(rc, MPI_ERR_READ_ONLY, "MPI_File_write_at", "ro.dat", "write of a RDONLY file");
    CHECK_RC(MPI_File_close(&fh));
    mtest_end();
}

/* ---- kill --------------------------------------------------------------- */

static void run_kill(const char *path)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable"); /* through the aggregators */
    MPI_Info_set(info, "cb_buffer_size", "65536");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    CHECK_RC(MPI_File_set_atomicity(fh, 1)); /* byte-range locks held too */
    size_t n = 256 * 1024;
    char *b = malloc(n);
    memset(b, 'a' + rank, n);
    printf("rank %d: pid %d\n", rank, (int)getpid());
    fflush(stdout);
    for (int round = 0;; round++) {
        if (round == 20 && rank == 1) {
            /* The wall clock of the kill: the script times the end of the
             * job from here, not from a start-up that load can stretch. */
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            printf("rank 1: killing itself at %lld ms\n",
                   (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
            fflush(stdout);
            raise(SIGKILL);
        }
        /* Interleaved: every rank's data goes through another rank. */
        MPI_Datatype vec, ft;
        MPI_Type_vector(1, 1024, 1024 * size, MPI_BYTE, &vec);
        MPI_Type_create_resized(vec, 0, 1024 * size, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, 1024 * rank, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        int rc = MPI_File_write_all(fh, b, (int)n, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Type_free(&ft);
        MPI_Type_free(&vec);
        if (rc != MPI_SUCCESS) {
            /* The job is ending: the launcher ends this rank too. */
            printf("rank %d: round %d: %s\n", rank, round, mtest_errstr(rc));
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (round > 100000)
            break;
    }
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_rank = rank;
    mtest_size = size;
    const char *what = argc > 1 ? argv[1] : "";
    char path[512];
    if (argc > 2) {
        snprintf(path, sizeof path, "%s", argv[2]);
    } else {
        int pid = (int)getpid();
        MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
        snprintf(path, sizeof path, "io_stress_%s_%d.dat", what, pid);
    }
    if (!strcmp(what, "kill")) {
        run_kill(path);
    } else {
        mtest_watchdog(150);
        if (!strcmp(what, "shared"))
            run_shared(path);
        else if (!strcmp(what, "large"))
            run_large(path);
        else if (!strcmp(what, "nospace"))
            run_nospace(path);
        else if (!strcmp(what, "readonly"))
            run_readonly(path);
        else
            FATAL("unknown case '%s' (shared, large, nospace, kill)", what);
    }
    return mtest_finalize();
}
