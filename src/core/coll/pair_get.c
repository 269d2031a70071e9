/* The 2-rank exchange by one CMA read (pair_get.h). */
#include "core/coll/pair_get.h"
#include "base/cma.h"
#include "base/config.h"
#include "base/copy_rate.h"
#include "base/log.h"
#include "base/pvars.h"
#include "core/coll/coll_util.h"
#include "core/coll/pair_line.h"
#include "core/pt2pt/progress.h"

#include <stdatomic.h>
#include <string.h>

/* A line as this exchange writes it: the sequence (written last), the
 * bytes published, their address, and "done" (0 until this rank read the
 * other's bytes; then the sequence). pair_line.c's count sits at LEN too. */
enum { SEQ = 0, LEN = 8, ADDR = 16, DONE = 24 };
/* Under auto, the ranks agree whether the read pays every this many
 * calls that could take the read (one line exchange). */
enum { AGREE_EVERY = 64 };
/* The pid of rank q sits in its enter line, after the flag (shm_region.c). */
enum { PID_OFFSET = 8 };

static pid_t peer_pid(const tern_shm_region_t *reg, int q)
{
    return (pid_t)*(const int32_t *)(const void *)(reg->flags +
                                                   (size_t)q * TERN_SHM_N_FLAGS * TERN_SHM_LINE +
                                                   PID_OFFSET);
}

/* Waits until the other rank's word at off in its line of exchange seq
 * reaches seq (tern_pair_wait_turn). */
static tern_status_t wait_word(tern_shm_region_t *reg, const char *his, int off, uint64_t seq)
{
    const _Atomic uint64_t *w = (const _Atomic uint64_t *)(const void *)(his + off);
    unsigned spins = 0, idle = 0;
    while (atomic_load_explicit(w, memory_order_acquire) != seq) {
        tern_status_t st = tern_pair_wait_turn(reg, w, seq, &spins, &idle);
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}

/* Whether this pair takes the read for this call: CMA probed both ways at
 * the first call, whether the read pays agreed every AGREE_EVERY calls
 * under auto. Both ranks run the same swaps at the same calls. */
static tern_status_t agree(tern_shm_region_t *reg, int want_auto, int *take)
{
    tern_status_t st;
    if (reg->get_cma == 0) {
        /* The probe's target (base/cma.h): its address and value. */
        const _Atomic uint64_t *probe = tern_cma_probe_word();
        uint64_t mine[2] = {(uint64_t)(uintptr_t)probe, atomic_load(probe)}, his[2] = {0, 0};
        if (tern_knob_bool_or(TERN_KNOB_SHM_CMA, true)) /* TERN_SHM_CMA=off: Yama as it was */
            tern_cma_allow_peers(); /* before the swap, after which the other probes */
        st = tern_pair_line_swap(reg, mine, sizeof mine, his);
        if (st != TERN_OK)
            return st;
        uint64_t ok[2] = {tern_knob_bool_or(TERN_KNOB_SHM_CMA, true) &&
                              tern_cma_probe(peer_pid(reg, 1 - reg->me), his[0], his[1]) ==
                                  TERN_OK,
                          0};
        st = tern_pair_line_swap(reg, &ok[0], sizeof ok[0], &ok[1]);
        if (st != TERN_OK)
            return st;
        reg->get_cma = ok[0] && ok[1] ? 1 : -1;
    }
    if (reg->get_cma < 0 || !want_auto) {
        *take = reg->get_cma > 0;
        return TERN_OK;
    }
    if (reg->get_calls++ % AGREE_EVERY == 0) {
        uint64_t pays[2] = {(uint64_t)tern_single_copy_pays(tern_copy_rate_gbs()), 0};
        st = tern_pair_line_swap(reg, &pays[0], sizeof pays[0], &pays[1]);
        if (st != TERN_OK)
            return st;
        if (reg->get_pays != (pays[0] && pays[1]))
            tern_debug("2-rank pair read: %s (copy %.1f GB/s, CMA read %.1f; the other %s)",
                       pays[0] && pays[1] ? "on" : "off", tern_copy_rate_gbs(),
                       tern_cma_rate_gbs(), pays[1] ? "pays" : "does not pay");
        reg->get_pays = pays[0] && pays[1];
    }
    *take = reg->get_pays;
    return TERN_OK;
}

tern_status_t tern_pair_get(const tern_coll_args_t *a, tern_coll_kind_t kind, int *served)
{
    *served = 0;
    size_t b = a->bytes;
    /* An algorithm the program forced (TERN_<COLL>_ALGORITHM, the same on
     * every rank) is run as asked. */
    if ((kind != TERN_COLL_ALLGATHER && kind != TERN_COLL_ALLTOALL) ||
        b < tern_knob_size(TERN_KNOB_COLL_PAIR_GET_MIN) ||
        !tern_knob_bool_or(TERN_KNOB_COLL_PAIR_GET, true) || tern_coll_forced(kind))
        return TERN_OK;
    tern_status_t st = TERN_OK;
    tern_shm_region_t *reg = tern_pair_region(a->comm, &st);
    if (!reg) {
        *served = st != TERN_OK;
        return st;
    }
    if (__builtin_expect(reg->broken >= 0, 0)) {
        *served = 1;
        return tern_shm_broken_status(reg);
    }
    int take = 0;
    st = agree(reg, tern_knob_is_auto(TERN_KNOB_COLL_PAIR_GET), &take);
    if (st != TERN_OK || !take) {
        *served = st != TERN_OK;
        return st;
    }
    *served = 1;
    int me = reg->me, peer = 1 - me;
    int all = kind == TERN_COLL_ALLGATHER;
    /* What the other reads of ours: our block (allgather), our whole send
     * buffer (alltoall: it takes its block at its offset). */
    size_t pub = all ? b : 2 * b;
    uint64_t seq = ++reg->xseq;
    char *mine = tern_shm_xline(reg, me, seq);
    const char *his = tern_shm_xline(reg, peer, seq);
    *(uint64_t *)(void *)(mine + LEN) = pub;
    *(uint64_t *)(void *)(mine + ADDR) = (uint64_t)(uintptr_t)a->sbuf;
    atomic_store_explicit((_Atomic uint64_t *)(void *)(mine + DONE), 0, memory_order_relaxed);
    atomic_store_explicit((_Atomic uint64_t *)(void *)(mine + SEQ), seq, memory_order_release);
    /* Our own block while the other rank comes. */
    const char *own_src = all ? (const char *)a->sbuf : (const char *)a->sbuf + (size_t)me * b;
    char *own_dst = (char *)a->rbuf + (size_t)me * b;
    if (own_src != own_dst)
        memcpy(own_dst, own_src, b);
    st = wait_word(reg, his, SEQ, seq);
    if (st != TERN_OK)
        return st;
    uint64_t got = *(const uint64_t *)(const void *)(his + LEN);
    uint64_t addr = *(const uint64_t *)(const void *)(his + ADDR);
    if (__builtin_expect(got != pub, 0))
        st = tern_coll_size_mismatch(all ? got : got / 2, b, peer);
    else if ((st = tern_cma_read(peer_pid(reg, peer), (char *)a->rbuf + (size_t)peer * b,
                                 addr + (all ? 0 : (uint64_t)me * b), b)) == TERN_OK)
        tern_pvar_add(TERN_PVAR_COLL_PAIR_GETS, 1);
    /* Done even after a failure: the other must not wait for good. */
    atomic_store_explicit((_Atomic uint64_t *)(void *)(mine + DONE), seq, memory_order_release);
    tern_status_t wst = wait_word(reg, his, DONE, seq);
    return st != TERN_OK ? st : wst;
}
