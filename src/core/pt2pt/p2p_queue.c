/* Packets that wait for room in a transport and rendezvous streams
 * (p2p_queue.h): the per-peer queues, their retries from progress, and the
 * scratch buffer that packs non-contiguous fragments. */
#include "core/pt2pt/p2p_queue.h"
#include "core/datatype/datatype.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/p2p_pkt.h"
#include "core/runtime/runtime.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/copy_store.h"
#include "base/log.h"
#include "base/pvars.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Packets wait in order per peer; a queued packet keeps a copy of its
 * header. */
#define PENDING_HDR_MAX 96
_Static_assert(sizeof(pkt_rts_t) <= PENDING_HDR_MAX && sizeof(pkt_sync_t) <= PENDING_HDR_MAX &&
                   sizeof(pkt_cts_t) <= PENDING_HDR_MAX && sizeof(pkt_data_t) <= PENDING_HDR_MAX,
               "every packet header fits a queued packet");

struct tern_pending {
    tern_pending_t *next;
    size_t hdr_len;
    unsigned char hdr[PENDING_HDR_MAX];
    const void *payload;
    size_t payload_len;
    tern_req_t *done_req;   /* complete this send once the packet is out */
    tern_req_t *stream_req; /* stream this request's data as PKT_DATA */
};

static void peer_mark_pending(int peer_world)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    if (!peer->in_pending_list) {
        peer->in_pending_list = 1;
        tern_rt.pending_peers[tern_rt.n_pending_peers++] = peer_world;
    }
}

static void queue_append(tern_pending_t **head, tern_pending_t **tail, tern_pending_t *p)
{
    p->next = NULL;
    if (*tail)
        (*tail)->next = p;
    else
        *head = p;
    *tail = p;
}

static void pending_append(int peer_world, tern_pending_t *p)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    queue_append(&peer->pending_head, &peer->pending_tail, p);
    peer_mark_pending(peer_world);
}

/* Freed entries are kept: a window of sends larger than the transport's
 * queue puts every message past the queue's depth here, and calloc/free
 * each was a quarter of such a send's instructions. */
enum { PENDING_KEEP_MAX = 256 };
static tern_pending_t *pending_free_list;
static int n_pending_free;

static void pending_free(tern_pending_t *p)
{
    if (n_pending_free >= PENDING_KEEP_MAX) {
        free(p);
        return;
    }
    p->next = pending_free_list;
    pending_free_list = p;
    n_pending_free++;
}

static tern_pending_t *pending_new(const void *hdr, size_t hdr_len)
{
    tern_pending_t *p = pending_free_list;
    if (p) {
        pending_free_list = p->next;
        n_pending_free--;
        p->payload = NULL;
        p->payload_len = 0;
        p->done_req = NULL;
        p->stream_req = NULL;
    } else if (!(p = calloc(1, sizeof *p))) {
        return NULL;
    }
    if (hdr_len)
        memcpy(p->hdr, hdr, hdr_len);
    p->hdr_len = hdr_len;
    return p;
}

static void stream_append(int peer_world, tern_req_t *req)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    tern_pending_t *p = pending_new(NULL, 0);
    if (!p) {
        tern_p2p_peer_broken(peer_world, TERN_ERR_NOMEM,
                             "out of memory queueing a rendezvous stream");
        return;
    }
    p->stream_req = req;
    queue_append(&peer->stream_head, &peer->stream_tail, p);
    peer_mark_pending(peer_world);
}

/* ------------------------------------------------------------------------ */
/* Non-contiguous data: fragments are packed at their offset of the packed
 * stream into a scratch buffer of one active message, never into a
 * full-size copy. The transport copies the payload during am_send (or
 * refuses it with AGAIN and the fragment is packed again later), so one
 * scratch buffer serves every send. */

static char *pack_scratch;
static size_t pack_scratch_len;

/* Packs bytes offset..offset+n of a non-contiguous request's packed stream
 * into dst (scratch, a queue cell or a bulk chunk). */
void tern_p2p_pack_range(const tern_req_t *req, size_t offset, void *dst, size_t n)
{
    tern_status_t st = tern_datatype_pack_range(req->buf, (size_t)req->count, req->datatype, offset, dst, n);
    /* Kept fatal: the request holds a reference on its committed type and
     * the range lies inside its packed size, so this is a broken invariant
     * (and the caller has already reserved the transport's room). */
    if (st != TERN_OK)
        tern_fatal("internal error (a bug in Tern): packing bytes %zu..%zu failed: %s", offset,
                   offset + n, tern_status_string(st));
}

/* NULL when out of memory. */
void *tern_p2p_scratch_pack(const tern_req_t *req, size_t offset, size_t n)
{
    if (n > pack_scratch_len) {
        char *p = realloc(pack_scratch, n);
        if (!p)
            return NULL;
        pack_scratch = p;
        pack_scratch_len = n;
    }
    tern_p2p_pack_range(req, offset, pack_scratch, n);
    return pack_scratch;
}

/* Copies one chunk of a contiguous message into the bulk channel, with
 * streaming or plain stores (the transport's bulk_nt_fixed, else chosen
 * by timing per peer, base/copy_store.h; timed either way). A plain store
 * first takes its line back from the reader's cache, which still holds it
 * from the last lap, and the reader then pulls each line out of the
 * writer's cache; streamed lines go to memory, where the reader's
 * prefetcher finds them. Which is faster depends on how far apart the two
 * cores are, and a VM's host moves them (on the 2-vCPU VM, within one
 * run): near, the receiver reads plain-stored lines straight from the
 * sender's cache (20-25 GB/s through the pipeline) while streamed lines go
 * through memory (9 GB/s); far, every plain-stored line costs a slow
 * cross-core invalidation first (5-8 GB/s) and streaming wins (10-12).
 * The sender's own time sees the far cores' invalidations but not the
 * receiver's reads, so the receiver times its copies out by the stores
 * the packet says, and the sender adds its costs, which the transport
 * shares (bulk_reader), to its own (docs/performance.md row rdfb). */
typedef struct {
    tern_store_choice_t ch;    /* the sender's, to the peer */
    tern_store_reader_t *out;  /* the peer's costs reading ours; NULL: not asked yet */
    tern_store_reader_t *in;   /* ours reading the peer's */
} bulk_peer_t;

/* Per peer (by world rank, grown on demand); streaming first, the
 * measured default of the VM's slow mode. */
static bulk_peer_t *bulk_peers;
static size_t bulk_peers_len;
/* The time stamp counter and the clock at the first timed chunk: their
 * ratio since converts cycles to ns (tern_p2p_bulk_gbs). */
static uint64_t bulk_tsc0;
static double bulk_clock0, bulk_ghz;

/* NULL when out of memory (the caller then streams, untimed). */
static bulk_peer_t *bulk_peer(int peer_world)
{
    size_t i = (size_t)peer_world;
    if (i >= bulk_peers_len) {
        size_t len = bulk_peers_len ? bulk_peers_len : 16;
        while (len <= i)
            len *= 2;
        bulk_peer_t *p = realloc(bulk_peers, len * sizeof *p);
        if (p == NULL)
            return NULL;
        memset(p + bulk_peers_len, 0, (len - bulk_peers_len) * sizeof *p);
        bulk_peers = p;
        bulk_peers_len = len;
    }
    return &bulk_peers[i];
}

/* The reader's estimates of the pair's channel (incoming: from the peer),
 * asked of the transport once; NULL where it shares none. */
static tern_store_reader_t *bulk_reader(bulk_peer_t *b, int peer_world, int incoming)
{
    tern_store_reader_t **r = incoming ? &b->in : &b->out;
    const tern_peer_t *peer = &tern_rt.peers[peer_world];
    if (*r == NULL && peer->ops->bulk_reader)
        *r = peer->ops->bulk_reader(peer->tl, peer_world, incoming);
    return *r;
}

/* NULL where the sender streams untimed (out of memory). Stores the
 * transport fixed (bulk_nt_fixed) are timed too: the exchange's path goes
 * by the stream's rate (tern_p2p_bulk_gbs). */
static bulk_peer_t *bulk_chooser(int peer_world, size_t n)
{
    bulk_peer_t *b = bulk_peer(peer_world);
    if (b == NULL)
        return NULL;
    int fixed = tern_rt.peers[peer_world].bulk_nt_fixed;
    if (__builtin_expect(fixed && !b->ch.fixed, 0)) {
        b->ch.fixed = 1;
        b->ch.plain = fixed == TERN_STORES_PLAIN;
    }
    if (__builtin_expect(bulk_tsc0 == 0, 0) && n >= TERN_STORE_SAMPLE_MIN) {
        bulk_tsc0 = tern_store_clock();
        bulk_clock0 = tern_clock_s();
    }
    return b;
}

/* The bytes that took the choice of streaming stores: all but those
 * whose stores are fixed plain. */
static void count_choice(const bulk_peer_t *b, size_t n)
{
    if (!b || !b->ch.fixed || !b->ch.plain)
        tern_pvar_add(TERN_PVAR_P2P_BULK_NT_BYTES, n);
}

int tern_p2p_bulk_copy(int peer_world, void *dst, const void *src, size_t n)
{
    bulk_peer_t *b = bulk_chooser(peer_world, n);
    count_choice(b, n);
    if (b == NULL) {
        tern_copy_nt(dst, src, n);
        return TERN_STORES_STREAMED;
    }
    return tern_copy_chosen(&b->ch, bulk_reader(b, peer_world, 0), dst, src, n, SIZE_MAX);
}

int tern_p2p_bulk_choose(int peer_world, size_t n)
{
    bulk_peer_t *b = bulk_chooser(peer_world, n);
    count_choice(b, n);
    return b ? tern_store_choose(&b->ch, n) : TERN_STORES_STREAMED;
}

void tern_p2p_bulk_timed(int peer_world, int stores, size_t n, uint64_t cycles)
{
    bulk_peer_t *b = bulk_chooser(peer_world, n);
    if (b)
        tern_store_timed(&b->ch, bulk_reader(b, peer_world, 0), stores, n, cycles);
}

void tern_p2p_bulk_read_timed(int peer_world, int stores, size_t n, uint64_t cycles)
{
    bulk_peer_t *b = bulk_peer(peer_world);
    tern_store_reader_t *r = b ? bulk_reader(b, peer_world, 1) : NULL;
    if (r)
        tern_store_read_timed(r, stores, n, cycles);
}

double tern_p2p_bulk_gbs(int peer_world)
{
    if ((size_t)peer_world >= bulk_peers_len || !bulk_tsc0)
        return 0;
    uint32_t cost = tern_store_choice_cost(&bulk_peers[peer_world].ch);
    if (!cost)
        return 0;
    if (!bulk_ghz) { /* calibrated once 1 ms of both has passed */
        double dt = tern_clock_s() - bulk_clock0;
        if (dt < 1e-3)
            return 0;
        bulk_ghz = (double)(tern_store_clock() - bulk_tsc0) / dt * 1e-9;
    }
    return 1024.0 * bulk_ghz / (double)cost;
}

/* One fragment written in place into room the transport reserved (its bulk
 * channel, or an active message: shm cell, ofi send buffer), then
 * committed: the data is copied (or packed, for non-contiguous types) once,
 * straight into it; into the bulk channel (bulk_nt) from the transport's
 * bulk_nt_min by tern_p2p_bulk_copy (streaming or plain stores). Returns 0
 * when the transport has no room now. */
static int stream_push_in_place(tern_peer_t *peer, int peer_world, tern_req_t *req, size_t n,
                                int bulk_nt, void *(*reserve)(tern_tl_t *, int, size_t),
                                void (*commit)(tern_tl_t *, int, size_t))
{
    char *p = reserve(peer->tl, peer_world, sizeof(pkt_data_t) + n);
    if (p == NULL)
        return 0;
    pkt_data_t d = {.type = PKT_DATA, .rreq = req->remote_req, .offset = req->offset};
    if (__builtin_expect(req->noncontig, 0))
        tern_p2p_pack_range(req, req->offset, p + sizeof d, n);
    else if (bulk_nt && req->transfer_bytes >= peer->bulk_nt_min)
        d.stores = (uint32_t)tern_p2p_bulk_copy(peer_world, p + sizeof d,
                                                (const char *)req->buf + req->offset, n);
    else
        memcpy(p + sizeof d, (const char *)req->buf + req->offset, n);
    memcpy(p, &d, sizeof d);
    commit(peer->tl, peer_world, sizeof d + n);
    return 1;
}

/* Pushes as many fragments of a streamed rendezvous as the transport takes
 * (through its bulk channel when it has one; non-contiguous data packed in
 * place when the transport has am_reserve). Returns 1 when the whole
 * message is out. */
static int stream_push(int peer_world, tern_req_t *req)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    int bulk = peer->bulk_max > sizeof(pkt_data_t);
    size_t frag_max = (bulk ? peer->bulk_max : peer->am_max) - sizeof(pkt_data_t);
    while (req->offset < req->transfer_bytes) {
        size_t n = req->transfer_bytes - req->offset;
        if (n > frag_max)
            n = frag_max;
        if (bulk || (__builtin_expect(req->noncontig, 0) && peer->ops->am_reserve)) {
            if (!stream_push_in_place(peer, peer_world, req, n, bulk,
                                      bulk ? peer->ops->bulk_reserve : peer->ops->am_reserve,
                                      bulk ? peer->ops->bulk_commit : peer->ops->am_commit))
                return 0;
            req->offset += n;
            continue;
        }
        pkt_data_t d = {.type = PKT_DATA, .rreq = req->remote_req, .offset = req->offset};
        const void *payload = __builtin_expect(req->noncontig, 0)
                                  ? tern_p2p_scratch_pack(req, req->offset, n)
                                  : (const char *)req->buf + req->offset;
        tern_status_t st = payload ? peer->ops->am_send(peer->tl, peer_world, &d, sizeof d, payload, n)
                                   : TERN_ERR_NOMEM;
        if (st == TERN_ERR_AGAIN)
            return 0;
        if (st != TERN_OK) {
            /* Fails this request with the others (it is in flight). */
            tern_p2p_peer_broken(peer_world, st, "sending rendezvous data failed");
            return 1;
        }
        req->offset += n;
    }
    tern_p2p_inflight_remove(peer, req);
    tern_p2p_send_complete(req);
    return 1;
}

/* Tries the queues of one peer (packets, then streams); returns packets
 * and streams finished. */
static int pending_flush_peer(int peer_world)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    int n = 0;
    while (peer->pending_head) {
        tern_pending_t *p = peer->pending_head;
        tern_status_t st = peer->ops->am_send(peer->tl, peer_world, p->hdr, p->hdr_len, p->payload,
                                              p->payload_len);
        if (st == TERN_ERR_AGAIN)
            break;
        if (st != TERN_OK) {
            /* Empties the queues. */
            tern_p2p_peer_broken(peer_world, st, "sending a queued packet failed");
            return n;
        }
        if (p->done_req)
            tern_p2p_send_complete(p->done_req);
        peer->pending_head = p->next;
        if (!peer->pending_head)
            peer->pending_tail = NULL;
        pending_free(p);
        n++;
    }
    while (peer->stream_head) {
        tern_pending_t *p = peer->stream_head;
        if (!stream_push(peer_world, p->stream_req))
            break;
        if (peer->stream_head != p)
            break; /* the peer failed inside stream_push: its queues are empty */
        peer->stream_head = p->next;
        if (!peer->stream_head)
            peer->stream_tail = NULL;
        pending_free(p);
        n++;
    }
    return n;
}

int tern_p2p_flush_pending(void)
{
    int n = 0;
    for (int i = 0; i < tern_rt.n_pending_peers;) {
        int pw = tern_rt.pending_peers[i];
        n += pending_flush_peer(pw);
        if (!tern_rt.peers[pw].pending_head && !tern_rt.peers[pw].stream_head) {
            tern_rt.peers[pw].in_pending_list = 0;
            tern_rt.pending_peers[i] = tern_rt.pending_peers[--tern_rt.n_pending_peers];
        } else {
            i++;
        }
    }
    return n;
}

void tern_p2p_stream_start(int peer_world, tern_req_t *req)
{
    if (tern_rt.peers[peer_world].stream_head || !stream_push(peer_world, req))
        stream_append(peer_world, req);
}

void tern_p2p_send_packet(int peer_world, const void *hdr, size_t hdr_len, const void *payload,
                          size_t payload_len, tern_req_t *done_req)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    if (!peer->pending_head) {
        tern_status_t st =
            peer->ops->am_send(peer->tl, peer_world, hdr, hdr_len, payload, payload_len);
        if (st == TERN_OK) {
            if (done_req)
                tern_p2p_send_complete(done_req);
            return;
        }
        if (st != TERN_ERR_AGAIN) {
            if (done_req)
                tern_p2p_inflight_add(peer, done_req); /* so that the failure completes it */
            tern_p2p_peer_broken(peer_world, st, "sending a packet failed");
            return;
        }
    }
    tern_pending_t *p = __builtin_expect(peer->failed == TERN_OK, 1) ? pending_new(hdr, hdr_len) : NULL;
    if (!p) {
        /* Nothing more goes to a failed peer (done_req completes with its
         * error); a packet we cannot keep breaks the stream. */
        if (done_req)
            tern_p2p_inflight_add(peer, done_req);
        tern_p2p_peer_broken(peer_world, TERN_ERR_NOMEM, "out of memory queueing a packet");
        return;
    }
    p->payload = payload;
    p->payload_len = payload_len;
    p->done_req = done_req;
    pending_append(peer_world, p);
}

void tern_p2p_send_ctrl(int peer_world, uint32_t type, uint64_t value)
{
    pkt_ctrl_t c = {.type = type, .value = value};
    tern_p2p_send_packet(peer_world, &c, sizeof c, NULL, 0, NULL);
}

void tern_p2p_eager_unscratch(tern_req_t *req)
{
    tern_pending_t *p = tern_rt.peers[req->peer_world].pending_tail;
    if (!p || p->payload != pack_scratch)
        return;
    req->staging = malloc(req->bytes ? req->bytes : 1);
    if (!req->staging) {
        tern_p2p_peer_broken(req->peer_world, TERN_ERR_NOMEM,
                             "out of memory staging a %zu-byte send", req->bytes);
        return;
    }
    memcpy(req->staging, pack_scratch, req->bytes);
    p->payload = req->staging;
}

void tern_p2p_drop_queued(int peer_world, tern_status_t st)
{
    tern_peer_t *peer = &tern_rt.peers[peer_world];
    while (peer->pending_head) {
        tern_pending_t *p = peer->pending_head;
        peer->pending_head = p->next;
        if (p->done_req) {
            p->done_req->error = st;
            tern_p2p_send_complete(p->done_req);
        }
        pending_free(p);
    }
    peer->pending_tail = NULL;
    /* Streams: their requests are in the inflight list. */
    while (peer->stream_head) {
        tern_pending_t *p = peer->stream_head;
        peer->stream_head = p->next;
        pending_free(p);
    }
    peer->stream_tail = NULL;
}
