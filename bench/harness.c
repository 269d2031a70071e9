/* tern-bench harness: options, buffers, data patterns and their checks,
 * result reduction over point-to-point, and table/JSON output. */
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bench_rank, bench_size;

static const bench_desc *cur_desc;
static const bench_opts *cur_opts;
static long checks_done; /* received buffers checked by this rank */

enum { TAG_STATS = 30001, TAG_BCAST = 30002, TAG_CHECKS = 30003 };

void bench_mpi_fail(const char *call, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
    fprintf(stderr, "tern-bench %s: rank %d: %s failed: %s\n", cur_desc ? cur_desc->name : "?",
            bench_rank, call, msg);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

const char *const bench_sync_names[BENCH_SYNC_COUNT] = {"lock", "flush", "lock_all", "fence", "pscw"};
const char *const bench_win_names[BENCH_WIN_COUNT] = {"create", "allocate", "dynamic"};

static void usage(FILE *f, const bench_desc *d)
{
    fprintf(f,
            "usage: tern-bench-%s [options]   (run under any MPI's mpiexec)\n"
            "  -m, --sizes [MIN:]MAX  message sizes in bytes, powers of two from MIN to MAX;\n"
            "                         K and M suffixes allowed (default %zu:%zu)\n"
            "  -i, --iterations N     timed iterations per size (default %d, %d above %d B)\n"
            "  -x, --warmup N         untimed warm-up iterations per size (default %d, %d above %d B)\n"
            "  -W, --window N         messages in flight per iteration (default %d; bw, bibw, mbw_mr)\n"
            "  -d, --dims N           dimensions of the process grid, 1 to 3 (default %d; halo)\n"
            "  --distinct-buffers     a send and a receive buffer per message of the window,\n"
            "                         touched before the run (bw, bibw; default: one of each)\n"
            "  --json                 print one JSON object instead of the table\n"
            "  --corrupt              flip one byte of every message sent: validation must fail\n"
            "  -h, --help             this help\n",
            d->name, d->min_size, d->max_size, d->iters, d->iters_large, BENCH_LARGE_MESSAGE, d->warmup,
            d->warmup_large, BENCH_LARGE_MESSAGE, d->window, d->dims);
    if (d->threads)
        fprintf(f, "  -T, --threads LIST     threads per rank, up to 4 comma-separated counts, one column\n"
                   "                         each (default 1,2,4); thread t of rank 0 pairs with thread t\n"
                   "                         of rank 1 on a communicator of its own (MPI_Comm_dup)\n"
                   "  --shared-comm          all threads on one communicator, thread t on tag t\n");
    if (!d->rma) return;
    fprintf(f, "  -s, --sync MODE        synchronisation (default %s):", bench_sync_names[d->sync]);
    for (int s = 0; s < BENCH_SYNC_COUNT; s++)
        if (d->syncs & (1u << s)) fprintf(f, " %s", bench_sync_names[s]);
    fprintf(f, "\n"
               "                         lock: lock/op/unlock each iteration; flush: one lock, op+flush;\n"
               "                         lock_all: one lock_all, op+flush; fence; pscw: post/start/complete/wait\n"
               "  -w, --win FLAVOR       window creation: create, allocate, dynamic (default allocate)\n");
}

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(names[i], s)) return i;
    return -1;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    if (*end == 'K' || *end == 'k') v <<= 10, end++;
    else if (*end == 'M' || *end == 'm') v <<= 20, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end != '\0' && *end != ':') return -1;
    *out = (size_t)v;
    return (int)(end - s);
}

static int parse_count(const char *s, int min, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > 1000000000L) return -1;
    *out = (int)v;
    return 0;
}

/* "1,2,4": up to four thread counts of 1 to 64. */
static int parse_threads(const char *s, bench_opts *o)
{
    char buf[64], *save = NULL;
    if (strlen(s) >= sizeof buf) return -1;
    strcpy(buf, s);
    o->n_nthreads = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int n;
        if (o->n_nthreads == 4 || parse_count(t, 1, &n) || n > 64) return -1;
        o->nthreads[o->n_nthreads++] = n;
    }
    return o->n_nthreads ? 0 : -1;
}

static void bad_option(const bench_desc *d, const char *fmt, const char *arg)
{
    if (bench_rank == 0) {
        fprintf(stderr, "tern-bench-%s: ", d->name);
        fprintf(stderr, fmt, arg);
        fputc('\n', stderr);
        usage(stderr, d);
    }
    MPI_Finalize();
    exit(1);
}

static void parse_options(int argc, char **argv, const bench_desc *d, bench_opts *o)
{
    int iters = -1, warmup = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (bench_rank == 0) usage(stdout, d);
            MPI_Finalize();
            exit(0);
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "--corrupt")) {
            o->corrupt = 1;
        } else if (!strcmp(a, "--distinct-buffers")) {
            if (strcmp(d->name, "bw") && strcmp(d->name, "bibw"))
                bad_option(d, "%s is for bw and bibw", a);
            o->distinct = 1;
        } else if (d->threads && !strcmp(a, "--shared-comm")) {
            o->shared_comm = 1;
        } else if (d->threads && (!strcmp(a, "-T") || !strcmp(a, "--threads"))) {
            if (!val || parse_threads(val, o)) bad_option(d, "bad thread counts '%s' (up to 4, each 1 to 64)", val ? val : "");
            i++;
        } else if (!strcmp(a, "-m") || !strcmp(a, "--sizes")) {
            if (!val) bad_option(d, "%s needs a value", a);
            size_t lo = d->min_size, hi;
            int n = parse_size(val, &hi);
            if (n < 0) bad_option(d, "bad size range '%s'", val);
            if (val[n] == ':') {
                lo = hi;
                int m = parse_size(val + n + 1, &hi);
                if (m < 0 || val[n + 1 + m] != '\0') bad_option(d, "bad size range '%s'", val);
            }
            if (hi < lo) bad_option(d, "empty size range '%s'", val);
            if (hi > (size_t)1 << 30) bad_option(d, "size range '%s' goes above 1 GB (MPI counts are int)", val);
            o->min_size = lo, o->max_size = hi;
            i++;
        } else if (!strcmp(a, "-i") || !strcmp(a, "--iterations")) {
            if (!val || parse_count(val, 1, &iters)) bad_option(d, "bad iteration count '%s'", val ? val : "");
            i++;
        } else if (!strcmp(a, "-x") || !strcmp(a, "--warmup")) {
            if (!val || parse_count(val, 0, &warmup)) bad_option(d, "bad warm-up count '%s'", val ? val : "");
            i++;
        } else if (!strcmp(a, "-W") || !strcmp(a, "--window")) {
            if (!val || parse_count(val, 1, &o->window) || o->window > 4096)
                bad_option(d, "bad window '%s' (1 to 4096)", val ? val : "");
            i++;
        } else if (d->rma && (!strcmp(a, "-s") || !strcmp(a, "--sync"))) {
            int m = lookup(bench_sync_names, BENCH_SYNC_COUNT, val);
            if (m < 0 || !(d->syncs & (1u << m)))
                bad_option(d, "bad or unsupported synchronisation '%s'", val ? val : "");
            o->sync = m;
            i++;
        } else if (d->rma && (!strcmp(a, "-w") || !strcmp(a, "--win"))) {
            if ((o->flavor = lookup(bench_win_names, BENCH_WIN_COUNT, val)) < 0)
                bad_option(d, "bad window flavour '%s' (create, allocate, dynamic)", val ? val : "");
            i++;
        } else if (d->dims && (!strcmp(a, "-d") || !strcmp(a, "--dims"))) {
            if (!val || parse_count(val, 1, &o->dims) || o->dims > 3)
                bad_option(d, "bad dimension count '%s' (1 to 3)", val ? val : "");
            i++;
        } else {
            bad_option(d, "unknown option '%s'", a);
        }
    }
    if (iters > 0) o->iters = o->iters_large = iters;
    if (warmup >= 0) o->warmup = o->warmup_large = warmup;
}

void bench_init(int *argc, char ***argv, const bench_desc *desc, bench_opts *opts)
{
    cur_desc = desc;
    if (desc->threads) {
        int provided = MPI_THREAD_SINGLE;
        BENCH_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
        if (provided < MPI_THREAD_MULTIPLE) {
            MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
            if (bench_rank == 0)
                fprintf(stderr, "tern-bench-%s: the MPI grants thread level %d, not MPI_THREAD_MULTIPLE\n",
                        desc->name, provided);
            MPI_Finalize();
            exit(1);
        }
    } else {
        BENCH_CHECK(MPI_Init(argc, argv));
    }
    cur_opts = opts;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    BENCH_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank));
    BENCH_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &bench_size));
    memset(opts, 0, sizeof *opts);
    opts->min_size = desc->min_size;
    opts->max_size = desc->max_size;
    opts->iters = desc->iters;
    opts->iters_large = desc->iters_large;
    opts->warmup = desc->warmup;
    opts->warmup_large = desc->warmup_large;
    opts->window = desc->window;
    opts->sync = desc->sync;
    opts->flavor = BENCH_WIN_ALLOCATE;
    opts->dims = desc->dims;
    opts->nthreads[0] = 1, opts->nthreads[1] = 2, opts->nthreads[2] = 4;
    opts->n_nthreads = desc->threads ? 3 : 0;
    parse_options(*argc, *argv, desc, opts);
    if (bench_size < desc->min_ranks || (desc->even_ranks && bench_size % 2)) {
        if (bench_rank == 0)
            fprintf(stderr, "tern-bench-%s: needs %s%d ranks or more (got %d)\n", desc->name,
                    desc->even_ranks ? "an even number of, " : "", desc->min_ranks, bench_size);
        MPI_Finalize();
        exit(1);
    }
}

int bench_iters(const bench_opts *o, size_t size)
{
    return size > BENCH_LARGE_MESSAGE ? o->iters_large : o->iters;
}

int bench_warmup(const bench_opts *o, size_t size)
{
    return size > BENCH_LARGE_MESSAGE ? o->warmup_large : o->warmup;
}

size_t bench_next_size(size_t size)
{
    return size ? size * 2 : 1;
}

void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    long page = sysconf(_SC_PAGESIZE);
    if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytes ? bytes : 1)) {
        fprintf(stderr, "tern-bench: rank %d: out of memory (%zu bytes)\n", bench_rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
        exit(3);
    }
    memset(p, 0, bytes ? bytes : 1);
    return p;
}

int bench_window_buffers(const bench_opts *o)
{
    return o->distinct ? o->window : 1;
}

char *bench_window_alloc(const bench_opts *o, size_t *stride)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t pg = page > 0 ? (size_t)page : 4096;
    size_t one = (o->max_size + pg - 1) / pg * pg;
    *stride = o->distinct ? one : 0;
    return bench_alloc(one * (size_t)bench_window_buffers(o)); /* zeroed: every page exists */
}

uint8_t bench_pattern_byte(size_t i, size_t size, int src, int salt)
{
    /* Varies with the offset (and its high bits), the size, the sender and
     * the block, so shifted, stale or misrouted data does not match. */
    return (uint8_t)(i * 7u + (i >> 8) * 13u + size * 29u + (size_t)src * 101u + (size_t)salt * 53u + 1u);
}

void bench_fill(void *buf, size_t len, size_t size, int src, int salt, const bench_opts *opts)
{
    uint8_t *b = buf;
    for (size_t i = 0; i < len; i++) b[i] = bench_pattern_byte(i, size, src, salt);
    if (opts->corrupt && len > 0) b[len / 2] ^= 0x5a;
}

static void validation_failed(const char *what, size_t size, size_t at, unsigned got, unsigned want)
{
    fprintf(stderr,
            "tern-bench %s: rank %d: validation failed: %s, message size %zu: byte %zu is 0x%02x, "
            "expected 0x%02x\n",
            cur_desc->name, bench_rank, what, size, at, got, want);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

void bench_check(const void *buf, size_t len, size_t size, int src, int salt, const char *what)
{
    const uint8_t *b = buf;
    for (size_t i = 0; i < len; i++) {
        uint8_t want = bench_pattern_byte(i, size, src, salt);
        if (b[i] != want) validation_failed(what, size, i, b[i], want);
    }
    checks_done++;
}

void bench_check_int(const int *buf, size_t count, size_t size, const char *what,
                     int (*expect)(size_t i, size_t size, void *arg), void *arg)
{
    for (size_t i = 0; i < count; i++) {
        int want = expect(i, size, arg);
        if (buf[i] != want) {
            fprintf(stderr,
                    "tern-bench %s: rank %d: validation failed: %s, message size %zu: element %zu is %d, "
                    "expected %d\n",
                    cur_desc->name, bench_rank, what, size, i, buf[i], want);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 2);
            exit(2);
        }
    }
    checks_done++;
}

void bench_check_value(long long got, long long want, size_t size, const char *what)
{
    if (got != want) {
        fprintf(stderr, "tern-bench %s: rank %d: validation failed: %s, message size %zu: %lld, expected %lld\n",
                cur_desc->name, bench_rank, what, size, got, want);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 2);
        exit(2);
    }
    checks_done++;
}

void bench_validated(void)
{
    checks_done++;
}

void bench_stats_double(double v, double *min, double *avg, double *max)
{
    if (bench_rank != 0) {
        BENCH_CHECK(MPI_Send(&v, 1, MPI_DOUBLE, 0, TAG_STATS, MPI_COMM_WORLD));
        return;
    }
    double lo = v, hi = v, sum = v;
    for (int r = 1; r < bench_size; r++) {
        double x;
        BENCH_CHECK(MPI_Recv(&x, 1, MPI_DOUBLE, r, TAG_STATS, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
        sum += x;
    }
    if (min) *min = lo;
    if (avg) *avg = sum / bench_size;
    if (max) *max = hi;
}

double bench_max_double(double v)
{
    double hi = v;
    bench_stats_double(v, NULL, NULL, &hi);
    return hi;
}

void bench_bcast_int(int *v)
{
    if (bench_rank == 0) {
        for (int r = 1; r < bench_size; r++) BENCH_CHECK(MPI_Send(v, 1, MPI_INT, r, TAG_BCAST, MPI_COMM_WORLD));
    } else {
        BENCH_CHECK(MPI_Recv(v, 1, MPI_INT, 0, TAG_BCAST, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

/* Writes s as a JSON string body (the library version may hold anything). */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

void bench_library_version(char *out, size_t n)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    if (MPI_Get_library_version(v, &len) != MPI_SUCCESS || len <= 0 || len >= (int)sizeof v)
        len = snprintf(v, sizeof v, "unknown MPI");
    v[len] = '\0';
    /* First line, up to the first comma outside parentheses (Open MPI's
     * ", package: ..."), at most 120 characters. */
    size_t k = 0;
    for (int depth = 0; v[k] && v[k] != '\n' && k < 120; k++) {
        if (v[k] == '(') depth++;
        else if (v[k] == ')') depth--;
        else if (v[k] == ',' && depth <= 0) break;
    }
    /* Runs of blanks become one space (MPICH: "MPICH Version:\t4.0.2"). */
    size_t o = 0;
    for (size_t i = 0; i < k && o + 1 < n; i++) {
        int blank = v[i] == ' ' || v[i] == '\t';
        if (blank && (o == 0 || out[o - 1] == ' ')) continue;
        out[o++] = blank ? ' ' : v[i];
    }
    while (o > 0 && out[o - 1] == ' ') o--;
    out[o] = '\0';
}

void bench_table_begin(bench_table *t, const bench_desc *d, const bench_opts *o)
{
    t->rows = 0;
    if (bench_rank != 0) return;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    bench_library_version(lib, sizeof lib);
    if (o->json) {
        printf("{\"benchmark\":\"%s\",\"library\":", d->name);
        json_string(lib);
        printf(",\"ranks\":%d,\"window\":%d,", bench_size, o->window);
        if (d->dims) printf("\"dims\":%d,", o->dims);
        printf("\"corrupt\":%s,", o->corrupt ? "true" : "false");
        if (d->rma) printf("\"sync\":\"%s\",\"win\":\"%s\",", bench_sync_names[o->sync], bench_win_names[o->flavor]);
        if (d->threads) {
            printf("\"threads\":[");
            for (int k = 0; k < o->n_nthreads; k++) printf("%s%d", k ? "," : "", o->nthreads[k]);
            printf("],\"comm\":\"%s\",", o->shared_comm ? "shared" : "dup");
        }
        printf("\"results\":[");
    } else {
        printf("# tern-bench %s (%s, %d ranks%s)\n", d->title, lib, bench_size, o->corrupt ? ", CORRUPTING" : "");
        if (o->window && d->window) printf("# Window size: %d\n", o->window);
        if (d->rma)
            printf("# Synchronization: %s, window: MPI_Win_%s\n", bench_sync_names[o->sync],
                   o->flavor == BENCH_WIN_DYNAMIC ? "create_dynamic" : bench_win_names[o->flavor]);
        if (d->threads)
            printf("# Threads per rank in columns; %s\n", o->shared_comm ? "all threads on one communicator, a tag each"
                                                                        : "each thread on a communicator of its own");
        if (d->dims) printf("# Grid of %d dimensions (periodic where 3 ranks or more), reordered; size: bytes per neighbour\n", o->dims);
        printf("%-12s", "# Size");
        for (int c = 0; c < t->ncols; c++) printf("%20s", t->cols[c]);
        if (t->with_iters) printf("%12s", "Iterations");
        putchar('\n');
    }
    fflush(stdout);
}

void bench_table_row(bench_table *t, size_t size, const double *values, int iters)
{
    if (bench_rank != 0) return;
    if (cur_opts->json) {
        printf("%s{\"size\":%zu", t->rows ? "," : "", size);
        for (int c = 0; c < t->ncols; c++) printf(",\"%s\":%.6g", t->keys[c], values[c]);
        printf(",\"iterations\":%d}", iters);
    } else {
        printf("%-12zu", size);
        for (int c = 0; c < t->ncols; c++) printf("%20.2f", values[c]);
        if (t->with_iters) printf("%12d", iters);
        putchar('\n');
    }
    t->rows++;
    fflush(stdout);
}

int bench_finalize(const bench_table *t)
{
    /* Total of received buffers checked on all ranks. */
    long total = checks_done;
    if (bench_rank != 0) {
        BENCH_CHECK(MPI_Send(&checks_done, 1, MPI_LONG, 0, TAG_CHECKS, MPI_COMM_WORLD));
    } else {
        for (int r = 1; r < bench_size; r++) {
            long x;
            BENCH_CHECK(MPI_Recv(&x, 1, MPI_LONG, r, TAG_CHECKS, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            total += x;
        }
        if (cur_opts->json)
            printf("],\"validated_sizes\":%d,\"validated_buffers\":%ld}\n", t->rows, total);
        else
            printf("# validation: %ld received buffers checked over %d sizes, all correct\n", total, t->rows);
        fflush(stdout);
    }
    BENCH_CHECK(MPI_Finalize());
    return 0;
}
