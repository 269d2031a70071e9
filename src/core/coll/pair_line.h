/* A 2-rank exchange of up to TERN_PAIR_WIDE_MAX bytes through one to
 * TERN_SHM_XLINES cache lines each way (the blocking lane of the
 * communicator's shm region, shm_region.h): the allreduce, allgather,
 * alltoall and reduce_scatter of equal segments of coll_pair.c at small
 * sizes. Each rank writes its bytes,
 * their count and then the exchange's sequence number into its own line
 * and polls the other's; no ring index, header, match or request. The
 * message crosses in one line too; the line saves what runs around it
 * (~40% of the call's instructions, a third of its time in the VM's slow
 * mode; docs/performance.md, row ar8s). Past TERN_PAIR_LINE_MAX bytes
 * every further line carries the sequence too, and the reader polls all
 * of them at once, so their transfers overlap instead of following the
 * first line's one after another (row wide).
 *
 * Exchange n uses block n % 2 of each rank: a rank writes block n % 2
 * again only at n + 2, after it saw the other's n + 1, which the other
 * wrote after it read our n. Both ranks must take the line for the same calls:
 * the decision is the byte count (the same on both ranks of a correct
 * program), the table's algorithm and the region, which both ranks create
 * at the same call or neither has; the datatypes' layout never decides
 * (a rank with a non-contiguous type packs and unpacks around it, coll.c). */
#ifndef TERN_CORE_COLL_PAIR_LINE_H
#define TERN_CORE_COLL_PAIR_LINE_H

#include "core/coll/shm_region.h"
#include "core/pt2pt/progress.h"

/* Data bytes of the first line (less the sequence and the count) and of
 * the whole block (each further line less its sequence). */
#define TERN_PAIR_LINE_MAX 48
#define TERN_PAIR_WIDE_MAX (TERN_PAIR_LINE_MAX + (TERN_SHM_XLINES - 1) * (TERN_SHM_LINE - 8))

/* The blocking lane of the 2-rank intracommunicator c, else NULL: a
 * communicator without a region (none possible, or its creation failed on
 * some rank). Creates the region at the first call that can use it
 * (collective: both ranks make the same call; pair_get.c's read shares
 * it). *st: an error of that creation. */
tern_shm_region_t *tern_pair_region_slow(tern_comm_t *c, tern_status_t *st);
static inline tern_shm_region_t *tern_pair_region(tern_comm_t *c, tern_status_t *st)
{
    void *r = c->coll_shm;
    if (__builtin_expect(!r || r == &tern_shm_local_mark, 0))
        return tern_pair_region_slow(c, st);
    return r == &tern_shm_none_mark ? NULL : r;
}

/* The blocking lane when an exchange of `bytes` on the 2-rank
 * intracommunicator c goes through the line, else NULL: a larger
 * exchange, no region (tern_pair_region) or TERN_COLL_PAIR_LINE off. */
static inline tern_shm_region_t *tern_pair_line(tern_comm_t *c, size_t bytes, tern_status_t *st)
{
    if (bytes > TERN_PAIR_WIDE_MAX)
        return NULL;
    tern_shm_region_t *reg = tern_pair_region(c, st);
    return reg && reg->xline_on ? reg : NULL;
}

/* One turn of a wait for the other rank of the pair (its word at `word`
 * to reach seq): the first 64 turns a pause only (the other rank is in
 * this call too, usually a line transfer away), then point-to-point
 * progress (a request of the program's that the other rank waits for
 * before it comes here), and every 1024th turn its liveness. */
static inline tern_status_t tern_pair_wait_turn(tern_shm_region_t *reg, const void *word,
                                                uint64_t seq, unsigned *spins, unsigned *idle)
{
    if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return TERN_OK;
    }
    if ((*spins & 1023u) == 0) {
        tern_status_t st = tern_shm_peer_check(reg, 1 - reg->me, word, seq);
        if (st != TERN_OK)
            return st;
    }
    if (tern_progress() == 0)
        tern_progress_idle(idle);
    return TERN_OK;
}

/* Sends n bytes at src to the other rank and receives its n bytes at dst
 * (may be src: src is read first). A count that differs from the other
 * rank's is MPI_ERR_TRUNCATE on both, dst untouched. Progresses
 * point-to-point while it waits; fails when the other rank dies. */
tern_status_t tern_pair_line_swap(tern_shm_region_t *reg, const void *src, size_t n, void *dst);

#endif
