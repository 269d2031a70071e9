/* The transport contract (transport.h), checked on every registered
 * transport through its ops table alone, without the core: run as a job
 * (mpiexec -n 2) so each transport has a peer, and the ranks start each
 * transport together (their init may fence over PMI).
 *
 * For each transport, started alone (params.node_served 0: it must reach
 * every peer it can): query is consistent with the ops present and with
 * itself (limits, thresholds, capabilities); active messages to every peer
 * it reaches arrive in order and intact, at every size up to am_max, by
 * am_send and by am_reserve/am_commit; the bulk channel where bulk_max is
 * not 0; get and put where caps has GET and PUT, getv and putv where it has
 * GETV and PUTV (complete at return with RMA_SYNC), all on memory
 * registered with mem_reg and published through PMI; watch_peers reports
 * no live peer. A by-address transport (sock) is given the others'
 * addresses with add_peer. */
#include "base/test_check.h"
#include "base/clock.h"
#include "base/cma.h"
#include "pmi/pmi.h"
#include "transport/transport.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSGS = 200, BUF_BYTES = 1 << 20, PIECES = 16, TIMEOUT_S = 20 };
enum { KIND_AM = 1, KIND_BULK = 2 };

/* The header of every test message. */
typedef struct {
    uint32_t kind, seq;
    uint64_t len; /* the whole message */
} msg_hdr_t;

static struct {
    int rank, size;
    int *node_of_rank;
    int node, local_rank, local_size, *local_ranks;
    char job[256];
    /* Per source: the next sequence number expected of each kind. */
    uint32_t next[2][64];
    int failed_peers;
    int refused; /* a one-sided call the kernel refused (CMA): allowed, noted */
    char ran[128]; /* the checks the current transport went through, for the log */
    char addrs[64][TERN_TL_ADDR_MAX]; /* by-address transports' peers */
} t;

static void note_checked(const char *what)
{
    if (!strstr(t.ran, what) && strlen(t.ran) + strlen(what) + 2 < sizeof t.ran) {
        strcat(t.ran, " ");
        strcat(t.ran, what);
    }
}

static unsigned char pattern(int src, uint32_t seq, size_t i)
{
    return (unsigned char)(src * 31 + seq * 7 + i * 13 + 1);
}

static void on_message(void *ctx, int src, const void *msg, size_t len)
{
    (void)ctx;
    msg_hdr_t h;
    CHECK(len >= sizeof h && src >= 0 && src < t.size);
    if (len < sizeof h || src < 0 || src >= t.size)
        return;
    memcpy(&h, msg, sizeof h);
    CHECK(h.kind == KIND_AM || h.kind == KIND_BULK);
    CHECK(h.len == len);
    if ((h.kind != KIND_AM && h.kind != KIND_BULK) || h.len != len)
        return;
    uint32_t *next = &t.next[h.kind - 1][src];
    if (h.seq != *next)
        tern_check_fail("message %u of kind %u from %d arrived as number %u", h.seq, h.kind, src,
                        *next);
    *next = h.seq + 1;
    const unsigned char *b = msg;
    for (size_t i = sizeof h; i < len; i++)
        if (b[i] != pattern(src, h.seq, i)) {
            tern_check_fail("message %u from %d: byte %zu wrong", h.seq, src, i);
            break;
        }
}

static void on_peer_failed(int peer, tern_status_t st, const char *why)
{
    tern_check_fail("peer %d reported failed (%s): %s", peer, tern_status_string(st), why);
    t.failed_peers++;
}

static int on_address(const char *addr)
{
    for (int r = 0; r < t.size; r++)
        if (strcmp(t.addrs[r], addr) == 0)
            return r;
    return -1;
}

/* ------------------------------------------------------------------------ */

static void fill_msg(unsigned char *buf, uint32_t kind, uint32_t seq, size_t len)
{
    msg_hdr_t h = {.kind = kind, .seq = seq, .len = len};
    memcpy(buf, &h, sizeof h);
    for (size_t i = sizeof h; i < len; i++)
        buf[i] = pattern(t.rank, seq, i);
}

/* Sizes from the header alone to the largest, the largest included. */
static size_t msg_len(uint32_t seq, size_t max)
{
    return seq % 10 == 9 ? max : sizeof(msg_hdr_t) + (size_t)seq * 7919 % (max - sizeof(msg_hdr_t) + 1);
}

static int wait_until(const tern_tl_ops_t *ops, tern_tl_t *tl, int (*done)(void *), void *arg)
{
    double t0 = tern_clock_s();
    while (!done(arg)) {
        ops->progress(tl);
        if (tern_clock_s() - t0 > TIMEOUT_S)
            return 0;
    }
    return 1;
}

/* A PMI fence run by a helper thread while this one keeps the transport
 * progressing: a peer may need our progress to complete what it waits for
 * (a send still queued here, an emulated RDMA read) before it reaches the
 * fence. Only this thread calls the transport; the helper only PMI (the
 * network transport resolved its peers at init: TERN_CONNECT=all). */
static _Atomic int fence_done;

static void *fence_thread(void *arg)
{
    (void)arg;
    CHECK(tern_pmi_fence() == TERN_OK);
    atomic_store(&fence_done, 1);
    return NULL;
}

static void fence_progressing(const tern_tl_ops_t *ops, tern_tl_t *tl)
{
    pthread_t th;
    atomic_store(&fence_done, 0);
    if (pthread_create(&th, NULL, fence_thread, NULL) != 0) {
        tern_check_fail("cannot start the fence thread");
        return;
    }
    while (!atomic_load(&fence_done))
        ops->progress(tl);
    pthread_join(th, NULL);
}

typedef struct {
    const int *reaches; /* per rank: 1 when the transport reaches it */
    int kind;
    uint32_t want;
} arrivals_t;

static int all_arrived(void *arg)
{
    arrivals_t *a = arg;
    for (int r = 0; r < t.size; r++)
        if (a->reaches[r] && t.next[a->kind - 1][r] < a->want)
            return 0;
    return 1;
}

/* MSGS active messages to each peer reached: the first half by am_send,
 * the rest by am_reserve/am_commit where offered; then waits for as many
 * from each. */
static void check_am(const tern_tl_ops_t *ops, tern_tl_t *tl, const int *reaches,
                     const tern_tl_attr_t *attr)
{
    unsigned char *buf = malloc(attr->am_max);
    CHECK(buf != NULL);
    if (!buf)
        return;
    for (uint32_t seq = 0; seq < MSGS; seq++) {
        size_t len = msg_len(seq, attr->am_max);
        for (int r = 0; r < t.size; r++) {
            if (!reaches[r])
                continue;
            int split = ops->am_reserve && seq >= MSGS / 2;
            note_checked(split ? "am_reserve" : "am_send");
            tern_status_t st;
            double t0 = tern_clock_s();
            for (;;) {
                if (split) {
                    void *room = ops->am_reserve(tl, r, len);
                    st = room ? TERN_OK : TERN_ERR_AGAIN;
                    if (room) {
                        fill_msg(room, KIND_AM, seq, len);
                        ops->am_commit(tl, r, len);
                    }
                } else {
                    fill_msg(buf, KIND_AM, seq, len);
                    /* A header and a payload, split anywhere. */
                    size_t hl = len < 40 ? len : 40;
                    st = ops->am_send(tl, r, buf, hl, buf + hl, len - hl);
                }
                if (st != TERN_ERR_AGAIN || tern_clock_s() - t0 > TIMEOUT_S)
                    break;
                ops->progress(tl);
            }
            if (st != TERN_OK)
                tern_check_fail("%s: message %u to %d: %s", ops->name, seq, r, tern_status_string(st));
        }
    }
    arrivals_t a = {reaches, KIND_AM, MSGS};
    if (!wait_until(ops, tl, all_arrived, &a))
        tern_check_fail("%s: active messages missing after %d s", ops->name, TIMEOUT_S);
    free(buf);
}

static void check_bulk(const tern_tl_ops_t *ops, tern_tl_t *tl, const int *reaches)
{
    int any = 0;
    for (uint32_t seq = 0; seq < MSGS / 4; seq++) {
        for (int r = 0; r < t.size; r++) {
            tern_tl_attr_t pa;
            if (!reaches[r])
                continue;
            ops->query(tl, r, &pa);
            if (!pa.bulk_max)
                continue;
            any = 1;
            note_checked("bulk");
            void *room;
            double t0 = tern_clock_s();
            while (!(room = ops->bulk_reserve(tl, r, 0)) && tern_clock_s() - t0 < TIMEOUT_S)
                ops->progress(tl);
            CHECK(room != NULL);
            if (!room)
                return;
            size_t len = msg_len(seq, pa.bulk_max);
            fill_msg(room, KIND_BULK, seq, len);
            ops->bulk_commit(tl, r, len);
        }
    }
    if (!any)
        return;
    /* Every peer of this transport has the channel or none has (the node's). */
    arrivals_t a = {reaches, KIND_BULK, MSGS / 4};
    if (!wait_until(ops, tl, all_arrived, &a))
        tern_check_fail("%s: bulk messages missing after %d s", ops->name, TIMEOUT_S);
}

/* ------------------------------------------------------------------------ */
/* One-sided: each rank registers BUF_BYTES, its first half a pattern to be
 * read, its second half one slot per rank that reaches it, written by that
 * rank (the slot's first half by put, its second by putv), and publishes
 * address and key. */

typedef struct {
    uint64_t addr;
    tern_rkey_t key;
} remote_t;

static unsigned char mem_byte(int owner, size_t i)
{
    return (unsigned char)(owner * 17 + i * 5 + 3);
}

static unsigned char put_byte(int writer, size_t i)
{
    return (unsigned char)(writer * 29 + i * 11 + 7);
}

static size_t slot_bytes(void)
{
    return (size_t)BUF_BYTES / 2 / (size_t)t.size & ~(size_t)63;
}

static void publish_remote(const char *tl_name, const remote_t *me)
{
    char key[64], val[128];
    snprintf(key, sizeof key, "tc-%s-%d", tl_name, t.rank);
    snprintf(val, sizeof val, "%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64, me->addr,
             me->key.words[0], me->key.words[1], me->key.words[2]);
    CHECK(tern_pmi_put(key, val) == TERN_OK);
}

static int read_remote(const char *tl_name, int r, remote_t *out)
{
    char key[64], val[128];
    snprintf(key, sizeof key, "tc-%s-%d", tl_name, r);
    if (tern_pmi_get(key, val, sizeof val) != TERN_OK)
        return 0;
    return sscanf(val, "%" SCNx64 ":%" SCNx64 ":%" SCNx64 ":%" SCNx64, &out->addr, &out->key.words[0],
                  &out->key.words[1], &out->key.words[2]) == 4;
}

typedef struct {
    tern_tl_comp_t comp;
    int done;
    tern_status_t st;
} test_comp_t;

static void on_comp(tern_tl_comp_t *comp, tern_status_t st)
{
    test_comp_t *c = (test_comp_t *)comp;
    c->done = 1;
    c->st = st;
}

static int comp_done(void *arg)
{
    return ((test_comp_t *)arg)->done;
}

/* A vector call: complete at return with RMA_SYNC (comp NULL), else
 * waited for. */
static void finish(const tern_tl_ops_t *ops, tern_tl_t *tl, tern_status_t st, test_comp_t *c,
                   const char *what, int r)
{
    if (st == TERN_ERR_NOT_SUPPORTED) {
        /* The contract lets the kernel refuse (CMA under Yama's strictest
         * modes); then nothing lands anywhere, and nothing is checked. */
        printf("rank %d: %s: %s with %d refused\n", t.rank, ops->name, what, r);
        t.refused = 1;
        c->st = st;
        return;
    }
    if (st != TERN_OK) {
        tern_check_fail("%s: %s with %d: %s", ops->name, what, r, tern_status_string(st));
        return;
    }
    if (!wait_until(ops, tl, comp_done, c))
        tern_check_fail("%s: %s with %d did not complete", ops->name, what, r);
    else if (c->st != TERN_OK)
        tern_check_fail("%s: %s with %d completed with %s", ops->name, what, r,
                        tern_status_string(c->st));
}

/* Up to PIECES pieces over the first half of the peer's memory, gapped, of
 * varying lengths; their count, *total their bytes. */
static size_t make_pieces(uint64_t base, struct iovec *iov, size_t *offs, size_t *total)
{
    size_t n = 0, at = 0;
    *total = 0;
    for (int i = 0; i < PIECES; i++) {
        size_t len = 1 + (size_t)i * 997 % 4093;
        at += 64 + (size_t)i * 31;
        if (at + len > BUF_BYTES / 2)
            break;
        iov[n].iov_base = (void *)(uintptr_t)(base + at);
        iov[n].iov_len = len;
        offs[n++] = at;
        at += len;
        *total += len;
    }
    return n;
}

static void check_reads(const tern_tl_ops_t *ops, tern_tl_t *tl, int r, const remote_t *rem,
                        unsigned caps, unsigned char *tmp)
{
    const size_t half = BUF_BYTES / 2;
    int sync = (caps & TERN_TL_CAP_RMA_SYNC) != 0;
    if (caps & TERN_TL_CAP_GET) {
        test_comp_t c = {.comp = {.cb = on_comp}};
        note_checked("get");
        finish(ops, tl, ops->get(tl, r, tmp, half, rem->addr, &rem->key, &c.comp), &c, "get", r);
        for (size_t i = 0; c.st == TERN_OK && i < half; i++)
            if (tmp[i] != mem_byte(r, i)) {
                tern_check_fail("%s: get from %d: byte %zu wrong", ops->name, r, i);
                break;
            }
    }
    if (caps & TERN_TL_CAP_GETV) {
        struct iovec iov[PIECES];
        size_t offs[PIECES], total;
        size_t n = make_pieces(rem->addr, iov, offs, &total);
        test_comp_t c = {.comp = {.cb = on_comp}, .done = sync};
        note_checked("getv");
        finish(ops, tl, ops->getv(tl, r, tmp, total, iov, n, &rem->key, sync ? NULL : &c.comp), &c,
               "getv", r);
        size_t at = 0;
        int bad = c.st != TERN_OK;
        for (size_t k = 0; k < n && !bad; k++)
            for (size_t i = 0; i < iov[k].iov_len && !bad; i++, at++)
                if (tmp[at] != mem_byte(r, offs[k] + i)) {
                    tern_check_fail("%s: getv from %d: piece %zu byte %zu wrong", ops->name, r, k, i);
                    bad = 1;
                }
    }
}

/* This rank's slot in peer r: its first half by put, its second half by
 * putv in four pieces, where offered. */
static void check_writes(const tern_tl_ops_t *ops, tern_tl_t *tl, int r, const remote_t *rem,
                         unsigned caps, unsigned char *tmp)
{
    const size_t slot = slot_bytes(), half = slot / 2;
    const uint64_t at = rem->addr + BUF_BYTES / 2 + (uint64_t)t.rank * slot;
    int sync = (caps & TERN_TL_CAP_RMA_SYNC) != 0;
    for (size_t i = 0; i < slot; i++)
        tmp[i] = put_byte(t.rank, i);
    if (caps & TERN_TL_CAP_PUT) {
        test_comp_t c = {.comp = {.cb = on_comp}};
        note_checked("put");
        finish(ops, tl, ops->put(tl, r, tmp, half, at, &rem->key, &c.comp), &c, "put", r);
    }
    if (caps & TERN_TL_CAP_PUTV) {
        struct iovec iov[4];
        for (size_t k = 0; k < 4; k++) {
            iov[k].iov_base = (void *)(uintptr_t)(at + half + k * (half / 4));
            iov[k].iov_len = half / 4;
        }
        test_comp_t c = {.comp = {.cb = on_comp}, .done = sync};
        note_checked("putv");
        finish(ops, tl, ops->putv(tl, r, tmp + half, half, iov, 4, &rem->key, sync ? NULL : &c.comp),
               &c, "putv", r);
    }
}

typedef struct {
    const unsigned char *mine;
    int writer;
    unsigned caps;
} landed_t;

/* Whether writer's slot in this rank's memory holds what it wrote. */
static int slot_landed(void *arg)
{
    landed_t *l = arg;
    const size_t slot = slot_bytes(), half = slot / 2;
    const unsigned char *s = l->mine + BUF_BYTES / 2 + (size_t)l->writer * slot;
    size_t lo = l->caps & TERN_TL_CAP_PUT ? 0 : half, hi = l->caps & TERN_TL_CAP_PUTV ? slot : half;
    for (size_t i = lo; i < hi; i++)
        if (s[i] != put_byte(l->writer, i))
            return 0;
    return 1;
}

static void check_rma(const tern_tl_ops_t *ops, tern_tl_t *tl, const int *reaches, unsigned caps_all)
{
    const unsigned reads = TERN_TL_CAP_GET | TERN_TL_CAP_GETV, writes = TERN_TL_CAP_PUT | TERN_TL_CAP_PUTV;
    int any = (caps_all & (reads | writes)) != 0;
    unsigned char *mine = any ? calloc(1, BUF_BYTES) : NULL, *tmp = any ? malloc(BUF_BYTES) : NULL;
    remote_t me = {0};
    if (any) {
        CHECK(mine && tmp);
        for (size_t i = 0; i < BUF_BYTES / 2; i++)
            mine[i] = mem_byte(t.rank, i);
        me.addr = (uint64_t)(uintptr_t)mine;
        CHECK(ops->mem_reg(tl, mine, BUF_BYTES, &me.key) == TERN_OK);
        publish_remote(ops->name, &me);
    }
    fence_progressing(ops, tl); /* the same fences on every rank */
    for (int r = 0; any && r < t.size; r++) {
        tern_tl_attr_t pa;
        remote_t rem;
        if (!reaches[r])
            continue;
        ops->query(tl, r, &pa);
        if (!(pa.caps & (reads | writes)))
            continue;
        CHECK(read_remote(ops->name, r, &rem));
        check_reads(ops, tl, r, &rem, pa.caps, tmp);
        check_writes(ops, tl, r, &rem, pa.caps, tmp);
    }
    /* Every rank this one reaches wrote its slot here (the transports reach
     * both ways). */
    for (int r = 0; any && r < t.size; r++) {
        tern_tl_attr_t pa;
        if (!reaches[r])
            continue;
        ops->query(tl, r, &pa);
        landed_t l = {mine, r, pa.caps};
        if ((pa.caps & writes) && !t.refused && !wait_until(ops, tl, slot_landed, &l))
            tern_check_fail("%s: what rank %d wrote here did not land", ops->name, r);
    }
    /* Peers may read this memory until every rank is done. */
    fence_progressing(ops, tl);
    if (any)
        ops->mem_dereg(tl, mine, BUF_BYTES);
    free(mine);
    free(tmp);
}

/* ------------------------------------------------------------------------ */

/* What query says agrees with the ops the table has, for any peer and for
 * each reached one; returns the union of the reached peers' caps. */
static unsigned check_query(const tern_tl_ops_t *ops, tern_tl_t *tl, const int *reaches)
{
    tern_tl_attr_t any, pa;
    unsigned all = 0;
    ops->query(tl, TERN_TL_ANY_PEER, &any);
    for (int r = -1; r < t.size; r++) {
        const tern_tl_attr_t *a = r < 0 ? &any : &pa;
        if (r >= 0) {
            if (!reaches[r])
                continue;
            ops->query(tl, r, &pa);
            all |= pa.caps;
            /* Room for a protocol header (64 bytes) and some payload. */
            CHECK(pa.am_max > 64);
            /* Filled once: the same answer twice. */
            tern_tl_attr_t again;
            ops->query(tl, r, &again);
            CHECK(memcmp(&again, &pa, sizeof pa) == 0);
        }
        CHECK(a->get_min == 0 || a->get_min < a->rma_min);
        if (a->caps & (TERN_TL_CAP_GET | TERN_TL_CAP_PUT | TERN_TL_CAP_GETV | TERN_TL_CAP_PUTV))
            CHECK(ops->mem_reg && ops->mem_dereg);
        if (a->caps & TERN_TL_CAP_GET)
            CHECK(ops->get != NULL);
        if (a->caps & TERN_TL_CAP_PUT)
            CHECK(ops->put != NULL);
        if (a->caps & TERN_TL_CAP_GETV)
            CHECK(ops->getv != NULL);
        if (a->caps & TERN_TL_CAP_PUTV)
            CHECK(ops->putv != NULL);
        if (a->bulk_max)
            CHECK(ops->bulk_reserve && ops->bulk_commit);
    }
    CHECK(!ops->am_reserve == !ops->am_commit);
    CHECK(!ops->bulk_reserve == !ops->bulk_commit);
    CHECK(!ops->atomic == !ops->atomic_max);
    CHECK(ops->reach != TERN_TL_REACH_BY_ADDRESS || (ops->address && ops->add_peer));
    return all;
}

/* A by-address transport learns every other rank's address through PMI. */
static void exchange_addresses(const tern_tl_ops_t *ops, tern_tl_t *tl)
{
    char key[64];
    const char *mine = ops->address(tl);
    CHECK(mine && strlen(mine) > 0 && strlen(mine) < TERN_TL_ADDR_MAX);
    snprintf(key, sizeof key, "tc-addr-%s-%d", ops->name, t.rank);
    CHECK(tern_pmi_put(key, mine) == TERN_OK);
    fence_progressing(ops, tl);
    for (int r = 0; r < t.size; r++) {
        snprintf(key, sizeof key, "tc-addr-%s-%d", ops->name, r);
        CHECK(tern_pmi_get(key, t.addrs[r], sizeof t.addrs[r]) == TERN_OK);
        if (r != t.rank)
            CHECK(ops->add_peer(tl, r, t.addrs[r]) == TERN_OK);
    }
    /* Nobody connects before every rank knows every address: a connection
     * whose hello names an address not yet known (on_address: -1) is
     * refused, and the connecting rank loses it ("Broken pipe"). */
    fence_progressing(ops, tl);
}

static void check_transport(const tern_tl_ops_t *ops)
{
    tern_tl_params_t params = {
        .rank = t.rank,
        .size = t.size,
        .node_of_rank = t.node_of_rank,
        .node = t.node,
        .local_rank = t.local_rank,
        .local_size = t.local_size,
        .local_ranks = t.local_ranks,
        .job_id = t.job,
        .node_served = 0,
        .am_handler = on_message,
        .peer_failed = on_peer_failed,
        .peer_for_addr = on_address,
    };
    memset(t.next, 0, sizeof t.next);
    t.ran[0] = '\0';
    tern_tl_t *tl = NULL;
    CHECK(ops->name && ops->init && ops->finalize && ops->reachable && ops->query && ops->am_send &&
          ops->progress && ops->connect && ops->disconnect);
    tern_status_t st = ops->init(&params, &tl);
    if (st != TERN_OK) {
        tern_check_fail("%s: init: %s", ops->name, tern_status_string(st));
        return;
    }
    if (ops->reach == TERN_TL_REACH_BY_ADDRESS)
        exchange_addresses(ops, tl);
    int *reaches = calloc((size_t)t.size, sizeof *reaches);
    int n_reached = 0;
    for (int r = 0; reaches && r < t.size; r++) {
        reaches[r] = ops->reachable(tl, r);
        n_reached += reaches[r];
        if (reaches[r])
            CHECK(ops->connect(tl, r) == TERN_OK);
    }
    /* Who must reach whom: self this rank, shm the node's others, the
     * network and sock every other rank. */
    if (strcmp(ops->name, "self") == 0)
        CHECK(n_reached == 1 && reaches[t.rank]);
    else if (strcmp(ops->name, "shm") == 0)
        CHECK(n_reached == t.local_size - 1 && !reaches[t.rank]);
    else
        CHECK(n_reached == t.size - 1 && !reaches[t.rank]);
    unsigned caps = check_query(ops, tl, reaches);
    tern_tl_attr_t any;
    ops->query(tl, TERN_TL_ANY_PEER, &any);
    if (n_reached) {
        check_am(ops, tl, reaches, &any);
        if (ops->bulk_reserve)
            check_bulk(ops, tl, reaches);
    }
    fence_progressing(ops, tl); /* every message in before the next part */
    check_rma(ops, tl, reaches, caps);
    if (ops->watch_peers) {
        int peers[64], n = 0;
        for (int r = 0; r < t.size && n < 64; r++)
            if (reaches[r])
                peers[n++] = r;
        ops->watch_peers(tl, peers, n);
        note_checked("watch_peers");
        CHECK(t.failed_peers == 0);
    }
    fence_progressing(ops, tl);
    ops->finalize(tl);
    printf("rank %d: %s reaches %d of %d; checked query%s\n", t.rank, ops->name, n_reached, t.size,
           t.ran);
    free(reaches);
}

static void node_map(void)
{
    t.node_of_rank = calloc((size_t)t.size, sizeof *t.node_of_rank);
    t.local_ranks = calloc((size_t)t.size, sizeof *t.local_ranks);
    CHECK(t.node_of_rank && t.local_ranks);
    tern_status_t st = t.size > 1 ? tern_pmi_node_map(t.node_of_rank) : TERN_OK;
    if (st != TERN_OK) {
        /* No map from the launcher: ranks with one host name share a node. */
        char key[32], host[256], other[256];
        gethostname(host, sizeof host - 1);
        host[sizeof host - 1] = '\0';
        snprintf(key, sizeof key, "tc-host-%d", t.rank);
        CHECK(tern_pmi_put(key, host) == TERN_OK && tern_pmi_fence() == TERN_OK);
        for (int r = 0; r < t.size; r++) {
            snprintf(key, sizeof key, "tc-host-%d", r);
            CHECK(tern_pmi_get(key, other, sizeof other) == TERN_OK);
            t.node_of_rank[r] = strcmp(other, host) == 0 ? 0 : 1 + r;
        }
    }
    t.node = t.node_of_rank[t.rank];
    for (int r = 0; r < t.size; r++)
        if (t.node_of_rank[r] == t.node) {
            if (r == t.rank)
                t.local_rank = t.local_size;
            t.local_ranks[t.local_size++] = r;
        }
}

int main(void)
{
    tern_pmi_info_t info;
    if (tern_pmi_init(&info) != TERN_OK) {
        fprintf(stderr, "transport_contract_test: no process manager (run it with mpiexec)\n");
        return 1;
    }
    t.rank = info.rank;
    t.size = info.size;
    if (t.size > 64) {
        fprintf(stderr, "transport_contract_test: at most 64 ranks\n");
        return 1;
    }
    snprintf(t.job, sizeof t.job, "%s", info.kvsname);
    /* As the shm transport does at start: processes of this uid may use
     * CMA on this one (Yama), which the vector ops of ofi need too. */
    tern_cma_allow_peers();
    node_map();
    for (int i = 0; tern_tl_all[i]; i++)
        check_transport(tern_tl_all[i]);
    tern_pmi_finalize();
    free(t.node_of_rank);
    free(t.local_ranks);
    return tern_check_result("transport_contract_test");
}
