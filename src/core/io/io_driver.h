/* The storage-driver contract: what the I/O room asks of a file system.
 *
 * A driver opens, reads, writes, sizes, syncs and locks byte ranges of one
 * file; everything MPI adds (views, file pointers, collective buffering,
 * atomicity, data representations) is the room's, above this line. A
 * driver is a table of functions, chosen per file by the name's prefix
 * ("ufs:" or none: POSIX). Every function returns TERN_OK or a status
 * whose detail names the file and the system's reason (tern_io_errno maps
 * errno to the MPI-IO classes). Reads may be short only at the end of the
 * file; writes are whole or fail. Offsets are bytes from the file's start.
 *
 * Drivers today: posix (io_posix.c: pread/pwrite, preadv/pwritev,
 * ftruncate, posix_fallocate, fsync, fcntl byte-range locks, O_DIRECT on
 * request). Room is left
 * for others (io_uring, Lustre striping) as further tables. */
#ifndef TERN_CORE_IO_DRIVER_H
#define TERN_CORE_IO_DRIVER_H

#include "base/status.h"
#include <mpi.h>
#include <stddef.h>
#include <sys/uio.h>

/* An open file as a driver sees it. */
typedef struct tern_io_fd {
    int fd;
    const char *path; /* the name the program gave, for messages */
    int readable;     /* open for reading too (data sieving reads around a write) */
    /* O_DIRECT (the hints direct_write, direct_read): the block-aligned
     * middle of a transfer goes through a second descriptor opened with
     * O_DIRECT, its unaligned head and tail through fd. */
    int direct_fd;              /* -1: none */
    size_t direct_align;        /* offset and memory alignment of its transfers */
    int direct_write, direct_read; /* in effect (0 where the system refused) */
} tern_io_fd_t;

typedef struct tern_io_driver {
    const char *name;
    /* Opens path with the MPI_MODE_* bits of amode (CREATE, EXCL, RDONLY,
     * WRONLY, RDWR; the others are the room's). A WRONLY file is opened
     * for reading too where the file's permissions allow (f->readable),
     * so that data sieving can read around a write; the room never reads
     * it for the program. */
    tern_status_t (*open)(const char *path, int amode, tern_io_fd_t *f);
    tern_status_t (*close)(tern_io_fd_t *f);
    tern_status_t (*remove)(const char *path);
    /* Reads the file range [off, off + sum of iov) into iov; *got is less
     * only at the end of the file. */
    tern_status_t (*readv)(tern_io_fd_t *f, const struct iovec *iov, int iovcnt, MPI_Offset off,
                           size_t *got);
    /* Writes iov to the file range starting at off, all of it. */
    tern_status_t (*writev)(tern_io_fd_t *f, const struct iovec *iov, int iovcnt, MPI_Offset off);
    tern_status_t (*get_size)(tern_io_fd_t *f, MPI_Offset *size);
    tern_status_t (*set_size)(tern_io_fd_t *f, MPI_Offset size);
    /* Reserves storage for the first size bytes (the size grows to it). */
    tern_status_t (*preallocate)(tern_io_fd_t *f, MPI_Offset size);
    tern_status_t (*sync)(tern_io_fd_t *f);
    /* Waits for a lock on [off, off + len) (len 0: to the end), shared or
     * exclusive, between processes: atomic mode. */
    tern_status_t (*lock)(tern_io_fd_t *f, MPI_Offset off, MPI_Offset len, int exclusive);
    tern_status_t (*unlock)(tern_io_fd_t *f, MPI_Offset off, MPI_Offset len);
    /* The file system's preferred transfer size: file domains align to it. */
    size_t (*block_size)(tern_io_fd_t *f);
    /* Asks for direct (uncached) writes and reads of an open file; sets
     * f->direct_write and f->direct_read to what is in effect: 0 where the
     * file system refuses, which is no error. */
    void (*set_direct)(tern_io_fd_t *f, int write, int read);
} tern_io_driver_t;

/* The drivers. */
extern const tern_io_driver_t tern_io_posix;

/* The driver of a file name, and the name without its driver prefix. */
const tern_io_driver_t *tern_io_driver_for(const char *name, const char **path);

/* A status for errno err (ENOENT: TERN_ERR_NO_SUCH_FILE, EEXIST:
 * TERN_ERR_FILE_EXISTS, ENOSPC: TERN_ERR_NO_SPACE...), with a detail that
 * names the file, what was done and the system's words. */
tern_status_t tern_io_errno(int err, const char *path, const char *what);

#endif
