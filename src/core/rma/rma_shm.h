/* Direct access to windows whose memory every rank maps (rma_shm.c):
 * Win_allocate_shared, and Win_allocate when the ranks share a node. The
 * memory is one memfd; before the ranks' memory it holds, per rank, the
 * lock word of passive-target epochs and the accumulate stripes' locks
 * (rma_shm_acc.c), so locks, puts, gets and accumulates need nothing from
 * the target process: it may compute without calling MPI. Win_create windows
 * of ranks on one node get the control lines alone (w->ctrl, its own
 * memfd): their locks are these words, their accumulates go by CMA under
 * the accumulate lock (rma_cma_acc.c). */
#ifndef TERN_CORE_RMA_SHM_H
#define TERN_CORE_RMA_SHM_H

#include "core/rma/rma_path.h"
#include "base/copy_small.h"
#include "base/fence.h"
#include "core/datatype/datatype.h"

/* Direct windows: per rank, accumulate-class operations to its memory
 * hold the stripes of the bytes they update (rma_shm_acc.c), one lock word
 * per cache line. */
#define TERN_RMA_STRIPES 64
#define TERN_RMA_STRIPE_LINE 64

/* Maps the window's memory (collective over its ranks): w->shm,
 * w->shm_offsets, w->base, w->ctrl; w->direct = 1. TERN_ERR_RMA_SHARED when
 * the memory cannot be made or opened. */
tern_status_t tern_rma_shm_map(tern_win_t *w);
/* Win_create on one node: only the control lines, in their own memfd
 * (collective). w->ctrl and w->ctrl_bytes are set when every rank mapped
 * it; otherwise left NULL (locks and accumulates then by active messages),
 * which every rank sees alike. */
tern_status_t tern_rma_shm_map_ctrl(tern_win_t *w);
/* The lock that makes accumulates to target of a Win_create window atomic:
 * every origin (CMA) and the target's engine take it. Held only around a copy
 * or a read-modify-write, never across a progress call. */
void tern_rma_shm_acc_lock(tern_win_t *w, int target);
void tern_rma_shm_acc_unlock(tern_win_t *w, int target);
/* Passive-target locks on target's lock word (spins, running progress). */
void tern_rma_shm_lock(tern_win_t *w, int target, int lock_type);
void tern_rma_shm_unlock(tern_win_t *w, int target, int lock_type);
/* One operation on target's memory now (hdr->addr: offset from its base);
 * fetched data into out. Accumulates, Get_accumulate and CAS go to
 * tern_rma_shm_acc_apply. */
void tern_rma_shm_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                        const tern_dt_seg_t *segs, const char *data, char *out);
/* An accumulate, Get_accumulate or CAS on target's memory now, atomic per
 * element: under the stripes of the bytes it updates (none while this
 * origin holds target's exclusive lock). */
void tern_rma_shm_acc_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                            const tern_dt_seg_t *segs, const char *data, char *out);
/* The fast path of Accumulate to a direct window: one predefined type on
 * both sides, the same count, a predefined operation defined on it, an
 * epoch that covers target, in range: applied now (atomic per element, as
 * tern_rma_shm_acc_apply) and 1 returned. 0: nothing done, the general path. */
int tern_rma_shm_accumulate(tern_win_t *w, const void *origin, MPI_Count ocount,
                            MPI_Datatype otype, int target, MPI_Aint disp, MPI_Count tcount,
                            MPI_Datatype ttype, MPI_Op op);
/* The fast path of Fetch_and_op (compare NULL) and Compare_and_swap to a
 * direct window: an element of 1, 2, 4 or 8 bytes at an aligned address,
 * an epoch that covers target, in range, a predefined operation defined
 * on dt (Compare_and_swap: an integer, logical, byte or multi-language
 * type): done now under the element's one stripe, result written, 1
 * returned. 0: nothing done, the caller takes the general path. */
int tern_rma_shm_fetch_atomic(tern_win_t *w, int target, MPI_Aint disp, MPI_Datatype dt,
                              MPI_Op op, const void *origin, const void *compare, void *result);
/* Whether Compare_and_swap takes predefined type dt (the rule the fast
 * path applies, for the general path's error). */
int tern_rma_cas_type_fits(MPI_Datatype dt);

/* Where a contiguous type's data lies: bytes per element (0: a type with
 * holes, or none) and true_lb. Returned in two registers, not written into
 * a tern_dt_desc_t on the stack: GCC copied such a struct (t = o) with
 * 16-byte loads across its two 8-byte stores, a store-to-load forward that
 * fails on every put and get (docs/performance.md row putlat). */
typedef struct {
    MPI_Aint size, true_lb;
} tern_rma_contig_t;

/* The types that are not plain predefined ones, looked up. */
__attribute__((noinline)) tern_rma_contig_t tern_rma_contig_described(MPI_Datatype dt);

/* Plain predefined types decoded from the handle, the others looked up. */
static inline tern_rma_contig_t tern_rma_contig(MPI_Datatype dt)
{
    if (__builtin_expect(tern_datatype_is_plain(dt), 1))
        return (tern_rma_contig_t){tern_datatype_plain_size(dt), 0};
    return tern_rma_contig_described(dt);
}

/* A direct put's or get's (get 1) copy of fewer than 8 bytes or more
 * than 64, which tern_copy_small does not take (rma_shm.c). */
void tern_rma_shm_direct_copy(int get, void *dst, const void *src, size_t n);

/* Whether the direct fast paths may access target now: a rank of the
 * window, not revoked, under a lock, lock_all or fence epoch (not PSCW's
 * group, which the general path checks). Otherwise the general path says
 * what is wrong. */
static inline int tern_rma_shm_may_access(const tern_win_t *w, int target)
{
    return (unsigned)target < (unsigned)w->size &&
           (w->locked[target] || (w->epoch & TERN_EPOCH_LOCK_ALL) || w->fence_open) &&
           !w->comm->revoked;
}

/* The fast path of Put and Get to a direct window (w->direct): contiguous
 * data on both sides, an epoch that covers target, in range: copied now
 * and 1 returned. 0: nothing done, the caller takes the general path.
 * Inline, and 8 to 64 bytes copied inline: a put with its flush took 346
 * instructions against Open MPI 5's 290, its prologues and the call to
 * glibc's memcpy about 50 of them (docs/performance.md row putinline). */
static inline __attribute__((always_inline)) int
tern_rma_shm_copy(tern_win_t *w, int get, void *origin, MPI_Count ocount, MPI_Datatype otype,
                  int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype)
{
    /* Anything unusual (no epoch, PSCW's group, out of range, zero bytes,
     * a revoked window) goes the general way, which says what is wrong. */
    if (!tern_rma_shm_may_access(w, target))
        return 0;
    /* As tern_rma_check_epoch: an access in a fence's epoch opens it (no
     * lock or start epoch is open while fence_open is). */
    w->fence_used |= w->fence_open;
    const tern_rma_contig_t o = tern_rma_contig(otype);
    const tern_rma_contig_t t = ttype == otype ? o : tern_rma_contig(ttype);
    if (o.size <= 0 || t.size <= 0)
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
    char *dst = get ? buf : mem;
    const char *src = get ? mem : buf;
    if (tern_copy_small_fits((size_t)bytes))
        tern_copy_small(dst, src, (size_t)bytes);
    else
        tern_rma_shm_direct_copy(get, dst, src, (size_t)bytes);
    tern_fence_release();
    return 1;
}

#endif
