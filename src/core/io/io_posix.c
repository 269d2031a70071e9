/* The POSIX storage driver (io_driver.h). */
#include "core/io/io_driver.h"
#include "base/pvars.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
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
    return TERN_OK;
}

static tern_status_t px_close(tern_io_fd_t *f)
{
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

static tern_status_t px_readv(tern_io_fd_t *f, const struct iovec *iov_in, int cnt,
                              MPI_Offset off, size_t *got)
{
    struct iovec iov[IOV_BATCH];
    *got = 0;
    while (cnt > 0) {
        int n = cnt < IOV_BATCH ? cnt : IOV_BATCH;
        memcpy(iov, iov_in, (size_t)n * sizeof *iov);
        int first = 0;
        while (first < n) {
            ssize_t r = preadv(f->fd, iov + first, n - first, off);
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

static tern_status_t px_writev(tern_io_fd_t *f, const struct iovec *iov_in, int cnt,
                               MPI_Offset off)
{
    struct iovec iov[IOV_BATCH];
    while (cnt > 0) {
        int n = cnt < IOV_BATCH ? cnt : IOV_BATCH;
        memcpy(iov, iov_in, (size_t)n * sizeof *iov);
        int first = 0;
        while (first < n) {
            ssize_t r = pwritev(f->fd, iov + first, n - first, off);
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
};
