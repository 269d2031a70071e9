/* Accumulates on direct windows, under striped locks (rma_shm.h).
 *
 * MPI makes accumulate-class operations to one location (Accumulate,
 * Get_accumulate, Fetch_and_op, Compare_and_swap, MPI_REPLACE and MPI_NO_OP
 * included, same basic type) atomic per element with each other. A direct
 * window's target memory is cut into stripes of 4 KB of offsets, and each
 * target has a table of TERN_RMA_STRIPES lock words after the control
 * lines, stripe s of offset o being (o / 4 KB) mod TERN_RMA_STRIPES. Every
 * accumulate-class operation on a direct window, from any origin, holds
 * the stripes of the bytes it updates while it reads and writes them with
 * plain loads and stores: a vectorised loop for a large one, a load, the
 * operation and a store for Fetch_and_op and Compare_and_swap (a
 * compare-and-swap to take the stripe, a store to release it: what a
 * lock-free atomic instruction costs). A direct
 * window's operations never reach its target by message, so nothing else
 * applies an accumulate to its memory.
 *
 * An element never spans two stripes while one is held alone: a piece is
 * applied stripe by stripe (one held at a time) when its elements are a
 * power of two in size at an offset that is a multiple of it; any other
 * piece (a misaligned displacement, MPI_DOUBLE_INT, a type with holes)
 * takes every stripe it covers at once, in table order, which is the one
 * order any holder of two stripes takes them in: no deadlock.
 *
 * An origin that holds target's MPI_LOCK_EXCLUSIVE takes no stripe: no
 * other process accesses the target in that epoch, and under
 * MPI_THREAD_MULTIPLE the entry points' lock (api_lock.h) runs one of this
 * process's operations at a time. */
#include "core/rma/rma_shm.h"
#include "core/datatype/op.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define STRIPE_SHIFT 12
#define STRIPE_BYTES ((size_t)1 << STRIPE_SHIFT)

/* The lock word of target's stripe index (taken mod TERN_RMA_STRIPES): the
 * stripe of offset o is o >> STRIPE_SHIFT. */
static inline atomic_uint *stripe(const tern_win_t *w, int target, size_t index)
{
    return (atomic_uint *)(w->acc_stripes +
                           ((size_t)target * TERN_RMA_STRIPES + (index & (TERN_RMA_STRIPES - 1))) *
                               TERN_RMA_STRIPE_LINE);
}

static inline void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Short critical sections: spin on a plain load, yield now and then (a
 * holder descheduled on an oversubscribed node). */
static inline void stripe_lock(atomic_uint *s)
{
    unsigned expect = 0, spins = 0;
    while (!atomic_compare_exchange_weak_explicit(s, &expect, 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
        do {
            cpu_pause();
            if (++spins % 256 == 0)
                sched_yield();
        } while (atomic_load_explicit(s, memory_order_relaxed));
        expect = 0;
    }
}

static inline void stripe_unlock(atomic_uint *s)
{
    atomic_store_explicit(s, 0, memory_order_release);
}

/* Every stripe of bytes [lo, hi) of target (hi > lo), in table order;
 * lock 0: releases them. */
static void stripes_range(const tern_win_t *w, int target, size_t lo, size_t hi, int lock)
{
    size_t first = lo >> STRIPE_SHIFT, last = (hi - 1) >> STRIPE_SHIFT;
    size_t a = first & (TERN_RMA_STRIPES - 1), b = last & (TERN_RMA_STRIPES - 1);
    if (last - first + 1 >= TERN_RMA_STRIPES) {
        a = 0;
        b = TERN_RMA_STRIPES - 1;
    }
    for (size_t i = 0; i < TERN_RMA_STRIPES; i++) {
        /* a..b, or 0..b then a..end when the range wraps the table. */
        if (a <= b ? (i < a || i > b) : (i > b && i < a))
            continue;
        if (lock)
            stripe_lock(stripe(w, target, i));
        else
            stripe_unlock(stripe(w, target, i));
    }
}

/* Target's memory. */
static inline char *target_mem(const tern_win_t *w, int target)
{
    return (char *)w->shm + w->shm_offsets[target];
}

/* This origin holds target's exclusive lock: its operations take no stripe. */
static inline int exclusive(const tern_win_t *w, int target)
{
    return (w->locked[target] & 3) == 1;
}

/* t += in over len bytes of 4- or 8-byte integers (t aligned): the loop
 * the compiler vectorises, built for AVX-512 and AVX2 too, the best the
 * CPU has chosen at load time (Open MPI's op/avx does the same; SSE2
 * alone is 2x AVX2's time from 1 to 64 KB, AVX2 1.25x AVX-512's at 4-16
 * KB here). */
/* Not under ThreadSanitizer: the clones' ifunc resolver runs while the
 * loader relocates the library, before TSan's runtime starts, and crashes. */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define SUM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SUM_CLONES
#endif
/* The loop itself, inline: the clones below vectorise it, the small sums
 * of apply() run it in place. */
#define ADD_INTS(bits)                                                                             \
    static inline void add_int##bits(char *t, const char *in, size_t len)                          \
    {                                                                                              \
        for (size_t k = 0; k < len; k += sizeof(uint##bits##_t)) {                                 \
            uint##bits##_t a, b;                                                                   \
            memcpy(&a, t + k, sizeof a);                                                           \
            memcpy(&b, in + k, sizeof b);                                                          \
            a += b;                                                                                \
            memcpy(t + k, &a, sizeof a);                                                           \
        }                                                                                          \
    }                                                                                              \
    SUM_CLONES static void sum_int##bits(char *t, const char *in, size_t len)                      \
    {                                                                                              \
        add_int##bits(t, in, len);                                                                 \
    }
ADD_INTS(32)
ADD_INTS(64)
#undef ADD_INTS
#undef SUM_CLONES

/* Integer sums up to this many bytes are added in place, element by
 * element: a call to the vector loop (an indirect call through the
 * clones' resolved slot, the loop's set-up and tail) costs more than the
 * additions of a few elements. 64: a 64-byte accumulate took 0.044 us
 * through acc_piece and the loop, 0.036 inline (docs/performance.md row
 * putinline). */
#define SMALL_SUM_BYTES 64

/* The len bytes at t (whole elements of es bytes, aligned): out (may be
 * NULL) gets them, then op with the packed origin bytes data (NULL for
 * MPI_NO_OP). integer: basic is an integer type, whose sums of 4 and 8
 * bytes are sum_int32/64, inline up to SMALL_SUM_BYTES. */
static inline void apply(MPI_Op op, MPI_Datatype basic, int integer, size_t es, char *t,
                         size_t len, const char *data, char *out)
{
    if (out)
        memcpy(out, t, len);
    if (integer && op == MPI_SUM && len <= SMALL_SUM_BYTES && es == 4)
        add_int32(t, data, len);
    else if (integer && op == MPI_SUM && len <= SMALL_SUM_BYTES && es == 8)
        add_int64(t, data, len);
    else if (integer && op == MPI_SUM && es == 4)
        sum_int32(t, data, len);
    else if (integer && op == MPI_SUM && es == 8)
        sum_int64(t, data, len);
    else
        tern_rma_accumulate_bytes(op, basic, data, t, len);
}

/* One piece of an accumulate or Get_accumulate: bytes [off, off + len) of
 * target's memory, elements of basic (es bytes). */
static void acc_piece(tern_win_t *w, int target, int excl, size_t off, size_t len, MPI_Op op,
                      MPI_Datatype basic, size_t es, int integer, const char *data, char *out)
{
    char *mem = target_mem(w, target);
    /* Elements of a power-of-two size at a multiple of it (a mask, not a
     * division: this is every accumulate's path). The integer loop wants
     * them aligned too. */
    const int aligned = !(es & (es - 1)) && !(off & (es - 1)) && es <= STRIPE_BYTES;
    integer = integer && aligned;
    if (excl) {
        apply(op, basic, integer, es, mem + off, len, data, out);
        return;
    }
    if (!aligned) {
        stripes_range(w, target, off, off + len, 1);
        apply(op, basic, 0, es, mem + off, len, data, out);
        stripes_range(w, target, off, off + len, 0);
        return;
    }
    while (len) {
        size_t n = STRIPE_BYTES - (off & (STRIPE_BYTES - 1));
        if (n > len)
            n = len;
        atomic_uint *s = stripe(w, target, off >> STRIPE_SHIFT);
        stripe_lock(s);
        apply(op, basic, integer, es, mem + off, n, data, out);
        stripe_unlock(s);
        off += n;
        len -= n;
        if (data)
            data += n;
        if (out)
            out += n;
    }
}

void tern_rma_shm_acc_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                            const tern_dt_seg_t *segs, const char *data, char *out)
{
    const int excl = exclusive(w, target);
    const size_t base = (size_t)hdr->addr;
    if (hdr->type == RMA_CAS) {
        /* One element: data is the new value, then the compare value. */
        const size_t off = base + (size_t)segs[0].offset;
        if (!excl)
            stripes_range(w, target, off, off + hdr->bytes, 1);
        tern_rma_apply(target_mem(w, target) + base, hdr, segs, data, out);
        if (!excl)
            stripes_range(w, target, off, off + hdr->bytes, 0);
        return;
    }
    const MPI_Op op = (MPI_Op)hdr->op;
    const MPI_Datatype basic = (MPI_Datatype)hdr->basic;
    const long es = tern_datatype_size(basic);
    if (es <= 0 || es != tern_datatype_extent(basic)) {
        /* An element type with holes (MPI_SHORT_INT...): an element spans
         * pieces of the layout; every stripe from the first piece to the
         * end of the last, the messages' applier. */
        size_t lo = SIZE_MAX, hi = 0;
        for (uint64_t i = 0; i < hdr->nsegs; i++) {
            const size_t a = base + (size_t)segs[i].offset, b = a + segs[i].len;
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
        if (!excl && hi > lo)
            stripes_range(w, target, lo, hi, 1);
        tern_rma_apply(target_mem(w, target) + base, hdr, segs, data, out);
        if (!excl && hi > lo)
            stripes_range(w, target, lo, hi, 0);
        return;
    }
    const int integer = op == MPI_SUM && tern_op_allowed(MPI_BAND, basic);
    for (uint64_t i = 0; i < hdr->nsegs; i++) {
        const size_t len = segs[i].len;
        acc_piece(w, target, excl, base + (size_t)segs[i].offset, len, op, basic, (size_t)es,
                  integer, op == MPI_NO_OP ? NULL : data, out);
        if (data && op != MPI_NO_OP)
            data += len;
        if (out)
            out += len;
    }
}

/* Whether predefined op (or MPI_REPLACE, MPI_NO_OP) is defined on
 * predefined type dt; *integer: dt is an integer or byte type (SUM is the
 * machine's add). The fast paths ask about one pair again and again: the
 * last answer is kept (both are predefined: constant), and asking again is
 * two compares inline, the look-up out of line. */
static struct {
    MPI_Op op;
    MPI_Datatype dt;
    int fits, integer;
} last_fit = {MPI_OP_NULL, MPI_DATATYPE_NULL, 0, 0};

static __attribute__((noinline)) void op_fit_lookup(MPI_Op op, MPI_Datatype dt)
{
    last_fit.fits = op == MPI_REPLACE || op == MPI_NO_OP ||
                    (tern_op_is_predefined(op) && tern_op_allowed(op, dt));
    last_fit.integer = tern_op_allowed(MPI_BAND, dt);
    last_fit.op = op;
    last_fit.dt = dt;
}

static inline int op_fits(MPI_Op op, MPI_Datatype dt, int *integer)
{
    if (__builtin_expect(op != last_fit.op || dt != last_fit.dt, 0))
        op_fit_lookup(op, dt);
    *integer = last_fit.integer;
    return last_fit.fits;
}

/* Whether Compare_and_swap takes predefined type dt: the integer,
 * logical, byte and multi-language types, those MPI_BAND or MPI_LAND is
 * defined on (the look-up was 80 of a call's 290 instructions). Kept for
 * the last type asked, as last_fit. */
static struct {
    MPI_Datatype dt;
    int fits;
} last_cas = {MPI_DATATYPE_NULL, 0};

static __attribute__((noinline)) void cas_fit_lookup(MPI_Datatype dt)
{
    last_cas.fits = tern_op_allowed(MPI_BAND, dt) || tern_op_allowed(MPI_LAND, dt);
    last_cas.dt = dt;
}

static inline int cas_fits(MPI_Datatype dt)
{
    if (__builtin_expect(dt != last_cas.dt, 0))
        cas_fit_lookup(dt);
    return last_cas.fits;
}

int tern_rma_cas_type_fits(MPI_Datatype dt)
{
    return cas_fits(dt);
}

/* A predefined contiguous type without holes: its size (0 for any other
 * type) and true_lb. */
typedef struct {
    long size;
    MPI_Aint true_lb;
} elem_type_t;

static __attribute__((noinline)) elem_type_t elem_described(MPI_Datatype dt)
{
    tern_dt_desc_t d;
    if (!tern_datatype_describe(dt, &d) || !d.predefined || !d.contig || d.size <= 0 ||
        d.size != d.extent)
        return (elem_type_t){0, 0};
    return (elem_type_t){d.size, d.true_lb};
}

/* The plain types (all but the pair types) decoded from the handle, in
 * registers (a struct filled on the stack and read back at once would
 * stall, row putlat of docs/performance.md); the others looked up. */
static inline elem_type_t elem_type(MPI_Datatype dt)
{
    if (__builtin_expect(tern_datatype_is_plain(dt), 1))
        return (elem_type_t){tern_datatype_plain_size(dt), 0};
    return elem_described(dt);
}

int tern_rma_shm_accumulate(tern_win_t *w, const void *origin, MPI_Count ocount,
                            MPI_Datatype otype, int target, MPI_Aint disp, MPI_Count tcount,
                            MPI_Datatype ttype, MPI_Op op)
{
    /* As tern_rma_shm_copy: anything unusual goes the general way. */
    if (!tern_rma_shm_may_access(w, target) || otype != ttype || ocount != tcount ||
        ocount <= 0 || op == MPI_NO_OP)
        return 0;
    const elem_type_t t = elem_type(ttype);
    int integer;
    if (t.size <= 0 || !op_fits(op, ttype, &integer))
        return 0;
    MPI_Aint bytes, off;
    if (__builtin_mul_overflow(tcount, t.size, &bytes) ||
        __builtin_mul_overflow(disp, (MPI_Aint)w->disp_units[target], &off))
        return 0;
    off += t.true_lb;
    if (off < 0 || off > w->sizes[target] - bytes)
        return 0;
    w->fence_used |= w->fence_open;
    const int excl = exclusive(w, target);
    const size_t o = (size_t)off, n = (size_t)bytes, es = (size_t)t.size;
    const char *data = (const char *)origin + t.true_lb;
    /* A few aligned integers summed in one stripe (counters, the 8-32 B
     * accumulates): the stripe, the adds inline, the release, without
     * acc_piece's general loop and its arguments on the stack. */
    if (integer && op == MPI_SUM && n <= SMALL_SUM_BYTES && (es == 4 || es == 8) &&
        !(o & (es - 1)) && (o & (STRIPE_BYTES - 1)) + n <= STRIPE_BYTES) {
        atomic_uint *s = excl ? NULL : stripe(w, target, o >> STRIPE_SHIFT);
        if (s)
            stripe_lock(s);
        apply(MPI_SUM, ttype, 1, es, target_mem(w, target) + o, n, data, NULL);
        if (s)
            stripe_unlock(s);
        return 1;
    }
    acc_piece(w, target, excl, o, n, op, ttype, es, integer, data, NULL);
    return 1;
}

/* One element of es bytes (1, 2, 4 or 8) at t, aligned, under its stripe:
 * old gets its value, then t = in op t (CAS: t = in when it equals
 * compare). 4- and 8-byte CAS, MPI_NO_OP, MPI_REPLACE and integer sums
 * inline (the benchmarks' and most programs' cases); the rest by
 * tern_op_apply on an aligned copy of the origin's element. */
#define ELEM_INLINE(bits)                                                                          \
    do {                                                                                           \
        uint##bits##_t cur, v;                                                                     \
        memcpy(&cur, t, sizeof cur);                                                               \
        memcpy(old, &cur, sizeof cur);                                                             \
        if (op == MPI_NO_OP && !compare)                                                           \
            return;                                                                                \
        memcpy(&v, in, sizeof v);                                                                  \
        if (compare) {                                                                             \
            uint##bits##_t c;                                                                      \
            memcpy(&c, compare, sizeof c);                                                         \
            if (cur == c)                                                                          \
                memcpy(t, &v, sizeof v);                                                           \
            return;                                                                                \
        }                                                                                          \
        if (op == MPI_REPLACE || (integer && op == MPI_SUM)) {                                     \
            cur = op == MPI_REPLACE ? v : cur + v;                                                 \
            memcpy(t, &cur, sizeof cur);                                                           \
            return;                                                                                \
        }                                                                                          \
    } while (0)

static inline void elem_apply(MPI_Op op, MPI_Datatype dt, int integer, size_t es, char *t,
                              const char *in, const char *compare, char *old)
{
    if (es == 8)
        ELEM_INLINE(64);
    else if (es == 4)
        ELEM_INLINE(32);
    else
        memcpy(old, t, es);
    if (compare) {
        if (!memcmp(t, compare, es))
            memcpy(t, in, es);
    } else if (op == MPI_REPLACE) {
        memcpy(t, in, es);
    } else if (op != MPI_NO_OP) {
        _Alignas(16) char v[8];
        memcpy(v, in, es);
        tern_op_apply(op, dt, v, t, 1);
    }
}
#undef ELEM_INLINE

int tern_rma_shm_fetch_atomic(tern_win_t *w, int target, MPI_Aint disp, MPI_Datatype dt,
                              MPI_Op op, const void *origin, const void *compare, void *result)
{
    /* As tern_rma_shm_copy: anything unusual goes the general way. */
    if (!tern_rma_shm_may_access(w, target))
        return 0;
    const long es = tern_datatype_size(dt);
    MPI_Aint off;
    if (es <= 0 || es > 8 || (es & (es - 1)) ||
        __builtin_mul_overflow(disp, (MPI_Aint)w->disp_units[target], &off) || off < 0 ||
        off > w->sizes[target] - es || (off & (es - 1)))
        return 0;
    int integer = 0;
    if (compare ? !cas_fits(dt) : !op_fits(op, dt, &integer))
        return 0;
    w->fence_used |= w->fence_open;
    char *t = target_mem(w, target) + off;
    /* An aligned element of a power-of-two size lies in one stripe. One
     * call of elem_apply, so that it is inlined. */
    atomic_uint *s = exclusive(w, target) ? NULL : stripe(w, target, (size_t)off >> STRIPE_SHIFT);
    if (s)
        stripe_lock(s);
    elem_apply(op, dt, integer, (size_t)es, t, origin, compare, result);
    if (s)
        stripe_unlock(s);
    return 1;
}
