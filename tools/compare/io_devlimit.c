/* docs/performance.md, "Parallel I/O": build with gcc -O2 -o devlimit io_devlimit.c */
/* The disk's own limit for the I/O benchmarks' writes: W writer processes
 * pwrite PER bytes each in XFER pieces into one shared file (each its own
 * range, as IOR's segmented layout with -s 1) and fsync; the figure is all
 * bytes over the time from the first pwrite to the last fsync's end.
 * usage: devlimit FILE WRITERS MB_PER_WRITER XFER_KB REPS */
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
int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: devlimit FILE WRITERS MB_PER_WRITER XFER_KB REPS\n");
        return 2;
    }
    const char *path = argv[1];
    int w = atoi(argv[2]); size_t per = (size_t)atol(argv[3]) << 20, xfer = (size_t)atol(argv[4]) << 10;
    int reps = atoi(argv[5]);
    double *t = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    for (int rep = 0; rep < reps; rep++) {
        unlink(path);
        int fd0 = open(path, O_CREAT | O_RDWR, 0644); close(fd0);
        volatile int *go = (volatile int *)(t + 256);
        *go = 0;
        for (int k = 0; k < w; k++) {
            if (fork() == 0) {
                char *buf = malloc(xfer); memset(buf, 'a' + k, xfer);
                int fd = open(path, O_RDWR);
                __atomic_add_fetch((int *)(t + 257), 1, __ATOMIC_SEQ_CST);
                while (!*go) ;
                double a = now();
                for (size_t o = 0; o < per; o += xfer)
                    if (pwrite(fd, buf, xfer, (off_t)(k * per + o)) != (ssize_t)xfer) _exit(1);
                fsync(fd);
                double b = now();
                t[2 * k] = a; t[2 * k + 1] = b;
                close(fd); _exit(0);
            }
        }
        while (__atomic_load_n((int *)(t + 257), __ATOMIC_SEQ_CST) < w) ;
        *go = 1;
        for (int k = 0; k < w; k++) wait(NULL);
        *(int *)(t + 257) = 0;
        double a = t[0], b = t[1];
        for (int k = 1; k < w; k++) { if (t[2*k] < a) a = t[2*k]; if (t[2*k+1] > b) b = t[2*k+1]; }
        printf("writers %d, %zu MB each, %zu KB pieces: %.3f GB/s (%.1f ms)\n", w, per >> 20, xfer >> 10,
               (double)(w * per) / (b - a) / 1e9, (b - a) * 1e3);
    }
    unlink(path);
    return 0;
}
