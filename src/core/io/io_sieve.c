/* Data sieving for independent non-contiguous access (io_sieve.h). */
#include "core/io/io_sieve.h"

#include <stdlib.h>
#include <string.h>

/* What one system call costs, in bytes copied (about 1 us against memory
 * bandwidth): the automatic choice's unit. */
#define SIEVE_CALL_BYTES ((MPI_Offset)8192)

typedef struct {
    MPI_Offset off;
    size_t len;
    size_t at; /* where its bytes are in the stream range */
} piece_t;

typedef struct {
    tern_file_t *f;
    int write, held;
    int mode;       /* 0 disable, 1 enable, 2 automatic (the hint) */
    MPI_Offset cap; /* the sieving buffer's bytes (the hint) */
    char *mem;
    size_t next;    /* stream bytes handed to groups so far */
    size_t moved;   /* stream bytes moved */
    size_t seen;    /* pieces of the access so far */
    int eof;        /* a read met the end of the file */
    /* The group being gathered: its pieces, span and data bytes. */
    piece_t *g;
    size_t n, gcap;
    MPI_Offset lo, hi;
    size_t data;
    char *buf; /* the sieving buffer, grown to the largest span sieved */
    size_t bufcap;
    piece_t local[32]; /* the group's first pieces: most accesses need no more */
} sieve_t;

/* Whether sieving the group pays (io_sieve.h). */
static int worth_sieving(const sieve_t *s)
{
    if (s->n < 2 || s->mode == 0 || (s->write && !s->f->fd.readable))
        return 0;
    if (s->mode == 1)
        return 1;
    MPI_Offset span = s->hi - s->lo, calls = (MPI_Offset)s->n;
    if (s->write)
        return 2 * span < (calls - 2) * SIEVE_CALL_BYTES;
    return span < (calls - 1) * SIEVE_CALL_BYTES;
}

/* Moves the group's pieces one by one. */
static tern_status_t move_pieces(sieve_t *s)
{
    tern_file_t *f = s->f;
    for (size_t i = 0; i < s->n; i++) {
        const piece_t *p = &s->g[i];
        struct iovec iov = {.iov_base = s->mem + p->at, .iov_len = p->len};
        if (s->write) {
            tern_status_t st = f->drv->writev(&f->fd, &iov, 1, p->off);
            if (st != TERN_OK)
                return st;
            s->moved += p->len;
            continue;
        }
        size_t got = 0;
        tern_status_t st = f->drv->readv(&f->fd, &iov, 1, p->off, &got);
        s->moved += got;
        if (st != TERN_OK)
            return st;
        if (got < p->len) {
            s->eof = 1;
            return TERN_OK;
        }
    }
    return TERN_OK;
}

/* Moves the group through the sieving buffer: one read of its span, and
 * for a write the pieces copied in and the span written back. */
static tern_status_t sieve_group(sieve_t *s)
{
    tern_file_t *f = s->f;
    size_t span = (size_t)(s->hi - s->lo);
    if (span > s->bufcap) {
        char *b = realloc(s->buf, span);
        if (!b)
            return tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of memory for %zu bytes "
                                      "of data sieving buffer", f->name, span);
        s->buf = b;
        s->bufcap = span;
    }
    struct iovec iov = {.iov_base = s->buf, .iov_len = span};
    size_t got = 0;
    tern_status_t st = f->drv->readv(&f->fd, &iov, 1, s->lo, &got);
    if (st != TERN_OK)
        return st;
    if (!s->write) {
        for (size_t i = 0; i < s->n; i++) {
            const piece_t *p = &s->g[i];
            size_t at = (size_t)(p->off - s->lo);
            size_t have = at >= got ? 0 : got - at < p->len ? got - at : p->len;
            memcpy(s->mem + p->at, s->buf + at, have);
            s->moved += have;
            if (have < p->len) {
                s->eof = 1;
                break;
            }
        }
        return TERN_OK;
    }
    /* Past the end of the file the gaps are holes: zeros. */
    memset(s->buf + got, 0, span - got);
    for (size_t i = 0; i < s->n; i++)
        memcpy(s->buf + (s->g[i].off - s->lo), s->mem + s->g[i].at, s->g[i].len);
    st = f->drv->writev(&f->fd, &iov, 1, s->lo);
    if (st == TERN_OK)
        s->moved += s->data;
    return st;
}

/* Moves the group gathered so far and empties it. A write's group is
 * locked for the move unless the caller holds the atomic-mode lock:
 * exclusive when sieved, shared when its pieces go one by one in an access
 * of several pieces (so they never fall inside another process's
 * read-modify-write). Where the lock cannot be had, the pieces go one by
 * one unlocked. */
static tern_status_t flush(sieve_t *s)
{
    if (s->n == 0)
        return TERN_OK;
    tern_file_t *f = s->f;
    int sieve = worth_sieving(s);
    int lock = s->write && !s->held && s->mode != 0 && (sieve || s->seen > 1);
    /* A file system without byte-range locks: the pieces one by one, which
     * is right for writers of disjoint bytes. */
    if (lock && f->drv->lock(&f->fd, s->lo, s->hi - s->lo, sieve) != TERN_OK)
        lock = sieve = 0;
    tern_status_t st = sieve ? sieve_group(s) : move_pieces(s);
    if (lock) {
        tern_status_t ust = f->drv->unlock(&f->fd, s->lo, s->hi - s->lo);
        if (st == TERN_OK)
            st = ust;
    }
    s->n = 0;
    s->data = 0;
    if (st == TERN_OK && s->eof)
        return TERN_ERR_TRUNCATE; /* stops the walk; not an error */
    return st;
}

/* One piece of the access from the view: joins the group when the group's
 * span stays within the buffer (and, automatic, the gap is worth
 * sieving over); otherwise the group moves and the piece starts the next. */
static tern_status_t on_piece(MPI_Offset off, size_t len, void *arg)
{
    sieve_t *s = arg;
    s->seen++;
    MPI_Offset end = off + (MPI_Offset)len;
    if (s->n > 0) {
        MPI_Offset hi = end > s->hi ? end : s->hi, gap = off - s->hi;
        int joins = hi - s->lo <= s->cap;
        if (joins && s->mode == 2)
            joins = (s->write ? 2 * gap : gap) <= SIEVE_CALL_BYTES;
        if (!joins) {
            tern_status_t st = flush(s);
            if (st != TERN_OK)
                return st;
        }
    }
    if (s->n == s->gcap) {
        size_t cap = 2 * s->gcap;
        piece_t *g = s->g == s->local ? malloc(cap * sizeof *g) : realloc(s->g, cap * sizeof *g);
        if (!g)
            return tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of memory for a data "
                                      "sieving group", s->f->name);
        if (s->g == s->local)
            memcpy(g, s->local, sizeof s->local);
        s->g = g;
        s->gcap = cap;
    }
    if (s->n == 0) {
        s->lo = off;
        s->hi = end;
    } else if (end > s->hi) {
        s->hi = end;
    }
    s->g[s->n++] = (piece_t){.off = off, .len = len, .at = s->next};
    s->next += len;
    s->data += len;
    return TERN_OK;
}

tern_status_t tern_io_sieve_move(tern_file_t *f, int write, MPI_Offset pos, char *mem,
                                 size_t len, int held, size_t *done)
{
    const tern_io_hints_t *h = &f->hints;
    sieve_t s = {.f = f, .write = write, .held = held, .mem = mem,
                 .mode = write ? h->ds_write : h->ds_read,
                 .cap = write ? h->ind_wr_buffer_size : h->ind_rd_buffer_size};
    s.g = s.local;
    s.gcap = sizeof s.local / sizeof s.local[0];
    tern_status_t st = tern_io_view_walk(&f->view, pos, len, on_piece, &s);
    if (st == TERN_OK)
        st = flush(&s);
    if (s.g != s.local)
        free(s.g);
    free(s.buf);
    *done = s.moved;
    return st == TERN_ERR_TRUNCATE && s.eof ? TERN_OK : st;
}
