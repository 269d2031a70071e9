/* The 2-rank exchange line (pair_line.h). */
#include "core/coll/pair_line.h"
#include "core/coll/coll_util.h"
#include "core/pt2pt/progress.h"

#include <stdatomic.h>
#include <string.h>

/* A line: the sequence (written last), the byte count, the data. */
enum { SEQ = 0, COUNT = 8, DATA = 16 };
_Static_assert(DATA + TERN_PAIR_LINE_MAX == TERN_SHM_LINE, "the data fills the line");

tern_shm_region_t *tern_pair_line_slow(tern_comm_t *c, tern_status_t *st)
{
    /* Whether the communicator may have a region at all: the same answer
     * on both ranks (tern_shm_coll_usable). */
    tern_coll_args_t a = {.comm = c, .blocking = 1};
    if (!tern_shm_coll_usable(&a))
        return NULL;
    tern_shm_region_t *reg;
    *st = tern_shm_region_get(c, 1, &reg);
    return *st == TERN_OK && reg && reg->xline_on ? reg : NULL;
}

tern_status_t tern_pair_line_swap(tern_shm_region_t *reg, const void *src, size_t n, void *dst)
{
    if (__builtin_expect(reg->broken >= 0, 0))
        return tern_shm_broken_status(reg);
    uint64_t seq = ++reg->xseq;
    int peer = 1 - reg->me;
    char *mine = tern_shm_xline(reg, reg->me, seq);
    const char *his = tern_shm_xline(reg, peer, seq);
    memcpy(mine + DATA, src, n);
    *(uint64_t *)(void *)(mine + COUNT) = n;
    atomic_store_explicit((_Atomic uint64_t *)(void *)(mine + SEQ), seq, memory_order_release);
    const _Atomic uint64_t *hs = (const _Atomic uint64_t *)(const void *)(his + SEQ);
    /* Spin on the line alone first: the other rank is in this call too,
     * usually a line transfer away; then progress (a request of the
     * program's that the other rank waits for before it comes here). */
    unsigned spins = 0, idle = 0;
    while (atomic_load_explicit(hs, memory_order_acquire) != seq) {
        if (++spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            continue;
        }
        if ((spins & 1023u) == 0) {
            tern_status_t st = tern_shm_peer_check(reg, peer, hs, seq);
            if (st != TERN_OK)
                return st;
        }
        if (tern_progress() == 0)
            tern_progress_idle(&idle);
    }
    uint64_t got = *(const uint64_t *)(const void *)(his + COUNT);
    if (__builtin_expect(got != n, 0))
        return tern_coll_size_mismatch(got, n, peer);
    memcpy(dst, his + DATA, n);
    return TERN_OK;
}
