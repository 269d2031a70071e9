/* Output of the ranks is forwarded by whole lines, so lines of different
 * ranks never interleave: each rank's partial line waits in its buffer
 * until its newline arrives (or EOF, or the line exceeds LINE_MAX_HELD).
 * With --tag-output every line is prefixed "[rank] ".
 * stdin of mpiexec goes to rank 0 only. */
#include "mpiexec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
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

/* One writev per line (prefix + text), retried until complete. A closed
 * stdout of mpiexec (EPIPE) just drops output. */
static void emit(int fd, const char *prefix, const char *data, size_t len)
{
    struct iovec iov[2] = {{(void *)prefix, strlen(prefix)}, {(void *)data, len}};
    int i = iov[0].iov_len ? 0 : 1;
    while (i < 2) {
        ssize_t n = writev(fd, iov + i, 2 - i);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        while (i < 2 && (size_t)n >= iov[i].iov_len) {
            n -= (ssize_t)iov[i].iov_len;
            i++;
        }
        if (i < 2) {
            iov[i].iov_base = (char *)iov[i].iov_base + n;
            iov[i].iov_len -= (size_t)n;
        }
    }
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
