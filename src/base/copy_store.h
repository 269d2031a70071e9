/* Large copies whose stores are chosen by timing. A plain store first
 * reads its line for ownership (from memory, or from the core that holds
 * it) and leaves it in this core's cache; an SSE2 streaming store writes
 * whole lines to memory without reading them. Which is faster depends on
 * where the destination's lines are and on the host's state, which a VM
 * does not keep: the bulk channel's chunks, whose reader is another core,
 * moved 20-25 GB/s plain against 9 streamed with the two cores near, 5-8
 * against 10-12 far; a window of 1 MB puts into 64 MB of window memory
 * 7-9 GB/s plain against 11-14 streamed (docs/performance.md, rows bulk
 * NT and rmant). So the copier times its own copies both ways and keeps
 * the faster per byte: each kind once first, then every 64th copy the
 * other kind, so that both estimates follow the machine. The copier's own
 * time sees what its stores cost it, not what they cost a later reader:
 * where a reader on another core copies the data out at once (the bulk
 * channel), the reader times its copies too, by the stores they were
 * written with, and the writer adds those costs to its own (with the two
 * cores near, streaming cost the writer as much as plain stores, and the
 * reader 2-3x more: it reads the lines from memory, not from the writer's
 * cache; docs/performance.md row rdfb). */
#ifndef TERN_BASE_COPY_STORE_H
#define TERN_BASE_COPY_STORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* One copier's estimates (zero-initialised: streaming first, nothing
 * timed). Not shared between threads. */
typedef struct tern_store_choice {
    uint32_t cost[2]; /* cycles per KB, smoothed: plain [0], streaming [1]; 0: not yet */
    uint32_t copies;  /* timed copies since both kinds were timed */
    int plain;        /* plain stores are the faster */
    int fixed;        /* the stores are `plain`'s, always: timed, never chosen */
} tern_store_choice_t;

/* A reader's estimates, in memory the writer can read (shm: the bulk
 * ring's control line): cycles per KB of the reader's copies of data
 * written with plain [0] and streaming [1] stores, smoothed as the
 * writer's own; 0: not yet. Written by the reader only. */
typedef struct tern_store_reader {
    _Atomic uint32_t cost[2];
} tern_store_reader_t;

/* How a copy's stores were chosen, as a packet says it to the reader. */
enum { TERN_STORES_UNTIMED, TERN_STORES_PLAIN, TERN_STORES_STREAMED };

/* Copies shorter than this are not timed (a message's tail, a small put):
 * they take the current choice. */
#define TERN_STORE_SAMPLE_MIN ((size_t)16 << 10)

/* n bytes by streaming stores (the unaligned head and the tail by memcpy),
 * then a store fence, so that a release store after it publishes them;
 * memcpy where SSE2 is absent. */
void tern_copy_nt(void *dst, const void *src, size_t n);

/* n bytes by the stores ch finds faster (its own costs plus reader's,
 * where reader is not NULL), timing the copy; the plain copy is
 * tern_copy_large(dst, src, n, movsb_min) (base/copy_movsb.h; SIZE_MAX:
 * memcpy). Returns TERN_STORES_PLAIN or TERN_STORES_STREAMED. Without
 * SSE2: the plain copy. */
int tern_copy_chosen(tern_store_choice_t *ch, const tern_store_reader_t *reader, void *dst,
                     const void *src, size_t n, size_t movsb_min);

/* The same in three steps, for a copy made of several (a message written
 * in parts): the stores the next copy of n bytes takes, exploring as
 * tern_copy_chosen does; the copy by them; and its time (cycles of
 * tern_store_clock) for n bytes. */
int tern_store_choose(tern_store_choice_t *ch, size_t n);
void tern_copy_stores(int stores, void *dst, const void *src, size_t n, size_t movsb_min);
void tern_store_timed(tern_store_choice_t *ch, const tern_store_reader_t *reader, int stores,
                      size_t n, uint64_t cycles);

/* The reader's side: its copy of n bytes written with the given stores
 * took cycles; untimed stores and copies below TERN_STORE_SAMPLE_MIN are
 * not counted. */
void tern_store_read_timed(tern_store_reader_t *r, int stores, size_t n, uint64_t cycles);

/* The time stamp counter (0 without one: nothing is timed then). */
uint64_t tern_store_clock(void);

/* Cycles per KB of the stores ch uses now; 0 while they are not timed. */
uint32_t tern_store_choice_cost(const tern_store_choice_t *ch);

#endif
