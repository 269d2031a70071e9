/* The wire formats of the point-to-point protocols (p2p.c): the packets
 * p2p.c builds and handles, which p2p_queue.c queues and, for a streamed
 * rendezvous, writes (PKT_DATA). Internal to pt2pt; send_cancel.h and
 * p2p_coop.h number their own packets beside these. */
#ifndef TERN_CORE_PT2PT_P2P_PKT_H
#define TERN_CORE_PT2PT_P2P_PKT_H

#include "core/runtime/runtime.h"
#include <stdint.h>

/* Packet types. Every packet starts with a 32-bit type. */
enum {
    PKT_EAGER = 1,     /* match header + data */
    PKT_EAGER_SYNC,    /* match header + sender request + data; ack on match */
    PKT_RTS,           /* match header + sender request + address + rkey */
    PKT_CTS,           /* receiver ready: stream `bytes` to receiver request */
    PKT_DATA,          /* a fragment of a streamed rendezvous */
    PKT_FIN,           /* receiver finished its get: sender request done */
    PKT_SYNC_ACK,      /* synchronous eager matched */
    PKT_CREDIT,        /* receiver consumed eager bytes: return credit */
    PKT_EAGER_ALIGNED, /* pkt_eager_aligned_t + data: PKT_EAGER once parsed */
    PKT_EAGER_PARTS,   /* pkt_eager_aligned_t + data written in parts (am_big_grow) */
    PKT_EAGER_VEC,     /* PKT_EAGER_ALIGNED copied in by base/copy_vec.h: out by it too */
};

/* 16 bytes: behind shm's 16-byte cell header an eager message of up to
 * 32 bytes then fits one cache line (the line is what crosses between
 * cores). An eager message's size is its packet's length less the header;
 * a rendezvous carries it. */
typedef struct {
    uint32_t type;
    int32_t tag;
    uint32_t context_id;
    int32_t src;
} pkt_match_t;

typedef struct {
    pkt_match_t m;
    uint64_t sreq;
} pkt_sync_t;

/* 48 bytes: behind shm's 16-byte cell header the data starts on a cache
 * line, like the page-aligned buffers of most programs; a copy between
 * buffers of different alignment within the line ran 2-4% slower at
 * 1-16 KB (docs/performance.md). */
typedef struct {
    pkt_match_t m;
    uint32_t stores; /* PKT_EAGER_PARTS: as pkt_data_t's */
    uint32_t pad0;
    uint64_t pad[3];
} pkt_eager_aligned_t;

typedef struct {
    pkt_match_t m;
    uint64_t size;
    uint64_t sreq;
    uint64_t addr;
    tern_rkey_t rkey;
    uint64_t flags; /* RTS_STREAM: no get (non-contiguous sender, or no key) */
} pkt_rts_t;

#define RTS_STREAM 1u

typedef struct {
    uint32_t type;
    uint32_t pad;
    uint64_t sreq;
    uint64_t rreq;
    uint64_t bytes;
} pkt_cts_t;

/* 48 bytes: behind the transport's 16-byte cell header the data then starts
 * on a cache line. stores: how the sender copied it in (base/copy_store.h,
 * TERN_STORES_*), so the receiver times its copy out by them. */
typedef struct {
    uint32_t type;
    uint32_t stores;
    uint64_t rreq;
    uint64_t offset;
    uint64_t pad2[3];
} pkt_data_t;

typedef struct {
    uint32_t type;
    uint32_t pad;
    uint64_t value; /* FIN, SYNC_ACK: sender request; CREDIT: bytes */
} pkt_ctrl_t;

#endif
