/* Partitioned communication over ordinary point-to-point messages on
 * hidden contexts (protocol: partitioned.h). The user's request is a
 * persistent TERN_REQ_GENERIC one whose ext is a part_t; a progress hook,
 * registered while any partitioned request exists, moves the handshake on,
 * sends partitions readied before it finished, and completes rounds. */
#include "core/pt2pt/partitioned.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/progress.h"
#include "base/profile.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Setup (sender to receiver) and reply (receiver to sender) payloads. */
typedef struct {
    uint64_t partitions;
    uint64_t total;
} setup_msg_t;

typedef struct {
    uint64_t channel;
    uint64_t error; /* tern_status_t: the sizes did not agree */
} reply_msg_t;

typedef struct part {
    struct part *next; /* every partitioned request (the hook's list) */
    tern_req_t *req;
    int is_send;
    tern_part_addr_t a;
    char *buf;              /* the user's (a send's sub-requests add the type's lb) */
    MPI_Aint lb;            /* true lb of a contiguous type: where the bytes start */
    size_t count;           /* elements per partition */
    MPI_Datatype dt;
    int noncontig;
    size_t stride;          /* bytes between partitions in memory (count * extent) */
    int parts;
    size_t part_bytes;      /* packed bytes per partition */
    size_t total;
    /* Handshake. */
    tern_req_t *hs_send, *hs_recv;
    void *hs_out;           /* payload of hs_send (owned; handed over if freed early) */
    setup_msg_t setup_in;   /* receiver */
    reply_msg_t reply_in;   /* sender */
    int matched;
    tern_status_t match_error;
    uint32_t channel;
    int peer_parts;         /* receiver: the sender's partitions */
    size_t peer_part_bytes;
    /* The current round. */
    int posted;             /* receiver: round's receives are posted */
    uint8_t *flag;          /* sender: readied; receiver: arrived (per sender partition) */
    uint8_t *sent;          /* sender: partition's send started */
    tern_req_t **sub;       /* per partition (sender: mine; receiver: the sender's) */
    int n_flag;             /* readied (sender) / arrived (receiver) */
    int n_sent;             /* sender: partitions whose send started */
    int scan;               /* partitions below are done (sent and out / arrived): the
                               hook looks from here, so a pass costs O(1) amortized */
    char *staging;          /* receiver, non-contiguous type: packed copy */
} part_t;

static part_t *all_parts; /* in init order */
static uint32_t next_channel;

static int part_progress(void);
static void part_release(tern_req_t *req);

int tern_part_is(const tern_req_t *req)
{
    return req->kind == TERN_REQ_GENERIC && req->release_fn == part_release;
}

/* ------------------------------------------------------------------------ */
/* Sub-requests: ordinary sends and receives. */

static tern_req_t *sub_send(const part_t *p, uint32_t ctx, int tag, const void *buf, size_t count,
                            MPI_Datatype dt, tern_status_t *st)
{
    tern_req_t *r = tern_req_alloc(TERN_REQ_SEND);
    if (!r) {
        *st = TERN_ERR_NOMEM;
        return NULL;
    }
    r->comm = p->a.comm;
    r->context_id = ctx;
    r->peer = p->a.peer;
    r->peer_world = p->a.peer_world;
    r->comm_rank = p->a.comm_rank;
    r->tag = tag;
    r->mode = TERN_SEND_STANDARD;
    tern_p2p_set_data(r, buf, (int)count, dt);
    *st = tern_p2p_start_send(r);
    if (*st != TERN_OK) {
        tern_req_release(r);
        return NULL;
    }
    return r;
}

static tern_req_t *sub_recv(const part_t *p, uint32_t ctx, int tag, void *buf, size_t count,
                            MPI_Datatype dt)
{
    tern_req_t *r = tern_req_alloc(TERN_REQ_RECV);
    if (!r)
        return NULL;
    r->comm = p->a.comm;
    r->context_id = ctx;
    r->peer = p->a.peer;
    r->tag = tag;
    tern_p2p_set_data(r, buf, (int)count, dt);
    tern_p2p_start_recv(r);
    return r;
}

static void free_hs_out(tern_req_t *r)
{
    free(r->ext);
    r->ext = NULL;
}

/* Drops a handshake request: a receive not matched is cancelled; a send
 * still queued keeps its payload and releases itself when out. */
static void drop_sub(tern_req_t *r, void **payload)
{
    if (!r)
        return;
    if (r->kind == TERN_REQ_RECV && !r->complete)
        tern_p2p_cancel_recv(r);
    if (r->complete) {
        tern_req_release(r);
        return;
    }
    if (payload) {
        r->ext = *payload;
        r->release_fn = free_hs_out;
        *payload = NULL;
    }
    r->freed = 1;
}

/* ------------------------------------------------------------------------ */
/* Handshake. */

static uint32_t ctx_of(uint32_t base, const part_t *p) { return base | p->a.ctx; }

static void fail_round(part_t *p, tern_status_t st)
{
    if (p->req->error == TERN_OK)
        p->req->error = st;
}

/* Receiver: the sender's setup arrived; check sizes and answer. */
static void recv_matched(part_t *p)
{
    tern_req_t *r = p->hs_recv;
    p->hs_recv = NULL;
    tern_status_t st = r->error;
    tern_req_release(r);
    if (st == TERN_OK && p->setup_in.total != p->total)
        st = tern_status_detail(TERN_ERR_TRUNCATE,
                                "the partitioned send from rank %d with tag %d has %llu bytes, "
                                "the partitioned receive %zu (total sizes must agree)",
                                p->a.peer, p->a.tag, (unsigned long long)p->setup_in.total,
                                p->total);
    if (st == TERN_OK) {
        p->peer_parts = (int)p->setup_in.partitions;
        p->peer_part_bytes = p->peer_parts ? p->total / (size_t)p->peer_parts : 0;
        if (p->peer_part_bytes > INT_MAX)
            st = tern_status_detail(TERN_ERR_COUNT,
                                    "a partition of the send from rank %d has %zu bytes, more "
                                    "than this receive can take in one message",
                                    p->a.peer, p->peer_part_bytes);
    }
    p->match_error = st;
    if (st == TERN_OK) {
        p->flag = calloc((size_t)p->peer_parts + 1, 1);
        p->sub = calloc((size_t)p->peer_parts + 1, sizeof *p->sub);
        if (p->noncontig)
            p->staging = malloc(p->total ? p->total : 1);
        if (!p->flag || !p->sub || (p->noncontig && !p->staging))
            p->match_error = TERN_ERR_NOMEM;
    }
    reply_msg_t *out = malloc(sizeof *out);
    if (out) {
        p->channel = next_channel++ & 0xffffffu;
        *out = (reply_msg_t){.channel = p->channel, .error = (uint64_t)p->match_error};
        tern_status_t sst;
        p->hs_out = out;
        p->hs_send = sub_send(p, ctx_of(TERN_PART_CTX_REPLY, p), p->a.tag, out, sizeof *out,
                              MPI_BYTE, &sst);
        if (!p->hs_send && p->match_error == TERN_OK)
            p->match_error = sst;
    } else if (p->match_error == TERN_OK) {
        p->match_error = TERN_ERR_NOMEM;
    }
    p->matched = 1;
}

/* Sender: the receiver's reply arrived. */
static void send_matched(part_t *p)
{
    tern_req_t *r = p->hs_recv;
    p->hs_recv = NULL;
    tern_status_t st = r->error;
    tern_req_release(r);
    if (st == TERN_OK && p->reply_in.error != TERN_OK)
        st = tern_status_detail(TERN_ERR_TRUNCATE,
                                "the partitioned receive at rank %d with tag %d does not have "
                                "%zu bytes (total sizes must agree)",
                                p->a.peer, p->a.tag, p->total);
    p->match_error = st;
    p->channel = (uint32_t)p->reply_in.channel;
    p->matched = 1;
}

/* ------------------------------------------------------------------------ */
/* Rounds. */

static void send_partition(part_t *p, int i)
{
    tern_status_t st;
    p->sent[i] = 1;
    p->n_sent++;
    p->sub[i] = sub_send(p, TERN_PART_CTX_DATA | p->channel, i, p->buf + (size_t)i * p->stride,
                         p->count, p->dt, &st);
    if (!p->sub[i])
        fail_round(p, st);
}

static void post_receives(part_t *p)
{
    p->posted = 1;
    for (int j = 0; j < p->peer_parts; j++) {
        size_t off = (size_t)j * p->peer_part_bytes;
        void *dst = p->noncontig ? p->staging + off : p->buf + p->lb + off;
        p->sub[j] = sub_recv(p, TERN_PART_CTX_DATA | p->channel, j, dst, p->peer_part_bytes,
                             MPI_BYTE);
        if (!p->sub[j]) {
            fail_round(p, TERN_ERR_NOMEM);
            p->flag[j] = 1;
            p->n_flag++;
        }
    }
}

static void round_done(part_t *p)
{
    tern_req_t *req = p->req;
    req->status_source = p->is_send ? MPI_ANY_SOURCE : p->a.peer;
    req->status_tag = p->is_send ? MPI_ANY_TAG : p->a.tag;
    req->status_bytes = p->is_send ? 0 : p->total;
    p->posted = 0;
    tern_req_complete(req);
}

/* Receiver: whether sender partition j is in; takes its receive when it
 * just completed (unpacks a staged piece, notes an error). */
static int collect(part_t *p, int j)
{
    if (p->flag[j])
        return 1;
    tern_req_t *r = p->sub[j];
    if (!r || !r->complete)
        return 0;
    if (p->noncontig && r->error == TERN_OK)
        tern_datatype_unpack_range(p->staging + (size_t)j * p->peer_part_bytes,
                                   p->peer_part_bytes, p->buf, p->count * (size_t)p->parts,
                                   p->dt, (size_t)j * p->peer_part_bytes);
    fail_round(p, r->error);
    tern_req_release(r);
    p->sub[j] = NULL;
    p->flag[j] = 1;
    p->n_flag++;
    return 1;
}

/* Moves one active request on; returns events. */
static int part_advance(part_t *p)
{
    int n = 0;
    if (!p->matched && p->hs_recv && p->hs_recv->complete) {
        (p->is_send ? send_matched : recv_matched)(p);
        n++;
    }
    if (p->hs_send && p->hs_send->complete) {
        if (p->hs_send->error != TERN_OK && p->match_error == TERN_OK)
            p->match_error = p->hs_send->error;
        tern_req_release(p->hs_send);
        p->hs_send = NULL;
        free(p->hs_out);
        p->hs_out = NULL;
    }
    tern_req_t *req = p->req;
    if (!req->active || req->complete || !p->matched)
        return n;
    if (p->match_error != TERN_OK) {
        fail_round(p, p->match_error);
        round_done(p);
        return n + 1;
    }
    if (p->is_send) {
        /* Partitions readied before the handshake ended go now. */
        for (int i = 0; p->n_sent < p->n_flag && i < p->parts; i++)
            if (p->flag[i] && !p->sent[i]) {
                send_partition(p, i);
                n++;
            }
        while (p->scan < p->parts && p->sent[p->scan]) {
            tern_req_t *r = p->sub[p->scan];
            if (r && !r->complete)
                break;
            if (r) {
                fail_round(p, r->error);
                tern_req_release(r);
                p->sub[p->scan] = NULL;
            }
            p->scan++;
        }
        if (p->scan == p->parts)
            round_done(p);
        return n;
    }
    if (!p->posted)
        post_receives(p);
    while (p->scan < p->peer_parts && collect(p, p->scan)) {
        p->scan++;
        n++;
    }
    if (p->n_flag == p->peer_parts)
        round_done(p);
    return n;
}

static int part_progress(void)
{
    int n = 0;
    for (part_t *p = all_parts, *next; p; p = next) {
        next = p->next; /* p may complete a freed request and go */
        n += part_advance(p);
    }
    return n;
}

static tern_status_t part_start(tern_req_t *req)
{
    part_t *p = req->ext;
    if (p->a.peer == MPI_PROC_NULL) {
        req->status_source = MPI_PROC_NULL;
        req->status_tag = MPI_ANY_TAG;
        req->status_bytes = 0;
        req->complete = 1;
        return TERN_OK;
    }
    p->n_flag = 0;
    p->n_sent = 0;
    p->scan = 0;
    p->posted = 0;
    if (p->is_send)
        tern_profile_p2p_send(p->a.peer_world, p->total); /* one message per round */
    if (p->is_send) {
        memset(p->flag, 0, (size_t)p->parts);
        memset(p->sent, 0, (size_t)p->parts);
    } else if (p->flag) {
        memset(p->flag, 0, (size_t)p->peer_parts);
    }
    part_progress(); /* the whole list: answers go in init order */
    return TERN_OK;
}

static void part_release(tern_req_t *req)
{
    part_t *p = req->ext;
    for (part_t **l = &all_parts; *l; l = &(*l)->next)
        if (*l == p) {
            *l = p->next;
            break;
        }
    if (!all_parts)
        tern_progress_unregister(part_progress);
    drop_sub(p->hs_recv, NULL);
    drop_sub(p->hs_send, &p->hs_out);
    free(p->hs_out);
    int n = p->is_send ? p->parts : p->peer_parts;
    for (int i = 0; p->sub && i < n; i++)
        drop_sub(p->sub[i], NULL);
    free(p->flag);
    free(p->sent);
    free(p->sub);
    free(p->staging);
    tern_datatype_release(p->dt);
    free(p);
    req->ext = NULL;
    req->release_fn = NULL;
}

tern_status_t tern_part_init(int is_send, const tern_part_addr_t *a, const void *buf,
                             int partitions, size_t count, MPI_Datatype dt, tern_req_t **req_p)
{
    tern_dt_desc_t d;
    if (!tern_datatype_describe(dt, &d))
        return tern_status_detail(TERN_ERR_TYPE, "invalid datatype");
    part_t *p = calloc(1, sizeof *p);
    tern_req_t *req = p ? tern_req_alloc(TERN_REQ_GENERIC) : NULL;
    if (!req) {
        free(p);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a partitioned request");
    }
    p->req = req;
    p->is_send = is_send;
    p->a = *a;
    p->count = count;
    p->dt = dt;
    p->noncontig = !d.contig;
    p->buf = (char *)buf;
    p->lb = d.contig ? d.true_lb : 0;
    p->stride = count * (size_t)d.extent;
    p->parts = partitions;
    p->part_bytes = count * (size_t)d.size;
    p->total = p->part_bytes * (size_t)partitions;
    tern_datatype_retain(dt);
    req->comm = a->comm;
    req->persistent = 1;
    req->complete = 1;
    req->ext = p;
    req->start_fn = part_start;
    req->release_fn = part_release;
    /* In init order: the hook answers setups in list order, and the
     * sender takes replies in the order of its inits. */
    part_t **tail = &all_parts;
    while (*tail)
        tail = &(*tail)->next;
    *tail = p;
    if (tern_progress_register(part_progress) != TERN_OK) {
        tern_req_release(req);
        return tern_status_detail(TERN_ERR_INTERNAL, "cannot register partitioned progress");
    }
    *req_p = req;
    if (a->peer == MPI_PROC_NULL) {
        p->matched = 1;
        return TERN_OK;
    }
    tern_status_t st = TERN_OK;
    if (is_send) {
        p->flag = calloc((size_t)partitions + 1, 1);
        p->sent = calloc((size_t)partitions + 1, 1);
        p->sub = calloc((size_t)partitions + 1, sizeof *p->sub);
        setup_msg_t *out = malloc(sizeof *out);
        if (!p->flag || !p->sent || !p->sub || !out) {
            free(out);
            st = TERN_ERR_NOMEM;
        } else {
            *out = (setup_msg_t){.partitions = (uint64_t)partitions, .total = p->total};
            p->hs_out = out;
            p->hs_recv = sub_recv(p, ctx_of(TERN_PART_CTX_REPLY, p), a->tag, &p->reply_in,
                                  sizeof p->reply_in, MPI_BYTE);
            p->hs_send = p->hs_recv ? sub_send(p, ctx_of(TERN_PART_CTX_SETUP, p), a->tag, out,
                                               sizeof *out, MPI_BYTE, &st)
                                    : NULL;
            if (!p->hs_recv)
                st = TERN_ERR_NOMEM;
        }
    } else {
        p->hs_recv = sub_recv(p, ctx_of(TERN_PART_CTX_SETUP, p), a->tag, &p->setup_in,
                              sizeof p->setup_in, MPI_BYTE);
        if (!p->hs_recv)
            st = TERN_ERR_NOMEM;
    }
    if (st != TERN_OK) {
        tern_req_release(req);
        *req_p = NULL;
        return tern_status_detail(st, "cannot set up the partitioned %s: %s",
                                  is_send ? "send" : "receive", tern_status_string(st));
    }
    part_progress(); /* the whole list: answers go in init order */
    return TERN_OK;
}

/* ------------------------------------------------------------------------ */
/* MPI_Pready*, MPI_Parrived. */

static tern_status_t lookup(MPI_Request request, int want_send, part_t **p_p)
{
    tern_req_t *req = tern_req_lookup(request);
    if (!req || !tern_part_is(req))
        return tern_status_detail(TERN_ERR_REQUEST, "request 0x%x is not a partitioned request",
                                  (unsigned)request);
    part_t *p = req->ext;
    if (p->is_send != want_send)
        return tern_status_detail(TERN_ERR_REQUEST, "request 0x%x is a partitioned %s request",
                                  (unsigned)request, p->is_send ? "send" : "receive");
    if (!req->active)
        return tern_status_detail(TERN_ERR_REQUEST,
                                  "request 0x%x is not active (call MPI_Start first)",
                                  (unsigned)request);
    *p_p = p;
    return TERN_OK;
}

static tern_status_t check_partition(const part_t *p, int i, const char *what)
{
    if (i < 0 || i >= p->parts)
        return tern_status_detail(TERN_ERR_ARG, "%s=%d is outside 0..%d (the request's partitions)",
                                  what, i, p->parts - 1);
    return TERN_OK;
}

static tern_status_t ready(part_t *p, int i)
{
    if (p->a.peer == MPI_PROC_NULL)
        return TERN_OK;
    if (p->flag[i])
        return tern_status_detail(TERN_ERR_ARG, "partition %d is already ready in this round", i);
    p->flag[i] = 1;
    p->n_flag++;
    if (p->matched && p->match_error == TERN_OK)
        send_partition(p, i);
    return TERN_OK;
}

tern_status_t tern_part_pready_range(MPI_Request request, int lo, int hi)
{
    part_t *p;
    tern_status_t st = lookup(request, 1, &p);
    if (st == TERN_OK)
        st = check_partition(p, lo, lo == hi ? "partition" : "partition_low");
    if (st == TERN_OK)
        st = check_partition(p, hi, lo == hi ? "partition" : "partition_high");
    if (st == TERN_OK && lo > hi)
        st = tern_status_detail(TERN_ERR_ARG, "partition_low=%d is above partition_high=%d", lo,
                                hi);
    for (int i = lo; st == TERN_OK && i <= hi; i++)
        st = ready(p, i);
    return st;
}

tern_status_t tern_part_pready_list(MPI_Request request, int n, const int *parts)
{
    part_t *p;
    tern_status_t st = lookup(request, 1, &p);
    if (st == TERN_OK && n > 0 && !parts)
        st = tern_status_detail(TERN_ERR_ARG, "array_of_partitions is NULL");
    for (int k = 0; st == TERN_OK && k < n; k++) {
        char what[48];
        snprintf(what, sizeof what, "array_of_partitions[%d]", k);
        st = check_partition(p, parts[k], what);
    }
    for (int k = 0; st == TERN_OK && k < n; k++)
        st = ready(p, parts[k]);
    return st;
}

tern_status_t tern_part_parrived(MPI_Request request, int partition, int *flag)
{
    tern_req_t *req = tern_req_lookup(request);
    part_t *p;
    /* MPI-4.1: an inactive request's partitions count as arrived. */
    if (req && tern_part_is(req) && !req->active && !((part_t *)req->ext)->is_send) {
        p = req->ext;
        tern_status_t st = check_partition(p, partition, "partition");
        if (st == TERN_OK)
            *flag = 1;
        return st;
    }
    tern_status_t st = lookup(request, 0, &p);
    if (st == TERN_OK)
        st = check_partition(p, partition, "partition");
    if (st != TERN_OK)
        return st;
    if (req->complete || p->a.peer == MPI_PROC_NULL) {
        *flag = 1;
        return TERN_OK;
    }
    tern_progress();
    if (!p->posted) {
        *flag = 0;
        return TERN_OK;
    }
    /* Sender partitions overlapping bytes [lo, hi) of the receive (all of
     * them for empty partitions). */
    size_t first = (size_t)p->scan, last = (size_t)p->peer_parts - 1;
    if (p->part_bytes) {
        size_t lo = (size_t)partition * p->part_bytes, hi = lo + p->part_bytes;
        first = lo / p->peer_part_bytes;
        last = (hi - 1) / p->peer_part_bytes;
    }
    *flag = 1;
    for (size_t j = first; j <= last && j < (size_t)p->peer_parts; j++)
        if (!collect(p, (int)j)) {
            *flag = 0;
            break;
        }
    if (!*flag)
        tern_progress_test_missed();
    return TERN_OK;
}
