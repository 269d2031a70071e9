/* Direct access to shared window memory (rma_shm.h). */
#include "core/rma/rma_shm.h"
#include "base/copy_movsb.h"
#include "base/log.h"
#include "core/coll/coll.h"
#include "core/datatype/op.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"
#include "base/pvars.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Per rank, one cache line: the lock word (EXCL, or the count of shared
 * holders) and the accumulate lock. */
#define LOCK_EXCL (1ull << 63)
struct tern_rma_shm_ctrl {
    _Atomic uint64_t lock;
    atomic_int acc;
    char pad[64 - sizeof(_Atomic uint64_t) - sizeof(atomic_int)];
};
_Static_assert(sizeof(struct tern_rma_shm_ctrl) == 64, "one cache line per rank");

/* One memfd of total bytes made by rank 0 that the others open through
 * /proc: nothing in /dev/shm, nothing left when a rank is killed (the
 * pages go with the last mapping). Collective; *err gets the first errno
 * any rank met (then nothing is mapped anywhere). */
static tern_status_t share(tern_win_t *w, size_t total, void **mem, int *err_out)
{
    /* Rank 0's answer: {pid, fd, errno}. */
    int64_t made[3] = {(int64_t)getpid(), -1, 0};
    if (w->rank == 0) {
        int fd = memfd_create("tern-win", MFD_CLOEXEC);
        if (fd < 0 || posix_fallocate(fd, 0, (off_t)total) != 0)
            made[2] = fd < 0 ? errno : ENOSPC;
        made[1] = fd;
    }
    tern_status_t st = tern_coll_bcast(w->comm, made, sizeof made, MPI_BYTE, 0, NULL, 0);
    if (st != TERN_OK)
        return st;
    int fd = -1, err = (int)made[2];
    if (!err) {
        if (w->rank == 0) {
            fd = (int)made[1];
        } else {
            char path[64];
            snprintf(path, sizeof path, "/proc/%lld/fd/%lld", (long long)made[0],
                     (long long)made[1]);
            if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
                err = errno;
        }
    }
    void *m = MAP_FAILED;
    if (!err && (m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        err = errno;
    /* Every rank has mapped (or failed) before rank 0 closes its fd. */
    int any = err;
    st = tern_coll_allreduce(w->comm, &err, &any, 1, MPI_INT, MPI_MAX, NULL, 0);
    if (fd >= 0)
        close(fd);
    if (st != TERN_OK || any) {
        if (m != MAP_FAILED)
            munmap(m, total);
        m = NULL;
    }
    *mem = m;
    *err_out = any;
    return st;
}

/* Each rank's part at an aligned offset after the control lines,
 * contiguous unless alloc_shared_noncontig. */
tern_status_t tern_rma_shm_map(tern_win_t *w)
{
    int n = w->size;
    size_t align = w->alloc_shared_noncontig ? (size_t)sysconf(_SC_PAGESIZE) : w->min_alignment;
    if (align < 64)
        align = 64;
    if (!(w->shm_offsets = calloc((size_t)n, sizeof *w->shm_offsets)))
        return TERN_ERR_NOMEM;
    size_t total = (size_t)n * sizeof(struct tern_rma_shm_ctrl);
    for (int r = 0; r < n; r++) {
        total = (total + align - 1) / align * align;
        w->shm_offsets[r] = (MPI_Aint)total;
        total += (size_t)w->sizes[r];
    }
    void *m;
    int err;
    tern_status_t st = share(w, total, &m, &err);
    if (st == TERN_OK && err)
        st = tern_status_detail(TERN_ERR_RMA_SHARED,
                                "cannot share %zu bytes between the ranks: %s", total,
                                strerror(err));
    if (st != TERN_OK)
        return st;
    w->shm = m;
    w->shm_bytes = total;
    w->ctrl = m;
    w->base = (char *)m + w->shm_offsets[w->rank];
    w->direct = 1;
    return TERN_OK;
}

tern_status_t tern_rma_shm_map_ctrl(tern_win_t *w)
{
    size_t total = (size_t)w->size * sizeof(struct tern_rma_shm_ctrl);
    void *m;
    int err;
    tern_status_t st = share(w, total, &m, &err);
    if (st == TERN_OK && err)
        tern_debug("no shared lock words for the window (%s): locks and accumulates by "
                   "active messages", strerror(err));
    if (st == TERN_OK && !err) {
        w->ctrl = m;
        w->ctrl_bytes = total;
    }
    return st;
}

void tern_rma_shm_acc_lock(tern_win_t *w, int target)
{
    /* Short critical sections: spin, yield now and then (a holder
     * descheduled on an oversubscribed node). */
    atomic_int *acc = &w->ctrl[target].acc;
    unsigned spins = 0;
    int expect = 0;
    while (!atomic_compare_exchange_weak_explicit(acc, &expect, 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
        expect = 0;
        if (++spins % 256 == 0)
            sched_yield();
    }
}

void tern_rma_shm_acc_unlock(tern_win_t *w, int target)
{
    atomic_store_explicit(&w->ctrl[target].acc, 0, memory_order_release);
}

/* Spin politely: progress (this rank may be a target of the general path,
 * or the lock holder may wait for us in a fence), yield when it idles. */
static void pause_once(unsigned *idle)
{
    if (!tern_progress())
        tern_progress_idle(idle);
}

void tern_rma_shm_lock(tern_win_t *w, int target, int lock_type)
{
    _Atomic uint64_t *word = &w->ctrl[target].lock;
    unsigned idle = 0;
    for (;;) {
        uint64_t v = atomic_load_explicit(word, memory_order_relaxed);
        if (lock_type == MPI_LOCK_EXCLUSIVE) {
            if (v == 0 && atomic_compare_exchange_weak_explicit(
                              word, &v, LOCK_EXCL, memory_order_acquire, memory_order_relaxed))
                return;
        } else if (!(v & LOCK_EXCL) &&
                   atomic_compare_exchange_weak_explicit(word, &v, v + 1, memory_order_acquire,
                                                         memory_order_relaxed)) {
            return;
        }
        pause_once(&idle);
    }
}

void tern_rma_shm_unlock(tern_win_t *w, int target, int lock_type)
{
    _Atomic uint64_t *word = &w->ctrl[target].lock;
    if (lock_type == MPI_LOCK_EXCLUSIVE)
        atomic_store_explicit(word, 0, memory_order_release);
    else
        atomic_fetch_sub_explicit(word, 1, memory_order_release);
}

/* ------------------------------------------------------------------------ */
/* Accumulates: one atomic instruction per element where the hardware has
 * one, the accumulate lock elsewhere.
 *
 * MPI makes accumulates to one location atomic per element with each other
 * (same basic type). An element of 1, 2, 4 or 8 bytes at an aligned
 * address is updated by one atomic instruction (__atomic builtins: add,
 * and, or, xor, exchange, load and compare-and-swap natively; the other
 * reductions as a compare-and-swap loop around the same tern_op_apply the
 * locked path runs), by every origin alike: whether a location takes the
 * instruction or the lock depends only on its size and its address, and
 * every rank maps the window at a page-aligned address, so all agree.
 * Larger elements (long double, double complex, DOUBLE_INT pairs) and
 * misaligned ones take the target's accumulate lock, as before. Nothing
 * else updates a direct window's memory on behalf of an accumulate (its
 * operations never go by message), so the two never meet at one location.
 * The cost: a large accumulate of small elements is an atomic instruction
 * per element, not a vectorised loop under one lock. */

static inline int lock_free(size_t es, const void *p)
{
    return (es == 1 || es == 2 || es == 4 || es == 8) && !((uintptr_t)p & (es - 1));
}

/* op on one element of basic at t (aligned, es bytes): t = in op t, old
 * (may be NULL) gets the value before. integer: the type is an integer or
 * byte type, on which SUM, BAND, BOR and BXOR are the hardware's. */
#define ELEM_ATOMIC(bits)                                                                          \
    static void elem_atomic_##bits(MPI_Op op, MPI_Datatype basic, int integer, void *at,           \
                                   const char *in, char *old)                                      \
    {                                                                                              \
        uint##bits##_t *t = at, v = 0, prev, next;                                                 \
        if (op != MPI_NO_OP)                                                                       \
            memcpy(&v, in, sizeof v);                                                              \
        if (op == MPI_NO_OP)                                                                       \
            prev = __atomic_load_n(t, __ATOMIC_SEQ_CST);                                           \
        else if (op == MPI_REPLACE)                                                                \
            prev = __atomic_exchange_n(t, v, __ATOMIC_SEQ_CST);                                    \
        else if (integer && op == MPI_SUM)                                                         \
            prev = __atomic_fetch_add(t, v, __ATOMIC_SEQ_CST);                                     \
        else if (integer && op == MPI_BAND)                                                        \
            prev = __atomic_fetch_and(t, v, __ATOMIC_SEQ_CST);                                     \
        else if (integer && op == MPI_BOR)                                                         \
            prev = __atomic_fetch_or(t, v, __ATOMIC_SEQ_CST);                                      \
        else if (integer && op == MPI_BXOR)                                                        \
            prev = __atomic_fetch_xor(t, v, __ATOMIC_SEQ_CST);                                     \
        else {                                                                                     \
            prev = __atomic_load_n(t, __ATOMIC_RELAXED);                                           \
            do {                                                                                   \
                next = prev;                                                                       \
                tern_op_apply(op, basic, &v, &next, 1);                                            \
            } while (!__atomic_compare_exchange_n(t, &prev, next, 1, __ATOMIC_SEQ_CST,             \
                                                  __ATOMIC_RELAXED));                              \
        }                                                                                          \
        if (old)                                                                                   \
            memcpy(old, &prev, sizeof prev);                                                       \
    }
ELEM_ATOMIC(8)
ELEM_ATOMIC(16)
ELEM_ATOMIC(32)
ELEM_ATOMIC(64)

typedef void elem_atomic_fn(MPI_Op, MPI_Datatype, int, void *, const char *, char *);

static elem_atomic_fn *elem_atomic(size_t es)
{
    switch (es) {
    case 1: return elem_atomic_8;
    case 2: return elem_atomic_16;
    case 4: return elem_atomic_32;
    default: return elem_atomic_64;
    }
}

/* Compare-and-swap of one aligned element: old gets the value before. */
static void cas_atomic(size_t es, void *t, const char *value, const char *compare, char *old)
{
#define CAS_BITS(bits)                                                                             \
    do {                                                                                           \
        uint##bits##_t v, c;                                                                       \
        memcpy(&v, value, sizeof v);                                                               \
        memcpy(&c, compare, sizeof c);                                                             \
        __atomic_compare_exchange_n((uint##bits##_t *)t, &c, v, 0, __ATOMIC_SEQ_CST,               \
                                    __ATOMIC_SEQ_CST);                                             \
        memcpy(old, &c, sizeof c);                                                                 \
    } while (0)
    switch (es) {
    case 1: CAS_BITS(8); break;
    case 2: CAS_BITS(16); break;
    case 4: CAS_BITS(32); break;
    default: CAS_BITS(64); break;
    }
#undef CAS_BITS
}

/* Whether predefined op (or MPI_REPLACE, MPI_NO_OP) is defined on
 * predefined type dt; *integer: dt is an integer or byte type (SUM, BAND,
 * BOR, BXOR are the hardware's). The fast paths ask about one pair again
 * and again: the last answer is kept (both are predefined: constant). */
static int op_fits(MPI_Op op, MPI_Datatype dt, int *integer)
{
    static MPI_Op last_op = MPI_OP_NULL;
    static MPI_Datatype last_dt = MPI_DATATYPE_NULL;
    static int last_fits, last_integer;
    if (op != last_op || dt != last_dt) {
        last_fits = op == MPI_REPLACE || op == MPI_NO_OP ||
                    (tern_op_is_predefined(op) && tern_op_allowed(op, dt));
        last_integer = tern_op_allowed(MPI_BAND, dt);
        last_op = op;
        last_dt = dt;
    }
    *integer = last_integer;
    return last_fits;
}

/* An accumulate or Get_accumulate of op on elements of basic (es bytes;
 * integer as op_fits says): piece by piece, each by atomic instructions or
 * under the lock. */
static void shm_accumulate(tern_win_t *w, int target, char *base, MPI_Op op, MPI_Datatype basic,
                           size_t es, int integer, const tern_dt_seg_t *segs, size_t nsegs,
                           const char *data, char *out)
{
    elem_atomic_fn *fn = elem_atomic(es);
    for (size_t i = 0; i < nsegs; i++) {
        char *t = base + segs[i].offset;
        const size_t len = segs[i].len;
        if (lock_free(es, t)) {
            for (size_t k = 0; k < len; k += es)
                fn(op, basic, integer, t + k, data ? data + k : NULL, out ? out + k : NULL);
        } else {
            tern_rma_shm_acc_lock(w, target);
            if (out)
                memcpy(out, t, len);
            tern_rma_accumulate_bytes(op, basic, data, t, len);
            tern_rma_shm_acc_unlock(w, target);
        }
        if (data && op != MPI_NO_OP)
            data += len;
        if (out)
            out += len;
    }
}

void tern_rma_shm_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                        const tern_dt_seg_t *segs, const char *data, char *out)
{
    char *base = (char *)w->shm + w->shm_offsets[target] + hdr->addr;
    if (hdr->type == RMA_ACC || hdr->type == RMA_GACC) {
        const MPI_Op op = (MPI_Op)hdr->op;
        const MPI_Datatype basic = (MPI_Datatype)hdr->basic;
        const long es = tern_datatype_size(basic);
        if (es > 0 && es != tern_datatype_extent(basic)) {
            /* An element type with holes (MPI_SHORT_INT...): an element
             * spans pieces of the layout, so no piece can take an atomic
             * instruction; the messages' applier, under the lock. */
            tern_rma_shm_acc_lock(w, target);
            tern_rma_apply(base, hdr, segs, data, out);
            tern_rma_shm_acc_unlock(w, target);
            return;
        }
        int integer;
        (void)op_fits(op, basic, &integer);
        shm_accumulate(w, target, base, op, basic, es > 0 ? (size_t)es : 1, integer, segs,
                       hdr->nsegs, data, out);
    } else if (hdr->type == RMA_CAS && lock_free(hdr->bytes, base + segs[0].offset)) {
        cas_atomic(hdr->bytes, base + segs[0].offset, data, data + hdr->bytes, out);
    } else if (hdr->type == RMA_CAS) {
        tern_rma_shm_acc_lock(w, target);
        tern_rma_apply(base, hdr, segs, data, out);
        tern_rma_shm_acc_unlock(w, target);
    } else {
        tern_rma_apply(base, hdr, segs, data, out);
        atomic_thread_fence(memory_order_release);
    }
}

int tern_rma_shm_accumulate(tern_win_t *w, const void *origin, MPI_Count ocount,
                            MPI_Datatype otype, int target, MPI_Aint disp, MPI_Count tcount,
                            MPI_Datatype ttype, MPI_Op op)
{
    /* As tern_rma_shm_copy: anything unusual goes the general way. */
    if ((unsigned)target >= (unsigned)w->size ||
        !(w->locked[target] || (w->epoch & TERN_EPOCH_LOCK_ALL) || w->fence_open) ||
        otype != ttype || ocount != tcount || ocount <= 0 || op == MPI_NO_OP)
        return 0;
    tern_dt_desc_t t;
    int integer;
    if (!tern_datatype_describe(ttype, &t) || !t.predefined || !t.contig || t.size <= 0 ||
        !op_fits(op, ttype, &integer))
        return 0;
    MPI_Aint bytes, off;
    if (__builtin_mul_overflow(tcount, t.size, &bytes) ||
        __builtin_mul_overflow(disp, (MPI_Aint)w->disp_units[target], &off))
        return 0;
    off += t.true_lb;
    if (off < 0 || off > w->sizes[target] - bytes)
        return 0;
    w->fence_used |= w->fence_open;
    const tern_dt_seg_t seg = {.offset = 0, .len = (size_t)bytes};
    shm_accumulate(w, target, (char *)w->shm + w->shm_offsets[target] + off, op, ttype,
                   (size_t)t.size, integer, &seg, 1, (const char *)origin + t.true_lb, NULL);
    return 1;
}

int tern_rma_shm_fetch_atomic(tern_win_t *w, int target, MPI_Aint disp, MPI_Datatype dt,
                              MPI_Op op, const void *origin, const void *compare, void *result)
{
    /* As tern_rma_shm_copy: anything unusual goes the general way. */
    if ((unsigned)target >= (unsigned)w->size || w->comm->revoked ||
        !(w->locked[target] || (w->epoch & TERN_EPOCH_LOCK_ALL) || w->fence_open))
        return 0;
    const long es = tern_datatype_size(dt);
    MPI_Aint off;
    if (es <= 0 || es > 8 || __builtin_mul_overflow(disp, (MPI_Aint)w->disp_units[target], &off) ||
        off < 0 || off > w->sizes[target] - es)
        return 0;
    char *t = (char *)w->shm + w->shm_offsets[target] + off;
    if (!lock_free((size_t)es, t))
        return 0;
    int integer;
    if (!compare && !op_fits(op, dt, &integer))
        return 0;
    w->fence_used |= w->fence_open;
    if (compare)
        cas_atomic((size_t)es, t, origin, compare, result);
    else
        elem_atomic((size_t)es)(op, dt, integer, t, origin, result);
    return 1;
}

/* The direct path: done now, complete locally and at the target. A
 * contiguous origin is read where it lies, a contiguous result written
 * where it lies. */
static tern_status_t direct_issue(tern_win_t *w, const tern_rma_call_t *c, rma_hdr_t *h,
                                  const tern_dt_seg_t *segs)
{
    const char *data = NULL;
    char *owned = NULL, *out = NULL, *rowned = NULL;
    tern_status_t st = c->ships ? tern_rma_origin_data(c, h, 1, &data, &owned) : TERN_OK;
    if (st == TERN_OK && c->fetch)
        st = tern_rma_result_buf(c, h, &out, &rowned);
    if (st == TERN_OK) {
        tern_rma_shm_apply(w, c->target, h, segs, data, out);
        if (c->fetch)
            st = tern_rma_unpack_result(c, h, rowned);
    }
    free(owned);
    free(rowned);
    if (st != TERN_OK)
        return st;
    tern_pvar_add(TERN_PVAR_RMA_DIRECT, 1);
    return tern_rma_done_now(w, c->req_p);
}

const tern_rma_path_t tern_rma_path_direct = {.name = "direct", .issue = direct_issue};

/* A contiguous type's size and true_lb: plain predefined types decoded
 * from the handle, the others looked up; 0 for a type with holes. */
static inline int contig_type(MPI_Datatype dt, tern_dt_desc_t *d)
{
    if (__builtin_expect(tern_datatype_is_plain(dt), 1)) {
        d->size = tern_datatype_plain_size(dt);
        d->true_lb = 0;
        return 1;
    }
    return tern_datatype_describe(dt, d) && d->contig;
}

int tern_rma_shm_copy(tern_win_t *w, int get, void *origin, MPI_Count ocount, MPI_Datatype otype,
                      int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype)
{
    /* Anything unusual (no epoch, PSCW's group, out of range, zero bytes,
     * a revoked window) goes the general way, which says what is wrong. */
    if ((unsigned)target >= (unsigned)w->size || w->comm->revoked ||
        !(w->locked[target] || (w->epoch & TERN_EPOCH_LOCK_ALL) || w->fence_open))
        return 0;
    /* As tern_rma_check_epoch: an access in a fence's epoch opens it (no
     * lock or start epoch is open while fence_open is). */
    w->fence_used |= w->fence_open;
    tern_dt_desc_t o, t;
    if (!contig_type(otype, &o))
        return 0;
    if (ttype == otype)
        t = o;
    else if (!contig_type(ttype, &t))
        return 0;
    MPI_Aint bytes, tbytes, off;
    if (__builtin_mul_overflow(ocount, o.size, &bytes) ||
        __builtin_mul_overflow(tcount, t.size, &tbytes) || bytes != tbytes || bytes <= 0 ||
        __builtin_mul_overflow(disp, (MPI_Aint)w->disp_units[target], &off))
        return 0;
    off += t.true_lb;
    if (off < 0 || off > w->sizes[target] - bytes)
        return 0;
    char *mem = (char *)w->shm + w->shm_offsets[target] + off;
    char *buf = (char *)origin + o.true_lb;
    if (get)
        tern_copy_large(buf, mem, (size_t)bytes, tern_rt.rma_movsb_min);
    else
        tern_copy_large(mem, buf, (size_t)bytes, tern_rt.rma_movsb_min);
    atomic_thread_fence(memory_order_release);
    return 1;
}
