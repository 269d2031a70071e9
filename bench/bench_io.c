/* tern-bench io: MPI-IO bandwidth, the patterns parallel applications use.
 *
 *   block3d   a 3-D array of doubles block-decomposed over the ranks, each
 *             block through a subarray view: MPI_File_write_all, then
 *             MPI_File_read_all (collective buffering where it helps)
 *   rows      a 2-D array whose rows are dealt round-robin to the ranks,
 *             each row written and read independently at its offset
 *   segments  IOR's segmented layout: each rank a block per segment,
 *             written and read independently (_at) and collectively
 *             (_at_all)
 *   open      the fixed cost: MPI_File_open (MPI_MODE_CREATE|MPI_MODE_RDWR)
 *             and MPI_File_close of one file, -r times after 10 untimed;
 *             the slowest rank's best and median, in microseconds
 *
 * Every rank writes -s MB per repetition; times are the slowest rank's,
 * after a barrier, from the first call to the close (written data is
 * synced with MPI_File_sync, so the file system's cache is not counted as
 * a disk: the page cache still serves reads). The bandwidth is the total
 * bytes over that time. The data read back is checked: a wrong byte fails
 * the run (exit 2). -H key=value passes a hint to MPI_File_open (e.g.
 * romio_cb_write=enable, cb_buffer_size=4194304; repeatable). Uses only
 * the MPI API: builds with any MPI's mpicc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;
static MPI_Info hints = MPI_INFO_NULL;

static void die(const char *what, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "tern-bench io: rank %d: %s: %s\n", rank, what, text);
    MPI_Abort(MPI_COMM_WORLD, 2);
}
#define CALL(x) do { int rc_ = (x); if (rc_ != MPI_SUCCESS) die(#x, rc_); } while (0)

static double value(long i)
{
    return (double)(i % 1000003) + 0.5;
}

static void check(const double *buf, long n, long (*global)(long, void *), void *arg,
                  const char *pattern)
{
    for (long i = 0; i < n; i++)
        if (buf[i] != value(global(i, arg))) {
            fprintf(stderr, "tern-bench io: rank %d: %s: element %ld read back as %g, not %g\n",
                    rank, pattern, i, buf[i], value(global(i, arg)));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
}

typedef struct {
    int gsizes[3], lsizes[3], starts[3];
} block_t;

static long block_global(long i, void *arg)
{
    block_t *b = arg;
    long z = i % b->lsizes[2], y = (i / b->lsizes[2]) % b->lsizes[1], x = i / ((long)b->lsizes[2] * b->lsizes[1]);
    return ((x + b->starts[0]) * b->gsizes[1] + (y + b->starts[1])) * b->gsizes[2] + (z + b->starts[2]);
}

/* Times one phase: barrier, fn, barrier; the slowest rank's seconds. */
static double timed_phase(void (*fn)(void *), void *arg)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    fn(arg);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

typedef struct {
    const char *path;
    double *buf;
    long n;          /* doubles per rank */
    int write, collective;
    MPI_Datatype view;
    block_t blk;
    long row, rows;  /* rows: doubles per row, rows per rank */
    long seg;        /* segments: doubles per block */
    int pattern;
} job_t;

enum { P_BLOCK3D, P_ROWS, P_SEGMENTS };

static void run_job(void *arg)
{
    job_t *j = arg;
    MPI_File fh;
    int amode = j->write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    CALL(MPI_File_open(MPI_COMM_WORLD, j->path, amode, hints, &fh));
    MPI_Status st;
    if (j->pattern == P_BLOCK3D) {
        CALL(MPI_File_set_view(fh, 0, MPI_DOUBLE, j->view, "native", MPI_INFO_NULL));
        if (j->write)
            CALL(MPI_File_write_all(fh, j->buf, (int)j->n, MPI_DOUBLE, &st));
        else
            CALL(MPI_File_read_all(fh, j->buf, (int)j->n, MPI_DOUBLE, &st));
    } else if (j->pattern == P_ROWS) {
        for (long r = 0; r < j->rows; r++) {
            MPI_Offset off = (MPI_Offset)((r * size + rank) * j->row) * 8;
            if (j->write)
                CALL(MPI_File_write_at(fh, off, j->buf + r * j->row, (int)j->row, MPI_DOUBLE, &st));
            else
                CALL(MPI_File_read_at(fh, off, j->buf + r * j->row, (int)j->row, MPI_DOUBLE, &st));
        }
    } else {
        long segs = j->n / j->seg;
        for (long s = 0; s < segs; s++) {
            MPI_Offset off = (MPI_Offset)((s * size + rank) * j->seg) * 8;
            double *b = j->buf + s * j->seg;
            if (j->write && j->collective)
                CALL(MPI_File_write_at_all(fh, off, b, (int)j->seg, MPI_DOUBLE, &st));
            else if (j->write)
                CALL(MPI_File_write_at(fh, off, b, (int)j->seg, MPI_DOUBLE, &st));
            else if (j->collective)
                CALL(MPI_File_read_at_all(fh, off, b, (int)j->seg, MPI_DOUBLE, &st));
            else
                CALL(MPI_File_read_at(fh, off, b, (int)j->seg, MPI_DOUBLE, &st));
        }
    }
    if (j->write)
        CALL(MPI_File_sync(fh));
    CALL(MPI_File_close(&fh));
}

typedef struct {
    job_t *j;
} idx_t;

static long rows_global(long i, void *arg)
{
    job_t *j = arg;
    long r = i / j->row;
    return (r * size + rank) * j->row + i % j->row;
}

static long seg_global(long i, void *arg)
{
    job_t *j = arg;
    long s = i / j->seg;
    return (s * size + rank) * j->seg + i % j->seg;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* -p open: what a program that opens many files pays per file. */
static void open_close(const char *path, int reps, int json)
{
    double *t = malloc((size_t)reps * sizeof *t);
    for (int i = -10; i < reps; i++) {
        MPI_File fh;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh));
        CALL(MPI_File_close(&fh));
        double dt = MPI_Wtime() - t0, slowest;
        MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (i >= 0)
            t[i] = slowest * 1e6;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    if (rank == 0 && json)
        printf("{\"benchmark\": \"io\", \"pattern\": \"open\", \"ranks\": %d, "
               "\"best_us\": %.1f, \"median_us\": %.1f, \"reps\": %d}\n", size, t[0],
               t[reps / 2], reps);
    else if (rank == 0)
        printf("# tern-bench io: open (MPI_File_open + MPI_File_close), %d ranks, %d times\n"
               "best %.1f us   median %.1f us\n", size, reps, t[0], t[reps / 2]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    free(t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *pattern = "block3d", *dir = ".";
    double mb = 64;
    int reps = 3, json = 0, collective = 0;
    long seg_kb = 1024, row_kb = 64;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc) pattern = argv[++i];
        else if (!strcmp(argv[i], "-s") && i + 1 < argc) mb = atof(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "-b") && i + 1 < argc) seg_kb = atol(argv[++i]);
        else if (!strcmp(argv[i], "-c")) collective = 1;
        else if (!strcmp(argv[i], "-H") && i + 1 < argc && strchr(argv[i + 1], '=')) {
            char kv[256];
            snprintf(kv, sizeof kv, "%s", argv[++i]);
            char *eq = strchr(kv, '=');
            *eq = '\0';
            if (hints == MPI_INFO_NULL)
                MPI_Info_create(&hints);
            MPI_Info_set(hints, kv, eq + 1);
        }
        else if (!strcmp(argv[i], "--json")) json = 1;
        else {
            if (rank == 0)
                printf("usage: tern-bench io [-p block3d|rows|segments|open] [-s MB per rank] [-r reps]\n"
                       "                     [-d dir] [-b KB per segment block] [-c: segments "
                       "collectively]\n                     [-H hint=value]... [--json]\n");
            MPI_Finalize();
            return strcmp(argv[i], "-h") && strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    job_t j = {0};
    char path[512];
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/tern-bench-io-%d.dat", dir, pid);
    j.path = path;
    if (!strcmp(pattern, "open")) {
        if (reps > 0)
            open_close(path, reps, json);
        if (hints != MPI_INFO_NULL)
            MPI_Info_free(&hints);
        MPI_Finalize();
        return 0;
    }
    j.collective = collective;
    long n = (long)(mb * 1048576 / 8);
    long (*global)(long, void *) = NULL;
    void *garg = &j;
    if (!strcmp(pattern, "block3d")) {
        j.pattern = P_BLOCK3D;
        int dims[3] = {0, 0, 0};
        MPI_Dims_create(size, 3, dims);
        /* A cube of side L per rank: L^3 ~ n. */
        int L = 1;
        while ((long)(L + 1) * (L + 1) * (L + 1) <= n)
            L++;
        int coords[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
        for (int d = 0; d < 3; d++) {
            j.blk.gsizes[d] = L * dims[d];
            j.blk.lsizes[d] = L;
            j.blk.starts[d] = coords[d] * L;
        }
        n = (long)L * L * L;
        MPI_Type_create_subarray(3, j.blk.gsizes, j.blk.lsizes, j.blk.starts, MPI_ORDER_C,
                                 MPI_DOUBLE, &j.view);
        MPI_Type_commit(&j.view);
        global = block_global;
        garg = &j.blk;
    } else if (!strcmp(pattern, "rows")) {
        j.pattern = P_ROWS;
        j.row = row_kb * 1024 / 8;
        j.rows = n / j.row;
        n = j.rows * j.row;
        global = rows_global;
    } else if (!strcmp(pattern, "segments")) {
        j.pattern = P_SEGMENTS;
        j.seg = seg_kb * 1024 / 8;
        n = n / j.seg * j.seg;
        global = seg_global;
    } else {
        if (rank == 0)
            fprintf(stderr, "tern-bench io: unknown pattern %s\n", pattern);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    j.n = n;
    j.buf = malloc((size_t)n * 8);
    double wbest = 0, rbest = 0;
    double total = (double)n * 8 * size;
    for (int r = 0; r < reps; r++) {
        for (long i = 0; i < n; i++)
            j.buf[i] = value(global(i, garg));
        j.write = 1;
        double tw = timed_phase(run_job, &j);
        memset(j.buf, 0, (size_t)n * 8);
        j.write = 0;
        double tr = timed_phase(run_job, &j);
        check(j.buf, n, global, garg, pattern);
        if (total / tw > wbest)
            wbest = total / tw;
        if (total / tr > rbest)
            rbest = total / tr;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            MPI_File_delete(path, MPI_INFO_NULL);
    }
    if (rank == 0) {
        const char *mode = j.pattern == P_SEGMENTS ? (collective ? "collective" : "independent")
                           : j.pattern == P_BLOCK3D ? "collective" : "independent";
        if (json)
            printf("{\"benchmark\": \"io\", \"pattern\": \"%s\", \"mode\": \"%s\", \"ranks\": %d, "
                   "\"bytes\": %.0f, \"write_gbs\": %.3f, \"read_gbs\": %.3f, \"reps\": %d}\n",
                   pattern, mode, size, total, wbest / 1e9, rbest / 1e9, reps);
        else
            printf("# tern-bench io: %s (%s), %d ranks, %.1f MB in all, best of %d\n"
                   "write %.3f GB/s   read %.3f GB/s\n",
                   pattern, mode, size, total / 1048576, reps, wbest / 1e9, rbest / 1e9);
    }
    if (j.pattern == P_BLOCK3D)
        MPI_Type_free(&j.view);
    if (hints != MPI_INFO_NULL)
        MPI_Info_free(&hints);
    free(j.buf);
    MPI_Finalize();
    return 0;
}
