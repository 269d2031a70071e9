/* Two-rank collectives as direct messages (coll_pair.h). Each function is
 * its algorithm's schedule at p = 2 written out: bcast_binomial.c,
 * reduce_binomial.c, allreduce_recursive_doubling.c, gather_binomial.c,
 * scatter_binomial.c, allgather_recursive_doubling.c, alltoall_pairwise.c
 * and reduce_scatter_direct.c say why the messages and
 * the folds are what they are.
 * A send goes eager at once when it can (no request), else through a
 * request waited for at the end; a receive whose message is here already
 * is copied at once, else posted as a request on this stack frame. Errors
 * are the schedule's: a bcast's receive must get exactly the bytes its
 * count describes (MPI_ERR_TRUNCATE with the same words otherwise); a
 * failed transfer gives its status. */
#include "core/coll/coll_pair.h"
#include "core/coll/coll_util.h"
#include "core/coll/pair_get.h"
#include "core/coll/pair_line.h"
#include "core/comm/comm_p2p.h"
#include "core/comm/ulfm.h"
#include "core/datatype/op.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/progress.h"
#include "base/copy_small.h"

#include <stdint.h>
#include <string.h>

typedef struct {
    tern_comm_t *c;
    uint32_t ctx;
    int tag, peer;
    tern_status_t st;  /* the first error */
    int stop;          /* an error other than a truncation: post nothing more */
    tern_req_t *send;  /* a send that did not go at once, or NULL */
    tern_req_t recv;   /* a receive that was posted (posted set) */
    int posted, exact;
} pair_t;

static void pair_init_tag(pair_t *p, const tern_coll_args_t *a, int tag)
{
    tern_comm_t *c = a->comm;
    p->c = c;
    p->ctx = c->context_id + 1;
    p->tag = tag;
    p->peer = 1 - c->rank;
    p->st = TERN_OK;
    p->stop = 0;
    p->send = NULL;
    p->posted = 0;
    p->exact = 0;
}

static void pair_init(pair_t *p, const tern_coll_args_t *a)
{
    pair_init_tag(p, a, tern_comm_next_coll_tag(a->comm, 1));
}

/* Records an error; as in the schedule, a truncation lets the remaining
 * steps run (the peer still waits for them), any other stops them. */
static void note(pair_t *p, tern_status_t st)
{
    if (st == TERN_OK)
        return;
    if (p->st == TERN_OK)
        p->st = st;
    if (st != TERN_ERR_TRUNCATE)
        p->stop = 1;
}

/* A receive that got `got` bytes (SIZE_MAX: more than it holds) where
 * `want` were due: the schedule's words (coll_sched.c). */
__attribute__((cold)) tern_status_t tern_coll_size_mismatch(size_t got, size_t want, int peer)
{
    if (got == SIZE_MAX)
        return tern_status_detail(TERN_ERR_TRUNCATE,
                                  "rank %d sent more than the %zu bytes this rank's count and "
                                  "datatype describe: they must describe the same amount of data "
                                  "on every rank",
                                  peer, want);
    return tern_status_detail(TERN_ERR_TRUNCATE,
                              "rank %d sent %zu bytes where this rank's count and datatype "
                              "describe %zu: they must describe the same amount of data on every "
                              "rank",
                              peer, got, want);
}

static void send_begin(pair_t *p, const void *buf, size_t n)
{
    if (p->stop)
        return;
    tern_comm_t *c = p->c;
    if (tern_ulfm_coll_stopped(c)) {
        note(p, tern_ulfm_coll_error(c));
        return;
    }
    if (tern_p2p_send_eager_now(c->rank, p->ctx, buf, n, tern_comm_world_rank(c, p->peer),
                                p->tag))
        return;
    tern_status_t st = tern_comm_isend(c, p->ctx, buf, n, p->peer, p->tag, TERN_SEND_STANDARD,
                                       &p->send);
    if (st != TERN_OK) {
        p->send = NULL;
        note(p, st);
        p->stop = 1;
    }
}

static void recv_begin(pair_t *p, void *buf, size_t n)
{
    if (p->stop)
        return;
    tern_comm_t *c = p->c;
    if (tern_ulfm_coll_stopped(c)) {
        note(p, tern_ulfm_coll_error(c));
        return;
    }
    tern_status_t e = TERN_OK;
    if (p->exact) {
        tern_recv_done_t done;
        if (tern_p2p_recv_fitting_now(p->ctx, buf, n, p->peer, p->tag, &done)) {
            if (done.bytes != n)
                note(p, tern_coll_size_mismatch(done.bytes, n, p->peer));
            return;
        }
    } else if (tern_p2p_recv_eager_now(p->ctx, buf, n, p->peer, p->tag, &e)) {
        note(p, e);
        return;
    }
    tern_req_t *r = &p->recv;
    tern_req_init(r, TERN_REQ_RECV);
    r->comm = c->handle;
    r->context_id = p->ctx;
    r->peer = p->peer;
    r->tag = p->tag;
    r->buf = buf;
    r->bytes = n;
    tern_p2p_start_recv(r);
    p->posted = 1;
}

/* Waits for what is in flight; the first error. */
static tern_status_t pair_wait(pair_t *p)
{
    if (p->posted) {
        tern_req_t *r = &p->recv;
        tern_progress_wait(&r->complete);
        if (p->exact && (r->error == TERN_ERR_TRUNCATE ||
                         (r->error == TERN_OK && r->status_bytes != r->bytes)))
            note(p, tern_coll_size_mismatch(r->error == TERN_OK ? r->status_bytes : SIZE_MAX,
                                            r->bytes, r->status_source));
        note(p, r->error);
        tern_req_fini(r);
        p->posted = 0;
    }
    if (p->send) {
        tern_progress_wait(&p->send->complete);
        note(p, p->send->error);
        tern_req_release(p->send);
        p->send = NULL;
    }
    return p->st;
}

/* pair_wait when something is in flight: a sender whose message went at
 * once (a rooted collective's root, every 8 B call's sender) returns with
 * no call. */
static inline tern_status_t pair_end(pair_t *p)
{
    if (__builtin_expect(!(p->posted | (p->send != NULL)), 1))
        return p->st;
    return pair_wait(p);
}

/* A block copied within this rank (the own block of a gather, scatter,
 * allgather or alltoall; the buffers may overlap): 8 to 64 bytes by
 * loads and stores, no call (base/copy_small.h); others by memmove. */
static inline void copy_block(void *dst, const void *src, size_t n)
{
    if (tern_copy_small_fits(n)) {
        tern_copy_small(dst, src, n);
    } else if (n) {
        memmove(dst, src, n);
    }
}

static void fold(pair_t *p, const tern_coll_args_t *a, const void *in, void *inout)
{
    if (!p->stop && a->count) {
        tern_status_t st = tern_op_apply(a->op, a->dt, in, inout, a->count);
        if (st != TERN_OK) {
            note(p, st);
            p->stop = 1;
        }
    }
}

tern_status_t tern_coll_pair_bcast(const tern_coll_args_t *a)
{
    pair_t p;
    pair_init(&p, a);
    if (a->comm->rank == a->root) {
        send_begin(&p, a->rbuf, a->bytes);
    } else {
        p.exact = 1; /* counts that differ between ranks are caught */
        recv_begin(&p, a->rbuf, a->bytes);
    }
    return pair_end(&p);
}

/* Commutative ops: the root folds root op other; others: rank 0 folds
 * x_0 op x_1 and hands it to the root 1. */
tern_status_t tern_coll_pair_reduce(const tern_coll_args_t *a)
{
    pair_t p;
    pair_init(&p, a);
    int r = a->comm->rank;
    size_t n = a->count * a->esz;
    _Alignas(16) char tmp[TERN_COLL_PAIR_TMP];
    int pivot = a->commutative ? a->root : 0;
    if (r != pivot) {
        send_begin(&p, a->sbuf, n);
        if (r == a->root) /* non-commutative: rank 0 has the result */
            recv_begin(&p, a->rbuf, n);
        return pair_end(&p);
    }
    /* The pivot: the other's term, then acc op it. */
    char *in = r == a->root && a->rbuf != a->sbuf ? a->rbuf : tmp;
    recv_begin(&p, in, n);
    pair_end(&p);
    fold(&p, a, a->sbuf, in);
    if (r == a->root) {
        if (in != a->rbuf && !p.stop && n)
            memmove(a->rbuf, in, n);
        return p.st;
    }
    send_begin(&p, in, n);
    return pair_end(&p);
}

/* Each rank's block goes the other way through the line. */
static tern_status_t line_allgather(const tern_coll_args_t *a, tern_shm_region_t *reg)
{
    size_t b = a->bytes;
    char *own = (char *)a->rbuf + (size_t)reg->me * b;
    tern_status_t st =
        tern_pair_line_swap(reg, a->sbuf, b, (char *)a->rbuf + (size_t)(1 - reg->me) * b);
    if (st == TERN_OK && a->sbuf != own)
        copy_block(own, a->sbuf, b);
    return st;
}

/* The line takes our block for the other before the other's lands, so in
 * place needs no scratch. */
static tern_status_t line_alltoall(const tern_coll_args_t *a, tern_shm_region_t *reg)
{
    size_t b = a->bytes, mine = (size_t)reg->me * b, theirs = (size_t)(1 - reg->me) * b;
    const char *sb = a->sbuf;
    char *rb = a->rbuf;
    tern_status_t st = tern_pair_line_swap(reg, sb + theirs, b, rb + theirs);
    if (st == TERN_OK && sb != rb)
        copy_block(rb + mine, sb + mine, b);
    return st;
}

static tern_status_t line_allreduce(const tern_coll_args_t *a, tern_shm_region_t *reg, size_t n)
{
    _Alignas(16) char tmp[TERN_PAIR_WIDE_MAX];
    char *rb = a->rbuf;
    tern_status_t st = tern_pair_line_swap(reg, a->sbuf, n, tmp);
    if (st != TERN_OK || !n)
        return st;
    if (a->sbuf != rb)
        memmove(rb, a->sbuf, n);
    if (reg->me == 1)
        return tern_op_apply(a->op, a->dt, tmp, rb, a->count);
    st = tern_op_apply(a->op, a->dt, rb, tmp, a->count);
    if (st == TERN_OK)
        memcpy(rb, tmp, n);
    return st;
}

/* The bytes a reduce_scatter's line exchange swaps: a segment when the
 * two are equal and not empty (the line swaps equal counts; every rank
 * holds the same rcounts), else SIZE_MAX, which no line takes. */
static size_t rs_line_bytes(const tern_coll_args_t *a)
{
    size_t c = a->rcounts[0];
    return c && c == a->rcounts[1] ? c * a->esz : SIZE_MAX;
}

/* Rank r's segment of a reduce_scatter: x_0 op x_1 from its own term and
 * the other's in tmp (clobbered) into rbuf. */
static tern_status_t rs_fold(const tern_coll_args_t *a, const char *own, char *tmp, size_t n)
{
    int r = a->comm->rank;
    if (r == 0) {
        tern_status_t st = tern_op_apply(a->op, a->dt, own, tmp, a->rcounts[0]);
        if (st == TERN_OK)
            memcpy(a->rbuf, tmp, n);
        return st;
    }
    memmove(a->rbuf, own, n);
    return tern_op_apply(a->op, a->dt, tmp, a->rbuf, a->rcounts[1]);
}

/* Equal segments: ours for the other goes through the line as the other's
 * for us comes back (the line reads ours before it writes, so rank 1 in
 * place may overwrite its send segment after), then the fold. */
static tern_status_t line_reduce_scatter(const tern_coll_args_t *a, tern_shm_region_t *reg,
                                         size_t n)
{
    _Alignas(16) char tmp[TERN_PAIR_WIDE_MAX];
    const char *sb = a->sbuf;
    int r = a->comm->rank;
    tern_status_t st = tern_pair_line_swap(reg, sb + (r ? 0 : n), n, tmp);
    return st != TERN_OK ? st : rs_fold(a, sb + (r ? n : 0), tmp, n);
}

/* The exchange of n bytes (kind: allreduce, allgather, alltoall or
 * reduce_scatter(_block)) through the line when it serves this call: 1
 * with *st its outcome, or the error of the line's region creation; else
 * 0. */
static inline int line_try(const tern_coll_args_t *a, tern_coll_kind_t kind, size_t n,
                           tern_status_t *st)
{
    *st = TERN_OK;
    tern_shm_region_t *reg = tern_pair_line(a->comm, n, st);
    if (!reg)
        return *st != TERN_OK;
    *st = kind == TERN_COLL_ALLREDUCE   ? line_allreduce(a, reg, n)
          : kind == TERN_COLL_ALLGATHER ? line_allgather(a, reg)
          : kind == TERN_COLL_ALLTOALL  ? line_alltoall(a, reg)
                                        : line_reduce_scatter(a, reg, n);
    return 1;
}

/* The opening of the pair exchanges that may take the line: the call's
 * tag first, as the scheduled path takes it before the line's region may
 * be created (whose exchanges take the next ones); then the line or the
 * CMA read (1, *st their outcome) or p set for the tagged messages (0). */
static inline int pair_line_or_tag(pair_t *p, const tern_coll_args_t *a, tern_coll_kind_t kind,
                                   size_t n, tern_status_t *st)
{
    int tag = tern_comm_next_coll_tag(a->comm, 1);
    if (line_try(a, kind, n, st))
        return 1;
    /* Large blocks by one CMA read (pair_get.h), after the tag as coll.c's
     * call; an alltoall in place keeps the messages (its scratch). */
    if (n >= TERN_PAIR_GET_LEAST &&
        (kind == TERN_COLL_ALLGATHER || (kind == TERN_COLL_ALLTOALL && a->sbuf != a->rbuf))) {
        int served;
        *st = tern_pair_get(a, kind, &served);
        if (served)
            return 1;
    }
    pair_init_tag(p, a, tag);
    return 0;
}

/* Both ranks exchange their vectors and fold x_0 op x_1. The send goes
 * first: a call's period is the peer's message transit plus what a rank
 * runs between taking it and sending its next, so the receive's posting
 * stays off that path. */
tern_status_t tern_coll_pair_allreduce(const tern_coll_args_t *a)
{
    size_t n = a->count * a->esz;
    pair_t p;
    tern_status_t lst;
    if (pair_line_or_tag(&p, a, TERN_COLL_ALLREDUCE, n, &lst))
        return lst;
    _Alignas(16) char tmp[TERN_COLL_PAIR_TMP];
    char *rb = a->rbuf;
    send_begin(&p, a->sbuf, n);
    recv_begin(&p, tmp, n);
    pair_end(&p);
    if (a->sbuf != rb && n)
        memmove(rb, a->sbuf, n);
    if (p.peer < a->comm->rank) {
        fold(&p, a, tmp, rb);
    } else {
        fold(&p, a, rb, tmp);
        if (!p.stop && n)
            memcpy(rb, tmp, n);
    }
    return p.st;
}

tern_status_t tern_coll_pair_gather(const tern_coll_args_t *a)
{
    pair_t p;
    pair_init(&p, a);
    size_t b = a->bytes;
    if (a->comm->rank != a->root) {
        send_begin(&p, a->sbuf, b);
        return pair_end(&p);
    }
    recv_begin(&p, (char *)a->rbuf + (size_t)p.peer * b, b);
    char *mine = (char *)a->rbuf + (size_t)a->root * b;
    if (a->sbuf != mine)
        copy_block(mine, a->sbuf, b);
    return pair_end(&p);
}

tern_status_t tern_coll_pair_scatter(const tern_coll_args_t *a)
{
    pair_t p;
    pair_init(&p, a);
    size_t b = a->bytes;
    if (a->comm->rank != a->root) {
        recv_begin(&p, a->rbuf, b);
        return pair_end(&p);
    }
    send_begin(&p, (const char *)a->sbuf + (size_t)p.peer * b, b);
    const char *mine = (const char *)a->sbuf + (size_t)a->root * b;
    if (a->rbuf != mine)
        copy_block(a->rbuf, mine, b);
    return pair_end(&p);
}

/* Each rank sends its block and takes the other's (recursive doubling at
 * p = 2: one message each way), copying its own block while the other's
 * is on its way. */
tern_status_t tern_coll_pair_allgather(const tern_coll_args_t *a)
{
    size_t b = a->bytes;
    char *own = (char *)a->rbuf + (size_t)a->comm->rank * b;
    pair_t p;
    tern_status_t st;
    if (pair_line_or_tag(&p, a, TERN_COLL_ALLGATHER, b, &st))
        return st;
    send_begin(&p, a->sbuf, b);
    recv_begin(&p, (char *)a->rbuf + (size_t)p.peer * b, b);
    if (a->sbuf != own)
        copy_block(own, a->sbuf, b);
    return pair_end(&p);
}

/* Pairwise exchange at p = 2: the block for the other goes, the other's
 * block for us comes, our own is copied meanwhile. In place (sbuf ==
 * rbuf) the other's block lands in scratch until ours for it has gone. */
tern_status_t tern_coll_pair_alltoall(const tern_coll_args_t *a)
{
    size_t b = a->bytes, mine = (size_t)a->comm->rank * b, theirs = (size_t)(1 - a->comm->rank) * b;
    const char *sb = a->sbuf;
    char *rb = a->rbuf;
    int in_place = sb == rb;
    pair_t p;
    tern_status_t st;
    if (pair_line_or_tag(&p, a, TERN_COLL_ALLTOALL, b, &st))
        return st;
    _Alignas(16) char tmp[TERN_COLL_PAIR_TMP];
    send_begin(&p, sb + theirs, b);
    recv_begin(&p, in_place ? tmp : rb + theirs, b);
    if (!in_place)
        copy_block(rb + mine, sb + mine, b);
    pair_end(&p);
    if (in_place && !p.stop && b)
        memcpy(rb + theirs, tmp, b);
    return p.st;
}

/* Each rank sends the other its segment and folds x_0 op x_1 over its own
 * (reduce_scatter_direct.c at p = 2): one message each way, where the shm
 * path waits on the flag lines of both ranks; equal segments that fit the
 * line go through it instead, as an allreduce's vector. A rank whose
 * segment is empty only sends. */
tern_status_t tern_coll_pair_reduce_scatter(const tern_coll_args_t *a)
{
    pair_t p;
    tern_status_t lst;
    if (pair_line_or_tag(&p, a, TERN_COLL_REDUCE_SCATTER, rs_line_bytes(a), &lst))
        return lst;
    int r = a->comm->rank;
    size_t e = a->esz, first = a->rcounts[0] * e;
    size_t mine = a->rcounts[r] * e, theirs = a->rcounts[p.peer] * e;
    const char *own = (const char *)a->sbuf + (r ? first : 0);
    const char *other = (const char *)a->sbuf + (r ? 0 : first);
    _Alignas(16) char tmp[TERN_COLL_PAIR_TMP];
    if (theirs)
        send_begin(&p, other, theirs);
    if (mine)
        recv_begin(&p, tmp, mine);
    /* In place, rank 1's result overwrites the segment it sends: fold
     * only once the send is done. */
    pair_end(&p);
    if (p.stop || !mine)
        return p.st;
    note(&p, rs_fold(a, own, tmp, mine));
    return p.st;
}

tern_status_t tern_coll_pair_line(const tern_coll_args_t *a, tern_coll_kind_t kind, int *served)
{
    size_t n = kind == TERN_COLL_ALLREDUCE             ? a->count * a->esz
               : tern_coll_is_reduce_scatter(kind) ? rs_line_bytes(a)
                                                   : a->bytes;
    tern_status_t st;
    *served = line_try(a, kind, n, &st);
    return st;
}
