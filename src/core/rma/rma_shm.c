/* Direct access to shared window memory (rma_shm.h). */
#include "core/rma/rma_shm.h"
#include "base/copy_movsb.h"
#include "base/copy_store.h"
#include "base/log.h"
#include "base/shm_segment.h"
#include "core/coll/coll.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/runtime.h"
#include "base/pvars.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Per rank, one cache line: the lock word (EXCL, or the count of shared
 * holders) and the accumulate lock (Win_create windows; direct ones take
 * the stripes, rma_shm_acc.c). */
#define LOCK_EXCL (1ull << 63)
struct tern_rma_shm_ctrl {
    _Atomic uint64_t lock;
    atomic_int acc;
    char pad[64 - sizeof(_Atomic uint64_t) - sizeof(atomic_int)];
};
_Static_assert(sizeof(struct tern_rma_shm_ctrl) == 64, "one cache line per rank");

/* One memfd of total bytes made by rank 0 that the others open through
 * /proc (base/shm_segment.h, anonymous segments): nothing in /dev/shm,
 * nothing left when a rank is killed (the pages go with the last
 * mapping). Collective; *err gets the first errno any rank met (then
 * nothing is mapped anywhere): also ranks in pid namespaces of their own,
 * which find no such process or another process's file (the inode tells). */
static tern_status_t share(tern_win_t *w, size_t total, void **mem, int *err_out)
{
    tern_shm_segment_t seg;
    memset(&seg, 0, sizeof seg);
    /* Rank 0's answer: {pid, fd, inode's low bits, errno}. */
    int64_t made[4] = {(int64_t)getpid(), -1, 0, 0};
    if (w->rank == 0) {
        int cerr = 0;
        if (tern_shm_segment_create_anon(&seg, "tern-win", total, &cerr) != TERN_OK)
            made[3] = cerr ? cerr : ENOMEM;
        made[1] = seg.fd;
        made[2] = (int64_t)(uint32_t)seg.ino;
    }
    tern_status_t st = tern_coll_bcast(w->comm, made, sizeof made, MPI_BYTE, 0, NULL, 0);
    int err = st == TERN_OK ? (int)made[3] : 0;
    if (st == TERN_OK && !err && w->rank != 0 &&
        (tern_shm_segment_attach_anon(&seg, (long)made[0], (int)made[1], (uint32_t)made[2],
                                      &err) != TERN_OK ||
         seg.size < total))
        err = err ? err : ENOMEM;
    /* Every rank has mapped (or failed) before rank 0 closes its fd. */
    int any = err;
    if (st == TERN_OK)
        st = tern_coll_allreduce(w->comm, &err, &any, 1, MPI_INT, MPI_MAX, NULL, 0);
    tern_shm_segment_unlink(&seg); /* rank 0's fd */
    *mem = st == TERN_OK && !any ? seg.base : NULL;
    if (!*mem)
        tern_shm_segment_detach(&seg);
    *err_out = any;
    return st;
}

/* Each rank's part at an aligned offset after the control lines and the
 * accumulate stripes (rma_shm_acc.c), contiguous unless
 * alloc_shared_noncontig. */
tern_status_t tern_rma_shm_map(tern_win_t *w)
{
    int n = w->size;
    size_t align = w->alloc_shared_noncontig ? (size_t)sysconf(_SC_PAGESIZE) : w->min_alignment;
    if (align < 64)
        align = 64;
    if (!(w->shm_offsets = calloc((size_t)n, sizeof *w->shm_offsets)))
        return TERN_ERR_NOMEM;
    const size_t stripes_at = (size_t)n * sizeof(struct tern_rma_shm_ctrl);
    size_t total = stripes_at + (size_t)n * TERN_RMA_STRIPES * TERN_RMA_STRIPE_LINE;
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
    w->acc_stripes = (char *)m + stripes_at;
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

/* Not inlined into direct_issue: GCC 12 partially inlines this function
 * there and then rejects the inlined release fence under -fsanitize=thread
 * (-Wtsan), and the general path gains nothing from it. */
__attribute__((noinline)) void tern_rma_shm_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                                                  const tern_dt_seg_t *segs, const char *data,
                                                  char *out)
{
    if (hdr->type == RMA_ACC || hdr->type == RMA_GACC || hdr->type == RMA_CAS) {
        tern_rma_shm_acc_apply(w, target, hdr, segs, data, out);
        return;
    }
    tern_rma_apply((char *)w->shm + w->shm_offsets[target] + hdr->addr, hdr, segs, data, out);
    atomic_thread_fence(memory_order_release);
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

/* The types that are not plain predefined ones, looked up. */
tern_rma_contig_t tern_rma_contig_described(MPI_Datatype dt)
{
    tern_dt_desc_t d;
    if (!tern_datatype_describe(dt, &d) || !d.contig)
        return (tern_rma_contig_t){0, 0};
    return (tern_rma_contig_t){d.size, d.true_lb};
}

/* A direct put's or get's copy: from rma_nt_min bytes by the stores this
 * thread's copies of that direction and size class found faster
 * (base/copy_store.h). A window of large puts into window memory that is
 * not in the cache loses a third of its time to plain stores reading each
 * line first, where a destination in the cache wants them; which one a
 * program has depends on the size (one 4 MB buffer put again and again
 * fits the cache, 64 of them do not), so each power of two from 256 KB
 * keeps its own estimates (docs/performance.md row rmant). Per thread:
 * under MPI_THREAD_MULTIPLE direct puts and gets take no lock. */
#define NT_CLASSES 8 /* 256 KB, 512 KB, ..., 32 MB and up */
void tern_rma_shm_direct_copy(int get, void *dst, const void *src, size_t n)
{
    /* The default TLS model: 256 bytes of initial-exec TLS would come out
     * of the static TLS that a dlopen'ed libmpi (mpi4py) may take. */
    static _Thread_local tern_store_choice_t choice[2][NT_CLASSES];
    if (n < tern_rt.rma_nt_min) {
        tern_copy_large(dst, src, n, tern_rt.rma_movsb_min);
        return;
    }
    if (tern_rt.rma_nt_always) {
        tern_copy_nt(dst, src, n);
        return;
    }
    int cls = 63 - __builtin_clzll((unsigned long long)n) - 18;
    cls = cls < 0 ? 0 : cls >= NT_CLASSES ? NT_CLASSES - 1 : cls;
    tern_copy_chosen(&choice[get][cls], NULL, dst, src, n, tern_rt.rma_movsb_min);
}

