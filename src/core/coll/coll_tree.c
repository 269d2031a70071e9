/* Bcast, reduce, scatter, gather and reduce_scatter on three or more ranks
 * as direct messages (coll_tree.h). Each function is its algorithm's
 * schedule written out: bcast_binomial.c, reduce_binomial.c,
 * scatter_linear.c, gather_linear.c, reduce_scatter_direct.c and
 * reduce_scatter_recursive_halving.c say why the messages and folds are
 * what they are. A send goes eager at once when it can (no request), else
 * through a request waited for at the end; a receive whose message is here
 * already is copied at once, else posted as a request on this stack frame
 * and waited for, since the next step needs its data. Errors are the schedule's: a bcast's receive must
 * get exactly the bytes its count describes (MPI_ERR_TRUNCATE otherwise,
 * and the steps after it still run, as the ranks below wait for them:
 * they get an empty message); any other error stops the steps. */
#include "core/coll/coll_tree.h"
#include "core/coll/coll_util.h"
#include "core/comm/comm_p2p.h"
#include "core/comm/ulfm.h"
#include "core/datatype/op.h"
#include "core/pt2pt/p2p.h"
#include "core/pt2pt/progress.h"

#include <stdint.h>
#include <string.h>

/* Sends in flight at once: a binomial rank has at most one child per bit
 * of an int; a linear root waits for the oldest when more are pending. */
#define MAX_SENDS 32

typedef struct {
    tern_comm_t *c;
    uint32_t ctx;
    int tag;
    tern_status_t st; /* the first error */
    int stop;         /* an error other than a truncation: post nothing more */
    int n_sends;      /* sends that did not go at once */
    tern_req_t *sends[MAX_SENDS];
} tree_t;

static void tree_init(tree_t *t, const tern_coll_args_t *a)
{
    t->c = a->comm;
    t->ctx = a->comm->context_id + 1;
    t->tag = tern_comm_next_coll_tag(a->comm, 1);
    t->st = TERN_OK;
    t->stop = 0;
    t->n_sends = 0;
}

static void note(tree_t *t, tern_status_t st)
{
    if (st == TERN_OK)
        return;
    if (t->st == TERN_OK)
        t->st = st;
    if (st != TERN_ERR_TRUNCATE)
        t->stop = 1;
}

/* Whether the step may run: nothing stopped it and the communicator was
 * not revoked (nor a member found failed) since the call began. */
static int step_ok(tree_t *t)
{
    if (t->stop)
        return 0;
    if (tern_ulfm_coll_stopped(t->c)) {
        note(t, tern_ulfm_coll_error(t->c));
        t->stop = 1;
        return 0;
    }
    return 1;
}

static void sends_wait(tree_t *t);

static void tree_send(tree_t *t, const void *buf, size_t n, int peer)
{
    if (!step_ok(t))
        return;
    if (t->n_sends == MAX_SENDS)
        sends_wait(t);
    if (tern_p2p_send_eager_now(t->c->rank, t->ctx, buf, n, tern_comm_world_rank(t->c, peer),
                                t->tag))
        return;
    tern_req_t *r = NULL;
    tern_status_t st = tern_comm_isend(t->c, t->ctx, buf, n, peer, t->tag, TERN_SEND_STANDARD, &r);
    if (st != TERN_OK) {
        note(t, st);
        t->stop = 1;
        return;
    }
    t->sends[t->n_sends++] = r;
}

/* Receives n bytes from peer into buf and returns when they are there;
 * exact: a message of another size is an error (bcast). */
static void tree_recv(tree_t *t, void *buf, size_t n, int peer, int exact)
{
    if (!step_ok(t))
        return;
    tern_status_t e = TERN_OK;
    if (exact) {
        tern_recv_done_t done;
        if (tern_p2p_recv_fitting_now(t->ctx, buf, n, peer, t->tag, &done)) {
            if (done.bytes != n)
                note(t, tern_coll_size_mismatch(done.bytes, n, peer));
            return;
        }
    } else if (tern_p2p_recv_eager_now(t->ctx, buf, n, peer, t->tag, &e)) {
        note(t, e);
        return;
    }
    tern_req_t r;
    tern_req_init(&r, TERN_REQ_RECV);
    r.comm = t->c->handle;
    r.context_id = t->ctx;
    r.peer = peer;
    r.tag = t->tag;
    r.buf = buf;
    r.bytes = n;
    tern_p2p_start_recv(&r);
    tern_progress_wait(&r.complete);
    if (exact && (r.error == TERN_ERR_TRUNCATE || (r.error == TERN_OK && r.status_bytes != n)))
        note(t, tern_coll_size_mismatch(r.error == TERN_OK ? r.status_bytes : SIZE_MAX, n, peer));
    note(t, r.error);
    tern_req_fini(&r);
}

static void sends_wait(tree_t *t)
{
    for (int i = 0; i < t->n_sends; i++) {
        tern_progress_wait(&t->sends[i]->complete);
        note(t, t->sends[i]->error);
        tern_req_release(t->sends[i]);
    }
    t->n_sends = 0;
}

/* Waits for the sends in flight; the first error. */
static tern_status_t tree_end(tree_t *t)
{
    sends_wait(t);
    return t->st;
}

tern_status_t tern_coll_tree_bcast(const tern_coll_args_t *a)
{
    tree_t t;
    tree_init(&t, a);
    int p = a->comm->size, vr = coll_mod(a->comm->rank - a->root, p);
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            tree_recv(&t, a->rbuf, a->bytes, (vr - mask + a->root) % p, 1);
            break;
        }
        mask <<= 1;
    }
    /* A rank that got the wrong size passes an empty message on, so that
     * the ranks below it fail too, as the schedule does. */
    size_t n = t.st == TERN_OK ? a->bytes : 0;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            tree_send(&t, a->rbuf, n, (vr + mask + a->root) % p);
    return tree_end(&t);
}

tern_status_t tern_coll_tree_reduce(const tern_coll_args_t *a)
{
    tree_t t;
    tree_init(&t, a);
    int p = a->comm->size, r = a->comm->rank;
    int pivot = a->commutative ? a->root : 0;
    int vr = coll_mod(r - pivot, p);
    size_t n = a->count * a->esz;
    _Alignas(16) char tmp[2][TERN_COLL_TREE_TMP];
    char *bufs[2] = {tmp[0], tmp[1]};
    if (r == a->root && vr == 0 && a->rbuf != a->sbuf) {
        /* As the schedule: the last partial result lands in rbuf. */
        int children = 0;
        for (int m = 1; m < p; m <<= 1)
            children++;
        bufs[(children - 1) & 1] = a->rbuf;
    }
    const char *acc = a->sbuf;
    int next = 0;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            tree_send(&t, acc, n, (vr - mask + pivot) % p);
            if (r == a->root) /* non-commutative: rank 0 has the result */
                tree_recv(&t, a->rbuf, n, pivot, 0);
            return tree_end(&t);
        }
        int child = vr + mask;
        if (child >= p)
            continue;
        char *in = bufs[next];
        tree_recv(&t, in, n, (child + pivot) % p, 0);
        if (!t.stop && a->count) /* in = acc op in */
            note(&t, tern_op_apply(a->op, a->dt, acc, in, a->count));
        acc = in;
        next ^= 1;
    }
    /* vr == 0: this rank holds the result. */
    if (r == a->root) {
        if (acc != a->rbuf && !t.stop && n)
            memmove(a->rbuf, acc, n);
    } else {
        tree_send(&t, acc, n, a->root);
    }
    return tree_end(&t);
}

tern_status_t tern_coll_tree_scatter(const tern_coll_args_t *a)
{
    tree_t t;
    tree_init(&t, a);
    int p = a->comm->size, r = a->comm->rank;
    size_t b = a->bytes;
    if (r != a->root) {
        tree_recv(&t, a->rbuf, b, a->root, 0);
        return tree_end(&t);
    }
    for (int i = 0; i < p; i++)
        if (i != r)
            tree_send(&t, (const char *)a->sbuf + (size_t)i * b, b, i);
    const char *mine = (const char *)a->sbuf + (size_t)r * b;
    if (a->rbuf != mine && b) /* not in place */
        memcpy(a->rbuf, mine, b);
    return tree_end(&t);
}

tern_status_t tern_coll_tree_gather(const tern_coll_args_t *a)
{
    tree_t t;
    tree_init(&t, a);
    int p = a->comm->size, r = a->comm->rank;
    size_t b = a->bytes;
    if (r != a->root) {
        tree_send(&t, a->sbuf, b, a->root);
        return tree_end(&t);
    }
    char *mine = (char *)a->rbuf + (size_t)r * b;
    if (a->sbuf != mine && b) /* not in place */
        memcpy(mine, a->sbuf, b);
    /* One block at a time, from the rank after the root on: a block
     * that is here (a sender ran ahead) is copied at once, else its
     * receive is posted and waited for, which polls in the blocks behind
     * it too (gather_linear.c posts all at once: the same blocks). */
    for (int k = 1; k < p && !t.stop; k++) {
        int i = (r + k) % p;
        tree_recv(&t, (char *)a->rbuf + (size_t)i * b, b, i, 0);
    }
    return tree_end(&t);
}

tern_status_t tern_coll_tree_reduce_scatter(const tern_coll_args_t *a)
{
    tree_t t;
    tree_init(&t, a);
    int p = a->comm->size, r = a->comm->rank;
    size_t e = a->esz, off = 0, mine = a->rcounts[r] * e;
    const char *own = a->sbuf;
    for (int i = 0; i < p; i++) {
        size_t n = a->rcounts[i] * e;
        if (i == r)
            own = (const char *)a->sbuf + off;
        else if (n)
            tree_send(&t, (const char *)a->sbuf + off, n, i);
        off += n;
    }
    if (!mine)
        return tree_end(&t);
    /* The left fold x_0 op x_1 op ... op x_(p-1), in rank order as the
     * schedule's, through two scratch vectors: acc is one, the next piece
     * lands in the other and becomes acc op piece. */
    _Alignas(16) char tmp[2][TERN_COLL_TREE_TMP];
    const char *acc = NULL;
    int next = 0;
    for (int i = 0; i < p && !t.stop; i++) {
        char *in = tmp[next];
        if (i != r)
            tree_recv(&t, in, mine, i, 0);
        else if (acc)
            memcpy(in, own, mine);
        else {
            acc = own; /* rank 0's own piece starts the fold */
            continue;
        }
        if (acc && !t.stop)
            note(&t, tern_op_apply(a->op, a->dt, acc, in, a->rcounts[r]));
        acc = in;
        next ^= 1;
    }
    /* In place the result overwrites the vector the sends read from. */
    tern_status_t st = tree_end(&t);
    if (st == TERN_OK)
        memcpy(a->rbuf, acc, mine);
    return st;
}

tern_status_t tern_coll_tree_reduce_scatter_halving(const tern_coll_args_t *a)
{
    tree_t t;
    tree_init(&t, a);
    int p = a->comm->size, r = a->comm->rank;
    size_t e = a->esz, n = a->count * e;
    int q = coll_pof2_floor(p), m = p - q;
    size_t off[TERN_COLL_TREE_MAX_RANKS + 1];
    off[0] = 0;
    for (int i = 0; i < p; i++)
        off[i + 1] = off[i] + a->rcounts[i];
    if (r < 2 * m && r % 2 == 0) {
        if (n)
            tree_send(&t, a->sbuf, n, r + 1);
        /* In place the segment comes back only after the partner has
         * received the vector. */
        if (a->rcounts[r])
            tree_recv(&t, a->rbuf, a->rcounts[r] * e, r + 1, 0);
        return tree_end(&t);
    }
    _Alignas(16) char work[TERN_COLL_TREE_TMP], in[TERN_COLL_TREE_TMP];
    if (n)
        memcpy(work, a->sbuf, n);
    if (r < 2 * m && n) {
        tree_recv(&t, in, n, r - 1, 0);
        if (!t.stop) /* work = in op work, as the schedule folds */
            note(&t, tern_op_apply(a->op, a->dt, in, work, a->count));
    }
    int nr = r < 2 * m ? r / 2 : r - m;
    int lo = 0, hi = q;
    for (int mask = q / 2; mask > 0 && !t.stop; mask /= 2) {
        coll_halving_step_t st = coll_halving_step(nr, mask, m, off, &lo, &hi);
        /* Send first: the partner need not wait for this rank's receive.
         * The half given is never written again. */
        if (st.give)
            tree_send(&t, work + st.give_at * e, st.give * e, st.peer);
        if (st.keep) {
            tree_recv(&t, in, st.keep * e, st.peer, 0);
            if (!t.stop)
                note(&t, tern_op_apply(a->op, a->dt, in, work + st.keep_at * e, st.keep));
        }
    }
    if (r < 2 * m && a->rcounts[r - 1])
        tree_send(&t, work + off[r - 1] * e, a->rcounts[r - 1] * e, r - 1);
    tern_status_t st = tree_end(&t);
    if (st == TERN_OK && a->rcounts[r])
        memcpy(a->rbuf, work + off[r] * e, a->rcounts[r] * e);
    return st;
}
