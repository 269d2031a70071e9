/* MPI-IO, chapter 14: file handles, every access mode and pointer, views,
 * collective, nonblocking and split forms, the errors of the chapter, the
 * file error handlers, and close's one collective round. Every check
 * compares bytes read back (or the file's size, or an error class, or a
 * count of collectives) with what is known to be right. */
#include "../mpi/mtest.h"

#include <sys/stat.h>

static int rank, size;
static char dir[256];

/* A file name every rank agrees on (rank 0's pid makes it unique). */
static void fname(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "%s/%s.dat", dir, tag);
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static int handler_calls, handler_code;
static MPI_File handler_file;
static int handler_rewrites;
static void file_handler(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_file = *fh;
    if (handler_rewrites)
        *code = MPI_SUCCESS;
}

/* The error's text names the call and the file. */
static void names(int rc, const char *call, const char *file, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    text[0] = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, text, &len);
    CHECK(strstr(text, call) && strstr(text, file), "%s: the message names %s and %s: %s", what,
          call, file, text);
}

static void test_errors(void)
{
    mtest_begin("errors");
    char path[512];
    fname(path, sizeof path, "missing");
    MPI_File fh = MPI_FILE_NULL;
    MPI_Errhandler eh;
    CHECK_RC(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the default file handler is MPI_ERRORS_RETURN");
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK_CLASS(rc, MPI_ERR_NO_SUCH_FILE, "open of a missing file");
    CHECK(fh == MPI_FILE_NULL, "no file after a failed open");
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, text, &len);
    CHECK(strstr(text, "MPI_File_open") && strstr(text, "missing.dat"),
          "the message names the call and the file: %s", text);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_CLASS(rc, MPI_ERR_AMODE, "two access modes");
    names(rc, "MPI_File_open", "missing.dat", "two access modes");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK_CLASS(rc, MPI_ERR_AMODE, "RDONLY with CREATE");
    names(rc, "MPI_File_open", "missing.dat", "RDONLY with CREATE");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                       &fh);
    CHECK_CLASS(rc, MPI_ERR_AMODE, "RDWR with SEQUENTIAL");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | 0x40000000, MPI_INFO_NULL, &fh);
    CHECK_CLASS(rc, MPI_ERR_AMODE, "a bit that is no MPI_MODE_* flag");
    rc = MPI_File_delete(path, MPI_INFO_NULL);
    CHECK_CLASS(rc, MPI_ERR_NO_SUCH_FILE, "delete of a missing file");
    names(rc, "MPI_File_delete", "missing.dat", "delete of a missing file");

    /* EXCL on a file that exists: every rank gets MPI_ERR_FILE_EXISTS. */
    fname(path, sizeof path, "excl");
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close sets MPI_FILE_NULL");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                       MPI_INFO_NULL, &fh);
    CHECK_CLASS(rc, MPI_ERR_FILE_EXISTS, "EXCL on an existing file");
    names(rc, "MPI_File_open", "excl.dat", "EXCL on an existing file");
    /* The ranks disagree (erroneous, yet no rank may hang or go on
     * alone): the last rank's amode is bad, the others create with EXCL.
     * Every rank fails with MPI_ERR_AMODE, and no file is made: rank 0
     * creates only once every rank's checks passed. */
    if (size > 1) {
        char other[512];
        fname(other, sizeof other, "mismatch");
        int amode = rank == size - 1 ? MPI_MODE_RDONLY | MPI_MODE_RDWR
                                     : MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY;
        rc = MPI_File_open(MPI_COMM_WORLD, other, amode, MPI_INFO_NULL, &fh);
        CHECK_CLASS(rc, MPI_ERR_AMODE, "an amode bad on one rank");
        names(rc, "MPI_File_open", "mismatch.dat", "an amode bad on one rank");
        CHECK(fh == MPI_FILE_NULL, "no file after an amode bad on one rank");
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(!exists(other), "EXCL made no file when one rank's amode was bad");
    }
    /* A file the process may not write (root may write any: skipped). */
    if (geteuid() != 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            chmod(path, 0444);
        MPI_Barrier(MPI_COMM_WORLD);
        rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        CHECK_CLASS(rc, MPI_ERR_ACCESS, "RDWR open of a file without write permission");
        names(rc, "MPI_File_open", "excl.dat", "RDWR open of a read-only file");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            chmod(path, 0644);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Reading a write-only file, writing a read-only one. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    int x = 7;
    rc = MPI_File_read_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_ACCESS, "read of a WRONLY file");
    names(rc, "MPI_File_read_at", "excl.dat", "read of a WRONLY file");
    rc = MPI_File_read_at(fh, -1, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS, "negative offset refused");
    rc = MPI_File_seek(fh, 0, 12345);
    CHECK_CLASS(rc, MPI_ERR_ARG, "bad whence");
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_READ_ONLY, "write of a RDONLY file");
    names(rc, "MPI_File_write_at", "excl.dat", "write of a RDONLY file");

    /* A handler of the file's own: called with the file's handle. */
    MPI_Errhandler mine;
    CHECK_RC(MPI_File_create_errhandler(file_handler, &mine));
    CHECK_RC(MPI_File_set_errhandler(fh, mine));
    handler_calls = 0;
    rc = MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(handler_calls == 1 && handler_file == fh, "the file's handler ran (%d calls)",
          handler_calls);
    int cls;
    MPI_Error_class(handler_code, &cls);
    CHECK(cls == MPI_ERR_READ_ONLY, "the handler saw MPI_ERR_READ_ONLY (class %d)", cls);
    CHECK_RC(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_IO, "MPI_File_call_errhandler");
    MPI_Errhandler got;
    CHECK_RC(MPI_File_get_errhandler(fh, &got));
    CHECK(got == mine, "get_errhandler returns the file's");
    if (got != MPI_ERRHANDLER_NULL)
        MPI_Errhandler_free(&got);
    /* A communicator's handler may not go on a file. */
    MPI_Errhandler ceh;
    CHECK_RC(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)file_handler, &ceh));
    rc = MPI_File_set_errhandler(fh, ceh);
    CHECK(rc != MPI_SUCCESS, "a communicator's handler refused on a file");
    CHECK_RC(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_File_close(&fh));
    MPI_Errhandler_free(&ceh);

    /* The default handler: new files get it, open failures raise on it. */
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
    handler_calls = 0;
    fname(path, sizeof path, "missing");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(handler_calls == 1 && handler_file == MPI_FILE_NULL,
          "open's error went to MPI_FILE_NULL's handler (%d calls)", handler_calls);
    /* The call returns the code the handler left (ROMIO's behaviour). */
    handler_rewrites = 1;
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    handler_rewrites = 0;
    CHECK(rc == MPI_SUCCESS && handler_calls == 2, "open returned the handler's code %d", rc);
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&mine);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!exists(path), "a failed open made no file");
    fname(path, sizeof path, "excl");
    if (rank == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    mtest_end();
}

/* Blocks of N ints, rank r's block at r: explicit offsets. */
#define N 1000

static void test_explicit(void)
{
    mtest_begin("explicit offsets");
    char path[512];
    fname(path, sizeof path, "explicit");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int buf[N], in[N];
    for (int i = 0; i < N; i++)
        buf[i] = rank * N + i;
    MPI_Status st;
    CHECK_RC(MPI_File_write_at(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT, &st));
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N, "ints written");
    CHECK_RC(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_sync(fh));
    int peer = (rank + 1) % size;
    CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)peer * N * 4, in, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N, "ints read");
    for (int i = 0; i < N; i++)
        if (in[i] != peer * N + i) {
            CHECK(0, "int %d of rank %d's block is %d", i, peer, in[i]);
            break;
        }
    MPI_Offset fsize;
    CHECK_RC(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == (MPI_Offset)size * N * 4, "size %lld", fsize);
    /* Past the end: a short read, counted. */
    CHECK_RC(MPI_File_read_at(fh, fsize - 8, in, 10, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, 2, "ints read at the end of the file");
    int amode;
    CHECK_RC(MPI_File_get_amode(fh, &amode));
    CHECK_INT(amode, MPI_MODE_CREATE | MPI_MODE_RDWR, "amode");
    MPI_Group g, wg;
    int cmp;
    CHECK_RC(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "the file's group is the communicator's");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    /* Nonblocking and collective forms. */
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read the first values */
    for (int i = 0; i < N; i++)
        buf[i] = -(rank * N + i);
    CHECK_RC(MPI_File_iwrite_at(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_INT(count, N, "ints written by iwrite_at");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_read_at_all(fh, (MPI_Offset)peer * N * 4, in, N, MPI_INT, &st));
    CHECK(in[N - 1] == -(peer * N + N - 1), "read_at_all got %d", in[N - 1]);
    CHECK_RC(MPI_File_read_at_all_begin(fh, (MPI_Offset)rank * N * 4, in, N, MPI_INT));
    CHECK_RC(MPI_File_read_at_all_end(fh, in, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N && in[5] == -(rank * N + 5), "split read: %d ints, in[5]=%d", count, in[5]);
    /* set_size and preallocate. */
    CHECK_RC(MPI_File_set_size(fh, 4096));
    CHECK_RC(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 4096, "size after set_size: %lld", fsize);
    CHECK_RC(MPI_File_preallocate(fh, 8192));
    CHECK_RC(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 8192, "size after preallocate: %lld", fsize);
    int rc = MPI_File_set_size(fh, rank == 0 ? 100 : 200);
    if (size > 1)
        CHECK_CLASS(rc, MPI_ERR_NOT_SAME, "set_size with different sizes");
    /* A size refused on one rank fails on every rank (one agreement
     * carries both checks) and leaves the file as it was. */
    MPI_Offset before = 0;
    CHECK_RC(MPI_File_get_size(fh, &before));
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_File_set_size(fh, rank == size - 1 ? -1 : 100);
    CHECK_CLASS(rc, MPI_ERR_ARG, "set_size with a negative size on the last rank");
    rc = MPI_File_preallocate(fh, rank == size - 1 ? -1 : 1 << 20);
    CHECK_CLASS(rc, MPI_ERR_ARG, "preallocate with a negative size on the last rank");
    CHECK_RC(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == before, "size after refused resizes: %lld, not %lld", fsize, before);
    MPI_Barrier(MPI_COMM_WORLD); /* before any rank writes past 2^31 */
    /* Past 2^31: a sparse file. */
    MPI_Offset far = ((MPI_Offset)3 << 30) + rank * 8;
    long long v = 1000 + rank, w = 0;
    CHECK_RC(MPI_File_write_at_c(fh, far, &v, 1, MPI_LONG_LONG, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_read_at_c(fh, ((MPI_Offset)3 << 30) + peer * 8, &w, 1, MPI_LONG_LONG, &st));
    CHECK(w == 1000 + peer, "past 2^31: %lld", w);
    CHECK_RC(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    mtest_end();
}

/* An interleaved view: rank r owns every size-th run of K ints. */
#define K 4
#define RUNS 50

static void test_view(void)
{
    mtest_begin("views");
    char path[512];
    fname(path, sizeof path, "view");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype run, filetype;
    MPI_Type_contiguous(K, MPI_INT, &run);
    MPI_Type_create_resized(run, 0, (MPI_Aint)size * K * 4, &filetype);
    MPI_Type_commit(&filetype);
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * K * 4, MPI_INT, filetype, "native", MPI_INFO_NULL));
    int buf[K * RUNS];
    for (int i = 0; i < K * RUNS; i++)
        buf[i] = rank * 100000 + i;
    MPI_Status st;
    CHECK_RC(MPI_File_write_all(fh, buf, K * RUNS, MPI_INT, &st));
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == K * RUNS, "individual pointer after write_all: %lld", pos);
    MPI_Offset byte;
    CHECK_RC(MPI_File_get_byte_offset(fh, K + 1, &byte));
    CHECK(byte == (MPI_Offset)(size * K + rank * K + 1) * 4, "byte offset of etype K+1: %lld", byte);
    MPI_Offset disp;
    MPI_Datatype e, t;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_RC(MPI_File_get_view(fh, &disp, &e, &t, rep));
    CHECK(disp == rank * K * 4 && e == MPI_INT && !strcmp(rep, "native"), "get_view");
    int tsize;
    MPI_Type_size(t, &tsize);
    CHECK_INT(tsize, K * 4, "the view's filetype size");
    MPI_Type_free(&t);
    /* Seek back and read through the view. */
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    int in[K * RUNS];
    CHECK_RC(MPI_File_read(fh, in, K * RUNS, MPI_INT, &st));
    CHECK(!memcmp(in, buf, sizeof in), "read back through the view");
    CHECK_RC(MPI_File_seek(fh, -K, MPI_SEEK_END));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == K * RUNS - K, "SEEK_END: %lld", pos);
    CHECK_RC(MPI_File_close(&fh));
    /* Rank 0 reads the whole file with the default view. */
    if (rank == 0) {
        int *all = malloc((size_t)size * K * RUNS * 4);
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        CHECK_RC(MPI_File_read(fh, all, size * K * RUNS, MPI_INT, &st));
        int bad = 0;
        for (int i = 0; i < size * K * RUNS && !bad; i++) {
            int r = (i / K) % size, j = (i / (K * size)) * K + i % K;
            if (all[i] != r * 100000 + j) {
                CHECK(0, "file int %d is %d, not %d", i, all[i], r * 100000 + j);
                bad = 1;
            }
        }
        CHECK_RC(MPI_File_close(&fh));
        free(all);
    }
    /* A derived type in memory: every other int. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype strided;
    MPI_Type_vector(K * RUNS / 2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * K * 4, MPI_INT, filetype, "native", MPI_INFO_NULL));
    memset(in, 0, sizeof in);
    CHECK_RC(MPI_File_read_at(fh, 0, in, 1, strided, &st));
    int ok = 1;
    for (int i = 0; i < K * RUNS / 2; i++)
        ok &= in[2 * i] == rank * 100000 + i && in[2 * i + 1] == 0;
    CHECK(ok, "a strided memory type read through the view");
    /* A filetype whose data goes backwards: MPI_ERR_IO, as ROMIO. */
    int blens[2] = {1, 1};
    MPI_Aint backwards[2] = {8, 0};
    MPI_Datatype back;
    MPI_Type_create_hindexed(2, blens, backwards, MPI_INT, &back);
    MPI_Type_commit(&back);
    int rc = MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL);
    CHECK_CLASS(rc, MPI_ERR_IO, "a filetype going backwards");
    MPI_Type_free(&back);
    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL);
    CHECK_CLASS(rc, MPI_ERR_UNSUPPORTED_DATAREP, "unknown datarep");
    CHECK_RC(MPI_File_close(&fh));
    MPI_Type_free(&strided);
    MPI_Type_free(&run);
    MPI_Type_free(&filetype);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    mtest_end();
}

#define REC 8
#define ROUNDS 20

static void test_shared(void)
{
    mtest_begin("shared pointer");
    char path[512];
    fname(path, sizeof path, "shared");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    /* Every rank appends ROUNDS records at once: none lost, none twice. */
    int rec[REC];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < REC; i++)
            rec[i] = rank * 1000 + r;
        CHECK_RC(MPI_File_write_shared(fh, rec, REC, MPI_INT, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * ROUNDS * REC * 4, "shared pointer %lld", pos);
    if (rank == 0) {
        int n = size * ROUNDS;
        int *all = malloc((size_t)n * REC * 4), *seen = calloc((size_t)n, sizeof *seen);
        MPI_Status st;
        CHECK_RC(MPI_File_read_at(fh, 0, all, n * REC, MPI_INT, &st));
        for (int k = 0; k < n; k++) {
            int v = all[k * REC], r = v / 1000, round = v % 1000;
            int whole = 1;
            for (int i = 1; i < REC; i++)
                whole &= all[k * REC + i] == v;
            CHECK(whole && r < size && round < ROUNDS, "record %d is torn or wrong (%d)", k, v);
            if (whole && r < size && round < ROUNDS)
                seen[r * ROUNDS + round]++;
        }
        for (int k = 0; k < n; k++)
            CHECK(seen[k] == 1, "record of rank %d round %d seen %d times", k / ROUNDS, k % ROUNDS, seen[k]);
        free(all);
        free(seen);
    }
    /* Ordered: rank order, one after the other. */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int mine[64], got[64];
    for (int i = 0; i < 64; i++)
        mine[i] = rank, got[i] = -1;
    CHECK_RC(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * (size + 1) / 2 * 4, "after write_ordered %lld", pos);
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_read_ordered(fh, got, rank + 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(got[0] == rank && got[rank] == rank && got[rank + 1] == -1, "read_ordered got %d", got[0]);
    CHECK_RC(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!exists(path), "MPI_MODE_DELETE_ON_CLOSE removed the file");
    mtest_end();
}

/* Collectives (internal ones too) this rank has started: tern_coll_calls. */
static unsigned long long coll_calls(void)
{
    static MPI_T_pvar_session sess = MPI_T_PVAR_SESSION_NULL;
    static MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    if (sess == MPI_T_PVAR_SESSION_NULL) {
        int provided, idx = -1, count = 0;
        CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
        CHECK_RC(MPI_T_pvar_session_create(&sess));
        CHECK_RC(MPI_T_pvar_get_index("tern_coll_calls", MPI_T_PVAR_CLASS_COUNTER, &idx));
        CHECK_RC(MPI_T_pvar_handle_alloc(sess, idx, NULL, &h, &count));
        MPI_T_pvar_start(sess, h); /* continuous counters refuse: fine */
    }
    unsigned long long v = 0;
    CHECK_RC(MPI_T_pvar_read(sess, h, &v));
    return v;
}

/* Close in one collective round (an allreduce; with DELETE_ON_CLOSE a
 * reduce and a bcast, rank 0 deleting between them), the shared pointer
 * used or not: when any rank's close returns, every rank's bytes are in
 * the file (rank 0 reads them by POSIX at once) and a DELETE_ON_CLOSE
 * file is gone; a deletion that fails (the last rank removed the file
 * itself) fails the close on every rank with its class. */
static void test_close(void)
{
    mtest_begin("close");
    char path[512];
    fname(path, sizeof path, "close");
    for (int how = 0; how < 4; how++) {
        int doc = how & 1, shared = how & 2;
        MPI_File fh;
        CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                                   (doc ? MPI_MODE_DELETE_ON_CLOSE : 0), MPI_INFO_NULL, &fh));
        int mine[REC];
        for (int i = 0; i < REC; i++)
            mine[i] = rank * 1000 + i;
        if (shared)
            CHECK_RC(MPI_File_write_shared(fh, mine, REC, MPI_INT, MPI_STATUS_IGNORE));
        else
            CHECK_RC(MPI_File_write_at(fh, (MPI_Offset)rank * REC * 4, mine, REC, MPI_INT,
                                       MPI_STATUS_IGNORE));
        unsigned long long before = coll_calls();
        CHECK_RC(MPI_File_close(&fh));
        unsigned long long colls = coll_calls() - before;
        if (size > 1)
            CHECK(colls == (doc ? 2u : 1u), "%s%s: close started %llu collectives", shared ?
                  "shared pointer used, " : "", doc ? "DELETE_ON_CLOSE" : "plain", colls);
        if (doc) {
            CHECK(!exists(path), "DELETE_ON_CLOSE: the file is gone when close returns");
        } else if (rank == 0) {
            int *all = malloc((size_t)size * REC * 4);
            FILE *in = fopen(path, "rb");
            size_t got = in ? fread(all, 4, (size_t)size * REC, in) : 0;
            if (in)
                fclose(in);
            CHECK(got == (size_t)size * REC, "read %zu of %d ints after close", got, size * REC);
            /* By the shared pointer the records' order is the ranks' race:
             * record k is then some rank's, each rank's once. */
            int seen[64] = {0}, ok = got == (size_t)size * REC;
            for (int k = 0; ok && k < size; k++) {
                int r = shared ? all[k * REC] / 1000 : k;
                ok = r >= 0 && r < size && !seen[r]++;
                for (int i = 0; ok && i < REC; i++)
                    ok = all[k * REC + i] == r * 1000 + i;
            }
            CHECK(ok, "every rank's bytes are in the file when rank 0's close returns");
            free(all);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (!doc && rank == 0)
            unlink(path);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR |
                               MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = MPI_File_close(&fh);
    CHECK_CLASS(rc, MPI_ERR_NO_SUCH_FILE, "DELETE_ON_CLOSE of a file removed before the close");
    CHECK(fh == MPI_FILE_NULL, "the handle is MPI_FILE_NULL after a failed close");
    mtest_end();
}

static void test_hints(void)
{
    mtest_begin("hints and handles");
    char path[512];
    fname(path, sizeof path, "hints");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "my_own_key", "kept");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           info, &fh));
    MPI_Info_free(&info);
    MPI_Info used;
    CHECK_RC(MPI_File_get_info(fh, &used));
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && !strcmp(v, "1048576"), "cb_buffer_size reported as set");
    MPI_Info_get(used, "romio_cb_write", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag, "romio_cb_write reported");
    MPI_Info_get(used, "my_own_key", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && !strcmp(v, "kept"), "a key Tern does not know is kept");
    MPI_Info_free(&used);
    CHECK_RC(MPI_File_set_atomicity(fh, 1));
    CHECK_RC(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomic mode on");
    int x = rank;
    CHECK_RC(MPI_File_write_at_all(fh, rank * 4, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_set_atomicity(fh, 0));
    MPI_Aint ext;
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    CHECK(ext == 8, "type extent %ld", (long)ext);
    MPI_Fint f = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(f) == fh, "c2f/f2c");
    CHECK(MPI_File_fromint(MPI_File_toint(fh)) == fh, "toint/fromint");
    CHECK_RC(MPI_File_close(&fh));
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
    if (size > 63)
        FATAL("at most 63 ranks");
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(dir, sizeof dir, "io_basic_%d", pid);
    if (rank == 0)
        mkdir(dir, 0777);
    MPI_Barrier(MPI_COMM_WORLD);
    test_errors();
    test_explicit();
    test_view();
    test_shared();
    test_hints();
    test_close();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(rmdir(dir) == 0, "every file was removed (rmdir %s)", dir);
    return mtest_finalize();
}
