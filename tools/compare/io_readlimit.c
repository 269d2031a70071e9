/* docs/performance.md, "Parallel I/O": build with gcc -O2 -o readlimit io_readlimit.c */
/* The page cache's own limit for the I/O benchmarks' reads: W reader
 * processes pread PER bytes each in XFER pieces from one shared file (each
 * its own range, as block3d's 2-rank subarrays and IOR's segments) that is
 * in the page cache; the figure is all bytes over the time from the first
 * pread to the last one's end, best and median of REPS runs. The file is
 * written, synced and read once before the runs, and each reader touches its
 * buffer first (as the benchmarks do), so the runs time only the kernel's
 * copy from the cache. A sibling of io_devlimit.c (the write limit).
 * usage: readlimit FILE READERS MB_PER_READER XFER_KB REPS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int cmp(const void *a, const void *b){double x=*(const double*)a,y=*(const double*)b;return (x>y)-(x<y);}
int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: readlimit FILE READERS MB_PER_READER XFER_KB REPS\n");
        return 2;
    }
    const char *path = argv[1];
    int w = atoi(argv[2]); size_t per = (size_t)atol(argv[3]) << 20, xfer = (size_t)atol(argv[4]) << 10;
    int reps = atoi(argv[5]);
    if (w < 1 || w > 64 || per == 0 || xfer == 0 || per % xfer || reps < 1 || reps > 256) {
        fprintf(stderr, "readlimit: 1-64 readers, MB a multiple of the piece, 1-256 runs\n");
        return 2;
    }
    /* The file, then one read of all of it: in the page cache from here on. */
    int fd0 = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    char *one = malloc(xfer);
    if (fd0 < 0 || !one) { perror(path); return 1; }
    for (size_t o = 0; o < w * per; o += xfer) {
        memset(one, 'a' + (int)(o / per), xfer);
        if (pwrite(fd0, one, xfer, (off_t)o) != (ssize_t)xfer) { perror("pwrite"); return 1; }
    }
    /* Synced, as the benchmarks' files are (MPI_File_sync): reading dirty
     * pages races their writeback. */
    if (fsync(fd0)) { perror("fsync"); return 1; }
    for (size_t o = 0; o < w * per; o += xfer)
        if (pread(fd0, one, xfer, (off_t)o) != (ssize_t)xfer) { perror("pread"); return 1; }
    close(fd0);
    double *t = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double *gbs = malloc((size_t)reps * sizeof *gbs);
    for (int rep = 0; rep < reps; rep++) {
        /* The readers sleep in read() until all are ready, as ranks leave a
         * barrier: a spinning wait on a loaded machine costs the readers
         * their scheduler credit and times the scheduler, not the copy. */
        int ready[2], go[2];
        char c[64] = {0};
        if (pipe(ready) || pipe(go)) { perror("pipe"); return 1; }
        for (int k = 0; k < w; k++) {
            if (fork() == 0) {
                /* Not 0: malloc and memset 0 become calloc, which leaves the pages
                 * unmapped, and the reads would time their page faults. */
                char *buf = malloc(per); memset(buf, 1, per);
                int fd = open(path, O_RDONLY);
                if (write(ready[1], c, 1) != 1 || read(go[0], c, 1) != 1) _exit(1);
                double a = now();
                for (size_t o = 0; o < per; o += xfer)
                    if (pread(fd, buf + o, xfer, (off_t)(k * per + o)) != (ssize_t)xfer) _exit(1);
                double b = now();
                t[2 * k] = a; t[2 * k + 1] = b;
                /* The bytes are the ones written: a short or wrong read fails. */
                for (size_t o = 0; o < per; o += 4096)
                    if (buf[o] != (char)('a' + k)) _exit(1);
                close(fd); _exit(0);
            }
        }
        for (int k = 0; k < w; k++)
            if (read(ready[0], c, 1) != 1) { perror("read"); return 1; }
        if (write(go[1], c, (size_t)w) != w) { perror("write"); return 1; }
        int bad = 0;
        for (int k = 0; k < w; k++) { int s = 0; wait(&s); bad |= !WIFEXITED(s) || WEXITSTATUS(s); }
        close(ready[0]); close(ready[1]); close(go[0]); close(go[1]);
        if (bad) { fprintf(stderr, "readlimit: a reader failed\n"); unlink(path); return 1; }
        double a = t[0], b = t[1];
        for (int k = 1; k < w; k++) { if (t[2*k] < a) a = t[2*k]; if (t[2*k+1] > b) b = t[2*k+1]; }
        gbs[rep] = (double)(w * per) / (b - a) / 1e9;
        printf("readers %d, %zu MB each, %zu KB pieces: %.3f GB/s (%.1f ms)\n", w, per >> 20, xfer >> 10,
               gbs[rep], (b - a) * 1e3);
    }
    qsort(gbs, (size_t)reps, sizeof *gbs, cmp);
    printf("readers %d, %zu KB pieces, %d runs: best %.3f GB/s, median %.3f GB/s\n", w, xfer >> 10,
           reps, gbs[reps - 1], gbs[reps / 2]);
    unlink(path);
    return 0;
}
