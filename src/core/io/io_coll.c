/* Collective buffering (io_coll.h). */
#include "core/io/io_coll.h"
#include "core/io/io_pipe.h"
#include "core/coll/coll.h"
#include "core/comm/ulfm.h"
#include "core/datatype/dtype_nums.h"
#include "base/config.h"
#include "core/runtime/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFFSET_MAX ((MPI_Offset)INT64_MAX)

/* Automatic buffering leaves accesses whose pieces average this much or
 * more to each rank: a system call costs about as much as copying 8 KB,
 * and buffering copies every byte twice more (into the message, across
 * to the aggregator), so pieces this large gain nothing from it
 * (docs/design.md, "I/O"). */
#define CB_DIRECT_PIECE ((MPI_Offset)64 << 10)

/* One piece of a rank's access: file bytes [off, off + len) hold stream
 * bytes [spos, spos + len) of its buffer. A view's filetype ascends, so
 * the pieces ascend in both. */
typedef struct {
    MPI_Offset off, spos;
    MPI_Offset len;
} piece_t;

typedef struct {
    piece_t *p;
    size_t n, cap;
    MPI_Offset spos; /* stream position of the next piece */
} pieces_t;

static tern_status_t add_piece(MPI_Offset off, size_t len, void *arg)
{
    pieces_t *ps = arg;
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 16;
        piece_t *p = realloc(ps->p, cap * sizeof *p);
        if (!p)
            return tern_status_detail(TERN_ERR_NOMEM, "out of memory for %zu file pieces", cap);
        ps->p = p;
        ps->cap = cap;
    }
    ps->p[ps->n++] = (piece_t){.off = off, .spos = ps->spos, .len = (MPI_Offset)len};
    ps->spos += (MPI_Offset)len;
    return TERN_OK;
}

/* The first piece that ends after off. */
static size_t first_after(const pieces_t *ps, MPI_Offset off)
{
    size_t lo = 0, hi = ps->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ps->p[mid].off + ps->p[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int tern_io_coll_view_direct(const tern_io_view_t *v)
{
    if (tern_io_view_dense(v))
        return 1;
    if (v->fsize <= 0)
        return 0;
    for (size_t i = 0; i < v->nsegs; i++)
        if ((MPI_Offset)v->segs[i].len < CB_DIRECT_PIECE)
            return 0;
    return 1;
}

int tern_io_coll_wanted(const tern_file_t *f, int write)
{
    int hint = write ? f->hints.cb_write : f->hints.cb_read;
    return hint != 0 && f->comm->size > 1;
}

/* The aggregators: cb_nodes ranks if the hint says, else one per node and
 * one more per 8 ranks of a node, each the lowest ranks of its node.
 * agg[] gets their ranks in the file's communicator, in rank order. */
static int choose_aggregators(const tern_file_t *f, tern_comm_t *c, int *agg)
{
    int n = c->size, want = f->hints.cb_nodes;
    if (want > 0) {
        /* Spread over the ranks: rank i * n / want. */
        for (int i = 0; i < want; i++)
            agg[i] = (int)((long)i * n / want);
        return want;
    }
    int count = 0;
    for (int r = 0; r < n; r++) {
        int node = tern_rt.node_of_rank[tern_comm_world_rank(c, r)], before = 0;
        for (int q = 0; q < r; q++)
            before += tern_rt.node_of_rank[tern_comm_world_rank(c, q)] == node;
        if (before % 8 == 0)
            agg[count++] = r;
    }
    return count;
}

/* What one round moves: per peer, bytes to send and to receive, and their
 * places in one buffer each. */
typedef struct {
    MPI_Count *scount, *sdispl, *rcount, *rdispl;
    char *sbuf, *rbuf;
    size_t scap, rcap;
} round_t;

static tern_status_t grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return TERN_OK;
    char *p = realloc(*buf, need);
    if (!p)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for %zu bytes of collective "
                                  "buffer", need);
    *buf = p;
    *cap = need;
    return TERN_OK;
}

/* Both directions of a round's exchange: counts first, then the data. */
static tern_status_t exchange(tern_comm_t *c, round_t *r)
{
    int n = c->size;
    tern_status_t st = tern_coll_alltoall(c, r->scount, 1, MPI_COUNT, r->rcount, 1, MPI_COUNT,
                                          NULL, 0);
    if (st != TERN_OK)
        return st;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        r->rdispl[i] = (MPI_Count)total;
        total += (size_t)r->rcount[i];
    }
    if ((st = grow(&r->rbuf, &r->rcap, total ? total : 1)) != TERN_OK)
        return st;
    return tern_coll_alltoallvw(c, r->sbuf, TERN_NUMS(r->scount), TERN_NUMS(r->sdispl), NULL,
                                MPI_BYTE, r->rbuf, TERN_NUMS(r->rcount), TERN_NUMS(r->rdispl),
                                NULL, MPI_BYTE, NULL, 0);
}

/* A rank's stream bytes [spos, spos + len) to or from out. */
static tern_status_t stream_copy(void *buf, MPI_Count count, MPI_Datatype dt, int contig,
                                 MPI_Offset spos, char *mem, MPI_Offset len, int to_mem)
{
    if (contig) {
        char *user = (char *)buf + tern_datatype_true_lb(dt) + spos;
        memcpy(to_mem ? mem : user, to_mem ? user : mem, (size_t)len);
        return TERN_OK;
    }
    return to_mem ? tern_datatype_pack_range(buf, (size_t)count, dt, (size_t)spos, mem, (size_t)len)
                  : tern_datatype_unpack_range(mem, (size_t)len, buf, (size_t)count, dt,
                                               (size_t)spos);
}

/* A window of one aggregator in one round: file bytes [lo, hi). */
typedef struct {
    MPI_Offset lo, hi;
} window_t;

/* Aggregator a's window in round k: [start + a*dom + k*cb, +cb), clipped
 * to its domain (empty past the domain's end). */
static window_t round_window(MPI_Offset start, MPI_Offset dom, MPI_Offset cb, int a, int k)
{
    window_t w = {start + a * dom + k * cb, 0};
    MPI_Offset end = start + (a + 1) * dom;
    w.hi = w.lo + cb < end ? w.lo + cb : end;
    return w;
}

/* The message to an aggregator for its window: the number of pieces, the
 * pieces (offset, length), then (writes) their data. */
static size_t message_size(const pieces_t *ps, window_t w, int with_data, size_t *first,
                           size_t *npieces)
{
    size_t i = first_after(ps, w.lo), k = 0;
    size_t data = 0;
    *first = i;
    for (; i < ps->n && ps->p[i].off < w.hi; i++, k++) {
        MPI_Offset a = ps->p[i].off > w.lo ? ps->p[i].off : w.lo;
        MPI_Offset b = ps->p[i].off + ps->p[i].len < w.hi ? ps->p[i].off + ps->p[i].len : w.hi;
        data += (size_t)(b - a);
    }
    *npieces = k;
    if (k == 0)
        return 0;
    /* Whole MPI_Offsets: messages lie end to end in the receive buffer, and
     * the next one's header must be aligned. */
    size_t bytes = sizeof(MPI_Offset) * (1 + 2 * k) + (with_data ? data : 0);
    return (bytes + sizeof(MPI_Offset) - 1) / sizeof(MPI_Offset) * sizeof(MPI_Offset);
}

/* Fills a message (size as message_size) for window w. */
static tern_status_t message_fill(const pieces_t *ps, window_t w, size_t first, size_t k,
                                  int with_data, void *buf, MPI_Count count, MPI_Datatype dt,
                                  int contig, char *out)
{
    MPI_Offset *hdr = (MPI_Offset *)out;
    char *data = out + sizeof(MPI_Offset) * (1 + 2 * k);
    hdr[0] = (MPI_Offset)k;
    for (size_t j = 0; j < k; j++) {
        const piece_t *p = &ps->p[first + j];
        MPI_Offset a = p->off > w.lo ? p->off : w.lo;
        MPI_Offset b = p->off + p->len < w.hi ? p->off + p->len : w.hi;
        hdr[1 + 2 * j] = a;
        hdr[2 + 2 * j] = b - a;
        if (with_data) {
            tern_status_t st = stream_copy(buf, count, dt, contig, p->spos + (a - p->off), data,
                                           b - a, 1);
            if (st != TERN_OK)
                return st;
            data += b - a;
        }
    }
    return TERN_OK;
}

/* The runs an aggregator writes for a round: the pieces every rank sent,
 * in file order, as vectors into the receive buffer (no copy); adjacent
 * pieces make one run, one writev each. */
typedef struct {
    struct iovec *iov; /* the pieces, in file order */
    MPI_Offset *poff;  /* each piece's file offset */
    size_t n, cap;
} runs_t;

static tern_status_t runs_room(runs_t *rs, size_t need)
{
    if (need <= rs->cap)
        return TERN_OK;
    size_t cap = rs->cap ? rs->cap : 16;
    while (cap < need)
        cap *= 2;
    struct iovec *iov = realloc(rs->iov, cap * sizeof *iov);
    if (iov)
        rs->iov = iov;
    MPI_Offset *o = iov ? realloc(rs->poff, cap * sizeof *o) : NULL;
    if (!o)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for %zu pieces of a "
                                  "collective write", cap);
    rs->poff = o;
    rs->cap = cap;
    return TERN_OK;
}

static void runs_free(runs_t *rs)
{
    free(rs->iov);
    free(rs->poff);
}

/* Orders pieces by file offset, then by the order they came in (rank,
 * then the rank's own order): where two ranks wrote the same bytes, the
 * higher rank's go last and stay. */
typedef struct {
    MPI_Offset off;
    size_t seq;
} order_t;

static int order_cmp(const void *a, const void *b)
{
    const order_t *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The aggregator's half of a round of writes: the pieces of every rank
 * (messages in r's receive buffer) in file order, as vectors into that
 * buffer. Each rank's pieces ascend already; they are merged by a sort
 * only when two ranks' pieces alternate. */
static tern_status_t aggregate_runs(const tern_file_t *f, const round_t *r, runs_t *rs)
{
    int n = f->comm->size;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        if (r->rcount[i])
            total += (size_t)((const MPI_Offset *)(r->rbuf + r->rdispl[i]))[0];
    rs->n = 0;
    tern_status_t st = runs_room(rs, total ? total : 1);
    if (st != TERN_OK)
        return st;
    int sorted = 1;
    for (int i = 0; i < n; i++) {
        if (r->rcount[i] == 0)
            continue;
        MPI_Offset *hdr = (MPI_Offset *)(r->rbuf + r->rdispl[i]);
        size_t k = (size_t)hdr[0];
        char *data = (char *)(hdr + 1 + 2 * k);
        for (size_t j = 0; j < k; j++) {
            MPI_Offset off = hdr[1 + 2 * j], len = hdr[2 + 2 * j];
            if (rs->n && off < rs->poff[rs->n - 1])
                sorted = 0;
            rs->iov[rs->n] = (struct iovec){.iov_base = data, .iov_len = (size_t)len};
            rs->poff[rs->n++] = off;
            data += len;
        }
    }
    if (sorted || rs->n < 2)
        return TERN_OK;
    order_t *ord = malloc(rs->n * sizeof *ord);
    struct iovec *iov = malloc(rs->n * sizeof *iov);
    MPI_Offset *poff = malloc(rs->n * sizeof *poff);
    if (!ord || !iov || !poff) {
        free(ord);
        free(iov);
        free(poff);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for ordering %zu pieces of a "
                                  "collective write", rs->n);
    }
    for (size_t i = 0; i < rs->n; i++)
        ord[i] = (order_t){rs->poff[i], i};
    qsort(ord, rs->n, sizeof *ord, order_cmp);
    for (size_t i = 0; i < rs->n; i++) {
        iov[i] = rs->iov[ord[i].seq];
        poff[i] = ord[i].off;
    }
    free(ord);
    free(rs->iov);
    free(rs->poff);
    rs->iov = iov;
    rs->poff = poff;
    rs->cap = rs->n;
    return TERN_OK;
}

/* Writes the runs (arg: a runs_t): pieces that continue the one before
 * go in the same writev; a gap (bytes nobody wrote keep the file's) or
 * an overlap starts the next. */
static tern_status_t write_runs(tern_file_t *f, void *arg)
{
    const runs_t *rs = arg;
    for (size_t i = 0; i < rs->n;) {
        size_t j = i + 1;
        MPI_Offset end = rs->poff[i] + (MPI_Offset)rs->iov[i].iov_len;
        while (j < rs->n && rs->poff[j] == end)
            end += (MPI_Offset)rs->iov[j++].iov_len;
        tern_status_t st = TERN_OK;
        for (size_t b = i; b < j && st == TERN_OK; b += INT32_MAX)
            st = f->drv->writev(&f->fd, &rs->iov[b], (int)(j - b < INT32_MAX ? j - b : INT32_MAX),
                                rs->poff[b]);
        if (st != TERN_OK)
            return st;
        i = j;
    }
    return TERN_OK;
}

/* A span of the file an aggregator reads into its window for a round. */
typedef struct {
    char *win;
    MPI_Offset lo, hi; /* empty when hi <= lo */
} span_t;

/* The span the requests in r (its receive side) cover, into win. */
static span_t request_span(const round_t *r, int n, char *win, window_t w)
{
    span_t s = {win, w.hi, w.lo};
    for (int i = 0; i < n; i++) {
        if (r->rcount[i] == 0)
            continue;
        const MPI_Offset *hdr = (const MPI_Offset *)(r->rbuf + r->rdispl[i]);
        size_t k = (size_t)hdr[0];
        for (size_t j = 0; j < k; j++) {
            MPI_Offset off = hdr[1 + 2 * j], len = hdr[2 + 2 * j];
            if (off < s.lo)
                s.lo = off;
            if (off + len > s.hi)
                s.hi = off + len;
        }
    }
    return s;
}

/* Reads a span (arg: a span_t) once; past the end of the file, zeros (the
 * ranks count only the bytes before it). */
static tern_status_t read_span(tern_file_t *f, void *arg)
{
    const span_t *s = arg;
    if (s->hi <= s->lo)
        return TERN_OK;
    size_t len = (size_t)(s->hi - s->lo), got = 0;
    struct iovec iov = {.iov_base = s->win, .iov_len = len};
    tern_status_t st = f->drv->readv(&f->fd, &iov, 1, s->lo, &got);
    if (st == TERN_OK && got < len)
        memset(s->win + got, 0, len - got);
    return st;
}

/* The aggregator's answers to the requests in rq (its receive side) from
 * the span read: an's send side, each rank its pieces' bytes in order. */
static tern_status_t answer(const round_t *rq, round_t *an, int n, const span_t *s)
{
    size_t out = 0;
    for (int i = 0; i < n; i++) {
        an->scount[i] = 0;
        an->sdispl[i] = (MPI_Count)out;
        if (rq->rcount[i] == 0)
            continue;
        const MPI_Offset *hdr = (const MPI_Offset *)(rq->rbuf + rq->rdispl[i]);
        for (size_t j = 0; j < (size_t)hdr[0]; j++)
            an->scount[i] += hdr[2 + 2 * j];
        out += (size_t)an->scount[i];
    }
    tern_status_t st = grow(&an->sbuf, &an->scap, out ? out : 1);
    for (int i = 0; i < n && st == TERN_OK; i++) {
        if (rq->rcount[i] == 0)
            continue;
        const MPI_Offset *hdr = (const MPI_Offset *)(rq->rbuf + rq->rdispl[i]);
        char *dst = an->sbuf + an->sdispl[i];
        for (size_t j = 0; j < (size_t)hdr[0]; j++) {
            MPI_Offset off = hdr[1 + 2 * j], len = hdr[2 + 2 * j];
            memcpy(dst, s->win + (off - s->lo), (size_t)len);
            dst += len;
        }
    }
    if (st != TERN_OK)
        memset(an->scount, 0, (size_t)n * sizeof *an->scount);
    return st;
}

/* What every rank knows of one buffered access: the aggregators, their
 * domains, and this rank's pieces and memory. */
typedef struct {
    tern_file_t *f;
    tern_comm_t *comm; /* the exchanges' (f's own or its duplicate) */
    int n, na, me_agg;
    const int *agg;
    MPI_Offset start, dom, cb;
    const pieces_t *ps;
    void *buf;
    MPI_Count count;
    MPI_Datatype dt;
    int contig;
} plan_t;

/* Round k's messages from this rank to the aggregators (its pieces in
 * their windows and, for writes, their data), exchanged: r's receive side
 * gets the messages to this rank. firsts/ks: per aggregator, the first of
 * this rank's pieces in its window and how many. On an error (*st) this
 * rank sends nothing. Returns the exchange's status. */
static tern_status_t post_round(const plan_t *p, int write, int k, round_t *r, size_t *firsts,
                                size_t *ks, tern_status_t *st)
{
    int n = p->n;
    size_t need = 0;
    memset(r->scount, 0, (size_t)n * 2 * sizeof *r->scount);
    for (int a = 0; a < p->na; a++) {
        window_t w = round_window(p->start, p->dom, p->cb, a, k);
        size_t m = *st == TERN_OK && w.hi > w.lo
                       ? message_size(p->ps, w, write, &firsts[a], &ks[a]) : 0;
        if (m == 0)
            ks[a] = 0;
        r->scount[p->agg[a]] = (MPI_Count)m;
        r->sdispl[p->agg[a]] = (MPI_Count)need;
        need += m;
    }
    if (*st == TERN_OK)
        *st = grow(&r->sbuf, &r->scap, need ? need : 1);
    for (int a = 0; a < p->na && *st == TERN_OK; a++) {
        if (!ks[a])
            continue;
        window_t w = round_window(p->start, p->dom, p->cb, a, k);
        *st = message_fill(p->ps, w, firsts[a], ks[a], write, p->buf, p->count, p->dt, p->contig,
                           r->sbuf + r->sdispl[p->agg[a]]);
    }
    if (*st != TERN_OK)
        memset(r->scount, 0, (size_t)n * sizeof *r->scount);
    return exchange(p->comm, r);
}

/* Places the aggregators' answers of round k (an's receive side): each
 * aggregator's bytes in the order of the pieces asked of it. */
static tern_status_t place_answers(const plan_t *p, int k, const round_t *an,
                                   const size_t *firsts, const size_t *ks)
{
    tern_status_t st = TERN_OK;
    for (int a = 0; a < p->na && st == TERN_OK; a++) {
        if (!ks[a] || an->rcount[p->agg[a]] == 0)
            continue;
        window_t w = round_window(p->start, p->dom, p->cb, a, k);
        char *data = an->rbuf + an->rdispl[p->agg[a]];
        for (size_t j = 0; j < ks[a] && st == TERN_OK; j++) {
            const piece_t *pc = &p->ps->p[firsts[a] + j];
            MPI_Offset x = pc->off > w.lo ? pc->off : w.lo;
            MPI_Offset y = pc->off + pc->len < w.hi ? pc->off + pc->len : w.hi;
            st = stream_copy(p->buf, p->count, p->dt, p->contig, pc->spos + (x - pc->off), data,
                             y - x, 0);
            data += y - x;
        }
    }
    return st;
}

/* The rounds of a buffered write. Round k's messages land in receive
 * buffer k % 2 (the one buffer without a pipeline); the aggregator orders
 * their pieces and hands the write to the thread, which writes them
 * straight from that buffer while round k + 1 is exchanged into the
 * other. *st: this rank's status; returns the exchanges'. */
static tern_status_t write_rounds(const plan_t *p, int rounds, round_t *r, size_t *fk,
                                  runs_t *runs, tern_io_pipe_t *pipe, int pipelined,
                                  tern_status_t *st)
{
    char *rbufs[2] = {r->rbuf, NULL};
    size_t rcaps[2] = {r->rcap, 0};
    tern_status_t cst = TERN_OK;
    for (int k = 0, cur = 0; k < rounds && cst == TERN_OK; k++) {
        r->rbuf = rbufs[cur];
        r->rcap = rcaps[cur];
        cst = post_round(p, 1, k, r, fk, fk + p->n, st);
        rbufs[cur] = r->rbuf;
        rcaps[cur] = r->rcap;
        if (cst != TERN_OK || p->me_agg < 0)
            continue;
        tern_status_t ast = *st == TERN_OK ? aggregate_runs(p->f, r, &runs[cur]) : TERN_OK;
        /* Round k - 1's write (from the other buffer) went on meanwhile. */
        tern_status_t wst = tern_io_pipe_wait(pipe);
        if (*st == TERN_OK)
            *st = wst;
        if (ast == TERN_OK && *st == TERN_OK && runs[cur].n)
            ast = tern_io_pipe_submit(pipe, pipelined, p->f, write_runs, &runs[cur]);
        if (*st == TERN_OK)
            *st = ast;
        cur ^= pipelined;
    }
    /* The last write is done before its buffer goes. */
    tern_status_t wst = tern_io_pipe_wait(pipe);
    if (*st == TERN_OK)
        *st = wst;
    r->rbuf = rbufs[0];
    r->rcap = rcaps[0];
    free(rbufs[1]);
    return cst;
}

/* The rounds of a buffered read. The requests of round k + 1 are
 * exchanged before the answers of round k; pipelined, the aggregator's
 * read of round k + 1 (into the other buffer) then runs on the thread
 * while round k's answers are exchanged and placed. rq: requests, an:
 * answers; fk: firsts and counts of pieces per aggregator, for two
 * rounds. */
static tern_status_t read_rounds(const plan_t *p, int rounds, round_t *rq, round_t *an,
                                 size_t *fk, char **wins, tern_io_pipe_t *pipe, int pipelined,
                                 tern_status_t *st)
{
    int n = p->n, agg = p->me_agg >= 0 && wins[0];
    span_t spans[2];
    if (rounds == 0)
        return TERN_OK; /* nobody moves anything (every rank knows) */
    tern_status_t cst = post_round(p, 0, 0, rq, fk, fk + n, st), rst = TERN_OK;
    if (cst == TERN_OK && agg) {
        spans[0] = request_span(rq, n, wins[0],
                                round_window(p->start, p->dom, p->cb, p->me_agg, 0));
        rst = tern_io_pipe_submit(pipe, pipelined, p->f, read_span, &spans[0]);
    }
    for (int k = 0; k < rounds && cst == TERN_OK; k++) {
        /* Round k's pieces and span are slot k % 2; its window the
         * same, or the one window without a pipeline. */
        int b = k % 2, nb = (k + 1) % 2;
        memset(an->scount, 0, (size_t)n * 2 * sizeof *an->scount);
        if (agg) {
            tern_status_t wst = tern_io_pipe_wait(pipe);
            if (rst == TERN_OK)
                rst = wst;
            if (rst == TERN_OK)
                rst = answer(rq, an, n, &spans[b]);
            if (*st == TERN_OK)
                *st = rst;
        }
        if (k + 1 < rounds) {
            if ((cst = post_round(p, 0, k + 1, rq, fk + 2 * (size_t)n * nb,
                                  fk + 2 * (size_t)n * nb + n, st)) != TERN_OK)
                break;
            if (agg) {
                spans[nb] = request_span(rq, n, wins[pipelined ? nb : 0],
                                         round_window(p->start, p->dom, p->cb, p->me_agg, k + 1));
                if (rst == TERN_OK)
                    rst = tern_io_pipe_submit(pipe, pipelined, p->f, read_span, &spans[nb]);
            }
        }
        if ((cst = exchange(p->comm, an)) != TERN_OK)
            break;
        if (*st == TERN_OK)
            *st = place_answers(p, k, an, fk + 2 * (size_t)n * b, fk + 2 * (size_t)n * b + n);
    }
    return cst;
}

/* A rank's own pieces of the access, in order. */
static tern_status_t my_pieces(tern_file_t *f, MPI_Offset pos, size_t total, pieces_t *ps)
{
    memset(ps, 0, sizeof *ps);
    if (pos < 0 || total == 0)
        return TERN_OK;
    return tern_io_view_walk(&f->view, pos, total, add_piece, ps);
}

/* A buffered access decided on (tern_io_coll_prepare), waiting for its
 * rounds. */
struct tern_io_coll {
    tern_file_t *f;
    int write, contig;
    void *buf;
    MPI_Count count;
    MPI_Datatype dt;
    size_t total;
    pieces_t ps;
    MPI_Offset lo, hi;
    tern_status_t st; /* this rank's own (it takes part with no data if not OK) */
};

tern_status_t tern_io_coll_prepare(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                                   MPI_Count count, MPI_Datatype dt, tern_io_coll_t **plan_p,
                                   int *used)
{
    tern_comm_t *c = f->comm;
    int n = c->size;
    size_t total = pos < 0 ? 0 : (size_t)count * (size_t)tern_datatype_size(dt);
    *plan_p = NULL;
    *used = 0;
    if (!write && f->views_direct && f->hints.cb_read == 2 &&
        !(f->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) && !tern_ulfm_ft()) {
        /* Automatic, a file no rank writes (amode is the same on every
         * rank), and every rank's view without holes or of large pieces
         * only (block3d's subarrays at 2 ranks: one 32 MB range each):
         * each rank's access is one range, or ranges an aggregator would
         * read no faster, which it reads at once, and no rank waits for
         * another (no exchange of extents either: on a loaded machine
         * each collective step costs about a time slice; the extents
         * would choose the same, "large"). A file open for writing keeps
         * the exchange, which also orders the read after the other ranks'
         * writes before it (programs that write_all and then read_all
         * other ranks' data without MPI_File_sync and a barrier rely on
         * it). Fault-tolerant mode keeps it too: a collective read must
         * report a failed member (ULFM), and the exchange is where the
         * survivors learn of it (a rank reading alone would not). */
        return TERN_OK;
    }
    if (write && f->views_dense && f->hints.cb_write == 2 && !f->atomic && !tern_ulfm_ft()) {
        /* The same for writes in nonatomic mode: each rank's access is one
         * range, which it writes at once. Buffering would only come in
         * where ranges overlap, and overlapping writes of one collective
         * call are conflicting accesses of different processes, whose
         * result nonatomic mode leaves undefined (MPI 14.6.1): each byte
         * is then one rank's. A read of the others' data that follows
         * still exchanges (files open for writing), after this rank's
         * write is done. Atomic mode keeps the exchange, and so does
         * fault-tolerant mode: there a collective write reports a failed
         * member, which takes a step with the others. */
        return TERN_OK;
    }
    pieces_t ps;
    tern_status_t st = my_pieces(f, pos, total, &ps), mine = st;
    /* Every rank's extent of the file and its pieces: the aggregators'
     * domains cover the union; accesses that do not interleave, or whose
     * pieces are large, need no buffering. */
    MPI_Offset ext[4] = {OFFSET_MAX, -1, 0, 0};
    if (st == TERN_OK && ps.n) {
        ext[0] = ps.p[0].off;
        ext[1] = ps.p[ps.n - 1].off + ps.p[ps.n - 1].len;
        ext[2] = (MPI_Offset)ps.n;
        ext[3] = (MPI_Offset)total;
    }
    MPI_Offset *exts = malloc((size_t)n * 4 * sizeof *exts);
    tern_status_t cst = exts ? tern_coll_allgather(c, ext, 4, MPI_OFFSET, exts, 4, MPI_OFFSET,
                                                   NULL, 0)
                             : tern_status_detail(TERN_ERR_NOMEM, "out of memory for %d file "
                                                  "extents", n);
    if (cst != TERN_OK) {
        free(exts);
        free(ps.p);
        return cst;
    }
    MPI_Offset lo = OFFSET_MAX, hi = 0, pieces = 0, data = 0;
    int interleaved = 0;
    for (int i = 0; i < n; i++) {
        if (exts[4 * i + 1] < 0)
            continue;
        for (int j = 0; j < i && !interleaved; j++)
            interleaved = exts[4 * j + 1] >= 0 && exts[4 * i] < exts[4 * j + 1] &&
                          exts[4 * j] < exts[4 * i + 1];
        if (exts[4 * i] < lo)
            lo = exts[4 * i];
        if (exts[4 * i + 1] > hi)
            hi = exts[4 * i + 1];
        pieces += exts[4 * i + 2];
        data += exts[4 * i + 3];
    }
    free(exts);
    int large = pieces > 0 && data / pieces >= CB_DIRECT_PIECE;
    if ((!interleaved || large) && (write ? f->hints.cb_write : f->hints.cb_read) == 2) {
        /* Automatic, and every rank has a range of its own, or pieces so
         * large that one system call each costs little beside them: each
         * writes or reads its own, at once (no copy through an
         * aggregator). */
        free(ps.p);
        return mine;
    }
    tern_io_coll_t *p = malloc(sizeof *p);
    if (!p) {
        /* Without memory this rank cannot take part; the others would
         * wait: the job's collectives report it (every rank runs out or
         * none in practice). */
        free(ps.p);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for collective buffering");
    }
    *p = (tern_io_coll_t){.f = f, .write = write, .contig = tern_datatype_is_contig(dt),
                          .buf = buf, .count = count, .dt = dt, .total = total, .ps = ps,
                          .lo = lo, .hi = hi, .st = st};
    *plan_p = p;
    *used = 1;
    return TERN_OK;
}

void tern_io_coll_free(tern_io_coll_t *p)
{
    if (!p)
        return;
    free(p->ps.p);
    free(p);
}

tern_status_t tern_io_coll_run(tern_io_coll_t *p, tern_comm_t *c, size_t *bytes)
{
    tern_file_t *f = p->f;
    int n = c->size, write = p->write;
    size_t total = p->total;
    MPI_Offset lo = p->lo, hi = p->hi;
    tern_status_t st = p->st, cst;
    *bytes = 0;
    round_t r = {0}, an = {0};
    int *agg = malloc((size_t)n * sizeof *agg);
    /* Per aggregator, the first of this rank's pieces in its window and
     * how many: two rounds' worth (reads place round k while round k + 1
     * is asked). */
    size_t *fk = malloc((size_t)n * 4 * sizeof *fk);
    r.scount = calloc((size_t)n * 4, sizeof *r.scount);
    an.scount = calloc((size_t)n * 4, sizeof *an.scount);
    if (!agg || !r.scount || !an.scount || !fk) {
        st = tern_status_detail(TERN_ERR_NOMEM, "out of memory for collective buffering");
        /* Without memory this rank cannot take part; the others would
         * wait: the job's collectives report it (every rank runs out or
         * none in practice). */
        free(agg);
        free(r.scount);
        free(an.scount);
        free(fk);
        return st;
    }
    r.sdispl = r.scount + n;
    r.rcount = r.scount + 2 * n;
    r.rdispl = r.scount + 3 * n;
    an.sdispl = an.scount + n;
    an.rcount = an.scount + 2 * n;
    an.rdispl = an.scount + 3 * n;
    int na = choose_aggregators(f, c, agg), me_agg = -1;
    for (int i = 0; i < na; i++)
        if (agg[i] == c->rank)
            me_agg = i;
    /* Domains: the union split evenly, aligned to the stripe or block.
     * They start at the stripe below the union, so they must cover the
     * span from there (not from lo): the union's last bytes would belong
     * to no aggregator. */
    MPI_Offset align = f->hints.striping_unit > 0 ? f->hints.striping_unit
                                                   : (MPI_Offset)f->drv->block_size(&f->fd);
    MPI_Offset start = hi > lo ? lo / align * align : 0;
    MPI_Offset cb = f->hints.cb_buffer_size, span = hi > lo ? hi - start : 0;
    MPI_Offset dom = (span + na - 1) / na;
    dom = (dom + align - 1) / align * align;
    if (dom == 0)
        dom = align;
    int rounds = span ? (int)((dom + cb - 1) / cb) : 0;
    /* Pipelined (knob TERN_IO_CB_PIPELINE, over more than one round): an
     * aggregator has two windows and a thread of the call that writes
     * round k, or reads round k + 1, while the next exchange proceeds
     * (docs/design.md, "I/O"). */
    char *wins[2] = {NULL, NULL};
    runs_t runs[2] = {{0}};
    tern_io_pipe_t pipe = {0};
    int pipelined = 0;
    if (me_agg >= 0 && write) {
        /* Writes go from the receive buffers: no window. */
        pipelined = rounds > 1 && tern_knob_bool(TERN_KNOB_IO_CB_PIPELINE);
    } else if (me_agg >= 0) {
        wins[0] = malloc((size_t)cb);
        if (!wins[0])
            st = tern_status_detail(TERN_ERR_NOMEM, "out of memory for a %lld-byte collective "
                                    "buffer", (long long)cb);
        /* Without memory for the second window the rounds take turns. */
        if (st == TERN_OK && rounds > 1 && tern_knob_bool(TERN_KNOB_IO_CB_PIPELINE))
            pipelined = (wins[1] = malloc((size_t)cb)) != NULL;
    }
    plan_t plan = {.f = f, .comm = c, .n = n, .na = na, .me_agg = me_agg, .agg = agg,
                   .start = start, .dom = dom, .cb = cb, .ps = &p->ps, .buf = p->buf,
                   .count = p->count, .dt = p->dt, .contig = p->contig};
    cst = write ? write_rounds(&plan, rounds, &r, fk, runs, &pipe, pipelined, &st)
                : read_rounds(&plan, rounds, &r, &an, fk, wins, &pipe, pipelined, &st);
    /* The thread's last job is done before anything is freed. */
    tern_status_t pst = tern_io_pipe_end(&pipe);
    if (st == TERN_OK)
        st = pst;
    if (write && cst == TERN_OK) {
        /* The aggregators' writes are done before any rank returns: a rank
         * reads its own writes back right after (MPI 14.6.1), and an error
         * of a write is every writer's. */
        st = tern_file_agree_on(f, c, st, "collective write");
    }
    if (st == TERN_OK && cst == TERN_OK) {
        if (write) {
            *bytes = total;
        } else if (total) {
            /* Bytes before the end of the file, in stream order. */
            MPI_Offset size = 0;
            st = f->drv->get_size(&f->fd, &size);
            size_t got = 0;
            const pieces_t *ps = &p->ps;
            for (size_t i = 0; i < ps->n && st == TERN_OK; i++) {
                if (ps->p[i].off + ps->p[i].len <= size) {
                    got += (size_t)ps->p[i].len;
                    continue;
                }
                if (ps->p[i].off < size)
                    got += (size_t)(size - ps->p[i].off);
                break;
            }
            *bytes = got;
        }
    }
    free(wins[0]);
    free(wins[1]);
    runs_free(&runs[0]);
    runs_free(&runs[1]);
    free(r.sbuf);
    free(r.rbuf);
    free(r.scount);
    free(an.sbuf);
    free(an.rbuf);
    free(an.scount);
    free(agg);
    free(fk);
    return cst != TERN_OK ? cst : st;
}

tern_status_t tern_io_coll_access(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                                  MPI_Count count, MPI_Datatype dt, size_t *bytes, int *used)
{
    tern_io_coll_t *p = NULL;
    *bytes = 0;
    tern_status_t st = tern_io_coll_prepare(f, write, pos, buf, count, dt, &p, used);
    if (p) {
        st = tern_io_coll_run(p, f->comm, bytes);
        tern_io_coll_free(p);
    }
    return st;
}
