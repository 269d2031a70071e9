/* Test program for the launcher tests (launcher_test.sh). Built twice: with
 * USE_MPI against libtern (standard MPI calls only), and without it against
 * Tern's PMI client directly, so the launcher can be tested before the MPI
 * library exists. Usage: launcher_prog <mode> [args]; see main. */
#ifdef USE_MPI
#include <mpi.h>
#else
#include "pmi/pmi.h"
#endif

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

#ifdef USE_MPI
static void job_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
}
static void job_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static void job_abort(int code, const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, code);
}
static void job_finalize(void) { MPI_Finalize(); }
static void job_exchange(void) { job_barrier(); }
#else
static tern_pmi_info_t info;
static void job_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (tern_pmi_init(&info) != TERN_OK) {
        fprintf(stderr, "launcher_prog: tern_pmi_init failed\n");
        exit(90);
    }
    rank = info.rank;
    size = info.size;
}
static void job_barrier(void)
{
    if (tern_pmi_fence() != TERN_OK)
        exit(91);
}
static void job_abort(int code, const char *msg) { tern_pmi_abort(code, msg); }
static void job_finalize(void)
{
    if (tern_pmi_finalize() != TERN_OK)
        exit(92);
}

/* Each rank puts a short and a long value (longer than Hydra's 1024-byte
 * limit), fences, and checks every other rank's values. */
static void job_exchange(void)
{
    enum { LONG_LEN = 5000 };
    char key[64], small[64], *big = malloc(LONG_LEN + 1), *got = malloc(LONG_LEN + 1);
    for (int i = 0; i < LONG_LEN; i++)
        big[i] = "0123456789abcdef"[(i + rank) % 16];
    big[LONG_LEN] = '\0';
    snprintf(key, sizeof key, "small-%d", rank);
    snprintf(small, sizeof small, "value-of-%d", rank);
    if (tern_pmi_put(key, small) != TERN_OK)
        exit(93);
    snprintf(key, sizeof key, "big-%d", rank);
    if (tern_pmi_put(key, big) != TERN_OK)
        exit(94);
    job_barrier();
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "small-%d", r);
        snprintf(small, sizeof small, "value-of-%d", r);
        if (tern_pmi_get(key, got, LONG_LEN + 1) != TERN_OK || strcmp(got, small) != 0) {
            fprintf(stderr, "rank %d: bad value for %s\n", rank, key);
            exit(95);
        }
        for (int i = 0; i < LONG_LEN; i++)
            big[i] = "0123456789abcdef"[(i + r) % 16];
        snprintf(key, sizeof key, "big-%d", r);
        if (tern_pmi_get(key, got, LONG_LEN + 1) != TERN_OK || strcmp(got, big) != 0) {
            fprintf(stderr, "rank %d: bad value for %s\n", rank, key);
            exit(96);
        }
    }
    if (tern_pmi_get("no-such-key", got, LONG_LEN + 1) != TERN_ERR_NOT_FOUND)
        exit(97);
    free(big);
    free(got);
}
#endif

static void on_signal(int sig)
{
    char line[64];
    int n = snprintf(line, sizeof line, "rank %d got signal %d\n", rank, sig);
    ssize_t ignored = write(1, line, (size_t)n);
    (void)ignored;
    _exit(0);
}

/* What a library does with shared memory: a file named after the job. */
static void make_shm_file(void)
{
    const char *job = getenv("TERN_JOBID");
    if (!job)
        return;
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/tern-%s-test-%d", job, rank);
    int fd = open(path, O_CREAT | O_RDWR, 0600);
    if (fd >= 0) {
        close(fd);
        printf("shm file %s\n", path);
    }
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

/* Writes all of buf to the launcher's PMI socket, bypassing the PMI client;
 * gives up quietly when the launcher closed it. */
static int pmi_write_raw(const char *buf, size_t len)
{
    const char *fd_text = getenv("PMI_FD");
    int fd = fd_text ? atoi(fd_text) : -1;
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* What a broken or hostile rank does to the launcher: `count` PMI puts
 * without reading a reply (0: until the launcher gives up), or one line of
 * `line_len` bytes with no newline. Then it waits to be killed (PMI_FD is
 * still the launcher's socket after MPI_Init: the PMI client keeps it). */
static void pmi_flood(int count, long line_len)
{
    signal(SIGPIPE, SIG_IGN);
    if (rank == 0 && line_len > 0) {
        /* In pieces: the test measures the peak memory of mpiexec and its
         * children together, so this rank stays small. */
        static const char head[] = "cmd=put key=flood value=";
        static char piece[65536];
        memset(piece, 'a', sizeof piece);
        int ok = pmi_write_raw(head, sizeof head - 1) == 0;
        for (long sent = sizeof head - 1; ok && sent < line_len; sent += (long)sizeof piece)
            ok = pmi_write_raw(piece, sizeof piece) == 0;
        printf("long line written\n");
    } else if (rank == 0) {
        static const char put[] = "cmd=put key=flood value=0123456789abcdef\n";
        enum { BATCH = 1000 };
        char *batch = malloc(BATCH * (sizeof put - 1));
        for (int i = 0; i < BATCH; i++)
            memcpy(batch + (size_t)i * (sizeof put - 1), put, sizeof put - 1);
        for (int sent = 0; count == 0 || sent < count; sent += BATCH)
            if (pmi_write_raw(batch, BATCH * (sizeof put - 1)) != 0)
                break;
        free(batch);
        printf("flooded\n");
    } else {
        printf("ready %d\n", rank);
    }
    sleep_forever();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    int target = argc > 2 ? atoi(argv[2]) : 0;
    int code = argc > 3 ? atoi(argv[3]) : 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    job_init(&argc, &argv);

    if (!strcmp(mode, "ok")) {
        /* Normal run: exchange, leave a /dev/shm file for mpiexec to clean. */
        make_shm_file();
        job_exchange();
        job_barrier();
        printf("rank %d of %d ok job %s\n", rank, size, getenv("TERN_JOBID") ? getenv("TERN_JOBID") : "-");
    } else if (!strcmp(mode, "hello")) {
        printf("hello from rank %d\n", rank);
    } else if (!strcmp(mode, "exit") || !strcmp(mode, "kill") || !strcmp(mode, "abort") ||
               !strcmp(mode, "nofinalize")) {
        /* Rank `target` fails; the others wait in a barrier forever. */
        make_shm_file();
        job_barrier();
        if (rank == target) {
            if (!strcmp(mode, "exit"))
                exit(code);
            if (!strcmp(mode, "kill"))
                raise(SIGKILL);
            if (!strcmp(mode, "nofinalize"))
                exit(0);
            char msg[128];
            snprintf(msg, sizeof msg, "test abort from rank %d", rank);
            job_abort(code, msg);
        }
        job_barrier();
        printf("rank %d passed the barrier: the launcher did not stop the job\n", rank);
    } else if (!strcmp(mode, "sleep")) {
        /* Waits for a signal; reports it and exits 0. */
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        make_shm_file();
        printf("ready %d\n", rank);
        sleep_forever();
    } else if (!strcmp(mode, "fence_sleep")) {
        /* As sleep, after a fence (which needs every host's proxy). */
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        job_barrier();
        printf("ready %d\n", rank);
        sleep_forever();
    } else if (!strcmp(mode, "spew")) {
        /* Output without end: for a reader of mpiexec's stdout that stops.
         * The job id goes to stderr, which the test reads. */
        make_shm_file();
        fprintf(stderr, "job %s\n", getenv("TERN_JOBID") ? getenv("TERN_JOBID") : "-");
        printf("ready %d\n", rank);
        for (long i = 0;; i++)
            printf("rank %d line %ld of output nobody reads .......................\n", rank, i);
    } else if (!strcmp(mode, "pmi_flood")) {
        pmi_flood(target, 0);
    } else if (!strcmp(mode, "pmi_long_line")) {
        pmi_flood(0, atol(argv[2]));
    } else if (!strcmp(mode, "stdin")) {
        /* Counts lines and bytes of stdin. */
        char buf[65536];
        long bytes = 0, lines = 0;
        unsigned long sum = 0;
        ssize_t n;
        while ((n = read(0, buf, sizeof buf)) > 0) {
            for (ssize_t i = 0; i < n; i++) {
                lines += buf[i] == '\n';
                sum = sum * 31 + (unsigned char)buf[i];
            }
            bytes += n;
        }
        printf("rank %d stdin bytes %ld lines %ld sum %lu\n", rank, bytes, lines, sum);
    } else if (!strcmp(mode, "lines")) {
        /* `target` lines of `code` bytes, each written in three pieces so
         * the launcher sees partial lines. */
        int count = target, len = code;
        char *line = malloc((size_t)len + 2);
        for (int i = 0; i < count; i++) {
            int h = snprintf(line, (size_t)len + 1, "r%d:%d:", rank, i);
            for (int j = h; j < len; j++)
                line[j] = (char)('a' + (rank + j) % 26);
            line[len] = '\n';
            int a = len / 3, b = 2 * len / 3;
            if (write(1, line, (size_t)a) < 0 || write(1, line + a, (size_t)(b - a)) < 0 ||
                write(1, line + b, (size_t)(len + 1 - b)) < 0)
                return 98;
        }
        free(line);
    } else if (!strcmp(mode, "env")) {
        printf("rank %d", rank);
        for (int i = 2; i < argc; i++)
            printf(" %s=%s", argv[i], getenv(argv[i]) ? getenv(argv[i]) : "(unset)");
        printf("\n");
    } else if (!strcmp(mode, "affinity")) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof set, &set);
        printf("rank %d cpus", rank);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                printf(" %d", c);
        printf("\n");
    } else {
        fprintf(stderr, "launcher_prog: unknown mode %s\n", mode);
        return 99;
    }
    job_finalize();
    return 0;
}
