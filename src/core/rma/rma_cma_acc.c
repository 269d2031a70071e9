/* Accumulates to MPI_Win_create windows of ranks on one node, applied by
 * the origin (rma_cma.h): under the target's accumulate lock, which every
 * origin and the target's own engine take, the target bytes are read with
 * the transport's getv (process_vm_readv) into a bounce buffer, combined
 * with the origin's data and written back with putv, a chunk at a time so
 * a large accumulate costs a cache-sized buffer, not a copy of its size. */
#include "core/rma/rma_cma.h"
#include "core/datatype/datatype.h"
#include "core/rma/rma_shm.h"

#include <stdlib.h>
#include <string.h>

/* Bytes per read-modify-write (fits in the L2 cache with the origin's). */
#define ACC_CHUNK (128u << 10)
/* Remote pieces per chunk (at most the kernel's UIO_MAXIOV). */
#define ACC_IOV 256

/* Bytes of one element: CAS has no basic type in its header (one element
 * of bytes). */
static size_t elem_size(const rma_hdr_t *h)
{
    long es = h->type == RMA_CAS ? (long)h->bytes : tern_datatype_size((MPI_Datatype)h->basic);
    return es > 0 ? (size_t)es : 1;
}

/* Where a chunk starts: piece i of the target layout, off bytes into it. */
typedef struct {
    size_t i, off;
} cursor_t;

/* The pieces of the next at most want bytes from *c: fills riov (at most
 * ACC_IOV) and returns the bytes they cover; *c is left unmoved. */
static size_t gather(uint64_t base, const tern_dt_seg_t *segs, size_t nsegs, cursor_t c,
                     size_t want, struct iovec *riov, size_t *cnt)
{
    size_t total = 0, n = 0;
    while (c.i < nsegs && total < want && n < ACC_IOV) {
        size_t len = segs[c.i].len - c.off;
        if (len > want - total)
            len = want - total;
        if (len) {
            riov[n].iov_base = (void *)(uintptr_t)(base + (uint64_t)segs[c.i].offset + c.off);
            riov[n++].iov_len = len;
            total += len;
        }
        c.off += len;
        if (c.off == segs[c.i].len) {
            c.i++;
            c.off = 0;
        }
    }
    *cnt = n;
    return total;
}

static void advance(const tern_dt_seg_t *segs, cursor_t *c, size_t bytes)
{
    while (bytes) {
        size_t len = segs[c->i].len - c->off;
        size_t take = len < bytes ? len : bytes;
        c->off += take;
        bytes -= take;
        if (c->off == segs[c->i].len) {
            c->i++;
            c->off = 0;
        }
    }
}

/* The read-modify-write of every chunk; the caller holds the lock. *wrote
 * tells whether any target byte changed (a refusal after that cannot be
 * retried by messages). */
static tern_status_t rmw(tern_win_t *w, int target, uint64_t base, const rma_hdr_t *h,
                         const tern_dt_seg_t *segs, size_t nsegs, const char *data, char *out,
                         char *tmp, size_t chunk, int *wrote)
{
    struct iovec riov[ACC_IOV];
    const size_t es = elem_size(h);
    const int cas = h->type == RMA_CAS;
    const int modify = h->op != MPI_NO_OP || cas;
    /* MPI_REPLACE without a fetch need not read. */
    const int read = !(h->type == RMA_ACC && h->op == MPI_REPLACE);
    cursor_t c = {0, 0};
    tern_status_t st = TERN_OK;
    for (size_t done = 0; done < h->bytes && st == TERN_OK;) {
        size_t want = h->bytes - done < chunk ? h->bytes - done : chunk, cnt;
        size_t got = gather(base, segs, nsegs, c, want, riov, &cnt);
        if (got < want && got % es) {
            /* Out of pieces inside an element: end the chunk at the last
             * whole element, so the op sees whole ones. */
            got = gather(base, segs, nsegs, c, got - got % es, riov, &cnt);
        }
        if (read && (st = tern_rma_cma_copyv(w, target, 0, tmp, got, riov, cnt)) != TERN_OK)
            break;
        if (out) {
            memcpy(out, tmp, got);
            out += got;
        }
        if (cas) {
            /* One element: data is the new value, then the compare value. */
            if (memcmp(tmp, data + h->bytes, got))
                break;
            memcpy(tmp, data, got);
        } else {
            tern_rma_accumulate_bytes((MPI_Op)h->op, (MPI_Datatype)h->basic, data + done, tmp,
                                      got);
        }
        if (modify) {
            if ((st = tern_rma_cma_copyv(w, target, 1, tmp, got, riov, cnt)) != TERN_OK)
                break;
            *wrote = 1;
        }
        advance(segs, &c, got);
        done += got;
    }
    return st;
}

tern_status_t tern_rma_cma_accumulate(tern_win_t *w, int target, const rma_hdr_t *hdr,
                                      const tern_dt_seg_t *segs, size_t nsegs,
                                      const char *data, char *out)
{
    if (target == w->rank) {
        /* Its own memory: no system call, the same lock. */
        tern_rma_shm_acc_lock(w, target);
        tern_rma_apply((char *)w->base + hdr->addr, hdr, segs, data, out);
        tern_rma_shm_acc_unlock(w, target);
        return TERN_OK;
    }
    size_t es = elem_size(hdr);
    size_t chunk = es < ACC_CHUNK ? ACC_CHUNK - ACC_CHUNK % es : es;
    if (hdr->bytes < chunk)
        chunk = hdr->bytes;
    char *tmp = malloc(chunk ? chunk : 1);
    if (!tmp)
        return TERN_ERR_NOMEM;
    int wrote = 0;
    tern_rma_shm_acc_lock(w, target);
    tern_status_t st = rmw(w, target, w->cma->base[target] + hdr->addr, hdr, segs,
                           nsegs, data, out, tmp, chunk, &wrote);
    tern_rma_shm_acc_unlock(w, target);
    free(tmp);
    if (st == TERN_ERR_NOT_SUPPORTED) {
        /* The kernel changed its mind (the target became non-dumpable). */
        w->cma->ok[target] = 0;
        if (wrote)
            st = tern_status_detail(TERN_ERR_INTERNAL,
                                    "process_vm_writev to window rank %d refused in the "
                                    "middle of an accumulate", target);
    }
    return st;
}
