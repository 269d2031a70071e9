/* Puts and gets of MPI_Win_create windows by Cross Memory Attach
 * (rma_cma.h). */
#include "core/rma/rma_cma.h"
#include "base/cma.h"
#include "base/config.h"
#include "base/log.h"
#include "core/coll/coll.h"
#include "core/runtime/runtime.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* A word every rank reads in its peers to learn whether the kernel lets it. */
static uint64_t probe_word;

void tern_rma_cma_close(tern_win_t *w)
{
    if (!w->cma)
        return;
    free(w->cma->pid);
    free(w->cma->base);
    free(w->cma->ok);
    free(w->cma);
    w->cma = NULL;
}

tern_status_t tern_rma_cma_open(tern_win_t *w)
{
    const int n = w->size;
    /* auto follows TERN_SHM_CMA: off there keeps Yama's default (docs/security.md). */
    const bool want = tern_knob_bool_or(TERN_KNOB_RMA_CMA, tern_knob_bool_or(TERN_KNOB_SHM_CMA, true));
    if (want)
        tern_cma_allow_peers(); /* before the peers' probes, which follow the allgather */
    probe_word = 0x7465726e636d6100ull ^ (uint64_t)getpid();
    /* Every rank takes part, whatever its knob says: the exchange is collective. */
    uint64_t mine[4] = {(uint64_t)getpid(), (uint64_t)(uintptr_t)w->base,
                        (uint64_t)(uintptr_t)&probe_word, probe_word};
    uint64_t *all = malloc((size_t)n * sizeof mine);
    struct tern_rma_cma *c = calloc(1, sizeof *c);
    if (c) {
        c->pid = calloc((size_t)n, sizeof *c->pid);
        c->base = calloc((size_t)n, sizeof *c->base);
        c->ok = calloc((size_t)n, 1);
    }
    tern_status_t st = all && c && c->pid && c->base && c->ok ? TERN_OK : TERN_ERR_NOMEM;
    /* Out of memory here or not, the peers wait in the allgather: join it. */
    uint64_t dummy[4];
    tern_status_t gst = tern_coll_allgather(w->comm, mine, sizeof mine, MPI_BYTE,
                                            all ? (void *)all : (void *)dummy,
                                            all ? sizeof mine : 0, MPI_BYTE, NULL, 0);
    if (st == TERN_OK)
        st = gst;
    int reached = 0;
    for (int r = 0; st == TERN_OK && want && r < n; r++) {
        if (tern_rt.node_of_rank[tern_win_world(w, r)] != tern_rt.node)
            continue;
        c->pid[r] = (pid_t)all[4 * r];
        c->base[r] = all[4 * r + 1];
        tern_status_t pst = r == w->rank ? TERN_OK
                                         : tern_cma_probe(c->pid[r], all[4 * r + 2], all[4 * r + 3]);
        c->ok[r] = pst == TERN_OK;
        reached += c->ok[r];
        if (pst != TERN_OK && !tern_knob_is_auto(TERN_KNOB_RMA_CMA))
            tern_warn("TERN_RMA_CMA=on but process_vm_readv of window rank %d failed (%s): its puts "
                      "and gets go by active messages", r, tern_status_string(pst));
    }
    free(all);
    w->cma = c;
    if (st != TERN_OK || !reached)
        tern_rma_cma_close(w);
    return st;
}

int tern_rma_cma_covers(const tern_win_t *w, int target, uint32_t type)
{
    if (!w->cma || !w->cma->ok[target])
        return 0;
    /* Accumulates only where every origin takes the target's accumulate
     * lock (shared lock words, rma_shm.h). */
    return type == RMA_PUT || type == RMA_GET ||
           (w->ctrl && (type == RMA_ACC || type == RMA_GACC || type == RMA_CAS));
}

tern_status_t tern_rma_cma_apply(tern_win_t *w, int target, const rma_hdr_t *hdr,
                                 const tern_dt_seg_t *segs, size_t nsegs, const char *data,
                                 char *out)
{
    if (hdr->type != RMA_PUT && hdr->type != RMA_GET)
        return tern_rma_cma_accumulate(w, target, hdr, segs, nsegs, data, out);
    const int write = hdr->type == RMA_PUT;
    char *local = write ? (char *)(uintptr_t)data : out;
    const uint64_t base = w->cma->base[target] + hdr->addr;
    struct iovec riov[64];
    const size_t cap = sizeof riov / sizeof riov[0] < TERN_CMA_IOV_MAX ? sizeof riov / sizeof riov[0]
                                                                   : TERN_CMA_IOV_MAX;
    tern_status_t st = TERN_OK;
    for (size_t i = 0; i < nsegs && st == TERN_OK;) {
        size_t cnt = 0, total = 0;
        for (; i < nsegs && cnt < cap; i++) {
            if (!segs[i].len)
                continue;
            riov[cnt].iov_base = (void *)(uintptr_t)(base + (uint64_t)segs[i].offset);
            riov[cnt++].iov_len = segs[i].len;
            total += segs[i].len;
        }
        if (cnt)
            st = tern_cma_copyv(w->cma->pid[target], write, local, riov, cnt, total);
        local += total;
    }
    if (st == TERN_ERR_NOT_SUPPORTED) {
        /* The kernel changed its mind (the target became non-dumpable):
         * active messages from now on, this operation included. */
        tern_debug("CMA to window rank %d refused: active messages from now on", target);
        w->cma->ok[target] = 0;
    }
    return st;
}
