/* Shared-memory segments: create (named: every page reserved, or the
 * first ones and the rest later; anonymous), attach, unlink, detach
 * (shm_segment.h). */
#include "base/shm_segment.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static tern_status_t segment_map(tern_shm_segment_t *seg, int fd, size_t size)
{
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        tern_error("mmap of shared-memory segment %s (%zu bytes): %s", seg->name, size, strerror(errno));
        return TERN_ERR_NOMEM;
    }
    seg->base = base;
    seg->size = size;
    return TERN_OK;
}

/* Reserves the pages of a range of the file (tmpfs allocates them at once;
 * ENOSPC now instead of SIGBUS at the first touch of a page it cannot
 * allocate). */
static int segment_reserve(int fd, size_t offset, size_t len)
{
    int err;
    do
        err = posix_fallocate(fd, (off_t)offset, (off_t)len);
    while (err == EINTR);
    return err;
}

/* A failed reservation of size bytes of name as a status: the file
 * system full (ENOSPC, ENOMEM, EFBIG) is TERN_ERR_NO_ROOM, unlogged (the
 * caller says what it does without); anything else is logged. */
static tern_status_t reserve_failed(const char *name, size_t size, int err)
{
    if (err == ENOSPC || err == ENOMEM || err == EFBIG)
        return TERN_ERR_NO_ROOM;
    tern_error("posix_fallocate(%s, %zu bytes): %s", name, size, strerror(err));
    return TERN_ERR_IO;
}

/* Creates a file of size bytes whose first `reserve` are reserved; keep:
 * the file stays open in seg. */
static tern_status_t segment_create(tern_shm_segment_t *seg, const char *name, size_t size, size_t reserve,
                                    int keep, int *err_p)
{
    memset(seg, 0, sizeof *seg);
    snprintf(seg->name, sizeof seg->name, "%s", name);
    *err_p = 0;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* Left over from an earlier job with the same id. */
        tern_warn("shared-memory segment %s exists; replacing it", name);
        shm_unlink(name);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0) {
        *err_p = errno;
        if (errno == ENOSPC) /* no inode left */
            return TERN_ERR_NO_ROOM;
        tern_error("shm_open(%s, O_CREAT): %s", name, strerror(errno));
        return TERN_ERR_IO;
    }
    seg->owner = 1;
    seg->linked = 1;
    tern_status_t st = TERN_OK;
    int err = 0;
    if (reserve < size && ftruncate(fd, (off_t)size) != 0)
        err = errno;
    if (err == 0 && reserve > 0)
        err = segment_reserve(fd, 0, reserve);
    if (err != 0) {
        *err_p = err;
        st = reserve_failed(name, size, err);
        goto err_unlink;
    }
    st = segment_map(seg, fd, size);
    if (st != TERN_OK)
        goto err_unlink;
    if (keep) {
        seg->fd = fd;
        seg->has_fd = 1;
    } else {
        close(fd);
    }
    return TERN_OK;

err_unlink:
    close(fd);
    tern_shm_segment_unlink(seg);
    return st;
}

tern_status_t tern_shm_segment_create(tern_shm_segment_t *seg, const char *name, size_t size, int *err_p)
{
    return segment_create(seg, name, size, size, 0, err_p);
}

tern_status_t tern_shm_segment_create_sparse(tern_shm_segment_t *seg, const char *name, size_t size,
                                             size_t reserve, int *err_p)
{
    return segment_create(seg, name, size, reserve < size ? reserve : size, 1, err_p);
}

tern_status_t tern_shm_segment_create_anon(tern_shm_segment_t *seg, const char *label, size_t size,
                                           int *err_p)
{
    memset(seg, 0, sizeof *seg);
    *err_p = 0;
    int fd = memfd_create(label, MFD_CLOEXEC);
    if (fd < 0) {
        *err_p = errno;
        tern_debug("memfd_create: %s", strerror(errno));
        return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? TERN_ERR_NO_ROOM
                                                                      : TERN_ERR_IO;
    }
    snprintf(seg->name, sizeof seg->name, "/proc/%ld/fd/%d", (long)getpid(), fd);
    struct stat sb;
    int err = segment_reserve(fd, 0, size);
    tern_status_t st = err ? reserve_failed(seg->name, size, err) : segment_map(seg, fd, size);
    if (st == TERN_OK && fstat(fd, &sb) != 0) { /* the inode, for the others' check */
        err = errno;
        tern_error("fstat(%s): %s", seg->name, strerror(err));
        munmap(seg->base, size);
        seg->base = NULL;
        st = TERN_ERR_IO;
    }
    if (st != TERN_OK) {
        *err_p = err ? err : ENOMEM;
        close(fd);
        return st;
    }
    seg->owner = 1;
    seg->linked = 1;
    seg->anon = 1;
    seg->fd = fd;
    seg->has_fd = 1;
    seg->ino = (uint64_t)sb.st_ino;
    return TERN_OK;
}

tern_status_t tern_shm_segment_attach_anon(tern_shm_segment_t *seg, long pid, int fd, uint32_t ino,
                                           int *err_p)
{
    memset(seg, 0, sizeof *seg);
    snprintf(seg->name, sizeof seg->name, "/proc/%ld/fd/%d", pid, fd);
    *err_p = 0;
    int my = open(seg->name, O_RDWR | O_CLOEXEC);
    struct stat sb;
    if (my < 0 || fstat(my, &sb) != 0) {
        *err_p = errno;
    } else if ((uint32_t)sb.st_ino != ino || sb.st_size <= 0) {
        *err_p = ESTALE; /* another process's file: a pid namespace of its own */
    } else {
        tern_status_t st = segment_map(seg, my, (size_t)sb.st_size);
        close(my);
        return st;
    }
    if (my >= 0)
        close(my);
    return TERN_ERR_IO;
}

static tern_status_t segment_attach(tern_shm_segment_t *seg, const char *name, int keep, int *err_p)
{
    memset(seg, 0, sizeof *seg);
    snprintf(seg->name, sizeof seg->name, "%s", name);
    if (err_p)
        *err_p = 0;
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        if (err_p) {
            *err_p = errno;
            if (errno == ENOENT) /* the caller's to report */
                return TERN_ERR_IO;
        }
        tern_error("shm_open(%s): %s", name, strerror(errno));
        return TERN_ERR_IO;
    }
    struct stat sb;
    tern_status_t st;
    if (fstat(fd, &sb) != 0 || sb.st_size <= 0) {
        tern_error("shared-memory segment %s: cannot read its size", name);
        st = TERN_ERR_IO;
    } else {
        st = segment_map(seg, fd, (size_t)sb.st_size);
    }
    if (st == TERN_OK && keep) {
        seg->fd = fd;
        seg->has_fd = 1;
    } else {
        close(fd);
    }
    return st;
}

tern_status_t tern_shm_segment_attach(tern_shm_segment_t *seg, const char *name, int *err_p)
{
    return segment_attach(seg, name, 0, err_p);
}

tern_status_t tern_shm_segment_attach_open(tern_shm_segment_t *seg, const char *name, int *err_p)
{
    return segment_attach(seg, name, 1, err_p);
}

int tern_shm_segment_reserve(const tern_shm_segment_t *seg, size_t offset, size_t len)
{
    return seg->has_fd ? segment_reserve(seg->fd, offset, len) : EBADF;
}

void tern_shm_segment_unlink(tern_shm_segment_t *seg)
{
    if (seg->owner && seg->linked && seg->anon) {
        close(seg->fd); /* its /proc path goes with it */
        seg->has_fd = 0;
        seg->linked = 0;
    } else if (seg->owner && seg->linked) {
        if (shm_unlink(seg->name) != 0 && errno != ENOENT)
            tern_warn("shm_unlink(%s): %s", seg->name, strerror(errno));
        seg->linked = 0;
    }
}

void tern_shm_segment_detach(tern_shm_segment_t *seg)
{
    tern_shm_segment_unlink(seg);
    if (seg->base != NULL)
        munmap(seg->base, seg->size);
    if (seg->has_fd)
        close(seg->fd);
    seg->has_fd = 0;
    seg->base = NULL;
    seg->size = 0;
}

void tern_shm_segment_prefault(void *base, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    if (madvise(base, bytes, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    long page = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < bytes; off += (size_t)(page > 0 ? page : 4096))
        (void)*(volatile const char *)((const char *)base + off);
}
