/* Collective schedules: building, execution, and the progress hook that
 * advances nonblocking and persistent collectives. */
#include "core/coll_sched.h"
#include "core/datatype.h"
#include "core/op.h"
#include "core/p2p.h"
#include "core/progress.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ST_SEND, ST_RECV, ST_REDUCE, ST_COPY, ST_PACK, ST_UNPACK, ST_FENCE };

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
} step_t;

struct tern_sched {
    tern_comm_t *comm;
    int tag;
    /* Where send/recv steps being added go: comm, or another communicator
     * (an intercommunicator's local_comm) with its own tag. */
    tern_comm_t *cur_comm, *alt_comm;
    int cur_tag, alt_tag;
    step_t *steps;
    size_t n_steps, cap_steps;
    size_t cur;
    tern_req_t **inflight;
    size_t n_inflight, cap_inflight;
    void **tmps;
    size_t n_tmps, cap_tmps;
    tern_status_t build_error;
    tern_status_t run_error;
    int done;
    MPI_Op held_op;                  /* user op kept alive, or MPI_OP_NULL */
    tern_req_t *req;                 /* nonblocking/persistent owner */
    tern_sched_t *prev, *next;       /* list of active nonblocking schedules */
    int in_active;
};

static tern_sched_t *active_head;
static int hook_registered;

tern_sched_t *tern_sched_create(tern_comm_t *comm)
{
    tern_sched_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    /* The schedule may outlive MPI_Comm_free (nonblocking, persistent). */
    tern_comm_retain(comm);
    s->comm = comm;
    s->held_op = MPI_OP_NULL;
    s->tag = (int)(comm->coll_seq++ & 0x3fffffffu);
    s->cur_comm = comm;
    s->cur_tag = s->tag;
    return s;
}

void tern_sched_free(tern_sched_t *s)
{
    if (!s)
        return;
    if (s->held_op != MPI_OP_NULL)
        tern_op_release(s->held_op);
    if (s->alt_comm)
        tern_comm_release(s->alt_comm);
    tern_comm_release(s->comm);
    for (size_t i = 0; i < s->n_tmps; i++)
        free(s->tmps[i]);
    free(s->tmps);
    free(s->steps);
    free(s->inflight);
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
        s->alt_tag = (int)(comm->coll_seq++ & 0x3fffffffu);
    }
    s->cur_comm = comm;
    s->cur_tag = s->alt_tag;
}

static step_t *add(tern_sched_t *s, int kind)
{
    if (s->build_error)
        return NULL;
    if (s->n_steps == s->cap_steps) {
        size_t cap = s->cap_steps ? 2 * s->cap_steps : 16;
        step_t *t = realloc(s->steps, cap * sizeof *t);
        if (!t) {
            s->build_error = TERN_ERR_NOMEM;
            return NULL;
        }
        s->steps = t;
        s->cap_steps = cap;
    }
    step_t *st = &s->steps[s->n_steps++];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    return st;
}

void tern_sched_send(tern_sched_t *s, const void *buf, size_t bytes, int peer)
{
    if (peer == MPI_PROC_NULL)
        return;
    step_t *st = add(s, ST_SEND);
    if (st) {
        st->comm = s->cur_comm;
        st->tag = s->cur_tag;
        st->src = buf;
        st->n = bytes;
        st->peer = peer;
    }
}

void tern_sched_recv(tern_sched_t *s, void *buf, size_t bytes, int peer)
{
    if (peer == MPI_PROC_NULL)
        return;
    step_t *st = add(s, ST_RECV);
    if (st) {
        st->comm = s->cur_comm;
        st->tag = s->cur_tag;
        st->dst = buf;
        st->n = bytes;
        st->peer = peer;
    }
}

void tern_sched_reduce(tern_sched_t *s, const void *in, void *inout, size_t count,
                       MPI_Datatype dt, MPI_Op op)
{
    if (count == 0)
        return;
    step_t *st = add(s, ST_REDUCE);
    if (st) {
        st->src = in;
        st->dst = inout;
        st->n = count;
        st->dt = dt;
        st->op = op;
    }
}

void tern_sched_copy(tern_sched_t *s, const void *src, void *dst, size_t bytes)
{
    if (bytes == 0 || src == dst)
        return;
    step_t *st = add(s, ST_COPY);
    if (st) {
        st->src = src;
        st->dst = dst;
        st->n = bytes;
    }
}

void tern_sched_pack(tern_sched_t *s, const void *buf, size_t count, MPI_Datatype dt, void *out)
{
    if (count == 0)
        return;
    step_t *st = add(s, ST_PACK);
    if (st) {
        st->src = buf;
        st->dst = out;
        st->n = count;
        st->dt = dt;
    }
}

void tern_sched_unpack(tern_sched_t *s, const void *in, void *buf, size_t count, MPI_Datatype dt)
{
    if (count == 0)
        return;
    step_t *st = add(s, ST_UNPACK);
    if (st) {
        st->src = in;
        st->dst = buf;
        st->n = count;
        st->dt = dt;
    }
}

void tern_sched_fence(tern_sched_t *s)
{
    /* Two fences in a row, or a fence after a local step, are no-ops. */
    if (s->n_steps && s->steps[s->n_steps - 1].kind != ST_SEND &&
        s->steps[s->n_steps - 1].kind != ST_RECV)
        return;
    add(s, ST_FENCE);
}

void *tern_sched_tmp(tern_sched_t *s, size_t bytes)
{
    if (s->build_error)
        return NULL;
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
    s->n_inflight = 0;
}

static void fail(tern_sched_t *s, tern_status_t st)
{
    if (s->run_error == TERN_OK)
        s->run_error = st;
    s->cur = s->n_steps; /* skip the rest; still wait for what is posted */
}

static void post(tern_sched_t *s, const step_t *st)
{
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
    tern_req_t *r = NULL;
    tern_status_t e =
        st->kind == ST_SEND
            ? tern_p2p_isend(st->comm, ctx, st->src, st->n, st->peer, st->tag, TERN_SEND_STANDARD, &r)
            : tern_p2p_irecv(st->comm, ctx, st->dst, st->n, st->peer, st->tag, &r);
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
            if (r->error != TERN_OK && s->run_error == TERN_OK)
                s->run_error = r->error;
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
        tern_status_t e = local_step(&s->steps[s->cur]);
        s->cur++;
        events++;
        if (e != TERN_OK)
            fail(s, e);
    }
    return events;
}

tern_status_t tern_sched_run(tern_sched_t *s)
{
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
    req->status_source = MPI_ANY_SOURCE;
    req->status_tag = MPI_ANY_TAG;
    req->status_bytes = 0;
    if (!hook_registered) {
        tern_progress_register(hook);
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
