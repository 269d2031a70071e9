/* Packed small messages in the shm ring (issue 29): active messages of up
 * to TERN_SHM_PACK_MAX bytes go as entries of 32 or 64 bytes in a byte
 * stream inside one ring cell, two entries to a cache line, so a sender
 * that writes two queued messages before the receiver takes the line moves
 * both in one line transfer (Open MPI's fast box does the same; one 8 B
 * MPI message a line bounds Tern's slow-mode streams, docs/performance.md).
 *
 * A pack cell is a ring cell whose len is TERN_SHM_LEN_PACKED. Its entries
 * start at byte 32 (the first beside the cell header); each is an 8-byte
 * word then the message:
 *   low 32 bits   the tag: the pack cell's message number, truncated and
 *                 never 0 (tern_shm_pack_tag), new for every use of the cell;
 *   high 32 bits  SHM_PACK_MSG | len, or SHM_PACK_END (no more entries:
 *                 the ring's next cell follows).
 * The sender zeroes the next entry's word before it publishes one (release
 * store of the word), so the receiver, which reads an entry only after the
 * one before it, never takes a previous use's bytes for an entry. Order
 * with the ring's other messages: the sender closes the open pack cell
 * (END) before it writes any other ring cell, and the receiver stays in
 * the pack cell until END, so one pair's messages keep their order. The
 * pack cell is freed at END; its entries are copied out before their
 * handler runs, so a nested progress may take END meanwhile. */
#ifndef TERN_TRANSPORT_SHM_SHM_PACK_H
#define TERN_TRANSPORT_SHM_SHM_PACK_H

#include "transport/shm/shm_ring.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* `len` of a pack cell (shm_ring.h's TERN_SHM_LEN_ORDERED is bit 31). */
#define TERN_SHM_LEN_PACKED (1u << 30)
#define TERN_SHM_PACK_FIRST 32u /* offset of a pack cell's first entry */
#define TERN_SHM_PACK_WORD 8u
#define TERN_SHM_PACK_MSG (1u << 31)
#define TERN_SHM_PACK_END (1u << 30)
/* The largest message an entry carries (one cache line with its word). */
#define TERN_SHM_PACK_LIMIT 56u

/* The sender's open pack cell to one peer. */
typedef struct {
    char *cell;     /* open pack cell, or NULL */
    size_t off;     /* its next entry's offset */
    size_t next;    /* the offset after the reserved entry */
    uint32_t tag;   /* its flag value */
    char *pend;     /* the entry reserved until commit; NULL: a ring cell */
    const uint64_t *heard; /* the peer's incoming ring index here: moves when it sends */
    uint64_t seen;  /* *heard at this rank's last send to the peer */
    uint64_t spare; /* 64 bytes: the send path indexes the array by a shift */
} tern_shm_pack_out_t;
_Static_assert(sizeof(tern_shm_pack_out_t) == 64, "tern_shm_pack_out_t is indexed by a shift");

/* The receiver's pack cell from one peer. */
typedef struct {
    tern_shm_cell_t *cell; /* NULL: reading the ring */
    size_t off;
    uint32_t tag;
} tern_shm_pack_in_t;

/* The tag of the pack cell that is the ring's message number n (counted
 * from 1): its low 32 bits, never 0, since the sender zeroes the word after
 * the last entry and a zero word must not read as an entry of tag 0 (at
 * every 2^32nd message of a pair). */
static inline uint32_t tern_shm_pack_tag(uint64_t n)
{
    uint32_t t = (uint32_t)n;
    return t != 0 ? t : 1;
}

/* Bytes an entry of a len-byte message takes. */
static inline size_t tern_shm_pack_entry(size_t len)
{
    return (TERN_SHM_PACK_WORD + len + 31) & ~(size_t)31;
}

/* Sender: room for a len-byte message in the open pack cell (room for END
 * stays after it), or NULL. */
static inline void *tern_shm_pack_append(tern_shm_pack_out_t *pk, size_t cell_size, size_t len)
{
    size_t next = pk->off + tern_shm_pack_entry(len);
    if (pk->cell == NULL || next + 32 > cell_size)
        return NULL;
    pk->next = next;
    pk->pend = pk->cell + pk->off;
    return pk->pend + TERN_SHM_PACK_WORD;
}

/* Sender: a pack cell in the ring cell whose payload the ring reserved
 * (message number index), closing the open one first; room for len bytes. */
void *tern_shm_pack_open(tern_shm_pack_out_t *pk, tern_shm_ring_t *ring, void *payload, size_t len);

/* Sender: no more entries in the open pack cell. */
void tern_shm_pack_close(tern_shm_pack_out_t *pk);

/* A prefetch for writing: the line comes owned (x86's PREFETCHW, a no-op
 * on CPUs without it; elsewhere the compiler's write prefetch). */
static inline void tern_shm_pack_prefetchw(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("prefetchw %0" ::"m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* Sender: publishes the reserved entry holding len bytes. */
static inline void tern_shm_pack_commit(tern_shm_pack_out_t *pk, tern_shm_ring_t *ring, size_t len)
{
    char *e = pk->pend;
    size_t next = pk->next;
    uint64_t word = pk->tag | (uint64_t)(TERN_SHM_PACK_MSG | (uint32_t)len) << 32;
    pk->pend = NULL;
    pk->off = next;
    /* Entering a new line: ask now to own the line after it, so the stores
     * that reach it find it here and do not wait in turn for a transfer
     * from the spinning receiver (docs/performance.md, `slow8`). */
    if ((next & (TERN_SHM_CACHE_LINE - 1)) == 0 && next + 2 * TERN_SHM_CACHE_LINE <= ring->cell_size)
        tern_shm_pack_prefetchw(pk->cell + next + TERN_SHM_CACHE_LINE);
    __atomic_store_n((uint64_t *)(pk->cell + next), 0, __ATOMIC_RELAXED);
    if (__builtin_expect(e == pk->cell + TERN_SHM_PACK_FIRST, 0)) { /* the cell's first: publish it */
        __atomic_store_n((uint64_t *)e, word, __ATOMIC_RELAXED);
        tern_shm_ring_commit(ring, TERN_SHM_LEN_PACKED); /* release: the entries before it */
        return;
    }
    __atomic_store_n((uint64_t *)e, word, __ATOMIC_RELEASE);
}

/* Receiver: 1 if the pack cell in `pk` has its next entry (or END). */
static inline int tern_shm_pack_ready(const tern_shm_pack_in_t *pk)
{
    return (uint32_t)__atomic_load_n((const uint64_t *)((const char *)pk->cell + pk->off), __ATOMIC_RELAXED) ==
           pk->tag;
}

/* Receiver: the next entry of the pack cell in `pk`: 1 and the message
 * copied to buf (*len_p bytes, buf holds TERN_SHM_PACK_LIMIT), 0 when none
 * yet, -1 at END (the cell is then the caller's to free). */
static inline int tern_shm_pack_take(tern_shm_pack_in_t *pk, void *buf, size_t *len_p)
{
    const char *e = (const char *)pk->cell + pk->off;
    uint64_t word = __atomic_load_n((const uint64_t *)e, __ATOMIC_ACQUIRE);
    if ((uint32_t)word != pk->tag)
        return 0;
    uint32_t kind = (uint32_t)(word >> 32);
    if (__builtin_expect(kind & TERN_SHM_PACK_END, 0))
        return -1;
    size_t len = kind & ~TERN_SHM_PACK_MSG;
    /* A fixed-size copy up to 24 bytes (an 8 B MPI message), within the
     * entry. */
    if (len <= 24)
        memcpy(buf, e + TERN_SHM_PACK_WORD, 24);
    else
        memcpy(buf, e + TERN_SHM_PACK_WORD, len);
    pk->off += tern_shm_pack_entry(len);
    *len_p = len;
    return 1;
}

#endif
