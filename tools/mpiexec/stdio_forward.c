/* Output of the ranks is forwarded by whole lines, so lines of different
 * ranks never interleave: each rank's partial line waits in its buffer
 * until its newline arrives (or EOF, or the line exceeds LINE_MAX_HELD).
 * With --tag-output every line is prefixed "[rank] ". Lines queue for
 * mpiexec's stdout/stderr, which are written without blocking.
 * stdin of mpiexec goes to rank 0 only. */
#include "mpiexec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

enum { READ_CHUNK = 65536, LINE_MAX_HELD = 1 << 20 };

void mpiexec_stream_init(mpiexec_stream_t *s, int fd, int out_fd)
{
    *s = (mpiexec_stream_t){.fd = fd, .out_fd = out_fd};
}

void mpiexec_stream_free(mpiexec_stream_t *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    *s = (mpiexec_stream_t){.fd = -1};
}

/* mpiexec's stdout and stderr. A pipe or terminal is reopened through
 * /proc (a file description of our own, so O_NONBLOCK does not leak to
 * the shell or others sharing it); a socket is written with MSG_DONTWAIT;
 * a regular file never blocks for long and is written as it is. When both
 * are the same file, one queue keeps their lines in order. */
typedef struct {
    int fd;
    int own_fd; /* reopened by us: close at the end */
    mpiexec_outq_t q;
} sink_t;

static sink_t sinks[2] = {{.fd = 1}, {.fd = 2}};
static sink_t *sink_of[3] = {NULL, &sinks[0], &sinks[1]};

static void sink_open(sink_t *k)
{
    struct stat st;
    if (fstat(k->fd, &st) != 0)
        return;
    if (S_ISSOCK(st.st_mode)) {
        k->q.use_send = 1;
    } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", k->fd);
        int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
            k->fd = fd;
            k->own_fd = 1;
        }
    }
}

static void emit(int out_fd, const char *prefix, const char *data, size_t len);
static FILE *plain_stderr;

/* mpiexec's own messages (stdio's stderr) join the same queue, in order
 * with the ranks' lines, so they cannot block either. */
static ssize_t stderr_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    emit(2, "", buf, n);
    return (ssize_t)n;
}

void mpiexec_output_open(void)
{
    struct stat a, b;
    if (fstat(1, &a) == 0 && fstat(2, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino && !S_ISREG(a.st_mode))
        sink_of[2] = &sinks[0];
    sink_open(&sinks[0]);
    if (sink_of[2] != &sinks[0])
        sink_open(&sinks[1]);
    FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = stderr_write});
    if (f && setvbuf(f, NULL, _IOLBF, 4096) == 0) {
        plain_stderr = stderr;
        stderr = f;
    } else if (f) {
        fclose(f);
    }
}

static sink_t *sink(int out_fd) { return sink_of[out_fd == 2 ? 2 : 1]; }

int mpiexec_output_full(int out_fd)
{
    return mpiexec_outq_pending(&sink(out_fd)->q) > MPIEXEC_OUTPUT_HELD_MAX;
}

int mpiexec_output_poll_fd(int out_fd)
{
    sink_t *k = sink(out_fd);
    return mpiexec_outq_pending(&k->q) ? k->fd : -1;
}

void mpiexec_output_flush(int out_fd)
{
    sink_t *k = sink(out_fd);
    (void)mpiexec_outq_flush(&k->q, k->fd); /* a closed stdout drops output */
}

int mpiexec_output_pending(void)
{
    return mpiexec_outq_pending(&sinks[0].q) || mpiexec_outq_pending(&sinks[1].q);
}

void mpiexec_output_drop(void)
{
    for (int i = 0; i < 2; i++)
        sinks[i].q.off = sinks[i].q.len = 0;
}

void mpiexec_output_close(void)
{
    if (plain_stderr) {
        FILE *f = stderr;
        stderr = plain_stderr;
        plain_stderr = NULL;
        fclose(f);
    }
    for (int i = 0; i < 2; i++) {
        (void)mpiexec_outq_flush(&sinks[i].q, sinks[i].fd);
        mpiexec_outq_free(&sinks[i].q);
        if (sinks[i].own_fd)
            close(sinks[i].fd);
        sinks[i].own_fd = 0;
        sinks[i].fd = 1 + i;
    }
}

int mpiexec_output_finish(int signal_fd, double until)
{
    while (mpiexec_output_pending()) {
        double left = until - mpiexec_now();
        if (until > 0 && left <= 0) {
            mpiexec_output_drop();
            break;
        }
        struct pollfd p[3] = {{.fd = signal_fd, .events = POLLIN},
                              {.fd = mpiexec_output_poll_fd(1), .events = POLLOUT},
                              {.fd = mpiexec_output_poll_fd(2), .events = POLLOUT}};
        if (poll(p, 3, until > 0 ? (int)(left * 1000) + 1 : -1) < 0 && errno != EINTR)
            break;
        struct signalfd_siginfo si;
        while (signal_fd >= 0 && read(signal_fd, &si, sizeof si) == (ssize_t)sizeof si)
            if (si.ssi_signo != SIGCHLD) {
                mpiexec_output_drop();
                return (int)si.ssi_signo;
            }
        for (int i = 1; i < 3; i++)
            if (p[i].revents)
                mpiexec_output_flush(i);
    }
    return 0;
}

/* Queues one line (prefix + text) whole and writes what the sink takes. */
static void emit(int out_fd, const char *prefix, const char *data, size_t len)
{
    sink_t *k = sink(out_fd);
    size_t plen = strlen(prefix);
    /* The hard bound only guards memory: readers stop at the soft one. */
    size_t max = 16 * (size_t)MPIEXEC_OUTPUT_HELD_MAX;
    if (mpiexec_outq_push(&k->q, prefix, plen, max) == 0 &&
        mpiexec_outq_push(&k->q, data, len, max) != 0)
        k->q.len -= plen;
    (void)mpiexec_outq_flush(&k->q, k->fd);
}

/* Forwards whole lines from the buffer; with `all`, the remainder too. */
static void stream_flush(const mpiexec_job_t *job, int rank, mpiexec_stream_t *s, int all)
{
    char prefix[32] = "";
    if (job->opts->tag_output)
        snprintf(prefix, sizeof prefix, "[%d] ", rank);
    size_t start = 0;
    for (;;) {
        char *nl = memchr(s->buf + start, '\n', s->len - start);
        if (!nl)
            break;
        size_t end = (size_t)(nl - s->buf) + 1;
        emit(s->out_fd, prefix, s->buf + start, end - start);
        start = end;
    }
    if (start < s->len && (all || s->len - start >= LINE_MAX_HELD)) {
        /* An unterminated tail still ends as a line of its own. */
        s->buf[s->len] = '\n';
        emit(s->out_fd, prefix, s->buf + start, s->len - start + 1);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

int mpiexec_stream_read(const mpiexec_job_t *job, int rank, mpiexec_stream_t *s)
{
    if (s->fd < 0)
        return 0;
    if (s->cap - s->len < READ_CHUNK + 1) {
        size_t cap = s->len + READ_CHUNK + 1;
        char *buf = realloc(s->buf, cap);
        if (!buf) {
            stream_flush(job, rank, s, 1);
            return 1;
        }
        s->buf = buf;
        s->cap = cap;
    }
    ssize_t n = read(s->fd, s->buf + s->len, READ_CHUNK);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (n <= 0) {
        stream_flush(job, rank, s, 1);
        close(s->fd);
        s->fd = -1;
        return 0;
    }
    s->len += (size_t)n;
    stream_flush(job, rank, s, 0);
    return 1;
}

void mpiexec_stdin_close(mpiexec_job_t *job)
{
    if (job->stdin_dst >= 0)
        close(job->stdin_dst);
    job->stdin_dst = -1;
    job->stdin_src = -1;
    job->stdin_len = job->stdin_off = 0;
}

/* Called when fd 0 is readable and the buffer is empty. */
void mpiexec_stdin_read(mpiexec_job_t *job)
{
    ssize_t n = read(job->stdin_src, job->stdin_buf, sizeof job->stdin_buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        /* EOF: rank 0 sees EOF on its stdin too. */
        mpiexec_stdin_close(job);
        return;
    }
    job->stdin_len = (size_t)n;
    job->stdin_off = 0;
    mpiexec_stdin_write(job);
}

/* Called when rank 0's stdin pipe is writable and data is pending. */
void mpiexec_stdin_write(mpiexec_job_t *job)
{
    while (job->stdin_off < job->stdin_len) {
        ssize_t n = write(job->stdin_dst, job->stdin_buf + job->stdin_off,
                          job->stdin_len - job->stdin_off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return;
            /* Rank 0 closed its stdin or exited: stop forwarding. */
            mpiexec_stdin_close(job);
            return;
        }
        job->stdin_off += (size_t)n;
    }
    job->stdin_len = job->stdin_off = 0;
}
