/* tern-bench tune: writes a collective tuning table (TERN_COLL_TUNING_FILE)
 * for this machine, at the rank count it runs at and its load (fit: no more
 * ranks on the node than CPUs; over: more).
 *
 * For each collective and size it forces every algorithm in turn through
 * the control variable TERN_<COLL>_ALGORITHM (MPI_T; read by the next
 * call), keeps those the library really runs (the event
 * tern_coll_algorithm_chosen names the algorithm each call took; one that
 * cannot serve the call, e.g. a power-of-two algorithm at 3 ranks, is left
 * out), and times them in rounds: each round runs every usable algorithm
 * once, in an order rotated from round to round, so that noise hits all
 * alike. The median over rounds of the slowest rank's mean latency picks
 * the winner; runs of sizes with the same winner become one row
 *   <collective> <ranks> <max bytes|*> <algorithm> <fit|over>
 * of the file (the format coll_select.c reads). With --append the rows of
 * an existing file for other rank counts and loads are kept, so that runs
 * at 2, 4 and 8 ranks build one file. Counts above the largest one tuned
 * take the largest one's rows (written again with `*` ranks).
 *
 * Tern only: it uses Tern's control variables and event. Output: the file
 * (or stdout), and a table of the medians per algorithm on stdout. */
#include "harness.h"

#include <unistd.h>

enum { MAX_ALGOS = 16, MAX_SIZES = 32, MAX_ROWS = 4096 };

/* The collectives tuned, by their names in Tern's tables. */
static const char *const colls[] = {"barrier",   "bcast",     "gather",         "scatter",
                                    "allgather", "alltoall",  "reduce",         "allreduce",
                                    "reduce_scatter", "reduce_scatter_block", "scan", "exscan"};
enum { N_COLLS = sizeof colls / sizeof colls[0] };

static int last_algo = -1; /* set by the event callback */

static void on_chosen(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety cs,
                      void *user)
{
    (void)reg, (void)cs, (void)user;
    int a = -1;
    if (MPI_T_event_read(ev, 0, &a) == MPI_SUCCESS) last_algo = a;
}

static int *counts; /* reduce_scatter: each rank's part */

/* One call of collective c on `size` bytes (int elements for reductions). */
static void run(int c, size_t size, void *sbuf, void *rbuf)
{
    int n = (int)size, ni = (int)(size / sizeof(int));
    MPI_Comm w = MPI_COMM_WORLD;
    switch (c) {
    case 0: BENCH_CHECK(MPI_Barrier(w)); break;
    case 1: BENCH_CHECK(MPI_Bcast(sbuf, n, MPI_BYTE, 0, w)); break;
    case 2: BENCH_CHECK(MPI_Gather(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, 0, w)); break;
    case 3: BENCH_CHECK(MPI_Scatter(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, 0, w)); break;
    case 4: BENCH_CHECK(MPI_Allgather(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, w)); break;
    case 5: BENCH_CHECK(MPI_Alltoall(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, w)); break;
    case 6: BENCH_CHECK(MPI_Reduce(sbuf, rbuf, ni, MPI_INT, MPI_SUM, 0, w)); break;
    case 7: BENCH_CHECK(MPI_Allreduce(sbuf, rbuf, ni, MPI_INT, MPI_SUM, w)); break;
    case 8: BENCH_CHECK(MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, w)); break;
    case 9: BENCH_CHECK(MPI_Reduce_scatter_block(sbuf, rbuf, ni / bench_size, MPI_INT, MPI_SUM, w)); break;
    case 10: BENCH_CHECK(MPI_Scan(sbuf, rbuf, ni, MPI_INT, MPI_SUM, w)); break;
    default: BENCH_CHECK(MPI_Exscan(sbuf, rbuf, ni, MPI_INT, MPI_SUM, w)); break;
    }
}

/* The message size the selection sees is bytes; reductions take ints. */
static int elem_of(int c) { return c >= 6 ? (int)sizeof(int) : 1; }

typedef struct {
    char coll[32], algo[64], load[8];
    int procs;   /* the rank count tuned at */
    size_t max;  /* SIZE_MAX: * */
} row;

static row rows[MAX_ROWS];
static int n_rows;

static void add_row(const char *coll, int procs, size_t max, const char *algo, const char *load)
{
    if (n_rows == MAX_ROWS) return;
    row *r = &rows[n_rows++];
    snprintf(r->coll, sizeof r->coll, "%s", coll);
    snprintf(r->algo, sizeof r->algo, "%s", algo);
    snprintf(r->load, sizeof r->load, "%s", load);
    r->procs = procs, r->max = max;
}

/* Keeps an existing file's rows (those with a rank count; the `*` rows are
 * written again from them). 0, or -1 on a line it cannot read. */
static int read_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0; /* nothing yet */
    char line[512];
    int rc = 0;
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char coll[32], procs[32], bytes[32], algo[64], load[8] = "any";
        int got = sscanf(line, "%31s %31s %31s %63s %7s", coll, procs, bytes, algo, load);
        if (got <= 0) continue;
        if (got < 4) { rc = -1; break; }
        if (!strcmp(procs, "*")) continue;
        add_row(coll, atoi(procs), strcmp(bytes, "*") ? strtoull(bytes, NULL, 10) : SIZE_MAX, algo, load);
    }
    fclose(f);
    return rc;
}

static void print_row(FILE *f, const row *r, int star)
{
    char bytes[32];
    if (r->max == SIZE_MAX) snprintf(bytes, sizeof bytes, "*");
    else snprintf(bytes, sizeof bytes, "%zu", r->max);
    if (star) fprintf(f, "%s * %s %s %s\n", r->coll, bytes, r->algo, r->load);
    else fprintf(f, "%s %d %s %s %s\n", r->coll, r->procs, bytes, r->algo, r->load);
}

/* Rows by collective, rank counts ascending (the first row that matches
 * wins), then per load the largest count's rows again for larger counts. */
static int write_rows(const char *path)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f) { fprintf(stderr, "tern-bench-tune: cannot write %s\n", path); return -1; }
    fprintf(f, "# Collective selection rows written by tern-bench tune (TERN_COLL_TUNING_FILE):\n"
               "# <collective> <max ranks|*> <max bytes|*> <algorithm> <fit|over>\n");
    for (int c = 0; c < N_COLLS; c++) {
        int top[2] = {0, 0}; /* largest count per load: fit, over */
        for (int p = 0;;) { /* the next larger rank count */
            int next = 0;
            for (int i = 0; i < n_rows; i++)
                if (!strcmp(rows[i].coll, colls[c]) && rows[i].procs > p && (!next || rows[i].procs < next))
                    next = rows[i].procs;
            if (!next) break;
            for (int i = 0; i < n_rows; i++)
                if (!strcmp(rows[i].coll, colls[c]) && rows[i].procs == next) {
                    print_row(f, &rows[i], 0);
                    top[!strcmp(rows[i].load, "over")] = next;
                }
            p = next;
        }
        for (int l = 0; l < 2; l++)
            for (int i = 0; top[l] && i < n_rows; i++)
                if (!strcmp(rows[i].coll, colls[c]) && rows[i].procs == top[l] &&
                    !strcmp(rows[i].load, l ? "over" : "fit"))
                    print_row(f, &rows[i], 1);
    }
    if (path) fclose(f);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(void)
{
    printf("usage: tern-bench tune [-m min:max] [-i iters] [-x warmup] [-r rounds] [-c coll,...]\n"
           "                       [-o file] [--append]\n"
           "  Times every algorithm of each collective (sizes in powers of two, bytes) at the\n"
           "  rank count it runs at and writes the winners as TERN_COLL_TUNING_FILE rows.\n"
           "  -m   sizes (default 4:65536)      -i  timed calls per algorithm and round (default 200)\n"
           "  -x   warm-up calls (default 20)    -r  rounds, alternating the algorithms (default 5)\n"
           "  -c   collectives (default all: ");
    for (int c = 0; c < N_COLLS; c++) printf("%s%s", c ? "," : "", colls[c]);
    printf(")\n  -o   the tuning file (default stdout)\n"
           "  --append  keep the file's rows for other rank counts and loads\n");
}

static size_t parse_size(const char *s, char **end)
{
    size_t v = strtoull(s, end, 10);
    if (**end == 'K' || **end == 'k') v <<= 10, (*end)++;
    else if (**end == 'M' || **end == 'm') v <<= 20, (*end)++;
    return v;
}

typedef struct {
    size_t lo, hi;
    int iters, warmup, rounds, append;
    int want[N_COLLS];
    const char *out;
} opts_t;

static void parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.lo = 4, .hi = 65536, .iters = 200, .warmup = 20, .rounds = 5};
    int all = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;
        int bad = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (bench_rank == 0) usage();
            MPI_Finalize();
            exit(0);
        } else if (!strcmp(a, "--append")) {
            o->append = 1;
            continue;
        }
        if (!v) bad = 1;
        else if (!strcmp(a, "-m")) {
            o->lo = o->hi = parse_size(v, &end);
            if (*end == ':') o->hi = parse_size(end + 1, &end);
            bad = *end || o->hi < o->lo || o->hi > (size_t)1 << 26;
        } else if (!strcmp(a, "-i")) bad = (o->iters = atoi(v)) < 1;
        else if (!strcmp(a, "-x")) bad = (o->warmup = atoi(v)) < 0;
        else if (!strcmp(a, "-r")) bad = (o->rounds = atoi(v)) < 1 || o->rounds > 99;
        else if (!strcmp(a, "-o")) o->out = v;
        else if (!strcmp(a, "-c")) {
            all = 0;
            char list[512];
            snprintf(list, sizeof list, "%s", v);
            for (char *t = strtok(list, ","); t && !bad; t = strtok(NULL, ",")) {
                int c = 0;
                while (c < N_COLLS && strcmp(t, colls[c])) c++;
                if (c == N_COLLS) bad = 1;
                else o->want[c] = 1;
            }
        } else bad = 1;
        if (bad) {
            if (bench_rank == 0) fprintf(stderr, "tern-bench-tune: bad option '%s %s' (-h for help)\n", a, v ? v : "");
            MPI_Finalize();
            exit(1);
        }
        i++;
    }
    for (int c = 0; all && c < N_COLLS; c++) o->want[c] = 1;
}

/* The algorithms named in the event's enumeration for collective c. */
static int algos_of(MPI_T_enum et, int c, int *idx, char names[][64])
{
    int n = 0, num = 0;
    char ename[64];
    int elen = sizeof ename;
    MPI_T_enum_get_info(et, &num, ename, &elen);
    size_t cl = strlen(colls[c]);
    for (int i = 0; i < num && n < MAX_ALGOS; i++) {
        char item[128];
        int len = sizeof item, value;
        if (MPI_T_enum_get_item(et, i, &value, item, &len) != MPI_SUCCESS) continue;
        if (strncmp(item, colls[c], cl) || item[cl] != ':') continue;
        idx[n] = value;
        snprintf(names[n++], 64, "%s", item + cl + 1);
    }
    return n;
}

/* Tunes one collective at the sizes asked: adds its rows. */
static void tune(int c, const opts_t *o, MPI_T_cvar_handle ch, MPI_T_enum et, const char *load,
                 void *sbuf, void *rbuf)
{
    int idx[MAX_ALGOS];
    char names[MAX_ALGOS][64];
    int na = algos_of(et, c, idx, names);
    size_t sizes[MAX_SIZES];
    int ns = 0;
    size_t e = (size_t)elem_of(c), step = c == 9 ? e * (size_t)bench_size : e;
    if (c == 0) sizes[ns++] = 0; /* barrier: no message */
    else
        for (size_t s = o->lo < step ? step : o->lo; s <= o->hi && ns < MAX_SIZES; s *= 2)
            if (s % step == 0) sizes[ns++] = s;
    const char *win[MAX_SIZES];
    for (int k = 0; k < ns; k++) {
        size_t size = sizes[k];
        if (c == 8) {
            size_t n = size / sizeof(int);
            for (int r = 0; r < bench_size; r++)
                counts[r] = (int)(n / bench_size + ((size_t)r < n % bench_size));
        }
        int ok[MAX_ALGOS], nu = 0, use[MAX_ALGOS];
        for (int a = 0; a < na; a++) { /* which algorithms really run */
            BENCH_CHECK(MPI_T_cvar_write(ch, names[a]));
            last_algo = -1;
            run(c, size, sbuf, rbuf);
            ok[a] = last_algo == idx[a];
            bench_bcast_int(&ok[a]);
            if (ok[a]) use[nu++] = a;
        }
        double t[MAX_ALGOS][100];
        for (int round = 0; round < o->rounds; round++)
            for (int j = 0; j < nu; j++) {
                int a = use[(j + round) % nu];
                BENCH_CHECK(MPI_T_cvar_write(ch, names[a]));
                for (int i = 0; i < o->warmup; i++) run(c, size, sbuf, rbuf);
                BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                double t0 = MPI_Wtime();
                for (int i = 0; i < o->iters; i++) run(c, size, sbuf, rbuf);
                t[a][round] = bench_max_double((MPI_Wtime() - t0) * 1e6 / o->iters);
            }
        int best = -1;
        double best_t = 0;
        if (bench_rank == 0) printf("# %-20s %3d ranks %-4s %8zu B:", colls[c], bench_size, load, size);
        for (int j = 0; j < nu; j++) {
            int a = use[j];
            qsort(t[a], (size_t)o->rounds, sizeof(double), cmp_double);
            double med = t[a][o->rounds / 2];
            if (bench_rank == 0) printf(" %s %.3f", names[a], med);
            if (best < 0 || med < best_t) best = a, best_t = med;
        }
        if (bench_rank == 0) printf(" us -> %s\n", best >= 0 ? names[best] : "(none)");
        bench_bcast_int(&best); /* rank 0's medians decide */
        win[k] = best >= 0 ? names[best] : NULL;
        if (k > 0 && win[k - 1] && win[k] && strcmp(win[k - 1], win[k]))
            add_row(colls[c], bench_size, sizes[k - 1], win[k - 1], load);
    }
    if (ns && win[ns - 1]) add_row(colls[c], bench_size, SIZE_MAX, win[ns - 1], load);
    BENCH_CHECK(MPI_T_cvar_write(ch, "auto"));
}

int main(int argc, char **argv)
{
    int provided;
    BENCH_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    BENCH_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank));
    BENCH_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &bench_size));
    opts_t o;
    parse(argc, argv, &o);
    /* The load as Tern sees it: more ranks on this node than CPUs. */
    MPI_Comm node;
    int local = 1, over = 0;
    BENCH_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    BENCH_CHECK(MPI_Comm_size(node, &local));
    over = local > sysconf(_SC_NPROCESSORS_ONLN);
    BENCH_CHECK(MPI_Comm_free(&node));
    bench_bcast_int(&over);
    const char *load = over ? "over" : "fit";
    int evi;
    MPI_T_enum et;
    MPI_T_event_registration reg;
    int nel = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS ||
        MPI_T_event_get_index("tern_coll_algorithm_chosen", &evi) != MPI_SUCCESS ||
        MPI_T_event_get_info(evi, NULL, NULL, NULL, NULL, NULL, &nel, &et, NULL, NULL, NULL,
                             NULL) != MPI_SUCCESS ||
        MPI_T_event_handle_alloc(evi, NULL, MPI_INFO_NULL, &reg) != MPI_SUCCESS ||
        MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                      on_chosen) != MPI_SUCCESS) {
        if (bench_rank == 0)
            fprintf(stderr, "tern-bench-tune: this MPI has no tern_coll_algorithm_chosen event (Tern only)\n");
        MPI_Finalize();
        return 1;
    }
    if (o.append && bench_rank == 0 && o.out && read_rows(o.out) != 0) {
        fprintf(stderr, "tern-bench-tune: %s: a line is not a row `<collective> <ranks> <bytes> <algorithm> [load]`\n", o.out);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* This run's rank count and load replace those rows. */
    int kept = 0;
    for (int i = 0; i < n_rows; i++) {
        int c = 0;
        while (c < N_COLLS && strcmp(rows[i].coll, colls[c])) c++;
        if (!(c < N_COLLS && o.want[c] && rows[i].procs == bench_size && !strcmp(rows[i].load, load)))
            rows[kept++] = rows[i];
    }
    n_rows = kept;
    size_t hi = o.hi < 4 ? 4 : o.hi;
    void *sbuf = bench_alloc(hi * (size_t)bench_size), *rbuf = bench_alloc(hi * (size_t)bench_size);
    counts = bench_alloc(sizeof(int) * (size_t)bench_size);
    for (int c = 0; c < N_COLLS; c++) {
        if (!o.want[c]) continue;
        char cvar[64];
        snprintf(cvar, sizeof cvar, "TERN_%s_ALGORITHM", colls[c]);
        for (char *p = cvar; *p; p++) if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
        int ci, cnt;
        MPI_T_cvar_handle ch;
        BENCH_CHECK(MPI_T_cvar_get_index(cvar, &ci));
        BENCH_CHECK(MPI_T_cvar_handle_alloc(ci, NULL, &ch, &cnt));
        tune(c, &o, ch, et, load, sbuf, rbuf);
        BENCH_CHECK(MPI_T_cvar_handle_free(&ch));
    }
    MPI_T_event_handle_free(reg, NULL, NULL);
    int rc = 0;
    if (bench_rank == 0) rc = write_rows(o.out);
    bench_bcast_int(&rc);
    free(sbuf);
    free(rbuf);
    free(counts);
    MPI_T_finalize();
    MPI_Finalize();
    return rc ? 1 : 0;
}
