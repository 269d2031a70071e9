/* Collective entry points: turn the user's buffers into contiguous packed
 * views (packing and unpacking around the algorithm when a type is not
 * contiguous), handle MPI_IN_PLACE, select an algorithm, build its
 * schedule and run or start it. */
#include "core/coll/coll.h"
#include "core/coll/coll_pair.h"
#include "core/coll/coll_prep.h"
#include "core/coll/coll_tree.h"
#include "core/coll/pair_get.h"
#include "core/coll/pair_line.h"
#include "core/coll/shm_coll.h"
#include "core/comm/ulfm.h"
#include "core/datatype/datatype.h"
#include "core/datatype/op.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

void tern_coll_count_watched(unsigned algo, const tern_comm_t *comm, size_t msg_bytes)
{
    unsigned w = tern_watching();
    if (w & TERN_WATCH_PROFILE)
        tern_profile_coll_count(algo, msg_bytes);
    if (w & TERN_WATCH_COLL_EVENT)
        tern_event4(TERN_EVENT_COLL_ALGORITHM_CHOSEN, algo, comm->size, msg_bytes, 0);
    if (w & TERN_WATCH_OBJECTS)
        tern_pvar_obj_add(comm, TERN_PVAR_COMM_COLL_CALLS, 1);
}

static void *inout_view(prep_t *pr, void *buf, size_t count, MPI_Datatype dt)
{
    if (count == 0 || tern_datatype_is_contig(dt))
        return offset(buf, tern_datatype_true_lb(dt));
    void *t = (void *)(uintptr_t)in_view(pr, buf, count, dt);
    if (t)
        add_out(pr, t, buf, count, dt);
    return t;
}

/* A private copy of a read view (in-place alltoall: the algorithms read
 * the send blocks while writing the receive blocks). */
static const void *copy_view(prep_t *pr, const void *view, size_t bytes)
{
    void *t = tern_sched_tmp(pr->s, bytes);
    if (t)
        tern_sched_copy(pr->s, view, t, bytes);
    return t;
}

/* Selects, builds, appends the unpacks and launches. */
static tern_status_t finish_chosen(prep_t *pr, tern_coll_args_t *a, tern_coll_kind_t kind,
                                   size_t msg_bytes, tern_req_t **req_p, int persistent,
                                   const tern_coll_algo_t *chosen);

static tern_status_t finish(prep_t *pr, tern_coll_args_t *a, tern_coll_kind_t kind,
                            size_t msg_bytes, tern_req_t **req_p, int persistent)
{
    return finish_chosen(pr, a, kind, msg_bytes, req_p, persistent, NULL);
}

tern_status_t tern_coll_finish(prep_t *pr, tern_coll_args_t *a, tern_coll_kind_t kind,
                               size_t msg_bytes, tern_req_t **req_p, int persistent)
{
    return finish_chosen(pr, a, kind, msg_bytes, req_p, persistent, NULL);
}

/* A blocking 2-rank allreduce, allgather, alltoall or reduce_scatter(_block)
 * of the pair algorithm small enough for the exchange line (pair_line.h),
 * reaching the scheduled path with packed views (a strided type on this
 * rank): the line serves it too when it would serve the other rank's
 * contiguous call, which must meet this one there. A reduce_scatter's
 * bytes are its whole vector: the line takes a segment (its own test). */
static tern_status_t pair_line_packed(const tern_coll_args_t *a, tern_coll_kind_t kind,
                                      unsigned id, size_t bytes, int *served)
{
    int rs = (kind == TERN_COLL_REDUCE_SCATTER && id == TERN_COLL_ALGO_reduce_scatter_direct) ||
             (kind == TERN_COLL_REDUCE_SCATTER_BLOCK &&
              id == TERN_COLL_ALGO_reduce_scatter_block_direct);
    *served = a->blocking && (rs || bytes <= TERN_PAIR_WIDE_MAX) && a->comm->size == 2 &&
              !a->comm->is_inter &&
              ((kind == TERN_COLL_ALLREDUCE && id == TERN_COLL_ALGO_allreduce_recursive_doubling) ||
               (kind == TERN_COLL_ALLGATHER && id == TERN_COLL_ALGO_allgather_recursive_doubling) ||
               (kind == TERN_COLL_ALLTOALL && id == TERN_COLL_ALGO_alltoall_pairwise) || rs);
    if (!*served)
        return TERN_OK;
    return tern_coll_pair_line(a, kind, served);
}

/* As finish, with the algorithm already chosen for these arguments (the
 * two-rank test below) when chosen is not NULL. */
static tern_status_t finish_chosen(prep_t *pr, tern_coll_args_t *a, tern_coll_kind_t kind,
                                   size_t msg_bytes, tern_req_t **req_p, int persistent,
                                   const tern_coll_algo_t *chosen)
{
    tern_status_t st = tern_sched_error(pr->s);
    a->blocking = !req_p;
    /* ULFM: on a revoked communicator, or one with a member known
     * failed, every collective fails at once (its schedule's transfers and
     * shared-memory waits check again while it runs). */
    if (__builtin_expect(a->comm->revoked | a->comm->n_failed, 0) && st == TERN_OK)
        st = tern_ulfm_coll_error(a->comm);
    if (st == TERN_OK) {
        const tern_coll_algo_t *al = chosen ? chosen : tern_coll_select(a, kind, msg_bytes);
        int served = 0;
        if (al) {
            tern_coll_count(al, a->comm, msg_bytes);
            st = pair_line_packed(a, kind, al->index, msg_bytes, &served);
            /* Large 2-rank allgather and alltoall by one CMA read, when
             * TERN_COLL_PAIR_GET takes them (pair_get.h). */
            if (!served && st == TERN_OK && a->blocking && a->comm->size == 2 &&
                !a->comm->is_inter && a->bytes >= TERN_PAIR_GET_LEAST)
                st = tern_pair_get(a, kind, &served);
        }
        if (!served)
            st = al ? al->build(pr->s, a) : TERN_ERR_NOT_SUPPORTED;
    }
    for (int i = 0; st == TERN_OK && i < pr->n_outs; i++)
        tern_sched_unpack(pr->s, pr->outs[i].tmp, pr->outs[i].buf, pr->outs[i].count,
                          pr->outs[i].dt);
    if (st == TERN_OK)
        st = tern_sched_error(pr->s);
    if (st != TERN_OK) {
        tern_sched_free(pr->s);
        return st;
    }
    return tern_coll_launch(pr->s, req_p, persistent);
}

tern_status_t tern_coll_launch(tern_sched_t *s, tern_req_t **req_p, int persistent)
{
    tern_status_t st;
    if (!req_p) {
        st = tern_sched_run(s);
        tern_sched_free(s);
        return st;
    }
    st = tern_sched_request(s, persistent, req_p);
    if (st != TERN_OK)
        tern_sched_free(s);
    return st;
}

/* Two ranks, blocking (coll_pair.h): an intracommunicator neither revoked
 * nor with a member known failed (those take the schedule, which fails
 * them with its words). One test for every other call. */
static inline int pair_call(const tern_comm_t *c, tern_req_t **req_p)
{
    return !req_p && c->size == 2 && !c->is_inter && !(c->revoked | c->n_failed);
}

/* Three or more ranks, blocking (coll_tree.h): the same tests as
 * pair_call. */
static inline int tree_call(const tern_comm_t *c, tern_req_t **req_p)
{
    return !req_p && c->size > 2 && !c->is_inter && !(c->revoked | c->n_failed);
}

/* dt described when it is contiguous (a valid type: the MPI layer checked
 * it): one lookup for its size, true lower bound and extent; the common
 * predefined types inline, without the call (~35 instructions a type). */
static inline __attribute__((always_inline)) int pair_contig(MPI_Datatype dt, tern_dt_desc_t *d)
{
    if (__builtin_expect(tern_datatype_is_plain(dt), 1)) {
        d->size = d->extent = tern_datatype_plain_size(dt);
        d->true_lb = 0;
        d->contig = d->predefined = 1;
        return 1;
    }
    return tern_datatype_describe(dt, d) && d->contig;
}

/* Whether the table chose algorithm id for a, the case a pair function
 * writes out when it fits (its scratch); counted then, as finish() counts
 * the schedule's. Otherwise *chosen keeps the choice, and a its views,
 * for finish_chosen (no second selection or datatype lookup). */
static int pair_chosen(tern_coll_args_t *a, tern_coll_kind_t kind, size_t msg_bytes, unsigned id,
                       int fits, const tern_coll_algo_t **chosen)
{
    a->blocking = 1;
    const tern_coll_algo_t *al = tern_coll_select(a, kind, msg_bytes);
    if (!al || al->index != id || !fits) {
        *chosen = al;
        return 0;
    }
    tern_coll_count(al, a->comm, msg_bytes);
    return 1;
}

/* Two ranks, contiguous receive blocks and a send describing the same
 * bytes (or MPI_IN_PLACE): a gets one block's size and the buffers at
 * their true lower bounds, sbuf in place being the receive buffer. */
static int pair_blocks(tern_coll_args_t *a, tern_comm_t *c, tern_req_t **req_p, const void *sbuf,
                       size_t scount, MPI_Datatype stype, void *rbuf, size_t rcount,
                       MPI_Datatype rtype)
{
    tern_dt_desc_t sd, rd;
    if (!pair_call(c, req_p) || !pair_contig(rtype, &rd) ||
        (sbuf != MPI_IN_PLACE &&
         !(pair_contig(stype, &sd) && (size_t)sd.size * scount == (size_t)rd.size * rcount)))
        return 0;
    args_init(a, c);
    a->bytes = (size_t)rd.size * rcount;
    a->rbuf = offset(rbuf, rd.true_lb);
    a->sbuf = sbuf == MPI_IN_PLACE ? a->rbuf : offset(sbuf, sd.true_lb);
    return 1;
}

tern_status_t tern_coll_ibarrier(tern_comm_t *c, tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    const tern_coll_algo_t *chosen = NULL;
    /* Blocking on shm: the run without a schedule (shm_coll.h); revoked
     * communicators and known failures take the schedule's words. */
    if (!req_p && !c->is_inter && !(c->revoked | c->n_failed)) {
        args_init(&a, c);
        a.blocking = 1;
        chosen = tern_coll_select(&a, TERN_COLL_BARRIER, 0);
        if (chosen && chosen->index == TERN_COLL_ALGO_barrier_shm) {
            int served;
            tern_status_t st = tern_shm_barrier_now(&a, &served);
            if (served) {
                tern_coll_count(chosen, c, 0);
                return st;
            }
        }
    }
    PREP(pr, c, 0, req_p);
    if (chosen)
        return finish_chosen(&pr, &a, TERN_COLL_BARRIER, 0, req_p, persistent, chosen);
    args_init(&a, c);
    return finish(&pr, &a, TERN_COLL_BARRIER, 0, req_p, persistent);
}

tern_status_t tern_coll_barrier(tern_comm_t *c) { return tern_coll_ibarrier(c, NULL, 0); }

tern_status_t tern_coll_bcast(tern_comm_t *c, void *buf, size_t count, MPI_Datatype dt, int root,
                              tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    tern_dt_desc_t d;
    const tern_coll_algo_t *chosen = NULL;
    if ((pair_call(c, req_p) || tree_call(c, req_p)) && pair_contig(dt, &d)) {
        args_init(&a, c);
        a.root = root;
        a.bytes = (size_t)d.size * count;
        a.rbuf = offset(buf, d.true_lb);
        if (pair_chosen(&a, TERN_COLL_BCAST, a.bytes, TERN_COLL_ALGO_bcast_binomial, 1, &chosen))
            return c->size == 2 ? tern_coll_pair_bcast(&a) : tern_coll_tree_bcast(&a);
        if (c->size > 2)
            chosen = NULL; /* the scheduled path selects with its own views */
    }
    PREP(pr, c, 1, req_p);
    /* Counts that differ between ranks are caught (MPICH's bcastlength). */
    tern_sched_exact_sizes(pr.s);
    if (chosen) /* two ranks, contiguous: a holds the view already */
        return finish_chosen(&pr, &a, TERN_COLL_BCAST, a.bytes, req_p, persistent, chosen);
    args_init(&a, c);
    a.root = root;
    /* An MPI_PROC_NULL rank's other arguments are not significant. */
    if (c->is_inter && root == MPI_PROC_NULL)
        count = 0;
    a.bytes = tern_datatype_packed_size(dt, count);
    int sender = c->is_inter ? root == MPI_ROOT : c->rank == root;
    if (c->is_inter && root == MPI_PROC_NULL)
        a.rbuf = NULL;
    else
        a.rbuf = sender ? (void *)(uintptr_t)in_view(&pr, buf, count, dt)
                        : out_view(&pr, buf, count, dt);
    return finish(&pr, &a, TERN_COLL_BCAST, a.bytes, req_p, persistent);
}

tern_status_t tern_coll_gather(tern_comm_t *c, const void *sbuf, size_t scount, MPI_Datatype stype,
                               void *rbuf, size_t rcount, MPI_Datatype rtype, int root,
                               tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    tern_dt_desc_t sd, rd;
    const tern_coll_algo_t *chosen = NULL;
    if ((pair_call(c, req_p) || tree_call(c, req_p)) &&
        (c->rank == root ? pair_contig(rtype, &rd) && (sbuf == MPI_IN_PLACE || pair_contig(stype, &sd))
                         : pair_contig(stype, &sd))) {
        args_init(&a, c);
        a.root = root;
        if (c->rank == root) {
            a.bytes = (size_t)rd.size * rcount;
            a.rbuf = offset(rbuf, rd.true_lb);
            a.sbuf = sbuf == MPI_IN_PLACE
                         ? offset((char *)rbuf + (size_t)root * rcount * (size_t)rd.extent, rd.true_lb)
                         : offset(sbuf, sd.true_lb);
        } else {
            a.bytes = (size_t)sd.size * scount;
            a.sbuf = offset(sbuf, sd.true_lb);
        }
        /* Two ranks: binomial's one message; more: linear's p - 1. */
        if (c->size == 2 && pair_chosen(&a, TERN_COLL_GATHER, a.bytes,
                                        TERN_COLL_ALGO_gather_binomial, 1, &chosen))
            return tern_coll_pair_gather(&a);
        if (c->size > 2 && pair_chosen(&a, TERN_COLL_GATHER, a.bytes,
                                       TERN_COLL_ALGO_gather_linear, 1, &chosen))
            return tern_coll_tree_gather(&a);
    }
    PREP(pr, c, 1, req_p);
    if (chosen) /* contiguous: a holds the views already */
        return finish_chosen(&pr, &a, TERN_COLL_GATHER, a.bytes, req_p, persistent, chosen);
    args_init(&a, c);
    a.root = root;
    if (c->is_inter) {
        if (root == MPI_ROOT) {
            a.bytes = tern_datatype_packed_size(rtype, rcount);
            a.rbuf = out_view(&pr, rbuf, rcount * (size_t)c->remote_size, rtype);
        } else if (root != MPI_PROC_NULL) {
            a.bytes = tern_datatype_packed_size(stype, scount);
            a.sbuf = in_view(&pr, sbuf, scount, stype);
        }
    } else if (c->rank == root) {
        size_t ext = (size_t)tern_datatype_extent(rtype);
        a.bytes = tern_datatype_packed_size(rtype, rcount);
        a.rbuf = out_view(&pr, rbuf, rcount * (size_t)c->size, rtype);
        a.sbuf = sbuf == MPI_IN_PLACE
                     ? in_view(&pr, (char *)rbuf + (size_t)root * rcount * ext, rcount, rtype)
                     : in_view(&pr, sbuf, scount, stype);
    } else {
        a.bytes = tern_datatype_packed_size(stype, scount);
        a.sbuf = in_view(&pr, sbuf, scount, stype);
    }
    return finish(&pr, &a, TERN_COLL_GATHER, a.bytes, req_p, persistent);
}

tern_status_t tern_coll_scatter(tern_comm_t *c, const void *sbuf, size_t scount,
                                MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype,
                                int root, tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    tern_dt_desc_t sd, rd;
    const tern_coll_algo_t *chosen = NULL;
    if ((pair_call(c, req_p) || tree_call(c, req_p)) &&
        (c->rank == root ? pair_contig(stype, &sd) && (rbuf == MPI_IN_PLACE || pair_contig(rtype, &rd))
                         : pair_contig(rtype, &rd))) {
        args_init(&a, c);
        a.root = root;
        if (c->rank == root) {
            a.bytes = (size_t)sd.size * scount;
            a.sbuf = offset(sbuf, sd.true_lb);
            a.rbuf = rbuf == MPI_IN_PLACE ? offset(a.sbuf, (MPI_Aint)((size_t)root * a.bytes))
                                          : offset(rbuf, rd.true_lb);
        } else {
            a.bytes = (size_t)rd.size * rcount;
            a.rbuf = offset(rbuf, rd.true_lb);
        }
        /* Two ranks: binomial's one message; more: linear's p - 1. */
        if (c->size == 2 && pair_chosen(&a, TERN_COLL_SCATTER, a.bytes,
                                        TERN_COLL_ALGO_scatter_binomial, 1, &chosen))
            return tern_coll_pair_scatter(&a);
        if (c->size > 2 && pair_chosen(&a, TERN_COLL_SCATTER, a.bytes,
                                       TERN_COLL_ALGO_scatter_linear, 1, &chosen))
            return tern_coll_tree_scatter(&a);
    }
    PREP(pr, c, 1, req_p);
    if (chosen) /* contiguous: a holds the views already */
        return finish_chosen(&pr, &a, TERN_COLL_SCATTER, a.bytes, req_p, persistent, chosen);
    args_init(&a, c);
    a.root = root;
    if (c->is_inter) {
        if (root == MPI_ROOT) {
            a.bytes = tern_datatype_packed_size(stype, scount);
            a.sbuf = in_view(&pr, sbuf, scount * (size_t)c->remote_size, stype);
        } else if (root != MPI_PROC_NULL) {
            a.bytes = tern_datatype_packed_size(rtype, rcount);
            a.rbuf = out_view(&pr, rbuf, rcount, rtype);
        }
    } else if (c->rank == root) {
        a.bytes = tern_datatype_packed_size(stype, scount);
        a.sbuf = in_view(&pr, sbuf, scount * (size_t)c->size, stype);
        /* In place: the root's block stays where it is. */
        a.rbuf = rbuf == MPI_IN_PLACE ? offset(a.sbuf, (MPI_Aint)((size_t)root * a.bytes))
                                      : out_view(&pr, rbuf, rcount, rtype);
    } else {
        a.bytes = tern_datatype_packed_size(rtype, rcount);
        a.rbuf = out_view(&pr, rbuf, rcount, rtype);
    }
    return finish(&pr, &a, TERN_COLL_SCATTER, a.bytes, req_p, persistent);
}

tern_status_t tern_coll_allgather(tern_comm_t *c, const void *sbuf, size_t scount,
                                  MPI_Datatype stype, void *rbuf, size_t rcount,
                                  MPI_Datatype rtype, tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    const tern_coll_algo_t *chosen = NULL;
    if (pair_blocks(&a, c, req_p, sbuf, scount, stype, rbuf, rcount, rtype)) {
        if (sbuf == MPI_IN_PLACE) /* our block of the receive buffer */
            a.sbuf = offset(a.rbuf, (MPI_Aint)((size_t)c->rank * a.bytes));
        if (pair_chosen(&a, TERN_COLL_ALLGATHER, a.bytes,
                        TERN_COLL_ALGO_allgather_recursive_doubling, 1, &chosen))
            return tern_coll_pair_allgather(&a);
    }
    PREP(pr, c, 1, req_p);
    if (chosen) /* contiguous: a holds the views already */
        return finish_chosen(&pr, &a, TERN_COLL_ALLGATHER, a.bytes, req_p, persistent, chosen);
    args_init(&a, c);
    size_t ext = (size_t)tern_datatype_extent(rtype);
    if (c->is_inter) {
        a.bytes = tern_datatype_packed_size(stype, scount);
        a.rbytes = tern_datatype_packed_size(rtype, rcount);
        a.sbuf = in_view(&pr, sbuf, scount, stype);
        a.rbuf = out_view(&pr, rbuf, rcount * (size_t)c->remote_size, rtype);
        return finish(&pr, &a, TERN_COLL_ALLGATHER, a.bytes, req_p, persistent);
    }
    a.bytes = tern_datatype_packed_size(rtype, rcount);
    a.sbuf = sbuf == MPI_IN_PLACE
                 ? in_view(&pr, (char *)rbuf + (size_t)c->rank * rcount * ext, rcount, rtype)
                 : in_view(&pr, sbuf, scount, stype);
    a.rbuf = out_view(&pr, rbuf, rcount * (size_t)c->size, rtype);
    return finish(&pr, &a, TERN_COLL_ALLGATHER, a.bytes, req_p, persistent);
}

tern_status_t tern_coll_alltoall(tern_comm_t *c, const void *sbuf, size_t scount,
                                 MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype,
                                 tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    const tern_coll_algo_t *chosen = NULL;
    size_t p = (size_t)c->size;
    /* In place only as far as the pair's scratch holds a block. */
    if (pair_blocks(&a, c, req_p, sbuf, scount, stype, rbuf, rcount, rtype)) {
        if (pair_chosen(&a, TERN_COLL_ALLTOALL, a.bytes, TERN_COLL_ALGO_alltoall_pairwise,
                        sbuf != MPI_IN_PLACE || a.bytes <= TERN_COLL_PAIR_TMP, &chosen))
            return tern_coll_pair_alltoall(&a);
        if (sbuf == MPI_IN_PLACE)
            chosen = NULL; /* the schedule reads a private copy of the blocks */
    }
    PREP(pr, c, 1, req_p);
    if (chosen) /* contiguous: a holds the views already */
        return finish_chosen(&pr, &a, TERN_COLL_ALLTOALL, a.bytes, req_p, persistent, chosen);
    args_init(&a, c);
    if (c->is_inter) {
        size_t q = (size_t)c->remote_size;
        a.bytes = tern_datatype_packed_size(stype, scount);
        a.rbytes = tern_datatype_packed_size(rtype, rcount);
        a.sbuf = in_view(&pr, sbuf, scount * q, stype);
        a.rbuf = out_view(&pr, rbuf, rcount * q, rtype);
        return finish(&pr, &a, TERN_COLL_ALLTOALL, a.bytes, req_p, persistent);
    }
    a.bytes = tern_datatype_packed_size(rtype, rcount);
    if (sbuf == MPI_IN_PLACE) {
        const void *v = in_view(&pr, rbuf, rcount * p, rtype);
        a.sbuf = copy_view(&pr, v, a.bytes * p);
    } else {
        a.sbuf = in_view(&pr, sbuf, scount * p, stype);
    }
    a.rbuf = out_view(&pr, rbuf, rcount * p, rtype);
    return finish(&pr, &a, TERN_COLL_ALLTOALL, a.bytes, req_p, persistent);
}

/* Returns how many elements of a->dt one element of dt is: a predefined op
 * reduces basic elements, whatever type each rank passes (a vector of n
 * ints on one rank, n ints on another: the signatures match), so the
 * algorithms count and slice the vector in them and every rank splits it
 * the same way (the shm ones fold slices by element). A user op gets the
 * program's type. */
static size_t reduction_args(tern_coll_args_t *a, tern_comm_t *c, size_t count, MPI_Datatype dt,
                             MPI_Op op)
{
    args_init(a, c);
    a->count = count;
    a->dt = dt;
    a->op = op;
    a->esz = tern_datatype_packed_size(dt, 1);
    a->commutative = tern_op_is_commutative(op);
    MPI_Datatype basic = tern_op_is_predefined(op) ? tern_datatype_basic(dt) : MPI_DATATYPE_NULL;
    size_t bsz = basic != MPI_DATATYPE_NULL ? tern_datatype_packed_size(basic, 1) : 0;
    if (basic == dt || bsz == 0 || a->esz % bsz)
        return 1;
    size_t k = a->esz / bsz;
    a->count = count * k;
    a->dt = basic;
    a->esz = bsz;
    return k;
}

/* A reduce's arguments for the direct paths (coll_pair.h, coll_tree.h):
 * contiguous d, the user's buffers at their true lower bound. */
static void direct_reduce_args(tern_coll_args_t *a, tern_comm_t *c, const void *sbuf, void *rbuf,
                               size_t count, MPI_Datatype dt, MPI_Op op, int root,
                               const tern_dt_desc_t *d)
{
    args_init(a, c);
    a->count = count;
    a->dt = dt;
    a->op = op;
    a->esz = (size_t)d->size; /* contiguous: the packed element */
    a->commutative = tern_op_is_commutative(op);
    a->root = root;
    a->sbuf = offset(sbuf == MPI_IN_PLACE ? rbuf : sbuf, d->true_lb);
    a->rbuf = c->rank == root ? offset(rbuf, d->true_lb) : NULL;
}

tern_status_t tern_coll_reduce(tern_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                               MPI_Datatype dt, MPI_Op op, int root, tern_req_t **req_p,
                               int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    /* An MPI_PROC_NULL rank's other arguments are not significant. */
    if (c->is_inter && root == MPI_PROC_NULL) {
        count = 0;
        dt = MPI_DATATYPE_NULL;
        op = MPI_OP_NULL;
    }
    tern_dt_desc_t d;
    const tern_coll_algo_t *chosen = NULL;
    if (pair_call(c, req_p) && pair_contig(dt, &d)) {
        direct_reduce_args(&a, c, sbuf, rbuf, count, dt, op, root, &d);
        /* The rank that folds (the root; rank 0 for a non-commutative op)
         * needs a scratch vector, on the stack, unless it folds into the
         * root's receive buffer. */
        int pivot = a.commutative ? root : 0;
        int scratch = c->rank == pivot && (c->rank != root || sbuf == MPI_IN_PLACE);
        if (pair_chosen(&a, TERN_COLL_REDUCE, count * a.esz, TERN_COLL_ALGO_reduce_binomial,
                        !scratch || count * a.esz <= TERN_COLL_PAIR_TMP, &chosen))
            return tern_coll_pair_reduce(&a);
    }
    if (tree_call(c, req_p) && pair_contig(dt, &d)) {
        direct_reduce_args(&a, c, sbuf, rbuf, count, dt, op, root, &d);
        /* Every rank with children folds into the stack's scratch. */
        if (pair_chosen(&a, TERN_COLL_REDUCE, count * a.esz, TERN_COLL_ALGO_reduce_binomial,
                        count * a.esz <= TERN_COLL_TREE_TMP, &chosen))
            return tern_coll_tree_reduce(&a);
        chosen = NULL; /* the scheduled path selects with its own views */
    }
    PREP(pr, c, 1, req_p);
    if (chosen) { /* two ranks, contiguous: a holds the views already */
        tern_sched_hold_op(pr.s, op);
        return finish_chosen(&pr, &a, TERN_COLL_REDUCE, count * a.esz, req_p, persistent, chosen);
    }
    reduction_args(&a, c, count, dt, op);
    tern_sched_hold_op(pr.s, op);
    a.root = root;
    if (c->is_inter) {
        if (root == MPI_ROOT)
            a.rbuf = out_view(&pr, rbuf, count, dt);
        else if (root != MPI_PROC_NULL)
            a.sbuf = in_view(&pr, sbuf, count, dt);
    } else if (c->rank == root) {
        if (sbuf == MPI_IN_PLACE) {
            a.rbuf = inout_view(&pr, rbuf, count, dt);
            a.sbuf = a.rbuf;
        } else {
            a.sbuf = in_view(&pr, sbuf, count, dt);
            a.rbuf = out_view(&pr, rbuf, count, dt);
        }
    } else {
        a.sbuf = in_view(&pr, sbuf, count, dt);
    }
    return finish(&pr, &a, TERN_COLL_REDUCE, a.count * a.esz, req_p, persistent);
}

tern_status_t tern_coll_allreduce(tern_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                                  MPI_Datatype dt, MPI_Op op, tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    tern_dt_desc_t d;
    const tern_coll_algo_t *chosen = NULL;
    if (pair_call(c, req_p) && pair_contig(dt, &d)) {
        args_init(&a, c);
        a.count = count;
        a.dt = dt;
        a.op = op;
        a.esz = (size_t)d.size; /* contiguous: the packed element */
        a.commutative = tern_op_is_commutative(op);
        a.rbuf = offset(rbuf, d.true_lb);
        a.sbuf = sbuf == MPI_IN_PLACE ? a.rbuf : offset(sbuf, d.true_lb);
        if (pair_chosen(&a, TERN_COLL_ALLREDUCE, count * a.esz,
                        TERN_COLL_ALGO_allreduce_recursive_doubling,
                        count * a.esz <= TERN_COLL_PAIR_TMP, &chosen))
            return tern_coll_pair_allreduce(&a);
    }
    PREP(pr, c, 1, req_p);
    if (chosen) { /* two ranks, contiguous: a holds the views already */
        tern_sched_hold_op(pr.s, op);
        return finish_chosen(&pr, &a, TERN_COLL_ALLREDUCE, count * a.esz, req_p, persistent, chosen);
    }
    reduction_args(&a, c, count, dt, op);
    tern_sched_hold_op(pr.s, op);
    if (sbuf == MPI_IN_PLACE) {
        a.rbuf = inout_view(&pr, rbuf, count, dt);
        a.sbuf = a.rbuf;
    } else {
        a.sbuf = in_view(&pr, sbuf, count, dt);
        a.rbuf = out_view(&pr, rbuf, count, dt);
    }
    return finish(&pr, &a, TERN_COLL_ALLREDUCE, a.count * a.esz, req_p, persistent);
}

/* Blocking, contiguous, on two ranks (coll_pair.h) or more (coll_tree.h):
 * whether the table chose direct for this reduce_scatter and the scratch
 * holds what it must (the pair's: the rank's own segment; the tree's: the
 * whole vector, so every message is small); then a holds the views and
 * counts every rank's segment. Otherwise *chosen is the table's choice. */
static int direct_reduce_scatter(tern_coll_args_t *a, tern_comm_t *c, const void *sbuf, void *rbuf,
                                 tern_nums_t rcounts, size_t rcount, MPI_Datatype dt, MPI_Op op,
                                 const tern_dt_desc_t *d, tern_coll_kind_t kind, size_t *counts,
                                 const tern_coll_algo_t **chosen)
{
    size_t total = 0;
    for (int i = 0; i < c->size; i++) {
        counts[i] = rcounts.p ? (size_t)tern_nums_at(rcounts, i) : rcount;
        total += counts[i];
    }
    args_init(a, c);
    a->count = total;
    a->dt = dt;
    a->op = op;
    a->esz = (size_t)d->size; /* contiguous: the packed element */
    a->commutative = tern_op_is_commutative(op);
    a->rcounts = counts;
    a->rbuf = offset(rbuf, d->true_lb);
    a->sbuf = sbuf == MPI_IN_PLACE ? a->rbuf : offset(sbuf, d->true_lb);
    int fits = c->size == 2 ? counts[c->rank] * a->esz <= TERN_COLL_PAIR_TMP
                            : total * a->esz <= TERN_COLL_TREE_TMP;
    unsigned id = kind == TERN_COLL_REDUCE_SCATTER ? TERN_COLL_ALGO_reduce_scatter_direct
                                                   : TERN_COLL_ALGO_reduce_scatter_block_direct;
    return pair_chosen(a, kind, total * a->esz, id, fits, chosen);
}

/* After direct_reduce_scatter set a: whether the table chose recursive
 * halving (so the op is commutative) on three or more ranks and the whole
 * vector fits the tree path's scratch, as direct's must; counted then. */
static int halving_reduce_scatter(const tern_coll_args_t *a, const tern_coll_algo_t *chosen,
                                  tern_coll_kind_t kind)
{
    unsigned id = kind == TERN_COLL_REDUCE_SCATTER
                      ? TERN_COLL_ALGO_reduce_scatter_recursive_halving
                      : TERN_COLL_ALGO_reduce_scatter_block_recursive_halving;
    size_t bytes = a->count * a->esz;
    if (chosen->index != id || a->comm->size < 3 || bytes > TERN_COLL_TREE_TMP)
        return 0;
    tern_coll_count(chosen, a->comm, bytes);
    return 1;
}

tern_status_t tern_coll_reduce_scatter(tern_comm_t *c, const void *sbuf, void *rbuf,
                                       tern_nums_t rcounts, size_t rcount, MPI_Datatype dt,
                                       MPI_Op op, tern_req_t **req_p, int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    int p = c->size, r = c->rank;
    tern_coll_kind_t kind = rcounts.p ? TERN_COLL_REDUCE_SCATTER : TERN_COLL_REDUCE_SCATTER_BLOCK;
    tern_dt_desc_t d;
    size_t direct_counts[TERN_COLL_TREE_MAX_RANKS];
    const tern_coll_algo_t *chosen = NULL;
    if ((pair_call(c, req_p) || (tree_call(c, req_p) && p <= TERN_COLL_TREE_MAX_RANKS)) &&
        pair_contig(dt, &d) &&
        direct_reduce_scatter(&a, c, sbuf, rbuf, rcounts, rcount, dt, op, &d, kind, direct_counts,
                              &chosen))
        return p == 2 ? tern_coll_pair_reduce_scatter(&a) : tern_coll_tree_reduce_scatter(&a);
    if (chosen && halving_reduce_scatter(&a, chosen, kind))
        return tern_coll_tree_reduce_scatter_halving(&a);
    PREP(pr, c, 1, req_p);
    size_t *counts = tern_sched_tmp(pr.s, (size_t)p * sizeof *counts), total = 0;
    if (!counts) {
        tern_sched_free(pr.s);
        return TERN_ERR_NOMEM;
    }
    for (int i = 0; i < p; i++) {
        counts[i] = rcounts.p ? (size_t)tern_nums_at(rcounts, i) : rcount;
        total += counts[i];
    }
    size_t k = reduction_args(&a, c, total, dt, op);
    for (int i = 0; k > 1 && i < p; i++)
        counts[i] *= k; /* in basic elements, as a.count */
    tern_sched_hold_op(pr.s, op);
    a.rcounts = counts;
    /* In place: the input is the whole vector in rbuf. */
    a.sbuf = in_view(&pr, sbuf == MPI_IN_PLACE ? rbuf : sbuf, total, dt);
    a.rbuf = out_view(&pr, rbuf, counts[r] / k, dt);
    return finish(&pr, &a, kind, a.count * a.esz, req_p, persistent);
}

tern_status_t tern_coll_scan(tern_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                             MPI_Datatype dt, MPI_Op op, int exclusive, tern_req_t **req_p,
                             int persistent)
{
    prep_t pr;
    tern_coll_args_t a;
    PREP(pr, c, 1, req_p);
    reduction_args(&a, c, count, dt, op);
    tern_sched_hold_op(pr.s, op);
    if (sbuf == MPI_IN_PLACE) {
        a.rbuf = inout_view(&pr, rbuf, count, dt);
        a.sbuf = a.rbuf;
    } else {
        a.sbuf = in_view(&pr, sbuf, count, dt);
        a.rbuf = out_view(&pr, rbuf, count, dt);
    }
    return finish(&pr, &a, exclusive ? TERN_COLL_EXSCAN : TERN_COLL_SCAN, a.count * a.esz, req_p,
                  persistent);
}
