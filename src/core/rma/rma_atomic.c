/* Accumulates and passive-target locks as remote atomics (rma_atomic.h). */
#include "core/rma/rma_atomic.h"
#include "base/config.h"
#include "base/log.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/progress.h"
#include "core/rma/rma_track.h"
#include "core/runtime/runtime.h"
#include "base/pvars.h"

#include <stdlib.h>
#include <string.h>

/* Operation classes: 0-9 are MPI's predefined reductions in the order of
 * TERN_TL_AOP_MIN..BXOR, then MPI_REPLACE, MPI_NO_OP and Compare_and_swap. */
enum { AC_REPLACE = 10, AC_NO_OP, AC_CAS, AC_COUNT };
#define MASK_WORDS 3 /* AC_COUNT x TERN_TL_AT_COUNT bits */
#define BIT(t, c) ((t) * AC_COUNT + (c))

/* The record in the creation allgather. */
enum { REC_MASK = 0, REC_LOCK_ADDR = MASK_WORDS, REC_LOCK_KEY, REC_BASE = REC_LOCK_KEY + 3,
       REC_KEY };

/* The lock word: the exclusive bit, or the count of shared holders. */
#define LOCK_EXCL ((int64_t)1 << 62)

static const MPI_Op REDUCTIONS[10] = {MPI_MIN, MPI_MAX, MPI_SUM,  MPI_PROD, MPI_LOR,
                                      MPI_LAND, MPI_BOR, MPI_BAND, MPI_LXOR, MPI_BXOR};
static const size_t TYPE_BYTES[TERN_TL_AT_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16};

struct tern_rma_atomic {
    const tern_tl_ops_t *ops;   /* the network transport */
    tern_tl_t *tl;
    uint64_t use[MASK_WORDS];   /* (type, class) pairs the provider applies */
    int locks;                  /* locks by remote atomics */
    int ordered;                /* accumulate_ordering asks for an order */
    void *reg_base;             /* our window memory's registration, or NULL */
    size_t reg_len;
    int64_t *lock_word;         /* ours, registered (64 bytes) */
    uint64_t *bases, *lock_addrs; /* per rank */
    tern_rkey_t *keys, *lock_keys;
};

static int has(const uint64_t *mask, int bit)
{
    return (mask[bit / 64] >> (bit % 64)) & 1;
}

static void set(uint64_t *mask, int bit)
{
    mask[bit / 64] |= (uint64_t)1 << (bit % 64);
}

/* The transport type of a basic datatype, -1 when the provider never
 * applies it (Fortran LOGICAL, characters, long double, pairs...). */
static int tl_type(MPI_Datatype b)
{
    static const MPI_Datatype sints[] = {
        MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG_INT, MPI_INT8_T,
        MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_INTEGER,
        MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
    static const MPI_Datatype uints[] = {
        MPI_UNSIGNED_CHAR, MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG,
        MPI_UNSIGNED_LONG_LONG, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T,
        MPI_BYTE, MPI_C_BOOL};
    static const struct { MPI_Datatype dt; int t; } others[] = {
        {MPI_FLOAT, TERN_TL_AT_FLOAT}, {MPI_REAL, TERN_TL_AT_FLOAT},
        {MPI_REAL4, TERN_TL_AT_FLOAT}, {MPI_DOUBLE, TERN_TL_AT_DOUBLE},
        {MPI_DOUBLE_PRECISION, TERN_TL_AT_DOUBLE}, {MPI_REAL8, TERN_TL_AT_DOUBLE},
        {MPI_C_FLOAT_COMPLEX, TERN_TL_AT_FLOAT_COMPLEX}, {MPI_COMPLEX, TERN_TL_AT_FLOAT_COMPLEX},
        {MPI_COMPLEX8, TERN_TL_AT_FLOAT_COMPLEX},
        {MPI_C_DOUBLE_COMPLEX, TERN_TL_AT_DOUBLE_COMPLEX},
        {MPI_DOUBLE_COMPLEX, TERN_TL_AT_DOUBLE_COMPLEX},
        {MPI_COMPLEX16, TERN_TL_AT_DOUBLE_COMPLEX}};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        if (others[i].dt == b)
            return tern_datatype_size(b) == (long)TYPE_BYTES[others[i].t] ? others[i].t : -1;
    int sign = -1;
    for (size_t i = 0; i < sizeof sints / sizeof *sints && sign < 0; i++)
        if (sints[i] == b)
            sign = 1;
    for (size_t i = 0; i < sizeof uints / sizeof *uints && sign < 0; i++)
        if (uints[i] == b)
            sign = 0;
    if (sign < 0)
        return -1;
    switch (tern_datatype_size(b)) {
    case 1: return sign ? TERN_TL_AT_INT8 : TERN_TL_AT_UINT8;
    case 2: return sign ? TERN_TL_AT_INT16 : TERN_TL_AT_UINT16;
    case 4: return sign ? TERN_TL_AT_INT32 : TERN_TL_AT_UINT32;
    case 8: return sign ? TERN_TL_AT_INT64 : TERN_TL_AT_UINT64;
    default: return -1;
    }
}

/* The classes MPI lets meet at one location of a type (same_op_no_op):
 * every reduction MPI defines on it, MPI_REPLACE, MPI_NO_OP, CAS. */
static int needed(int t, int c)
{
    if (c >= AC_REPLACE || t <= TERN_TL_AT_UINT64)
        return 1;
    if (t <= TERN_TL_AT_DOUBLE)
        return c <= TERN_TL_AOP_PROD;
    return c == TERN_TL_AOP_SUM || c == TERN_TL_AOP_PROD;
}

/* The transport call of a class, as an accumulate (fetch 0) or a fetching
 * one (Get_accumulate, Fetch_and_op; CAS). */
static void call_of(int c, int fetch, int *kind, int *op)
{
    if (c == AC_CAS) {
        *kind = TERN_TL_ATOMIC_COMPARE;
        *op = TERN_TL_AOP_CSWAP;
        return;
    }
    *kind = fetch || c == AC_NO_OP ? TERN_TL_ATOMIC_FETCH : TERN_TL_ATOMIC_PLAIN;
    *op = c == AC_REPLACE ? TERN_TL_AOP_WRITE : c == AC_NO_OP ? TERN_TL_AOP_READ : c;
}

/* Whether this rank's provider offers every call of class c on type t. */
static int offered(const tern_tl_ops_t *ops, tern_tl_t *tl, int t, int c)
{
    int kind, op;
    call_of(c, 1, &kind, &op);
    if (!ops->atomic_max(tl, kind, op, t))
        return 0;
    if (c == AC_CAS || c == AC_NO_OP)
        return 1;
    call_of(c, 0, &kind, &op);
    return ops->atomic_max(tl, kind, op, t) != 0;
}

static int find_net(const tern_tl_ops_t **ops, tern_tl_t **tl)
{
    for (int i = 0; i < tern_rt.n_poll; i++) {
        const tern_tl_ops_t *o = tern_rt.poll[i].ops;
        if (o == &tern_tl_shm_ops || o == &tern_tl_self_ops || !o->atomic || !o->atomic_max ||
            !o->mem_reg)
            continue;
        *ops = o;
        *tl = tern_rt.poll[i].tl;
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Creation. */

/* Win_create, and Win_allocate off the direct path (its memory is
 * allocated before the window; a direct one is mapped after it). */
static int eligible(const tern_win_t *w)
{
    return !w->direct && (w->flavor == MPI_WIN_FLAVOR_CREATE ||
                          (w->flavor == MPI_WIN_FLAVOR_ALLOCATE && w->base));
}

tern_status_t tern_rma_atomic_local(tern_win_t *w, uint64_t *rec)
{
    memset(rec, 0, TERN_RMA_ATOMIC_WORDS * sizeof *rec);
    const tern_tl_ops_t *ops;
    tern_tl_t *tl;
    if (tern_knob_is(TERN_KNOB_RMA_ATOMICS, "off") || !eligible(w) || !find_net(&ops, &tl))
        return TERN_OK;
    uint64_t mask[MASK_WORDS] = {0};
    int any = 0;
    for (int t = 0; t < TERN_TL_AT_COUNT; t++)
        for (int c = 0; c < AC_COUNT; c++)
            if (offered(ops, tl, t, c)) {
                set(mask, BIT(t, c));
                any = 1;
            }
    if (!any)
        return TERN_OK;
    struct tern_rma_atomic *a = calloc(1, sizeof *a);
    if (!a)
        return TERN_ERR_NOMEM;
    a->ops = ops;
    a->tl = tl;
    w->atomic = a;
    tern_rkey_t key;
    if (w->win_size > 0) {
        if (ops->mem_reg(tl, w->base, (size_t)w->win_size, &key) != TERN_OK)
            return TERN_OK; /* all zero: messages (on: an error once everyone knows) */
        a->reg_base = w->base;
        a->reg_len = (size_t)w->win_size;
        rec[REC_BASE] = (uint64_t)(uintptr_t)w->base;
        memcpy(&rec[REC_KEY], key.words, sizeof key.words);
    }
    memcpy(&rec[REC_MASK], mask, sizeof mask);
    if (posix_memalign((void **)&a->lock_word, 64, 64) == 0) {
        memset(a->lock_word, 0, 64);
        if (ops->mem_reg(tl, a->lock_word, 64, &key) == TERN_OK) {
            rec[REC_LOCK_ADDR] = (uint64_t)(uintptr_t)a->lock_word;
            memcpy(&rec[REC_LOCK_KEY], key.words, sizeof key.words);
        } else {
            free(a->lock_word);
            a->lock_word = NULL;
        }
    }
    return TERN_OK;
}

tern_status_t tern_rma_atomic_remote(tern_win_t *w, const int64_t *all, size_t stride)
{
    if (!eligible(w))
        return TERN_OK;
    uint64_t and_[MASK_WORDS] = {~0ull, ~0ull, ~0ull};
    int locks = 1;
    for (int t = 0; t < w->size; t++) {
        const uint64_t *rec = (const uint64_t *)&all[(size_t)t * stride];
        for (int k = 0; k < MASK_WORDS; k++)
            and_[k] &= rec[REC_MASK + k];
        locks &= rec[REC_LOCK_ADDR] != 0;
    }
    struct tern_rma_atomic *a = w->atomic;
    uint64_t use[MASK_WORDS] = {0};
    int same_op = !strcmp(w->accumulate_ops, "same_op");
    for (int t = 0; t < TERN_TL_AT_COUNT; t++) {
        int whole = 1;
        for (int c = 0; c < AC_COUNT; c++)
            if (needed(t, c) && !has(and_, BIT(t, c)))
                whole = 0;
        for (int c = 0; c < AC_COUNT; c++)
            if (has(and_, BIT(t, c)) && (same_op ? 1 : whole && needed(t, c)))
                set(use, BIT(t, c));
    }
    int any = use[0] || use[1] || use[2];
    if (!a || !any) {
        tern_rma_atomic_close(w);
        if (tern_knob_is(TERN_KNOB_RMA_ATOMICS, "on"))
            return tern_status_detail(TERN_ERR_NOT_SUPPORTED,
                                      "TERN_RMA_ATOMICS=on: the window's accumulates cannot be "
                                      "remote atomics (%s)",
                                      !a ? "this rank's network transport offers none, or is "
                                           "not open"
                                         : "a rank's transport offers none, or a rank's memory "
                                           "did not register");
        return TERN_OK;
    }
    memcpy(a->use, use, sizeof use);
    a->ordered = strcmp(w->accumulate_ordering, "none") != 0;
    /* Locks need compare-and-swap, add and write on 64-bit integers. */
    a->locks = locks && has(and_, BIT(TERN_TL_AT_INT64, AC_CAS)) &&
               has(and_, BIT(TERN_TL_AT_INT64, TERN_TL_AOP_SUM)) &&
               has(and_, BIT(TERN_TL_AT_INT64, AC_REPLACE));
    size_t n = (size_t)w->size;
    a->bases = calloc(n, sizeof *a->bases);
    a->lock_addrs = calloc(n, sizeof *a->lock_addrs);
    a->keys = calloc(n, sizeof *a->keys);
    a->lock_keys = calloc(n, sizeof *a->lock_keys);
    if (!a->bases || !a->lock_addrs || !a->keys || !a->lock_keys)
        return TERN_ERR_NOMEM;
    for (int t = 0; t < w->size; t++) {
        const uint64_t *rec = (const uint64_t *)&all[(size_t)t * stride];
        a->bases[t] = rec[REC_BASE];
        memcpy(a->keys[t].words, &rec[REC_KEY], sizeof a->keys[t].words);
        a->lock_addrs[t] = rec[REC_LOCK_ADDR];
        memcpy(a->lock_keys[t].words, &rec[REC_LOCK_KEY], sizeof a->lock_keys[t].words);
    }
    tern_log(TERN_LOG_DEBUG, "rma: window of %d ranks: accumulates as remote atomics over %s "
             "(pairs 0x%llx%016llx%016llx), locks %s", w->size, a->ops->name,
             (unsigned long long)use[2], (unsigned long long)use[1], (unsigned long long)use[0],
             a->locks ? "by remote atomics" : "by messages");
    return TERN_OK;
}

void tern_rma_atomic_close(tern_win_t *w)
{
    struct tern_rma_atomic *a = w->atomic;
    if (!a)
        return;
    if (a->reg_base)
        a->ops->mem_dereg(a->tl, a->reg_base, a->reg_len);
    if (a->lock_word) {
        a->ops->mem_dereg(a->tl, a->lock_word, 64);
        free(a->lock_word);
    }
    free(a->bases);
    free(a->lock_addrs);
    free(a->keys);
    free(a->lock_keys);
    free(a);
    w->atomic = NULL;
}

/* ------------------------------------------------------------------------ */
/* Accumulates. */

static int class_of(const rma_hdr_t *h)
{
    if (h->type == RMA_CAS)
        return AC_CAS;
    if ((MPI_Op)h->op == MPI_REPLACE)
        return AC_REPLACE;
    if ((MPI_Op)h->op == MPI_NO_OP)
        return AC_NO_OP;
    for (int c = 0; c < 10; c++)
        if (REDUCTIONS[c] == (MPI_Op)h->op)
            return c;
    return -1;
}

/* Issues one chunk, retrying while the transport has no room. */
static tern_status_t issue_chunk(struct tern_rma_atomic *a, int world, int kind, int aop, int t,
                                 const void *src, const void *cmp, void *res, size_t count,
                                 uint64_t addr, const tern_rkey_t *key, tern_tl_comp_t *comp)
{
    unsigned idle = 0;
    for (;;) {
        tern_status_t st = a->ops->atomic(a->tl, world, kind, aop, t, src, cmp, res, count, addr,
                                          key, comp);
        if (st != TERN_ERR_AGAIN)
            return st;
        if (tern_rt.peers[world].failed != TERN_OK)
            return tern_rt.peers[world].failed;
        if (!tern_progress())
            tern_progress_idle(&idle);
    }
}

/* An accumulate of a type and operation the provider applies: a transport
 * atomic per chunk of each target piece, from the origin where it lies
 * when contiguous, fetching into the result where it lies when contiguous;
 * the tracker (rma_track.h) counts it and ends it. */
static tern_status_t atomic_issue(tern_win_t *w, const tern_rma_call_t *c, rma_hdr_t *h,
                                  const tern_dt_seg_t *segs)
{
    struct tern_rma_atomic *a = w->atomic;
    const int target = c->target, world = tern_win_world(w, target);
    int t = tl_type(c->basic), cl = class_of(h);
    /* Types and operations the window leaves to the targets' engines
     * (decided at creation, alike on every rank), and a failed peer, whose
     * error the messages answer with. */
    if (t < 0 || cl < 0 || !has(a->use, BIT(t, cl)) || tern_rt.peers[world].failed != TERN_OK)
        return tern_rma_path_am.issue(w, c, h, segs);
    int fetch = h->type != RMA_ACC, kind, aop;
    call_of(cl, fetch, &kind, &aop);
    size_t es = TYPE_BYTES[t], maxc = a->ops->atomic_max(a->tl, kind, aop, t);
    if (!maxc)
        return tern_rma_path_am.issue(w, c, h, segs); /* cannot be: offered at every rank */
    size_t chunks = 0;
    uint64_t lo = UINT64_MAX, hi = 0, remote = a->bases[target] + h->addr;
    for (size_t i = 0; i < h->nsegs; i++) {
        size_t n = segs[i].len / es;
        chunks += (n + maxc - 1) / maxc;
        uint64_t s = remote + (uint64_t)segs[i].offset;
        if (s < lo)
            lo = s;
        if (s + segs[i].len > hi)
            hi = s + segs[i].len;
    }
    tern_status_t st = tern_rma_track_wait(w, target, lo, hi, h->bytes, a->ordered);
    if (st != TERN_OK)
        return st;
    const char *data = NULL;
    char *owned = NULL, *out = NULL, *rowned = NULL;
    if (c->ships && (st = tern_rma_origin_data(c, h, 1, &data, &owned)) != TERN_OK)
        return st;
    if (fetch && (st = tern_rma_result_buf(c, h, &out, &rowned)) != TERN_OK) {
        free(owned);
        return st;
    }
    tern_rma_track_t *op = tern_rma_track_new(w, target, chunks, "remote atomic", c->req_p);
    if (!op) {
        free(owned);
        free(rowned);
        return TERN_ERR_NOMEM;
    }
    op->lo = lo;
    op->hi = hi;
    op->footprint = h->bytes;
    op->owned[0] = owned;
    op->owned[1] = rowned;
    if (rowned) {
        op->fetched = rowned;
        op->fetched_bytes = h->bytes;
        op->result = c->result;
        op->rcount = c->rcount;
        op->rtype = c->rtype;
    }
    tern_rma_track_start(op);
    size_t at = 0, k = 0;
    for (size_t i = 0; i < h->nsegs; i++) {
        size_t n = segs[i].len / es;
        for (size_t done = 0; done < n; k++) {
            size_t cnt = n - done < maxc ? n - done : maxc;
            size_t off = at + done * es;
            /* CAS: one element; the compare value follows the new one. */
            const char *src = data ? data + off : NULL;
            const char *cmp = cl == AC_CAS ? data + h->bytes + off : NULL;
            st = issue_chunk(a, world, kind, aop, t, src, cmp, fetch ? out + off : NULL, cnt,
                             remote + (uint64_t)segs[i].offset + done * es, &a->keys[target],
                             tern_rma_track_piece(op, k));
            if (st != TERN_OK)
                tern_rma_track_drop(op, st); /* this chunk is over, with the error */
            done += cnt;
        }
        at += segs[i].len;
    }
    tern_rma_track_issued(op);
    tern_pvar_add(TERN_PVAR_RMA_ATOMIC, 1);
    return TERN_OK;
}

const tern_rma_path_t tern_rma_path_atomic = {.name = "remote atomics", .issue = atomic_issue};

/* ------------------------------------------------------------------------ */
/* Passive-target locks. */

int tern_rma_atomic_locks(const tern_win_t *w)
{
    return w->atomic && w->atomic->locks;
}

typedef struct {
    tern_tl_comp_t comp;
    int done;
    tern_status_t st;
} word_comp_t;

static void word_done(tern_tl_comp_t *comp, tern_status_t st)
{
    word_comp_t *x = (word_comp_t *)comp;
    x->st = st;
    x->done = 1;
}

/* One atomic on target's lock word, waited for; *old gets the old value
 * (FETCH, COMPARE). */
static tern_status_t word_op(tern_win_t *w, int target, int kind, int aop, int64_t operand,
                             int64_t compare, int64_t *old)
{
    struct tern_rma_atomic *a = w->atomic;
    int world = tern_win_world(w, target);
    word_comp_t x = {.comp.cb = word_done};
    int64_t res = 0;
    tern_rt.peers[world].rma_inflight++; /* its liveness is watched meanwhile */
    tern_status_t st = issue_chunk(a, world, kind, aop, TERN_TL_AT_INT64, &operand,
                                   kind == TERN_TL_ATOMIC_COMPARE ? &compare : NULL,
                                   kind == TERN_TL_ATOMIC_PLAIN ? NULL : &res, 1,
                                   a->lock_addrs[target], &a->lock_keys[target], &x.comp);
    unsigned idle = 0;
    while (st == TERN_OK && !x.done) {
        /* A failed peer's atomics end with no callback. */
        if (tern_rt.peers[world].failed != TERN_OK) {
            tern_rt.peers[world].rma_inflight--;
            return tern_status_detail(tern_rt.peers[world].failed, "target rank %d of the "
                                      "window failed while its lock was being taken or "
                                      "released", target);
        }
        if (!tern_progress())
            tern_progress_idle(&idle);
    }
    tern_rt.peers[world].rma_inflight--;
    if (st == TERN_OK)
        st = x.st;
    if (old)
        *old = res;
    return st;
}

tern_status_t tern_rma_atomic_lock(tern_win_t *w, int target, int lock_type)
{
    /* Exclusive: 0 -> EXCL. Shared: n -> n + 1 while EXCL is clear (the
     * first guess, n = 0, costs one round trip when nobody holds it). */
    int64_t want = 0, old = 0;
    unsigned idle = 0;
    for (;;) {
        int64_t next = lock_type == MPI_LOCK_EXCLUSIVE ? LOCK_EXCL : want + 1;
        tern_status_t st = word_op(w, target, TERN_TL_ATOMIC_COMPARE, TERN_TL_AOP_CSWAP, next,
                                   want, &old);
        if (st != TERN_OK)
            return st;
        if (old == want)
            return TERN_OK;
        if (lock_type == MPI_LOCK_SHARED && !(old & LOCK_EXCL)) {
            want = old; /* other shared holders: join them */
            continue;
        }
        want = 0;
        /* Held: back off (progress, which also serves this rank's own
         * targets, and yield when idle) before asking again. */
        if (!tern_progress())
            tern_progress_idle(&idle);
    }
}

tern_status_t tern_rma_atomic_unlock(tern_win_t *w, int target, int lock_type)
{
    /* Waited for: the next lock of this origin must find it released. */
    if (lock_type == MPI_LOCK_EXCLUSIVE)
        return word_op(w, target, TERN_TL_ATOMIC_PLAIN, TERN_TL_AOP_WRITE, 0, 0, NULL);
    return word_op(w, target, TERN_TL_ATOMIC_PLAIN, TERN_TL_AOP_SUM, -1, 0, NULL);
}
