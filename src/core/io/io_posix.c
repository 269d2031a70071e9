/* The POSIX storage driver (io_driver.h). */
#include "core/io/io_driver.h"
#include "base/pvars.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static tern_status_t px_open(const char *path, int amode, tern_io_fd_t *f)
{
    int flags = O_CLOEXEC;
    if (amode & MPI_MODE_RDWR)
        flags |= O_RDWR;
    else if (amode & MPI_MODE_WRONLY)
        flags |= O_WRONLY;
    else
        flags |= O_RDONLY;
    if (amode & MPI_MODE_CREATE)
        flags |= O_CREAT;
    if (amode & MPI_MODE_EXCL)
        flags |= O_EXCL;
    int fd = -1;
    if (amode & MPI_MODE_WRONLY) {
        /* For reading too if allowed (data sieving writes read first). */
        fd = open(path, (flags & ~O_WRONLY) | O_RDWR, 0666);
        if (fd < 0 && errno != EACCES && errno != EPERM)
            return tern_io_errno(errno, path, "open");
    }
    f->readable = fd >= 0 || !(amode & MPI_MODE_WRONLY);
    if (fd < 0)
        fd = open(path, flags, 0666);
    if (fd < 0)
        return tern_io_errno(errno, path, "open");
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        close(fd);
        return tern_io_errno(EISDIR, path, "open");
    }
    f->fd = fd;
    f->path = path;
    f->direct_fd = -1;
    f->direct_write = f->direct_read = 0;
    return TERN_OK;
}

static tern_status_t px_close(tern_io_fd_t *f)
{
    if (f->direct_fd >= 0)
        close(f->direct_fd);
    f->direct_fd = -1;
    int rc = close(f->fd);
    f->fd = -1;
    return rc == 0 ? TERN_OK : tern_io_errno(errno, f->path, "close");
}

static tern_status_t px_remove(const char *path)
{
    return unlink(path) == 0 ? TERN_OK : tern_io_errno(errno, path, "delete");
}

/* Advances an iovec array past n bytes (after a short transfer). */
static int iov_advance(struct iovec *iov, int cnt, size_t n)
{
    int i = 0;
    while (i < cnt && n >= iov[i].iov_len)
        n -= iov[i++].iov_len;
    if (i < cnt) {
        iov[i].iov_base = (char *)iov[i].iov_base + n;
        iov[i].iov_len -= n;
    }
    return i;
}

/* At most this many iovecs per call (IOV_MAX is 1024 on Linux). */
#define IOV_BATCH 1024

/* fd is f->fd or, for the aligned pieces of direct_io, f->direct_fd. */
static tern_status_t plain_readv(tern_io_fd_t *f, int fd, const struct iovec *iov_in, int cnt,
                                 MPI_Offset off, size_t *got)
{
    struct iovec iov[IOV_BATCH];
    *got = 0;
    while (cnt > 0) {
        int n = cnt < IOV_BATCH ? cnt : IOV_BATCH;
        memcpy(iov, iov_in, (size_t)n * sizeof *iov);
        int first = 0;
        while (first < n) {
            ssize_t r = preadv(fd, iov + first, n - first, off);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return tern_io_errno(errno, f->path, "read");
            if (r == 0)
                return TERN_OK; /* end of file */
            *got += (size_t)r;
            tern_pvar_add_shared(TERN_PVAR_IO_READ_BYTES, (uint64_t)r);
            off += r;
            first += iov_advance(iov + first, n - first, (size_t)r);
        }
        iov_in += n;
        cnt -= n;
    }
    return TERN_OK;
}

static tern_status_t plain_writev(tern_io_fd_t *f, int fd, const struct iovec *iov_in, int cnt,
                                  MPI_Offset off)
{
    struct iovec iov[IOV_BATCH];
    while (cnt > 0) {
        int n = cnt < IOV_BATCH ? cnt : IOV_BATCH;
        memcpy(iov, iov_in, (size_t)n * sizeof *iov);
        int first = 0;
        while (first < n) {
            ssize_t r = pwritev(fd, iov + first, n - first, off);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return tern_io_errno(errno, f->path, "write");
            tern_pvar_add_shared(TERN_PVAR_IO_WRITTEN_BYTES, (uint64_t)r);
            off += r;
            first += iov_advance(iov + first, n - first, (size_t)r);
        }
        iov_in += n;
        cnt -= n;
    }
    return TERN_OK;
}

/* ---- O_DIRECT ------------------------------------------------------------
 * Only whole aligned blocks may go through the direct descriptor, from and
 * to aligned memory: a transfer is split into an unaligned head and tail
 * (through fd, the page cache) and an aligned middle (direct), which moves
 * straight from the program's memory where that is aligned and through an
 * aligned bounce buffer where not. Linux keeps the two descriptors
 * coherent: a direct write writes back and drops the cached pages of its
 * range, a direct read writes back the dirty ones first. */

/* Largest bounce buffer of one call (allocated per call: the I/O worker
 * thread may transfer on the same file at the same time). */
#define DIRECT_BOUNCE (4u << 20)

/* A position in an iovec array. */
typedef struct {
    const struct iovec *iov;
    int cnt, i;
    size_t o;
} iov_cursor_t;

/* Steps over empty iovecs, so that the cursor's place has a byte. */
static void cursor_settle(iov_cursor_t *c)
{
    while (c->i < c->cnt && c->o == c->iov[c->i].iov_len) {
        c->i++;
        c->o = 0;
    }
}

static char *cursor_at(const iov_cursor_t *c)
{
    return (char *)c->iov[c->i].iov_base + c->o;
}

static void cursor_skip(iov_cursor_t *c, size_t n)
{
    while (n && c->i < c->cnt) {
        size_t k = c->iov[c->i].iov_len - c->o;
        k = k < n ? k : n;
        c->o += k;
        n -= k;
        if (c->o == c->iov[c->i].iov_len) {
            c->i++;
            c->o = 0;
        }
    }
}

/* Copies n bytes between the cursor's place and buf (to buf when
 * gather), and moves past them. */
static void cursor_copy(iov_cursor_t *c, char *buf, size_t n, int gather)
{
    while (n && (cursor_settle(c), c->i < c->cnt)) {
        size_t k = c->iov[c->i].iov_len - c->o;
        k = k < n ? k : n;
        if (gather)
            memcpy(buf, cursor_at(c), k);
        else
            memcpy(cursor_at(c), buf, k);
        buf += k;
        n -= k;
        cursor_skip(c, k);
    }
}

/* The direct descriptor's alignment: the largest of what statx reports
 * for direct I/O, the file system's block (whole blocks need no
 * read-modify-write below) and the page; 4096 where that is no power of
 * two. */
static size_t direct_alignment(int fd)
{
    size_t a = 0;
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
        a = sx.stx_dio_offset_align > sx.stx_dio_mem_align ? sx.stx_dio_offset_align
                                                           : sx.stx_dio_mem_align;
    }
    struct statfs fs;
    if (fstatfs(fd, &fs) == 0 && fs.f_bsize > 0 && (size_t)fs.f_bsize > a)
        a = (size_t)fs.f_bsize;
    /* At least a page: a block that shares a page with another rank's
     * cached bytes would race with their write-back. */
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0 && (size_t)page > a)
        a = (size_t)page;
    if ((a & (a - 1)) != 0 || a > (1u << 20))
        a = 4096;
    return a;
}

static void px_set_direct(tern_io_fd_t *f, int write, int read)
{
    int mode = fcntl(f->fd, F_GETFL);
    mode = mode < 0 ? O_RDONLY : (mode & O_ACCMODE);
    if (mode == O_RDONLY)
        write = 0; /* nothing to write through */
    if ((write || read) && f->direct_fd < 0) {
        /* The same file as fd whatever became of its name (a relative
         * name after a chdir); the name where /proc is not mounted. */
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", f->fd);
        int dfd = open(self, mode | O_DIRECT | O_CLOEXEC);
        if (dfd < 0 && errno != EINVAL)
            dfd = open(f->path, mode | O_DIRECT | O_CLOEXEC);
        if (dfd >= 0) {
            f->direct_fd = dfd;
            f->direct_align = direct_alignment(dfd);
        }
    }
    if (!write && !read && f->direct_fd >= 0) {
        close(f->direct_fd);
        f->direct_fd = -1;
    }
    /* EINVAL at open: the file system does no direct I/O; the hints say
     * false and everything goes through fd. */
    f->direct_write = write && f->direct_fd >= 0;
    f->direct_read = read && f->direct_fd >= 0;
}

/* One aligned transfer through the direct descriptor, all of it or (reads)
 * to the end of the file. What the descriptor refuses (EINVAL: an
 * alignment the system did not report, a short read's unaligned rest)
 * goes through fd. */
static tern_status_t direct_rw(tern_io_fd_t *f, char *mem, size_t n, MPI_Offset pos, int writing,
                               size_t *done)
{
    *done = 0;
    while (*done < n) {
        ssize_t r = writing ? pwrite(f->direct_fd, mem + *done, n - *done, pos + (off_t)*done)
                            : pread(f->direct_fd, mem + *done, n - *done, pos + (off_t)*done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno != EINVAL)
            return tern_io_errno(errno, f->path, writing ? "write" : "read");
        if (r < 0) {
            struct iovec v = {mem + *done, n - *done};
            size_t rest = n - *done;
            tern_status_t st = writing ? plain_writev(f, f->fd, &v, 1, pos + (MPI_Offset)*done)
                                       : plain_readv(f, f->fd, &v, 1, pos + (MPI_Offset)*done,
                                                     &rest);
            *done += rest;
            return st;
        }
        if (r == 0 && writing)
            return tern_io_errno(EIO, f->path, "write");
        if (r == 0)
            break; /* end of the file */
        tern_pvar_add_shared(writing ? TERN_PVAR_IO_WRITTEN_BYTES : TERN_PVAR_IO_READ_BYTES,
                             (uint64_t)r);
        *done += (size_t)r;
    }
    return TERN_OK;
}

/* Moves the aligned range [pos, pos + n) between the file and the cursor
 * through the direct descriptor; *moved is less than n only at the end of
 * the file (reads). */
static tern_status_t direct_piece(tern_io_fd_t *f, iov_cursor_t *c, MPI_Offset pos, size_t n,
                                  int writing, char **bounce, size_t *moved)
{
    *moved = 0;
    while (*moved < n && (cursor_settle(c), c->i < c->cnt)) {
        size_t want = n - *moved, a = f->direct_align;
        char *mem = cursor_at(c);
        size_t seg = c->iov[c->i].iov_len - c->o;
        int aligned = ((uintptr_t)mem % a) == 0 && seg >= a;
        if (aligned) {
            want = want < seg ? want : seg / a * a; /* straight from the program's memory */
        } else {
            want = want < DIRECT_BOUNCE ? want : DIRECT_BOUNCE;
            if (!*bounce && posix_memalign((void **)bounce, a, DIRECT_BOUNCE) != 0) {
                *bounce = NULL;
                return tern_io_errno(ENOMEM, f->path, writing ? "write" : "read");
            }
            mem = *bounce;
            if (writing)
                cursor_copy(c, mem, want, 1);
        }
        size_t got;
        tern_status_t st = direct_rw(f, mem, want, pos + (MPI_Offset)*moved, writing, &got);
        if (st != TERN_OK)
            return st;
        if (aligned)
            cursor_skip(c, got);
        else if (!writing)
            cursor_copy(c, mem, got, 0);
        *moved += got;
        if (got < want)
            break; /* end of the file */
    }
    return TERN_OK;
}

/* Head (to the first block boundary) and tail (from the last) through fd,
 * the whole blocks between through direct_fd. */
static tern_status_t direct_io(tern_io_fd_t *f, const struct iovec *iov, int cnt, MPI_Offset off,
                               size_t len, int writing, size_t *got)
{
    MPI_Offset a = (MPI_Offset)f->direct_align;
    MPI_Offset end = off + (MPI_Offset)len;
    MPI_Offset lo = (off + a - 1) / a * a, hi = end / a * a;
    iov_cursor_t c = {iov, cnt, 0, 0};
    char small[2][4096], *bounce = NULL;
    tern_status_t st = TERN_OK;
    *got = 0;
    MPI_Offset spans[3][2] = {{off, lo}, {lo, hi}, {hi, end}};
    for (int k = 0; k < 3 && st == TERN_OK; k++) {
        MPI_Offset p = spans[k][0];
        size_t n = (size_t)(spans[k][1] - p), moved = 0;
        if (n == 0)
            continue;
        if (k == 1) {
            st = direct_piece(f, &c, p, n, writing, &bounce, &moved);
        } else {
            /* Less than a block: a copy, so that the cursor's iovecs need
             * no slicing (blocks above 4 KB: the bounce buffer). */
            char *buf = n <= sizeof small[0] ? small[k / 2] : NULL;
            if (!buf && !bounce && posix_memalign((void **)&bounce, (size_t)a, DIRECT_BOUNCE) != 0)
                bounce = NULL;
            buf = buf ? buf : bounce;
            if (!buf) {
                st = tern_io_errno(ENOMEM, f->path, writing ? "write" : "read");
                break;
            }
            struct iovec v = {buf, n};
            if (writing) {
                cursor_copy(&c, buf, n, 1);
                st = plain_writev(f, f->fd, &v, 1, p);
                moved = n;
            } else {
                st = plain_readv(f, f->fd, &v, 1, p, &moved);
                cursor_copy(&c, buf, moved, 0);
            }
        }
        *got += moved;
        if (moved < n)
            break; /* end of the file */
    }
    free(bounce);
    return st;
}

static size_t iov_bytes(const struct iovec *iov, int cnt)
{
    size_t len = 0;
    for (int i = 0; i < cnt; i++)
        len += iov[i].iov_len;
    return len;
}

/* Direct when asked for and at least one whole block lies inside. */
static int goes_direct(const tern_io_fd_t *f, int asked, MPI_Offset off, size_t len)
{
    if (!asked || len < f->direct_align)
        return 0;
    MPI_Offset a = (MPI_Offset)f->direct_align;
    return (off + a - 1) / a * a + a <= off + (MPI_Offset)len;
}

static tern_status_t px_readv(tern_io_fd_t *f, const struct iovec *iov, int cnt, MPI_Offset off,
                              size_t *got)
{
    size_t len = f->direct_read ? iov_bytes(iov, cnt) : 0;
    if (goes_direct(f, f->direct_read, off, len))
        return direct_io(f, iov, cnt, off, len, 0, got);
    return plain_readv(f, f->fd, iov, cnt, off, got);
}

static tern_status_t px_writev(tern_io_fd_t *f, const struct iovec *iov, int cnt, MPI_Offset off)
{
    size_t len = f->direct_write ? iov_bytes(iov, cnt) : 0, got;
    if (goes_direct(f, f->direct_write, off, len))
        return direct_io(f, iov, cnt, off, len, 1, &got);
    return plain_writev(f, f->fd, iov, cnt, off);
}

static tern_status_t px_get_size(tern_io_fd_t *f, MPI_Offset *size)
{
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return tern_io_errno(errno, f->path, "stat");
    *size = (MPI_Offset)sb.st_size;
    return TERN_OK;
}

static tern_status_t px_set_size(tern_io_fd_t *f, MPI_Offset size)
{
    return ftruncate(f->fd, (off_t)size) == 0 ? TERN_OK : tern_io_errno(errno, f->path, "truncate");
}

static tern_status_t px_preallocate(tern_io_fd_t *f, MPI_Offset size)
{
    if (size <= 0)
        return TERN_OK;
    int rc = posix_fallocate(f->fd, 0, (off_t)size);
    return rc == 0 ? TERN_OK : tern_io_errno(rc, f->path, "preallocate");
}

static tern_status_t px_sync(tern_io_fd_t *f)
{
    return fsync(f->fd) == 0 ? TERN_OK : tern_io_errno(errno, f->path, "sync");
}

/* Open-file-description locks: owned by the descriptor, not the process,
 * so two files open in one process exclude each other too, and they go
 * away with the descriptor (no lock is left behind by a killed rank). */
static tern_status_t set_lock(tern_io_fd_t *f, short type, MPI_Offset off, MPI_Offset len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)off,
                       .l_len = (off_t)len};
    while (fcntl(f->fd, F_OFD_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return tern_io_errno(errno, f->path, type == F_UNLCK ? "unlock" : "lock");
    return TERN_OK;
}

static tern_status_t px_lock(tern_io_fd_t *f, MPI_Offset off, MPI_Offset len, int exclusive)
{
    return set_lock(f, exclusive ? F_WRLCK : F_RDLCK, off, len);
}

static tern_status_t px_unlock(tern_io_fd_t *f, MPI_Offset off, MPI_Offset len)
{
    return set_lock(f, F_UNLCK, off, len);
}

static size_t px_block_size(tern_io_fd_t *f)
{
    struct stat sb;
    if (fstat(f->fd, &sb) != 0 || sb.st_blksize <= 0)
        return 4096;
    return (size_t)sb.st_blksize;
}

const tern_io_driver_t tern_io_posix = {
    .name = "posix",
    .open = px_open,
    .close = px_close,
    .remove = px_remove,
    .readv = px_readv,
    .writev = px_writev,
    .get_size = px_get_size,
    .set_size = px_set_size,
    .preallocate = px_preallocate,
    .sync = px_sync,
    .lock = px_lock,
    .unlock = px_unlock,
    .block_size = px_block_size,
    .set_direct = px_set_direct,
};
