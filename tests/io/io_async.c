/* Nonblocking I/O progresses while the program computes, shown without
 * timing: the program holds a byte-range lock on the file through a
 * descriptor of its own, so an atomic-mode access cannot finish until it
 * lets go. MPI_File_iwrite_at and MPI_File_iread_at must return while the
 * lock is held (a library that moved the data in the call would wait for
 * it forever: the watchdog ends the test), the file must still be empty
 * and the buffer untouched, and once the lock is released the file grows
 * and the buffer fills while the program makes no MPI call. Also:
 * iwrite_at_all of each rank's own range, non-contiguous memory through
 * the worker, the shared pointer, MPI_Request_free before close. */
#include "../mpi/mtest.h"

#include <fcntl.h>
#include <sys/stat.h>

static int rank, size;

#define MB ((long)1 << 20)

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* Polls cond() without MPI calls, up to 60 s. */
static int wait_without_mpi(int (*cond)(void *), void *arg)
{
    for (int i = 0; i < 60000; i++) {
        if (cond(arg))
            return 1;
        mtest_sleep(0.001);
    }
    return 0;
}

static const char *poll_path;
static long poll_size;
static int size_reached(void *arg)
{
    (void)arg;
    return file_size(poll_path) >= poll_size;
}

/* A lock on the whole file through a descriptor of the test's own (an
 * open file description of its own, so it excludes the library's). */
static int hold_lock(const char *path, int fd)
{
    if (fd < 0)
        fd = open(path, O_RDWR);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fd < 0 || fcntl(fd, F_OFD_SETLK, &fl) != 0)
        FATAL("cannot lock %s", path);
    return fd;
}

static void release_lock(int fd)
{
    struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    fcntl(fd, F_OFD_SETLK, &fl);
}

/* The checks that look at a read's buffer while the I/O worker fills it
 * race with the worker by design (they prove it runs in the background);
 * ThreadSanitizer, which runs this test for the worker's own
 * synchronisation, leaves them out. */
#if defined(__SANITIZE_THREAD__)
#define PEEK 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PEEK 0
#endif
#endif
#ifndef PEEK
#define PEEK 1
#endif

static volatile unsigned char *poll_buf;
static long poll_len;
static int buffer_filled(void *arg)
{
    (void)arg;
    return poll_buf[poll_len - 1] == (unsigned char)((poll_len - 1) * 7 + rank);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mtest_watchdog(180);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mtest_rank = rank;
    mtest_size = size;
    char path[256];
    snprintf(path, sizeof path, "io_async_%d_%d.dat", (int)getpid(), rank);
    long n = 64 * MB;
    unsigned char *buf = malloc(n), *in = malloc(n);
    for (long i = 0; i < n; i++)
        buf[i] = (unsigned char)(i * 7 + rank);

    mtest_begin("iwrite_at and iread_at progress without MPI calls");
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    MPI_Request req;
    MPI_Status st;
    CHECK_RC(MPI_File_set_atomicity(fh, 1));
    int lockfd = hold_lock(path, -1);
    mtest_watchdog(30); /* a library that writes in the call waits forever */
    CHECK_RC(MPI_File_iwrite_at(fh, 0, buf, (int)n, MPI_BYTE, &req));
    mtest_watchdog(180);
    CHECK(file_size(path) == 0, "nothing written while the program holds the lock");
    release_lock(lockfd);
    poll_path = path;
    poll_size = n;
    CHECK(wait_without_mpi(size_reached, NULL), "the file reached %ld bytes without an MPI call", n);
    CHECK_RC(MPI_Wait(&req, &st));
    int count;
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == n, "iwrite_at wrote %d bytes", count);
    memset(in, 0, n);
    hold_lock(path, lockfd);
    mtest_watchdog(30);
    CHECK_RC(MPI_File_iread_at(fh, 0, in, (int)n, MPI_BYTE, &req));
    mtest_watchdog(180);
    if (PEEK)
        CHECK(in[n - 1] == 0, "nothing read while the program holds the lock");
    release_lock(lockfd);
    close(lockfd);
    poll_buf = in;
    poll_len = n;
    if (PEEK)
        CHECK(wait_without_mpi(buffer_filled, NULL), "the buffer filled without an MPI call");
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK(!memcmp(in, buf, n), "iread_at read what was written");
    CHECK_RC(MPI_File_set_atomicity(fh, 0));
    mtest_end();

    mtest_begin("non-contiguous memory, individual and shared pointers");
    MPI_Datatype every_other;
    MPI_Type_vector(1000, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int src[2000], dst[2000];
    for (int i = 0; i < 2000; i++)
        src[i] = i * 3 + rank, dst[i] = -1;
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_iwrite(fh, src, 1, every_other, &req));
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == 4000, "the pointer moved at the call: %lld", pos);
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_File_iread_at(fh, 0, dst, 1, every_other, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    MPI_Get_count(&st, every_other, &count);
    CHECK_INT(count, 1, "one vector read");
    int ok = 1;
    for (int i = 0; i < 1000; i++)
        ok &= dst[2 * i] == src[2 * i] && dst[2 * i + 1] == -1;
    CHECK(ok, "the vector's ints read back in place, the gaps untouched");
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_iwrite_shared(fh, src, 10, MPI_INT, &req));
    CHECK_RC(MPI_Request_free(&req));
    CHECK_RC(MPI_File_close(&fh)); /* waits for the freed request's write */
    CHECK(file_size(path) == -1, "the file is gone after close");
    MPI_Type_free(&every_other);
    mtest_end();

    mtest_begin("iwrite_all of own ranges progresses");
    char shared_path[256];
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(shared_path, sizeof shared_path, "io_async_all_%d.dat", pid);
    long part = 16 * MB;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, shared_path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_iwrite_at_all(fh, rank * part, buf, (int)part, MPI_BYTE, &req));
    poll_path = shared_path;
    poll_size = (rank + 1) * part; /* at least this rank's end */
    CHECK(wait_without_mpi(size_reached, NULL), "this rank's part reached the file without an MPI call");
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_read_at(fh, rank * part, in, (int)part, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(!memcmp(in, buf, part), "iwrite_at_all's data read back");
    CHECK_RC(MPI_File_close(&fh));
    mtest_end();
    free(buf);
    free(in);
    return mtest_finalize();
}
