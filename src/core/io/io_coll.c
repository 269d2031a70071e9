/* Collective buffering (io_coll.h). */
#include "core/io/io_coll.h"
#include "core/coll/coll.h"
#include "core/datatype/dtype_nums.h"
#include "core/runtime/runtime.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OFFSET_MAX ((MPI_Offset)INT64_MAX)

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

int tern_io_coll_wanted(const tern_file_t *f, int write)
{
    int hint = write ? f->hints.cb_write : f->hints.cb_read;
    return hint != 0 && f->comm->size > 1;
}

/* The aggregators: cb_nodes ranks if the hint says, else one per node and
 * one more per 8 ranks of a node, each the lowest ranks of its node.
 * agg[] gets their ranks in the file's communicator, in rank order. */
static int choose_aggregators(const tern_file_t *f, int *agg)
{
    tern_comm_t *c = f->comm;
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

/* The aggregator's half of a round of writes: the pieces of every rank
 * (messages in rbuf) land in win; covered bytes are written, in one write
 * when they cover the window's used span, else run by run. */
static tern_status_t aggregate_write(tern_file_t *f, round_t *r, char *win, window_t w,
                                     unsigned char *covered)
{
    int n = f->comm->size;
    MPI_Offset used_lo = w.hi, used_hi = w.lo;
    size_t span = (size_t)(w.hi - w.lo);
    memset(covered, 0, span);
    for (int i = 0; i < n; i++) {
        if (r->rcount[i] == 0)
            continue;
        MPI_Offset *hdr = (MPI_Offset *)(r->rbuf + r->rdispl[i]);
        size_t k = (size_t)hdr[0];
        char *data = (char *)(hdr + 1 + 2 * k);
        for (size_t j = 0; j < k; j++) {
            MPI_Offset off = hdr[1 + 2 * j], len = hdr[2 + 2 * j];
            memcpy(win + (off - w.lo), data, (size_t)len);
            memset(covered + (off - w.lo), 1, (size_t)len);
            data += len;
            if (off < used_lo)
                used_lo = off;
            if (off + len > used_hi)
                used_hi = off + len;
        }
    }
    /* Runs of covered bytes, each written once (holes keep the file's
     * bytes: nobody wrote them). */
    MPI_Offset a = used_lo;
    while (a < used_hi) {
        while (a < used_hi && !covered[a - w.lo])
            a++;
        MPI_Offset b = a;
        while (b < used_hi && covered[b - w.lo])
            b++;
        if (b > a) {
            struct iovec iov = {.iov_base = win + (a - w.lo), .iov_len = (size_t)(b - a)};
            tern_status_t st = f->drv->writev(&f->fd, &iov, 1, a);
            if (st != TERN_OK)
                return st;
        }
        a = b;
    }
    return TERN_OK;
}

/* The aggregator's half of a round of reads: reads the span the requests
 * cover (once) and answers each rank with its pieces' bytes. */
static tern_status_t aggregate_read(tern_file_t *f, round_t *r, char *win, window_t w)
{
    int n = f->comm->size;
    MPI_Offset lo = w.hi, hi = w.lo;
    size_t out = 0;
    for (int i = 0; i < n; i++) {
        r->scount[i] = 0;
        if (r->rcount[i] == 0)
            continue;
        MPI_Offset *hdr = (MPI_Offset *)(r->rbuf + r->rdispl[i]);
        size_t k = (size_t)hdr[0];
        for (size_t j = 0; j < k; j++) {
            MPI_Offset off = hdr[1 + 2 * j], len = hdr[2 + 2 * j];
            r->scount[i] += len;
            if (off < lo)
                lo = off;
            if (off + len > hi)
                hi = off + len;
        }
        r->sdispl[i] = (MPI_Count)out;
        out += (size_t)r->scount[i];
    }
    tern_status_t st = TERN_OK;
    if (hi > lo) {
        struct iovec iov = {.iov_base = win, .iov_len = (size_t)(hi - lo)};
        size_t got = 0;
        st = f->drv->readv(&f->fd, &iov, 1, lo, &got);
        /* Past the end of the file: zeros (the ranks count only the bytes
         * before it). */
        if (st == TERN_OK && got < (size_t)(hi - lo))
            memset(win + got, 0, (size_t)(hi - lo) - got);
    }
    if (st == TERN_OK)
        st = grow(&r->sbuf, &r->scap, out ? out : 1);
    for (int i = 0; i < n && st == TERN_OK; i++) {
        if (r->rcount[i] == 0)
            continue;
        MPI_Offset *hdr = (MPI_Offset *)(r->rbuf + r->rdispl[i]);
        size_t k = (size_t)hdr[0];
        char *dst = r->sbuf + r->sdispl[i];
        for (size_t j = 0; j < k; j++) {
            MPI_Offset off = hdr[1 + 2 * j], len = hdr[2 + 2 * j];
            memcpy(dst, win + (off - lo), (size_t)len);
            dst += len;
        }
    }
    return st;
}

/* A rank's own pieces of the access, in order. */
static tern_status_t my_pieces(tern_file_t *f, MPI_Offset pos, size_t total, pieces_t *ps)
{
    memset(ps, 0, sizeof *ps);
    if (pos < 0 || total == 0)
        return TERN_OK;
    return tern_io_view_walk(&f->view, pos, total, add_piece, ps);
}

tern_status_t tern_io_coll_access(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                                  MPI_Count count, MPI_Datatype dt, size_t *bytes, int *used)
{
    tern_comm_t *c = f->comm;
    int n = c->size;
    size_t total = pos < 0 ? 0 : (size_t)count * (size_t)tern_datatype_size(dt);
    int contig = tern_datatype_is_contig(dt);
    *bytes = 0;
    pieces_t ps;
    tern_status_t st = my_pieces(f, pos, total, &ps), mine = st;
    /* Every rank's extent of the file: the aggregators' domains cover the
     * union; accesses that do not interleave need no buffering. */
    MPI_Offset ext[2] = {OFFSET_MAX, -1};
    if (st == TERN_OK && ps.n) {
        ext[0] = ps.p[0].off;
        ext[1] = ps.p[ps.n - 1].off + ps.p[ps.n - 1].len;
    }
    MPI_Offset *exts = malloc((size_t)n * 2 * sizeof *exts);
    tern_status_t cst = exts ? tern_coll_allgather(c, ext, 2, MPI_OFFSET, exts, 2, MPI_OFFSET,
                                                   NULL, 0)
                             : tern_status_detail(TERN_ERR_NOMEM, "out of memory for %d file "
                                                  "extents", n);
    if (cst != TERN_OK) {
        free(exts);
        free(ps.p);
        return cst;
    }
    MPI_Offset lo = OFFSET_MAX, hi = 0;
    int interleaved = 0;
    for (int i = 0; i < n; i++) {
        if (exts[2 * i + 1] < 0)
            continue;
        for (int j = 0; j < i && !interleaved; j++)
            interleaved = exts[2 * j + 1] >= 0 && exts[2 * i] < exts[2 * j + 1] &&
                          exts[2 * j] < exts[2 * i + 1];
        if (exts[2 * i] < lo)
            lo = exts[2 * i];
        if (exts[2 * i + 1] > hi)
            hi = exts[2 * i + 1];
    }
    free(exts);
    if (!interleaved && (write ? f->hints.cb_write : f->hints.cb_read) == 2) {
        /* Automatic, and every rank has a range of its own: each writes
         * or reads its own, at once (no copy through an aggregator). */
        free(ps.p);
        *used = 0;
        return mine;
    }
    *used = 1;
    round_t r = {0};
    int *agg = malloc((size_t)n * sizeof *agg);
    size_t *firsts = malloc((size_t)n * 2 * sizeof *firsts), *ks = firsts ? firsts + n : NULL;
    r.scount = calloc((size_t)n * 4, sizeof *r.scount);
    char *win = NULL;
    unsigned char *covered = NULL;
    if (!agg || !r.scount || !firsts) {
        st = tern_status_detail(TERN_ERR_NOMEM, "out of memory for collective buffering");
        /* Without memory this rank cannot take part; the others would
         * wait: the job's collectives report it (every rank runs out or
         * none in practice). */
        free(agg);
        free(r.scount);
        free(firsts);
        free(ps.p);
        return st;
    }
    r.sdispl = r.scount + n;
    r.rcount = r.scount + 2 * n;
    r.rdispl = r.scount + 3 * n;
    int na = choose_aggregators(f, agg), me_agg = -1;
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
    if (me_agg >= 0) {
        win = malloc((size_t)cb);
        covered = write ? malloc((size_t)cb) : NULL;
        if (!win || (write && !covered))
            st = tern_status_detail(TERN_ERR_NOMEM, "out of memory for a %lld-byte collective "
                                    "buffer", (long long)cb);
    }
    for (int k = 0; k < rounds && cst == TERN_OK; k++) {
        /* This round's windows: aggregator a's is [start + a*dom + k*cb, +cb)
         * within its domain. */
        size_t need = 0;
        memset(r.scount, 0, (size_t)n * 2 * sizeof *r.scount);
        for (int a = 0; a < na; a++) {
            window_t w = round_window(start, dom, cb, a, k);
            size_t m = st == TERN_OK && w.hi > w.lo
                           ? message_size(&ps, w, write, &firsts[a], &ks[a]) : 0;
            if (m == 0)
                ks[a] = 0;
            r.scount[agg[a]] = (MPI_Count)m;
            r.sdispl[agg[a]] = (MPI_Count)need;
            need += m;
        }
        if (st == TERN_OK)
            st = grow(&r.sbuf, &r.scap, need ? need : 1);
        for (int a = 0; a < na && st == TERN_OK; a++) {
            if (!ks[a])
                continue;
            window_t w = round_window(start, dom, cb, a, k);
            st = message_fill(&ps, w, firsts[a], ks[a], write, buf, count, dt, contig,
                              r.sbuf + r.sdispl[agg[a]]);
        }
        if (st != TERN_OK)
            memset(r.scount, 0, (size_t)n * sizeof *r.scount);
        if ((cst = exchange(c, &r)) != TERN_OK)
            break;
        window_t mw = me_agg >= 0 ? round_window(start, dom, cb, me_agg, k) : (window_t){0, 0};
        if (write) {
            if (me_agg >= 0 && win && mw.hi > mw.lo) {
                tern_status_t ast = aggregate_write(f, &r, win, mw, covered);
                if (st == TERN_OK)
                    st = ast;
            }
            continue;
        }
        /* Reads: the aggregators answer. */
        memset(r.scount, 0, (size_t)n * 2 * sizeof *r.scount);
        if (me_agg >= 0 && win && mw.hi > mw.lo) {
            tern_status_t ast = aggregate_read(f, &r, win, mw);
            if (ast != TERN_OK) {
                memset(r.scount, 0, (size_t)n * sizeof *r.scount);
                if (st == TERN_OK)
                    st = ast;
            }
        }
        if ((cst = exchange(c, &r)) != TERN_OK)
            break;
        /* Place the answers: each aggregator's bytes in the order of the
         * pieces asked of it. */
        for (int a = 0; a < na && st == TERN_OK; a++) {
            if (!ks[a] || r.rcount[agg[a]] == 0)
                continue;
            window_t w = round_window(start, dom, cb, a, k);
            char *data = r.rbuf + r.rdispl[agg[a]];
            for (size_t j = 0; j < ks[a] && st == TERN_OK; j++) {
                const piece_t *p = &ps.p[firsts[a] + j];
                MPI_Offset x = p->off > w.lo ? p->off : w.lo;
                MPI_Offset y = p->off + p->len < w.hi ? p->off + p->len : w.hi;
                st = stream_copy(buf, count, dt, contig, p->spos + (x - p->off), data, y - x, 0);
                data += y - x;
            }
        }
    }
    if (write && cst == TERN_OK) {
        /* The aggregators' writes are done before any rank returns: a rank
         * reads its own writes back right after (MPI 14.6.1), and an error
         * of a write is every writer's. */
        st = tern_file_agree(f, st, "collective write");
    }
    if (st == TERN_OK && cst == TERN_OK) {
        if (write) {
            *bytes = total;
        } else if (total) {
            /* Bytes before the end of the file, in stream order. */
            MPI_Offset size = 0;
            st = f->drv->get_size(&f->fd, &size);
            size_t got = 0;
            for (size_t i = 0; i < ps.n && st == TERN_OK; i++) {
                if (ps.p[i].off + ps.p[i].len <= size) {
                    got += (size_t)ps.p[i].len;
                    continue;
                }
                if (ps.p[i].off < size)
                    got += (size_t)(size - ps.p[i].off);
                break;
            }
            *bytes = got;
        }
    }
    free(win);
    free(covered);
    free(r.sbuf);
    free(r.rbuf);
    free(r.scount);
    free(agg);
    free(firsts);
    free(ps.p);
    return cst != TERN_OK ? cst : st;
}
