/* tern-bench: shared harness of the benchmark programs.
 *
 * The benchmarks use only the public MPI API (plus POSIX), so the same
 * sources build with any MPI's mpicc; the compare tool relies on that. The
 * harness itself uses only point-to-point calls and MPI_Barrier, so that the
 * point-to-point benchmarks run on an MPI without other collectives.
 *
 * Every benchmark fills its send buffers with a pattern that depends on the
 * size and the sending rank, clears its receive buffers, runs warm-up and
 * timed iterations, then checks the received bytes once per size: a broken
 * MPI fails (exit status 2) instead of posting a good number. */
#ifndef TERN_BENCH_HARNESS_H
#define TERN_BENCH_HARNESS_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Message sizes up to this many bytes use the "small" iteration defaults. */
#define BENCH_LARGE_MESSAGE 8192

typedef struct bench_opts {
    size_t min_size, max_size; /* bytes, walked in powers of two */
    int iters, iters_large;    /* timed iterations, small and large sizes */
    int warmup, warmup_large;  /* untimed iterations before them */
    int window;                /* messages in flight per iteration (bw, bibw, mbw_mr) */
    int dims;                  /* grid dimensions (halo) */
    int json;                  /* print one JSON object instead of a table */
    int corrupt;               /* flip one byte of every sent message (tests validation) */
    int sync;                  /* one-sided: BENCH_SYNC_* (-s) */
    int flavor;                /* one-sided: BENCH_WIN_* (-w) */
    int distinct;              /* a buffer per message of the window (bw, bibw) */
    int nthreads[4];           /* threaded benchmarks: thread counts per rank, one column each (-T) */
    int n_nthreads;
    int shared_comm;           /* threaded: all threads on one communicator, a tag each */
} bench_opts;

/* One-sided benchmarks (rma_driver.c): the synchronisation of the access
 * epochs and the window creation flavour, as OSU's -s and -w. */
enum { BENCH_SYNC_LOCK, BENCH_SYNC_FLUSH, BENCH_SYNC_LOCK_ALL, BENCH_SYNC_FENCE, BENCH_SYNC_PSCW,
       BENCH_SYNC_COUNT };
enum { BENCH_WIN_CREATE, BENCH_WIN_ALLOCATE, BENCH_WIN_DYNAMIC, BENCH_WIN_COUNT };
extern const char *const bench_sync_names[BENCH_SYNC_COUNT];
extern const char *const bench_win_names[BENCH_WIN_COUNT];

/* What a benchmark is and which defaults it has. */
typedef struct bench_desc {
    const char *name;          /* e.g. "latency" */
    const char *title;         /* table heading, e.g. "Latency Test" */
    size_t min_size, max_size;
    int iters, iters_large, warmup, warmup_large;
    int window;                /* 0: the benchmark has no window */
    int dims;                  /* 0: the benchmark has no grid; else the default */
    int min_ranks;             /* at least this many ranks */
    int even_ranks;            /* pairs of ranks */
    int rma;                   /* one-sided: takes -s and -w */
    int sync;                  /* one-sided: default BENCH_SYNC_* */
    unsigned syncs;            /* one-sided: the BENCH_SYNC_* it supports, bits */
    int threads;               /* MPI_THREAD_MULTIPLE: takes -T and --shared-comm */
} bench_desc;

/* A row of results: up to four named values for one message size. */
#define BENCH_MAX_COLS 4
typedef struct bench_table {
    const char *cols[BENCH_MAX_COLS]; /* table headings, e.g. "Latency (us)" */
    const char *keys[BENCH_MAX_COLS]; /* JSON keys, e.g. "latency_us" */
    int ncols;
    int with_iters;                   /* print an "Iterations" column */
    int rows;
} bench_table;

extern int bench_rank, bench_size;

/* MPI_Init, rank and size, parse the options (exits on bad ones or -h),
 * check the rank count against the description. */
void bench_init(int *argc, char ***argv, const bench_desc *desc, bench_opts *opts);
/* Prints the table's footer (or closes the JSON object) and calls MPI_Finalize. */
int bench_finalize(const bench_table *table);

int bench_iters(const bench_opts *opts, size_t size);
int bench_warmup(const bench_opts *opts, size_t size);
/* Next size in the power-of-two walk (0 goes to 1). */
size_t bench_next_size(size_t size);

/* Page-aligned, zeroed buffer; exits on failure. */
void *bench_alloc(size_t bytes);

/* The buffers of a window of messages: one of max_size bytes, or with
 * --distinct-buffers one per message (window x max_size, page-aligned
 * strides, every page touched now), as an application's messages land in
 * different, cache-cold places. Message w uses buf + w * *stride (stride 0:
 * all share one). */
char *bench_window_alloc(const bench_opts *opts, size_t *stride);
int bench_window_buffers(const bench_opts *opts); /* 1, or the window */

/* Pattern of rank `src`'s data for message size `size` (salt tells apart
 * several blocks of one rank). */
uint8_t bench_pattern_byte(size_t i, size_t size, int src, int salt);
void bench_fill(void *buf, size_t len, size_t size, int src, int salt, const bench_opts *opts);
/* Checks buf against the pattern; on a mismatch prints what and where, and
 * aborts the job with error code 2. */
void bench_check(const void *buf, size_t len, size_t size, int src, int salt, const char *what);
/* Same for int elements: element i must equal expect(i). */
void bench_check_int(const int *buf, size_t count, size_t size, const char *what,
                     int (*expect)(size_t i, size_t size, void *arg), void *arg);
/* Same for one value. */
void bench_check_value(long long got, long long want, size_t size, const char *what);
/* Counts one validated size (printed in the footer). */
void bench_validated(void);

/* Point-to-point helpers for the results (no collectives needed). */
double bench_max_double(double v);                   /* max over ranks, at rank 0 */
void bench_stats_double(double v, double *min, double *avg, double *max); /* at rank 0 */
void bench_bcast_int(int *v);                       /* rank 0's value to all */

/* The MPI library's name and version, one short line without quotes. */
void bench_library_version(char *out, size_t n);

/* Output: heading once, then one row per size (rank 0 prints). */
void bench_table_begin(bench_table *table, const bench_desc *desc, const bench_opts *opts);
void bench_table_row(bench_table *table, size_t size, const double *values, int iters);

/* MPI errors abort with the call's name. */
#define BENCH_CHECK(call)                                                      \
    do {                                                                       \
        int bench_rc_ = (call);                                                \
        if (bench_rc_ != MPI_SUCCESS) bench_mpi_fail(#call, bench_rc_);        \
    } while (0)
void bench_mpi_fail(const char *call, int rc);

#endif
