/* The shared-memory transport's own parts, shared by its files: the
 * segment's header, slots and geometry, the transport's state, and what
 * shm_layout.c (the segment) and shm_rma.c (get and put through CMA) give
 * shm.c (init, active messages, progress, peers).
 *
 * Segment layout (local rank 0 writes the header; the others take the
 * geometry from it, so only local rank 0's knobs matter):
 *   [0, rings_offset) header, then one 64-byte slot per local rank (pid,
 *                   CMA probe word address and value, attached flag, hwloc
 *                   place), the line of the start-up probe (shm_path.h),
 *                   one news line per local rank and the table of reserved
 *                   pairs (shm_reserve.c); reserved at MPI_Init
 *   rings_offset    L * (L - 1) rings; receiver d's ring from sender s is
 *                   number d * (L - 1) + (s < d ? s : s - 1), so a receiver's
 *                   incoming rings are contiguous. No ring to oneself: the
 *                   self transport serves that, and reachable() says no.
 *   bulk_offset     L * (L - 1) bulk rings, numbered the same way: the same
 *                   SPSC ring with large cells (64 KB), the bulk channel that
 *                   carries rendezvous data. A large message is copied in
 *                   through it by the sender while the receiver copies out
 *                   the previous chunk, both in cache: about 2.5x the speed
 *                   of CMA's process_vm_readv for messages that fit in the
 *                   last-level cache (docs/performance.md). Larger messages
 *                   still use CMA (TERN_SHM_CMA_MIN).
 * A tmpfs page touched while the file system is full is a SIGBUS, so no
 * rank touches a page that is not reserved (posix_fallocate). With
 * TERN_SHM_RESERVE=pair (the default) local rank 0 reserves only the first
 * part at MPI_Init, and a sender reserves the ring and bulk channel of a
 * pair at its first message to that peer (shm_reserve.c): a job whose ranks
 * talk to a few neighbours reserves a few pairs, not L * (L - 1), and a full
 * /dev/shm fails that send with an error that names the peer. With init,
 * local rank 0 reserves every page when it creates the segment. Either way
 * the whole segment must fit in /dev/shm's free space at MPI_Init, or
 * TERN_SHM_FALLBACK shrinks it (or fails, or uses the network).
 * Mapping the pages is lazy too: every rank prefaults its own incoming and
 * outgoing rings (up to 8 MB) once they are reserved, never other pairs'
 * rings nor the bulk channel (a pair's chunks are touched only when it
 * moves large messages): before, every rank populated the whole segment,
 * 264 MB each at 32 ranks.
 * */
#ifndef TERN_TRANSPORT_SHM_INTERNAL_H
#define TERN_TRANSPORT_SHM_INTERNAL_H

#include "transport/shm/shm_pack.h"
#include "transport/shm/shm_path.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_warm.h"
#include "transport/shm/shm_node_segment.h"
#include "transport/transport.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define SHM_MAGIC 0x7465726e73686d31ull /* "ternshm1" */
#define SHM_HEADER_BYTES 64
#define SHM_PAGE 4096
#define SHM_PREFAULT_MAX ((size_t)8 << 20)
#define SHM_BULK_BUDGET ((size_t)128 << 20)
/* TERN_SHM_RING_CELLS=auto: cells per ring, and on an oversubscribed node
 * more (while every ring together stays within SHM_RING_OVER_BUDGET). */
#define SHM_RING_CELLS_DEFAULT 32u
#define SHM_RING_CELLS_OVER 128u
#define SHM_RING_OVER_BUDGET ((size_t)64 << 20)
/* TERN_SHM_BULK_CHUNKS=auto: chunks per pair, and on an oversubscribed node
 * fewer: CMA takes contiguous messages from 32 KB there, and every page of
 * a pair is reserved when it first talks (~0.4 ms of CPU per MB to
 * allocate and free on the 2-core VM, docs/performance.md). 8 keeps two 16-64 KB
 * eager messages in flight per pair (a quarter of the ring, shm.c); with
 * one, p2p_eager_big's unexpected sends did not all complete at once. */
#define SHM_BULK_CHUNKS_DEFAULT 32u
#define SHM_BULK_CHUNKS_OVER 8u
/* The directory behind shm_open (glibc maps names there). */
#define SHM_DIR "/dev/shm"

typedef struct {
    uint64_t magic;
    uint64_t size;
    uint64_t rings_offset;
    uint64_t cell_size;
    uint32_t ring_cells;
    uint32_t local_size;
    uint64_t bulk_offset;
    uint32_t bulk_cell_size; /* 0: no bulk channel */
    uint32_t bulk_cells;
    uint32_t lazy; /* 1: a pair's pages are reserved at its first message */
} shm_header_t;

/* What local rank 0 asks of the segment: cells per ring and their size,
 * bulk chunks per pair and their size (bulk_cells 0: no bulk channel). */
typedef struct {
    size_t cell_size;
    unsigned cells;
    size_t bulk_cell_size;
    unsigned bulk_cells;
} shm_geometry_t;

typedef struct {
    int64_t pid;
    uint64_t probe_addr;
    uint64_t probe_value;
    _Atomic uint32_t attached;
    tern_shm_place_t place;
    char pad[36 - sizeof(tern_shm_place_t)];
} shm_slot_t;

_Static_assert(sizeof(shm_header_t) <= SHM_HEADER_BYTES, "header fits its line");
_Static_assert(sizeof(shm_slot_t) == 64, "one slot per cache line");

typedef struct {
    tern_shm_ring_t ring;
    int src;  /* world rank of the sender */
    int gone; /* the core gave up on src: rings parked */
    tern_shm_ring_t bulk;
    int live; /* 0 until the sender reserved the pair: ring and bulk idle */
    tern_shm_pack_in_t pack; /* the pack cell being read (shm_pack.h) */
} shm_in_t;

/* A sender's pair (shm_reserve.c), by local index. */
enum { SHM_PAIR_CLOSED, SHM_PAIR_OPEN, SHM_PAIR_FAILED };

struct tern_tl {
    /* Hot fields first. */
    shm_in_t *in;             /* local_size - 1 incoming rings */
    int nin;
    int my_local;
    const int *local_of;      /* world rank -> local index or -1 */
    tern_shm_ring_t *out;     /* by local index; out[my_local] unused */
    tern_shm_ring_t *bulk_out; /* by local index, like out */
    size_t bulk_max;          /* payload bytes per bulk cell; 0: no channel */
    tern_am_handler_fn am_handler;
    void *am_ctx;
    size_t am_max;
    unsigned batch;           /* messages taken from one ring per progress */
    size_t pack_lim;          /* messages below this many bytes are packed (0: none) */
    tern_shm_pack_out_t *pack_out; /* by local index, like out */
    size_t prefetch_max;      /* payload bytes of a cell prefetched (TERN_SHM_PREFETCH_MAX) */
    tern_shm_warm_t warm;     /* the queue cell taken while idle (shm_warm.h) */
    int cma;                  /* 1 while get/put are usable */
    size_t rma_min;
    size_t *peer_rma_min;     /* by local index: rma_min, or less where single copy wins */
    size_t *peer_get_min;     /* by local index: where the receiver measures (0: no) */
    tern_shm_place_t place;   /* this rank's (shm_path.h) */

    int rank, size, local_size;
    tern_peer_failed_fn peer_failed;
    int *local_of_storage;
    tern_shm_segment_t seg;
    pid_t pid;                /* this process's, for the keys of CMA reads */
    shm_geometry_t want;      /* local rank 0: the geometry it formats */
    tern_status_t attach_status;
    /* Pairs reserved at first use (shm_reserve.c). */
    _Atomic uint64_t *news;   /* this rank's news line: pairs into it reserved */
    uint64_t news_seen;       /* news when the incoming rings were last admitted */
    unsigned char *out_state; /* by local index: SHM_PAIR_* */
    int prefault;             /* 1: map a pair's rings at once when reserved */
    uint64_t bulk_window;     /* bulk chunks in flight per pair at most */
};

/* shm_layout.c: the segment. */
void *tern_shm_probe_line(void *base, int local_size);
shm_slot_t *tern_shm_slot(void *base, int local);
void *tern_shm_ring_mem(void *base, const shm_header_t *h, int dst, int src);
void *tern_shm_bulk_mem(void *base, const shm_header_t *h, int dst, int src);
void tern_shm_attached(void *base, size_t size, void *arg);
_Atomic uint64_t *tern_shm_news_line(void *base, int local_size, int local);
_Atomic unsigned char *tern_shm_pair_ready(void *base, int local_size, int dst, int src);
size_t tern_shm_rings_offset(int local_size);
void tern_shm_dir_space(size_t *avail_p, size_t *total_p);
void tern_shm_choose_geometry(tern_tl_t *tl, int oversubscribed);
tern_status_t tern_shm_create(tern_shm_segment_t *seg, const char *name, void *arg);

/* shm_reserve.c: a pair's pages reserved at its first message. */
void tern_shm_pairs_setup(tern_tl_t *tl);
/* The views of a pair whose pages are reserved: this rank's ring and bulk
 * channel to local rank li, and in's from li (prefaulted when
 * tl->prefault). */
void tern_shm_out_attach(tern_tl_t *tl, int li);
void tern_shm_in_attach(tern_tl_t *tl, shm_in_t *in, int li);
/* Maps every page of a bulk ring's cells in this process, at the ring's
 * first use (shm_reserve.c says why). */
void tern_shm_bulk_warm(const tern_shm_ring_t *ring);
tern_status_t tern_shm_pair_open(tern_tl_t *tl, int li);
void tern_shm_admit(tern_tl_t *tl);

/* shm_rma.c: get and put through Cross Memory Attach (base/cma.h). */
tern_status_t tern_shm_mem_reg(tern_tl_t *tl, void *buf, size_t len, tern_rkey_t *rkey_p);
void tern_shm_mem_dereg(tern_tl_t *tl, void *buf, size_t len);
tern_status_t tern_shm_get(tern_tl_t *tl, int peer, void *local, size_t len, uint64_t remote_addr,
                           const tern_rkey_t *rkey, tern_tl_comp_t *comp);
tern_status_t tern_shm_put(tern_tl_t *tl, int peer, const void *local, size_t len, uint64_t remote_addr,
                           const tern_rkey_t *rkey, tern_tl_comp_t *comp);
tern_status_t tern_shm_getv(tern_tl_t *tl, int peer, void *local, size_t len,
                            const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                            tern_tl_comp_t *comp);
tern_status_t tern_shm_putv(tern_tl_t *tl, int peer, const void *local, size_t len,
                            const struct iovec *remote, size_t n_remote, const tern_rkey_t *rkey,
                            tern_tl_comp_t *comp);

#endif
