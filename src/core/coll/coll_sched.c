/* Collective schedules: building, execution, and the progress hook that
 * advances nonblocking and persistent collectives. */
#include "core/coll/coll_sched.h"
#include "core/datatype/datatype.h"
#include "core/datatype/op.h"
#include "core/comm/comm_p2p.h"
#include "core/comm/ulfm.h"
#include "core/pt2pt/progress.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ST_SEND, ST_RECV, ST_REDUCE, ST_COPY, ST_PACK, ST_UNPACK, ST_FENCE, ST_POLL };

typedef struct {
    uint8_t kind;
    int peer;
    int tag;
    tern_comm_t *comm;   /* send/recv: the communicator the step runs on */
    const void *src;
    void *dst;
    size_t n;            /* bytes (send, recv, copy) or elements */
    MPI_Datatype dt;
    MPI_Op op;
    tern_sched_poll_fn poll; /* ST_POLL, with ctx in dst */
} step_t;

static int step_has_type(const step_t *st)
{
    return st->kind == ST_REDUCE || st->kind == ST_PACK || st->kind == ST_UNPACK ||
           (st->kind == ST_POLL && st->dt != MPI_DATATYPE_NULL);
}

struct tern_sched {
    /* What one use sets up; a recycled schedule zeroes all of it (up to
     * `why`, which only needs its first byte). */
    tern_comm_t *comm;
    int tag;
    /* Where send/recv steps being added go: comm, or another communicator
     * (an intercommunicator's local_comm) with its own tag. */
    tern_comm_t *cur_comm, *alt_comm;
    int cur_tag, alt_tag;
    size_t n_steps, cur, n_inflight, n_tmps;
    tern_status_t build_error;
    tern_status_t run_error;
    int done;
    /* Blocking calls: every step runs as it is added (tern_sched_create with blocking set). */
    uint8_t immediate;
    uint8_t failed;                  /* immediate: a step failed, skip the rest */
    uint8_t last_kind;               /* of the last step added (fences after local steps are no-ops) */
    uint8_t exact_sizes;             /* tern_sched_exact_sizes */
    MPI_Op held_op;                  /* user op kept alive, or MPI_OP_NULL */
    tern_req_t *req;                 /* nonblocking/persistent owner */
    tern_sched_t *prev, *next;       /* list of active nonblocking schedules, or the pool */
    int in_active;
    size_t arena_used, arena_want;   /* arena_want: what the build asked for in all */
    char why[224];                   /* words for run_error, or "" */
    /* Kept across uses: the step list, the in-flight list, the list of
     * scratch blocks, and the scratch arena that tern_sched_tmp carves
     * small blocks out of (one malloc per schedule object, not per block;
     * what does not fit is malloc'ed and listed in tmps; a recycled
     * schedule grows its arena to fit arena_want). */
    step_t *steps;
    size_t cap_steps;
    tern_req_t **inflight;
    size_t cap_inflight;
    void **tmps;
    size_t cap_tmps;
    char *arena;
    size_t arena_cap;
};

static tern_sched_t *active_head;
static int hook_registered;

/* Freed schedules are kept, with their step, in-flight and scratch
 * buffers, for the next collective: a small collective then calls malloc
 * and free not at all (they were a third of a 2-rank barrier's
 * instructions). Bounded in number and in the memory each one keeps. */
enum {
    POOL_MAX = 8,
    KEEP_STEPS_MAX = 1024,
    KEEP_INFLIGHT_MAX = 1024,
    ARENA_MAX = 64 * 1024,
    ARENA_ALIGN = 16, /* malloc's alignment: reductions run on the blocks */
};
static tern_sched_t *pool;
static int n_pool;

static size_t align_up(size_t n) { return (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1); }

/* Drops what one use of s owned and keeps its buffers; 0 if s should
 * rather be freed (too big to keep, or the pool is full). */
static int recycle(tern_sched_t *s)
{
    for (size_t i = 0; i < s->n_tmps; i++)
        free(s->tmps[i]);
    if (n_pool >= POOL_MAX || s->cap_steps > KEEP_STEPS_MAX || s->cap_inflight > KEEP_INFLIGHT_MAX)
        return 0;
    if (s->arena_want > s->arena_cap && s->arena_want <= ARENA_MAX) {
        size_t cap = 256;
        while (cap < s->arena_want)
            cap *= 2;
        char *a = malloc(cap);
        if (a) {
            free(s->arena);
            s->arena = a;
            s->arena_cap = cap;
        }
    }
    memset(s, 0, offsetof(tern_sched_t, why));
    s->why[0] = 0;
    s->held_op = MPI_OP_NULL;
    s->next = pool;
    pool = s;
    n_pool++;
    return 1;
}

tern_sched_t *tern_sched_create(tern_comm_t *comm, int blocking)
{
    tern_sched_t *s = pool;
    if (s) {
        pool = s->next;
        s->next = NULL;
        n_pool--;
    } else if (!(s = calloc(1, sizeof *s))) {
        return NULL;
    }
    /* The schedule may outlive MPI_Comm_free (nonblocking, persistent). */
    tern_comm_retain(comm);
    s->comm = comm;
    s->held_op = MPI_OP_NULL;
    s->immediate = blocking;
    s->tag = tern_comm_next_coll_tag(comm, blocking);
    s->cur_comm = comm;
    s->cur_tag = s->tag;
    return s;
}

static void wait_inflight(tern_sched_t *s);

void tern_sched_free(tern_sched_t *s)
{
    if (!s)
        return;
    /* An immediate schedule abandoned after an error may have transfers in
     * flight into its scratch memory. */
    if (s->immediate && s->n_inflight)
        wait_inflight(s);
    if (s->held_op != MPI_OP_NULL)
        tern_op_release(s->held_op);
    for (size_t i = 0; i < s->n_steps; i++)
        if (step_has_type(&s->steps[i]))
            tern_datatype_release(s->steps[i].dt);
    if (s->alt_comm)
        tern_comm_release(s->alt_comm);
    tern_comm_release(s->comm);
    if (recycle(s))
        return;
    free(s->tmps);
    free(s->steps);
    free(s->inflight);
    free(s->arena);
    free(s);
}

tern_status_t tern_sched_error(const tern_sched_t *s) { return s->build_error; }

void tern_sched_hold_op(tern_sched_t *s, MPI_Op op)
{
    if (s->held_op != MPI_OP_NULL)
        tern_op_release(s->held_op);
    tern_op_retain(op);
    s->held_op = op;
}

void tern_sched_use_comm(tern_sched_t *s, tern_comm_t *comm)
{
    if (comm == s->comm) {
        s->cur_comm = comm;
        s->cur_tag = s->tag;
        return;
    }
    if (comm != s->alt_comm) {
        /* Every member of comm builds this schedule at the same point of
         * its collective sequence, so the numbers agree. One alternative
         * communicator per schedule. */
        if (s->alt_comm)
            tern_comm_release(s->alt_comm);
        tern_comm_retain(comm);
        s->alt_comm = comm;
        s->alt_tag = tern_comm_next_coll_tag(comm, s->immediate);
    }
    s->cur_comm = comm;
    s->cur_tag = s->alt_tag;
}

static void run_now(tern_sched_t *s, const step_t *st);

/* Appends a step, or (immediate schedules) runs it at once. */
static void push(tern_sched_t *s, const step_t *st)
{
    s->last_kind = st->kind;
    if (s->immediate) {
        run_now(s, st);
        return;
    }
    if (s->build_error)
        return;
    if (s->n_steps == s->cap_steps) {
        size_t cap = s->cap_steps ? 2 * s->cap_steps : 16;
        step_t *t = realloc(s->steps, cap * sizeof *t);
        if (!t) {
            s->build_error = TERN_ERR_NOMEM;
            return;
        }
        s->steps = t;
        s->cap_steps = cap;
    }
    s->steps[s->n_steps++] = *st;
    /* A stored step outlives the call: the user may free its datatype
     * before the collective completes (MPI_Type_free marks it only). */
    if (step_has_type(st))
        tern_datatype_retain(st->dt);
}

void tern_sched_send(tern_sched_t *s, const void *buf, size_t bytes, int peer)
{
    if (peer == MPI_PROC_NULL)
        return;
    push(s, &(step_t){.kind = ST_SEND, .comm = s->cur_comm, .tag = s->cur_tag, .src = buf,
                      .n = bytes, .peer = peer});
}

void tern_sched_recv(tern_sched_t *s, void *buf, size_t bytes, int peer)
{
    if (peer == MPI_PROC_NULL)
        return;
    push(s, &(step_t){.kind = ST_RECV, .comm = s->cur_comm, .tag = s->cur_tag, .dst = buf,
                      .n = bytes, .peer = peer});
}

void tern_sched_reduce(tern_sched_t *s, const void *in, void *inout, size_t count,
                       MPI_Datatype dt, MPI_Op op)
{
    if (count == 0)
        return;
    push(s, &(step_t){.kind = ST_REDUCE, .src = in, .dst = inout, .n = count, .dt = dt, .op = op});
}

void tern_sched_copy(tern_sched_t *s, const void *src, void *dst, size_t bytes)
{
    if (bytes == 0 || src == dst)
        return;
    push(s, &(step_t){.kind = ST_COPY, .src = src, .dst = dst, .n = bytes});
}

void tern_sched_pack(tern_sched_t *s, const void *buf, size_t count, MPI_Datatype dt, void *out)
{
    if (count == 0)
        return;
    push(s, &(step_t){.kind = ST_PACK, .src = buf, .dst = out, .n = count, .dt = dt});
}

void tern_sched_unpack(tern_sched_t *s, const void *in, void *buf, size_t count, MPI_Datatype dt)
{
    if (count == 0)
        return;
    push(s, &(step_t){.kind = ST_UNPACK, .src = in, .dst = buf, .n = count, .dt = dt});
}

void tern_sched_poll(tern_sched_t *s, tern_sched_poll_fn fn, void *ctx, MPI_Datatype dt)
{
    push(s, &(step_t){.kind = ST_POLL, .poll = fn, .dst = ctx, .dt = dt});
}

void tern_sched_fence(tern_sched_t *s)
{
    /* Two fences in a row, or a fence after a local step, are no-ops. A
     * schedule's first step may be a fence (a no-op too). */
    if (s->last_kind != ST_SEND && s->last_kind != ST_RECV)
        return;
    push(s, &(step_t){.kind = ST_FENCE});
}

void *tern_sched_tmp(tern_sched_t *s, size_t bytes)
{
    if (s->build_error)
        return NULL;
    size_t need = align_up(bytes ? bytes : 1);
    s->arena_want += need;
    if (need <= s->arena_cap - s->arena_used) {
        void *p = s->arena + s->arena_used;
        s->arena_used += need;
        return p;
    }
    if (s->n_tmps == s->cap_tmps) {
        size_t cap = s->cap_tmps ? 2 * s->cap_tmps : 4;
        void **t = realloc(s->tmps, cap * sizeof *t);
        if (!t) {
            s->build_error = TERN_ERR_NOMEM;
            return NULL;
        }
        s->tmps = t;
        s->cap_tmps = cap;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        s->build_error = TERN_ERR_NOMEM;
        return NULL;
    }
    s->tmps[s->n_tmps++] = p;
    return p;
}

/* ---- execution -------------------------------------------------------- */

static void reset(tern_sched_t *s)
{
    s->cur = 0;
    s->done = 0;
    s->run_error = TERN_OK;
    s->why[0] = 0;
    s->failed = 0;
    s->n_inflight = 0;
}

static void fail(tern_sched_t *s, tern_status_t st)
{
    if (s->run_error == TERN_OK)
        s->run_error = st;
    s->cur = s->n_steps; /* skip the rest; still wait for what is posted */
    s->failed = 1;
}

void tern_sched_note(tern_sched_t *s, const char *fmt, ...)
{
    if (s->run_error != TERN_OK || s->why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
}

/* An exact-size schedule's receive got `got` bytes (SIZE_MAX: more than it
 * holds) where `want` were due. */
static __attribute__((cold)) void size_mismatch(tern_sched_t *s, size_t got, size_t want, int peer)
{
    if (s->run_error != TERN_OK)
        return;
    s->run_error = TERN_ERR_TRUNCATE;
    if (got == SIZE_MAX)
        snprintf(s->why, sizeof s->why,
                 "rank %d sent more than the %zu bytes this rank's count and datatype describe: "
                 "they must describe the same amount of data on every rank",
                 peer, want);
    else
        snprintf(s->why, sizeof s->why,
                 "rank %d sent %zu bytes where this rank's count and datatype describe %zu: they "
                 "must describe the same amount of data on every rank",
                 peer, got, want);
}

static void post(tern_sched_t *s, const step_t *st)
{
    /* A revoked communicator, or one with a member known failed: no
     * transfer is posted (a member that gave up never answers). The steps
     * of an intercommunicator's collective on its local group check the
     * intercommunicator too (its failed member may be in the other group). */
    if (tern_ulfm_coll_stopped(st->comm)) {
        fail(s, tern_ulfm_coll_error(st->comm));
        return;
    }
    if (tern_ulfm_coll_stopped(s->comm)) {
        fail(s, tern_ulfm_coll_error(s->comm));
        return;
    }
    if (s->n_inflight == s->cap_inflight) {
        size_t cap = s->cap_inflight ? 2 * s->cap_inflight : 8;
        tern_req_t **t = realloc(s->inflight, cap * sizeof *t);
        if (!t) {
            fail(s, TERN_ERR_NOMEM);
            return;
        }
        s->inflight = t;
        s->cap_inflight = cap;
    }
    uint32_t ctx = st->comm->context_id + 1;
    /* A small send goes straight into the transport, a receive whose
     * message already arrived is copied at once, when they can: no request
     * to allocate, track and release. */
    tern_status_t e = TERN_OK;
    size_t n = st->n;
    if (__builtin_expect(s->exact_sizes, 0)) {
        /* A rank that got the wrong size passes it on as an empty message,
         * so that the ranks below it fail too (MPICH's errflag). */
        if (st->kind == ST_SEND && s->run_error != TERN_OK)
            n = 0;
        tern_recv_done_t done;
        if (st->kind == ST_RECV &&
            tern_p2p_recv_fitting_now(ctx, st->dst, st->n, st->peer, st->tag, &done)) {
            if (done.bytes != st->n)
                size_mismatch(s, done.bytes, st->n, st->peer);
            return;
        }
    }
    /* (An exact-size receive that did not fit is posted: reap says why.) */
    if (st->kind == ST_SEND
            ? tern_p2p_send_eager_now(st->comm->rank, ctx, st->src, n,
                                      tern_comm_world_rank(st->comm, st->peer), st->tag)
            : !s->exact_sizes && tern_p2p_recv_eager_now(ctx, st->dst, st->n, st->peer, st->tag, &e)) {
        if (e != TERN_OK && s->run_error == TERN_OK)
            s->run_error = e; /* as reap records a failed transfer */
        return;
    }
    tern_req_t *r = NULL;
    e =
        st->kind == ST_SEND
            ? tern_comm_isend(st->comm, ctx, st->src, n, st->peer, st->tag, TERN_SEND_STANDARD, &r)
            : tern_comm_irecv(st->comm, ctx, st->dst, st->n, st->peer, st->tag, &r);
    if (e != TERN_OK) {
        fail(s, e);
        return;
    }
    s->inflight[s->n_inflight++] = r;
}

/* Releases completed transfers; 1 if none is left in flight. */
static int reap(tern_sched_t *s, int *events)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n_inflight; i++) {
        tern_req_t *r = s->inflight[i];
        if (r->complete) {
            if (__builtin_expect(s->exact_sizes, 0) && r->kind == TERN_REQ_RECV &&
                (r->error == TERN_ERR_TRUNCATE || (r->error == TERN_OK && r->status_bytes != r->bytes)))
                size_mismatch(s, r->error == TERN_OK ? r->status_bytes : SIZE_MAX, r->bytes,
                              r->status_source);
            if (r->error != TERN_OK && s->run_error == TERN_OK)
                s->run_error = r->error;
            /* A failed peer: post nothing more, so that no rank completes
             * a collective that the dead one never entered. */
            if (r->error != TERN_OK && r->error != TERN_ERR_TRUNCATE)
                fail(s, r->error);
            tern_req_release(r);
            ++*events;
        } else {
            s->inflight[k++] = r;
        }
    }
    s->n_inflight = k;
    return k == 0;
}

static tern_status_t local_step(const step_t *st)
{
    switch (st->kind) {
    case ST_REDUCE: return tern_op_apply(st->op, st->dt, st->src, st->dst, st->n);
    case ST_COPY: memmove(st->dst, st->src, st->n); return TERN_OK;
    case ST_PACK: return tern_datatype_pack(st->src, st->n, st->dt, st->dst);
    case ST_UNPACK:
        return tern_datatype_unpack(st->src, tern_datatype_packed_size(st->dt, st->n), st->dst,
                                    st->n, st->dt);
    default: return TERN_OK; /* fence */
    }
}

/* Moves the schedule as far as it can without waiting; returns events. */
static int advance(tern_sched_t *s)
{
    int events = 0;
    while (!s->done) {
        if (s->cur < s->n_steps &&
            (s->steps[s->cur].kind == ST_SEND || s->steps[s->cur].kind == ST_RECV)) {
            post(s, &s->steps[s->cur]);
            if (s->cur < s->n_steps)
                s->cur++;
            events++;
            continue;
        }
        if (!reap(s, &events))
            break;
        if (s->cur == s->n_steps) {
            s->done = 1;
            events++;
            break;
        }
        const step_t *st = &s->steps[s->cur];
        if (st->kind == ST_POLL) {
            tern_status_t e = TERN_OK;
            if (!st->poll(st->dst, &e))
                break; /* again at the next progress */
            s->cur++;
            events++;
            if (e != TERN_OK)
                fail(s, e);
            continue;
        }
        tern_status_t e = local_step(st);
        s->cur++;
        events++;
        if (e != TERN_OK)
            fail(s, e);
    }
    return events;
}

/* Immediate schedules: waits for every transfer posted so far. */
static void wait_inflight(tern_sched_t *s)
{
    unsigned idle = 0;
    int events = 0;
    while (!reap(s, &events))
        if (tern_progress() == 0)
            tern_progress_idle(&idle);
}

/* Immediate schedules run each step as it is added, in the order a
 * deferred run would: sends and receives are posted at once, a local step
 * or a fence first waits for every posted transfer. */
static void run_now(tern_sched_t *s, const step_t *st)
{
    if (s->failed || s->build_error)
        return;
    if (st->kind == ST_SEND || st->kind == ST_RECV) {
        post(s, st);
        return;
    }
    wait_inflight(s);
    tern_status_t e = TERN_OK;
    if (st->kind == ST_POLL) {
        unsigned idle = 0;
        while (!st->poll(st->dst, &e))
            if (tern_progress() == 0)
                tern_progress_idle(&idle);
    } else {
        e = local_step(st);
    }
    if (e != TERN_OK)
        fail(s, e);
}

void tern_sched_exact_sizes(tern_sched_t *s) { s->exact_sizes = 1; }

tern_status_t tern_sched_run(tern_sched_t *s)
{
    if (s->immediate) {
        wait_inflight(s);
        s->done = 1;
        if (!s->build_error && s->why[0])
            return tern_status_detail(s->run_error, "%s", s->why);
        return s->build_error ? s->build_error : s->run_error;
    }
    if (s->build_error)
        return s->build_error;
    reset(s);
    unsigned idle = 0;
    for (;;) {
        int ev = advance(s);
        if (s->done)
            break;
        if (ev + tern_progress() == 0)
            tern_progress_idle(&idle);
    }
    if (s->why[0])
        return tern_status_detail(s->run_error, "%s", s->why);
    return s->run_error;
}

/* ---- nonblocking ------------------------------------------------------ */

static void unlink_active(tern_sched_t *s)
{
    if (!s->in_active)
        return;
    if (s->prev)
        s->prev->next = s->next;
    else
        active_head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->in_active = 0;
}

static void finish(tern_sched_t *s)
{
    unlink_active(s);
    tern_req_t *req = s->req;
    req->error = s->run_error;
    req->error_text = s->why[0] ? s->why : NULL; /* s lives until req is released */
    tern_req_complete(req); /* may release req and free s */
}

static int hook(void)
{
    int events = 0;
    tern_sched_t *s = active_head;
    while (s) {
        tern_sched_t *next = s->next;
        events += advance(s);
        if (s->done)
            finish(s);
        s = next;
    }
    return events;
}

static tern_status_t start_fn(tern_req_t *req)
{
    tern_sched_t *s = req->ext;
    if (s->build_error)
        return s->build_error;
    reset(s);
    s->req = req;
    req->error_text = NULL;
    req->status_source = MPI_ANY_SOURCE;
    req->status_tag = MPI_ANY_TAG;
    req->status_bytes = 0;
    if (!hook_registered) {
        tern_status_t st = tern_progress_register(hook);
        if (st != TERN_OK)
            return st;
        hook_registered = 1;
    }
    s->prev = NULL;
    s->next = active_head;
    if (active_head)
        active_head->prev = s;
    active_head = s;
    s->in_active = 1;
    /* Post the first round now, so the transfers overlap the caller's work. */
    advance(s);
    if (s->done)
        finish(s);
    return TERN_OK;
}

static void release_fn(tern_req_t *req)
{
    tern_sched_t *s = req->ext;
    if (!s)
        return;
    unlink_active(s);
    tern_sched_free(s);
    req->ext = NULL;
}

tern_status_t tern_sched_request(tern_sched_t *s, int persistent, tern_req_t **req_p)
{
    if (s->build_error)
        return s->build_error;
    tern_req_t *req = tern_req_alloc(TERN_REQ_GENERIC);
    if (!req)
        return TERN_ERR_NOMEM;
    req->comm = s->comm->handle;
    req->ext = s;
    req->start_fn = start_fn;
    req->release_fn = release_fn;
    if (persistent) {
        req->persistent = 1;
        req->complete = 1;
    } else {
        start_fn(req);
    }
    *req_p = req;
    return TERN_OK;
}
