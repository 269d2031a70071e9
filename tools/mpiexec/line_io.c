/* Bounded, non-blocking line I/O for every socket and pipe mpiexec talks
 * over (ranks' PMI, the root<->proxy control links, forwarded output): a
 * writer queues and the poll loop drains the queue as the peer takes it,
 * so a peer that stops reading can never block mpiexec (its signals, the
 * other peers); a reader takes whole lines and reports a peer whose line
 * passes the caller's bound instead of buffering it without end. */
#include "mpiexec.h"

#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int mpiexec_outq_push(mpiexec_outq_t *q, const char *data, size_t n, size_t max)
{
    if (n == 0) /* nothing to queue; an empty queue has no buffer to copy into */
        return 0;
    if (q->len - q->off + n > max)
        return -1;
    if (q->off > 0) {
        memmove(q->buf, q->buf + q->off, q->len - q->off);
        q->len -= q->off;
        q->off = 0;
    }
    if (q->len + n > q->cap) {
        size_t cap = q->cap ? q->cap : 4096;
        while (cap < q->len + n)
            cap *= 2;
        char *buf = realloc(q->buf, cap);
        if (!buf)
            return -1;
        q->buf = buf;
        q->cap = cap;
    }
    memcpy(q->buf + q->len, data, n);
    q->len += n;
    return 0;
}

int mpiexec_outq_flush(mpiexec_outq_t *q, int fd)
{
    while (fd >= 0 && q->off < q->len) {
        /* A socket we do not own (mpiexec's stdout) is written without
         * changing its file flags; our own fds are O_NONBLOCK. */
        ssize_t n = q->use_send ? send(fd, q->buf + q->off, q->len - q->off,
                                       MSG_DONTWAIT | MSG_NOSIGNAL)
                                : write(fd, q->buf + q->off, q->len - q->off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0) {
            q->off = q->len = 0; /* the peer is gone: nothing will take it */
            return -1;
        }
        q->off += (size_t)n;
    }
    q->off = q->len = 0;
    return 0;
}

size_t mpiexec_outq_pending(const mpiexec_outq_t *q) { return q->len - q->off; }

void mpiexec_outq_free(mpiexec_outq_t *q)
{
    free(q->buf);
    *q = (mpiexec_outq_t){0};
}

mpiexec_lines_t mpiexec_lines_read(tern_pmi_reader_t *rd, int fd, size_t max,
                                   int (*fn)(void *ctx, char *line), void *ctx)
{
    ssize_t n = 0;
    tern_status_t st = tern_pmi_reader_fill(rd, fd, &n);
    if (st == TERN_ERR_AGAIN)
        return MPIEXEC_LINES_AGAIN;
    char *text;
    while ((text = tern_pmi_reader_next(rd)) != NULL) {
        if (strlen(text) > max)
            return MPIEXEC_LINES_TOO_LONG;
        if (fn(ctx, text))
            return MPIEXEC_LINES_STOPPED;
    }
    /* What is left is an unfinished line: it must not grow without end. */
    if (rd->len - rd->start > max)
        return MPIEXEC_LINES_TOO_LONG;
    return st == TERN_OK && n > 0 ? MPIEXEC_LINES_OPEN : MPIEXEC_LINES_CLOSED;
}
