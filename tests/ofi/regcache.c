/* The ofi transport's registration cache (src/transport/ofi/ofi_regcache.c),
 * 2 ranks over libfabric tcp. Rank 0 sends 256 KB and 1 MB messages
 * (rendezvous: rank 1 reads them with fi_read from rank 0's registration),
 * rank 1 checks every byte:
 *   a. 10 sends from one mmap'd buffer, rewritten before each: 1 miss, 9 hits;
 *   b. munmap it, mmap a new buffer at the same address (MAP_FIXED) with
 *      other contents, send: the old registration must be invalidated;
 *   c. a 1 MB malloc sent, freed (glibc unmaps it), a new 1 MB malloc sent;
 *   d. madvise(MADV_DONTNEED) on the cached buffer of b, rewrite, send.
 * On tcp a stale registration would still read the current memory (the
 * provider copies from the virtual address), so the bytes alone cannot
 * catch a missed invalidation: regcache_test.sh checks rank 0's counters
 * (TERN_OFI_REGCACHE_STATS) for the hits and one invalidation per case
 * b, c and d. `regcache --probe` (no MPI) exits 77 when this machine cannot
 * use userfaultfd as the cache does. */
#include "../mpi/mtest.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <malloc.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define MSG (256 * 1024)   /* above TERN_OFI_EAGER_SIZE: rendezvous */
#define BIG (1024 * 1024)

#ifdef __SANITIZE_ADDRESS__
/* ASan keeps freed memory in quarantine instead of unmapping it; without
 * one, its allocator unmaps a freed 1 MB block as glibc does (case c). */
const char *__asan_default_options(void) { return "quarantine_size_mb=0"; }
#endif

static unsigned char *rbuf;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 12));
}

/* Rank 0 sends n bytes of pattern `seed` from buf, rank 1 checks them. */
static void xfer(unsigned char *buf, size_t n, unsigned seed)
{
    if (mtest_rank == 0) {
        fill(buf, n, seed);
        CHECK_RC(MPI_Send(buf, (int)n, MPI_BYTE, 1, (int)seed, MPI_COMM_WORLD));
    } else {
        memset(rbuf, 0, n);
        CHECK_RC(MPI_Recv(rbuf, (int)n, MPI_BYTE, 0, (int)seed, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
        unsigned char *want = malloc(n);
        fill(want, n, seed);
        size_t bad = 0;
        while (bad < n && rbuf[bad] == want[bad])
            bad++;
        CHECK(bad == n, "message %u: byte %zu is %u, expected %u", seed, bad,
              bad < n ? rbuf[bad] : 0, bad < n ? want[bad] : 0);
        free(want);
    }
}

static int probe(void)
{
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0)
        fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        printf("regcache: SKIPPED: userfaultfd unavailable: %s\n", strerror(errno));
        return 77;
    }
    struct uffdio_api api = {.api = UFFD_API,
                             .features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE |
                                         UFFD_FEATURE_EVENT_REMAP};
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        printf("regcache: SKIPPED: userfaultfd without unmap/remove/remap events: %s\n",
               strerror(errno));
        return 77;
    }
    close(fd);
    return 0;
}

static unsigned char *map(void *at)
{
    void *p = mmap(at, MSG, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
    if (p == MAP_FAILED)
        FATAL("mmap: %s", strerror(errno));
    return p;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--probe") == 0)
        return probe();
    mtest_init(&argc, &argv);
    if (mtest_size != 2)
        FATAL("run with 2 ranks");
    rbuf = malloc(BIG);
    unsigned seed = 1;
    unsigned char *buf = NULL;

    mtest_begin("regcache_reuse");
    if (mtest_rank == 0)
        buf = map(NULL);
    for (int i = 0; i < 10; i++)
        xfer(buf, MSG, seed++);
    mtest_end();

    mtest_begin("regcache_munmap_mmap_fixed");
    if (mtest_rank == 0) {
        void *old = buf;
        CHECK(munmap(buf, MSG) == 0, "munmap: %s", strerror(errno));
        buf = map(old);
        CHECK(buf == old, "MAP_FIXED gave %p, not %p", (void *)buf, old);
    }
    xfer(buf, MSG, seed++);
    mtest_end();

    mtest_begin("regcache_free_malloc");
    unsigned char *m = NULL;
    if (mtest_rank == 0) {
        /* A fixed threshold: glibc's adaptive one would keep the second
         * block in the heap after the first was freed. */
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        m = malloc(BIG);
        CHECK(m != NULL, "malloc");
    }
    xfer(m, BIG, seed++);
    if (mtest_rank == 0) {
        free(m);
        m = malloc(BIG);
        CHECK(m != NULL, "malloc");
    }
    xfer(m, BIG, seed++);
    free(m);
    mtest_end();

    mtest_begin("regcache_madv_dontneed");
    if (mtest_rank == 0) {
        CHECK(madvise(buf, MSG, MADV_DONTNEED) == 0, "madvise: %s", strerror(errno));
        CHECK(buf[0] == 0 && buf[MSG - 1] == 0, "pages not dropped by MADV_DONTNEED");
    }
    xfer(buf, MSG, seed++);
    mtest_end();

    if (buf)
        munmap(buf, MSG);
    free(rbuf);
    return mtest_finalize();
}
