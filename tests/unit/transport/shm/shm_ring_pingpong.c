/* Micro-benchmark: two processes pinned to cores 0 and 1 ping-pong small
 * messages through two shared-memory rings; prints the one-way latency.
 *
 *   shm_ring_pingpong [iterations [runs [bytes]]]   (defaults 200000 9 8)
 *
 * Each run times `iterations` round trips; the median of the runs is
 * reported (this VM's cache-line latency has modes). Ring geometry follows
 * TERN_SHM_CELL_SIZE and TERN_SHM_RING_CELLS.
 *
 * This file is a program, not part of the library: it is compiled only with
 * TERN_SHM_PINGPONG_MAIN defined (tests/unit/CMakeLists.txt). */
#ifdef TERN_SHM_PINGPONG_MAIN

#include "base/config.h"
#include "transport/shm/shm_ring.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        perror("sched_setaffinity (continuing unpinned)");
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void send_msg(tern_shm_ring_t *r, const void *buf, size_t len)
{
    while (tern_shm_ring_push(r, buf, len, NULL, 0) != TERN_OK)
        ;
}

static size_t recv_msg(tern_shm_ring_t *r, void *buf)
{
    tern_shm_cell_t *cell;
    size_t len;
    while ((cell = tern_shm_ring_pop(r, &len)) == NULL)
        ;
    memcpy(buf, tern_shm_cell_payload(cell), len);
    tern_shm_ring_free(r, cell);
    return len;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 200000;
    int runs = argc > 2 ? atoi(argv[2]) : 9;
    size_t bytes = argc > 3 ? (size_t)atol(argv[3]) : 8;
    size_t cell_size = tern_knob_size_or(TERN_KNOB_SHM_CELL_SIZE, TERN_SHM_CELL_AUTO(2));
    unsigned cells = (unsigned)tern_knob_count_or(TERN_KNOB_SHM_RING_CELLS, 32);
    if (tern_shm_ring_check(cell_size, cells) != TERN_OK || bytes > cell_size - TERN_SHM_CELL_HDR ||
        runs < 1 || runs > 100 || iters < 1) {
        fprintf(stderr, "bad parameters\n");
        return 2;
    }
    size_t ring_bytes = tern_shm_ring_bytes(cell_size, cells);
    char *mem = mmap(NULL, 2 * ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    tern_shm_ring_format(mem, cell_size, cells);
    tern_shm_ring_format(mem + ring_bytes, cell_size, cells);

    tern_shm_ring_t ping, pong;
    tern_shm_ring_attach(&ping, mem, cell_size, cells);
    tern_shm_ring_attach(&pong, mem + ring_bytes, cell_size, cells);
    char buf[65536] = {0};
    long warm = iters / 10 + 1000;
    long total = warm + iters * runs;

    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        pin(1);
        for (long i = 0; i < total; i++) {
            size_t len = recv_msg(&ping, buf);
            send_msg(&pong, buf, len);
        }
        _exit(0);
    }
    pin(0);
    for (long i = 0; i < warm; i++) {
        send_msg(&ping, buf, bytes);
        recv_msg(&pong, buf);
    }
    double res[100];
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            send_msg(&ping, buf, bytes);
            recv_msg(&pong, buf);
        }
        res[r] = (now_ns() - t0) / (2.0 * iters);
    }
    int status;
    waitpid(child, &status, 0);
    printf("runs (one-way ns):");
    for (int r = 0; r < runs; r++)
        printf(" %.1f", res[r]);
    printf("\n");
    qsort(res, runs, sizeof res[0], cmp_double);
    printf("shm ring ping-pong, %zu bytes, cell %zu x %u: one-way latency median %.1f ns (min %.1f, max %.1f)\n",
           bytes, cell_size, cells, res[runs / 2], res[0], res[runs - 1]);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

#endif
