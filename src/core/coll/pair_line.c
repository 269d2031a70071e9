/* The 2-rank exchange line (pair_line.h). */
#include "core/coll/pair_line.h"
#include "core/coll/coll_util.h"
#include "core/pt2pt/progress.h"

#include <stdatomic.h>
#include <string.h>

/* A block's first line: the sequence (written last), the byte count,
 * the data. */
enum { SEQ = 0, COUNT = 8, DATA = 16 };
_Static_assert(DATA + TERN_PAIR_LINE_MAX == TERN_SHM_LINE, "the data fills the line");

tern_shm_region_t *tern_pair_region_slow(tern_comm_t *c, tern_status_t *st)
{
    /* Whether the communicator may have a region at all: the same answer
     * on both ranks (tern_shm_coll_usable). */
    tern_coll_args_t a = {.comm = c, .blocking = 1};
    if (!tern_shm_coll_usable(&a))
        return NULL;
    tern_shm_region_t *reg;
    *st = tern_shm_region_get(c, 1, &reg);
    return *st == TERN_OK ? reg : NULL;
}

/* The sequence of the block's line i. */
static inline _Atomic uint64_t *line_seq(const char *block, unsigned i)
{
    return (_Atomic uint64_t *)(void *)(block + (size_t)i * TERN_SHM_LINE + SEQ);
}

/* Lines 1.. of a wide exchange: up to 56 bytes after each line's sequence. */
enum { MORE = 8, MORE_MAX = TERN_SHM_LINE - MORE };
_Static_assert(TERN_PAIR_WIDE_MAX == TERN_PAIR_LINE_MAX + (TERN_SHM_XLINES - 1) * MORE_MAX,
               "pair_line.h's block size");

/* Lines a block of n bytes takes. */
static inline unsigned lines_for(size_t n)
{
    return n <= TERN_PAIR_LINE_MAX ? 1u : 1u + (unsigned)((n - TERN_PAIR_LINE_MAX + MORE_MAX - 1) / MORE_MAX);
}

/* Line i's (i >= 1) share of a wide block of n bytes: its offset in
 * them (*off) and its length. */
static inline size_t line_part(size_t n, unsigned i, size_t *off)
{
    *off = TERN_PAIR_LINE_MAX + (size_t)(i - 1) * MORE_MAX;
    return n - *off < MORE_MAX ? n - *off : MORE_MAX;
}

/* Writes n bytes at src into block's k lines, the first line's sequence
 * last (each line's sequence after its data). */
static inline void put_block(char *block, const void *src, size_t n, uint64_t seq, unsigned k)
{
    const char *from = src;
    size_t first = k > 1 ? TERN_PAIR_LINE_MAX : n;
    memcpy(block + DATA, from, first);
    *(uint64_t *)(void *)(block + COUNT) = n;
    for (unsigned i = 1; i < k; i++) {
        size_t off, part = line_part(n, i, &off);
        memcpy(block + (size_t)i * TERN_SHM_LINE + MORE, from + off, part);
        atomic_store_explicit(line_seq(block, i), seq, memory_order_release);
    }
    atomic_store_explicit(line_seq(block, 0), seq, memory_order_release);
}

/* Copies the other rank's n bytes out of its block's k lines. */
static inline void take_block(void *dst, const char *block, size_t n, unsigned k)
{
    char *to = dst;
    size_t first = k > 1 ? TERN_PAIR_LINE_MAX : n;
    memcpy(to, block + DATA, first);
    for (unsigned i = 1; i < k; i++) {
        size_t off, part = line_part(n, i, &off);
        memcpy(to + off, block + (size_t)i * TERN_SHM_LINE + MORE, part);
    }
}

/* Whether the other's exchange seq has come: all k lines (loaded together,
 * so their transfers overlap) or, when its count is not ours, the first
 * (the others may never come). */
static inline int block_in(const char *block, uint64_t seq, size_t n, unsigned k)
{
    int first = atomic_load_explicit(line_seq(block, 0), memory_order_acquire) == seq;
    if (k == 1)
        return first;
    int rest = 1;
    for (unsigned i = 1; i < k; i++)
        rest &= atomic_load_explicit(line_seq(block, i), memory_order_acquire) == seq;
    return first && (rest || *(const uint64_t *)(const void *)(block + COUNT) != n);
}

static inline __attribute__((always_inline)) tern_status_t
swap_lines(tern_shm_region_t *reg, const void *src, size_t n, void *dst, unsigned k)
{
    if (__builtin_expect(reg->broken >= 0, 0))
        return tern_shm_broken_status(reg);
    uint64_t seq = ++reg->xseq;
    int peer = 1 - reg->me;
    char *mine = tern_shm_xline(reg, reg->me, seq);
    const char *his = tern_shm_xline(reg, peer, seq);
    put_block(mine, src, n, seq, k);
    unsigned spins = 0, idle = 0;
    while (!block_in(his, seq, n, k)) {
        tern_status_t st = tern_pair_wait_turn(reg, line_seq(his, 0), seq, &spins, &idle);
        if (st != TERN_OK)
            return st;
    }
    uint64_t got = *(const uint64_t *)(const void *)(his + COUNT);
    if (__builtin_expect(got != n, 0))
        return tern_coll_size_mismatch(got, n, peer);
    take_block(dst, his, n, k);
    return TERN_OK;
}

tern_status_t tern_pair_line_swap(tern_shm_region_t *reg, const void *src, size_t n, void *dst)
{
    if (__builtin_expect(n > TERN_PAIR_LINE_MAX, 0))
        return swap_lines(reg, src, n, dst, lines_for(n));
    return swap_lines(reg, src, n, dst, 1);
}
