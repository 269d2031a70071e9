/* Collective entry points: blocking, nonblocking (MPI_I*) and persistent
 * (MPI_*_init). Each collective has one checking function that serves all
 * three; the core (src/core/coll.c) does the rest. */
#include "mpi/mpi_coll.h"
#include "mpi/mpi_p2p.h"
#include "core/coll/coll.h"
#include "core/datatype/datatype.h"
#include "core/datatype/op.h"

#include <stdint.h>

/* How a call completes: blocking (req NULL), nonblocking, persistent. */
typedef struct {
    MPI_Request *req;
    int persistent;
} call_mode_t;

#define BLOCKING ((call_mode_t){NULL, 0})
#define NONBLOCKING(r) ((call_mode_t){(r), 0})
#define PERSISTENT(r) ((call_mode_t){(r), 1})

/* inter_ok: MPI defines the collective on intercommunicators (all but
 * scan and exscan). */
static int check_comm(const char *func, MPI_Comm comm, tern_comm_t **c_p, int inter_ok)
{
    int err = tern_check_comm(func, comm, c_p);
    if (err)
        return err;
    if ((*c_p)->is_inter && !inter_ok)
        return tern_mpi_error(comm, MPI_ERR_COMM, func,
                              "MPI defines this collective on intracommunicators only");
    return MPI_SUCCESS;
}

/* count x dt at buf (buf may be MPI_IN_PLACE where the caller allows). */
static int check_data(const char *func, MPI_Comm comm, const void *buf, int count,
                      MPI_Datatype dt)
{
    size_t size;
    int err;
    if ((err = tern_check_count(func, comm, count)) ||
        (err = tern_check_datatype(func, comm, dt, &size)))
        return err;
    if (buf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    return tern_check_buffer(func, comm, buf, count, size);
}

static int check_root(const char *func, tern_comm_t *c, int root)
{
    if (c->is_inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->remote_size))
            return MPI_SUCCESS;
        return tern_mpi_error(c->handle, MPI_ERR_ROOT, func,
                              "root %d is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the remote "
                              "group (%d ranks)",
                              root, c->remote_size);
    }
    if (root < 0 || root >= c->size)
        return tern_mpi_error(c->handle, MPI_ERR_ROOT, func,
                              "root %d is out of range (the communicator has %d ranks)", root,
                              c->size);
    return MPI_SUCCESS;
}

static int check_op(const char *func, MPI_Comm comm, MPI_Op op, MPI_Datatype dt)
{
    if (!tern_op_is_valid(op))
        return tern_mpi_error(comm, MPI_ERR_OP, func,
                              op == MPI_OP_NULL ? "op is MPI_OP_NULL" : "invalid op handle 0x%x",
                              (unsigned)op);
    if (!tern_op_allowed(op, dt)) {
        const char *tn = tern_datatype_name(dt);
        return tern_mpi_error(comm, MPI_ERR_OP, func, "%s is not defined for datatype %s",
                              tern_op_name(op), tn ? tn : "(derived)");
    }
    return MPI_SUCCESS;
}

static int check_counts(const char *func, MPI_Comm comm, const char *what, const int *counts,
                        const int *displs, int n)
{
    if (!counts || (what && !displs))
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "%s is NULL",
                              !counts ? "the counts array" : what);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return tern_mpi_error(comm, MPI_ERR_COUNT, func, "count[%d] = %d is negative", i,
                                  counts[i]);
    return MPI_SUCCESS;
}

static int in_place_misuse(const char *func, MPI_Comm comm, const char *arg)
{
    return tern_mpi_error(comm, MPI_ERR_BUFFER, func, "MPI_IN_PLACE is not allowed as %s here",
                          arg);
}

/* Finishes a call: maps the core status, hands out the request. */
/* r is read after the core call has set it (argument order is unspecified). */
static int done(const char *func, MPI_Comm comm, tern_status_t st, tern_req_t *const *r, call_mode_t m)
{
    if (st != TERN_OK)
        return tern_mpi_status_error(comm, st, func, "collective failed");
    if (m.req)
        return tern_mpi_request_handle(func, comm, *r, m.req);
    return MPI_SUCCESS;
}

#define REQ_P(m, r) ((m).req ? &(r) : NULL)

/* Opens every checking function: initialised, a valid communicator in c,
 * err for the checks that follow, r for the request the core hands back. */
#define ENTRY_(func, comm, c, m, inter_ok)                                      \
    TERN_CHECK_INIT(func);                                                     \
    tern_comm_t *c;                                                            \
    int err;                                                                   \
    if ((err = check_comm(func, comm, &c, inter_ok)))                          \
        return err;                                                            \
    tern_req_t *r = NULL
#define ENTRY(func, comm, c, m) ENTRY_(func, comm, c, m, 0)
/* Intercommunicator forms: root is MPI_ROOT, MPI_PROC_NULL or a remote
 * rank; MPI_IN_PLACE is not allowed. */
#define ENTRY_INTER(func, comm, c, m) ENTRY_(func, comm, c, m, 1)

/* ---- bcast ------------------------------------------------------------ */

int tern_check_bcast(const char *func, tern_comm_t *c, const void *buf, int count,
                     MPI_Datatype dt, int root)
{
    MPI_Comm comm = c->handle;
    int err;
    if ((err = check_data(func, comm, buf, count, dt)) || (err = check_root(func, c, root)))
        return err;
    if (buf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "the buffer");
    return MPI_SUCCESS;
}

/* ---- gather / scatter ------------------------------------------------- */

static int gather(const char *func, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                  int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if ((err = check_root(func, c, root)))
        return err;
    if (c->is_inter) {
        if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
            return in_place_misuse(func, comm, "a buffer on an intercommunicator");
        if ((root == MPI_ROOT && (err = check_data(func, comm, rbuf, rcount, rtype))) ||
            (root >= 0 && (err = check_data(func, comm, sbuf, scount, stype))))
            return err;
        return done(func, comm,
                    tern_coll_gather(c, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype,
                                     root, REQ_P(m, r), m.persistent),
                    &r, m);
    }
    int is_root = c->rank == root;
    if (sbuf != MPI_IN_PLACE && (err = check_data(func, comm, sbuf, scount, stype)))
        return err;
    if (sbuf == MPI_IN_PLACE && !is_root)
        return in_place_misuse(func, comm, "sendbuf on a non-root rank");
    if (is_root && (err = check_data(func, comm, rbuf, rcount, rtype)))
        return err;
    if (is_root && rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    return done(func, comm,
                tern_coll_gather(c, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype, root,
                                 REQ_P(m, r), m.persistent),
                &r, m);
}

static int gatherv(const char *func, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                   MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if ((err = check_root(func, c, root)))
        return err;
    if (c->is_inter) {
        if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
            return in_place_misuse(func, comm, "a buffer on an intercommunicator");
        if ((root == MPI_ROOT &&
             ((err = check_counts(func, comm, "displs", rcounts, displs, c->remote_size)) ||
              (err = check_data(func, comm, rbuf, 0, rtype)))) ||
            (root >= 0 && (err = check_data(func, comm, sbuf, scount, stype))))
            return err;
        return done(func, comm,
                    tern_coll_gatherv(c, sbuf, (size_t)scount, stype, rbuf, rcounts, displs,
                                      rtype, root, REQ_P(m, r), m.persistent),
                    &r, m);
    }
    int is_root = c->rank == root;
    if (sbuf != MPI_IN_PLACE && (err = check_data(func, comm, sbuf, scount, stype)))
        return err;
    if (sbuf == MPI_IN_PLACE && !is_root)
        return in_place_misuse(func, comm, "sendbuf on a non-root rank");
    if (is_root) {
        if ((err = check_counts(func, comm, "displs", rcounts, displs, c->size)) ||
            (err = check_data(func, comm, rbuf, 0, rtype)))
            return err;
        if (rbuf == MPI_IN_PLACE)
            return in_place_misuse(func, comm, "recvbuf");
    }
    return done(func, comm,
                tern_coll_gatherv(c, sbuf, (size_t)scount, stype, rbuf, rcounts, displs, rtype,
                                  root, REQ_P(m, r), m.persistent),
                &r, m);
}

static int scatter(const char *func, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   int rcount, MPI_Datatype rtype, int root, MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if ((err = check_root(func, c, root)))
        return err;
    if (c->is_inter) {
        if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
            return in_place_misuse(func, comm, "a buffer on an intercommunicator");
        if ((root == MPI_ROOT && (err = check_data(func, comm, sbuf, scount, stype))) ||
            (root >= 0 && (err = check_data(func, comm, rbuf, rcount, rtype))))
            return err;
        return done(func, comm,
                    tern_coll_scatter(c, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype,
                                      root, REQ_P(m, r), m.persistent),
                    &r, m);
    }
    int is_root = c->rank == root;
    if (is_root && (err = check_data(func, comm, sbuf, scount, stype)))
        return err;
    if (is_root && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf");
    if (rbuf != MPI_IN_PLACE && (err = check_data(func, comm, rbuf, rcount, rtype)))
        return err;
    if (rbuf == MPI_IN_PLACE && !is_root)
        return in_place_misuse(func, comm, "recvbuf on a non-root rank");
    return done(func, comm,
                tern_coll_scatter(c, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype,
                                  root, REQ_P(m, r), m.persistent),
                &r, m);
}

static int scatterv(const char *func, const void *sbuf, const int *scounts, const int *displs,
                    MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                    MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if ((err = check_root(func, c, root)))
        return err;
    if (c->is_inter) {
        if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
            return in_place_misuse(func, comm, "a buffer on an intercommunicator");
        if ((root == MPI_ROOT &&
             ((err = check_counts(func, comm, "displs", scounts, displs, c->remote_size)) ||
              (err = check_data(func, comm, sbuf, 0, stype)))) ||
            (root >= 0 && (err = check_data(func, comm, rbuf, rcount, rtype))))
            return err;
        return done(func, comm,
                    tern_coll_scatterv(c, sbuf, scounts, displs, stype, rbuf, (size_t)rcount,
                                       rtype, root, REQ_P(m, r), m.persistent),
                    &r, m);
    }
    int is_root = c->rank == root;
    if (is_root) {
        if ((err = check_counts(func, comm, "displs", scounts, displs, c->size)) ||
            (err = check_data(func, comm, sbuf, 0, stype)))
            return err;
        if (sbuf == MPI_IN_PLACE)
            return in_place_misuse(func, comm, "sendbuf");
    }
    if (rbuf != MPI_IN_PLACE && (err = check_data(func, comm, rbuf, rcount, rtype)))
        return err;
    if (rbuf == MPI_IN_PLACE && !is_root)
        return in_place_misuse(func, comm, "recvbuf on a non-root rank");
    return done(func, comm,
                tern_coll_scatterv(c, sbuf, scounts, displs, stype, rbuf, (size_t)rcount, rtype,
                                   root, REQ_P(m, r), m.persistent),
                &r, m);
}

/* ---- allgather / alltoall --------------------------------------------- */

static int allgather(const char *func, const void *sbuf, int scount, MPI_Datatype stype,
                     void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf on an intercommunicator");
    if ((sbuf != MPI_IN_PLACE && (err = check_data(func, comm, sbuf, scount, stype))) ||
        (err = check_data(func, comm, rbuf, rcount, rtype)))
        return err;
    if (rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    return done(func, comm,
                tern_coll_allgather(c, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype,
                                    REQ_P(m, r), m.persistent),
                &r, m);
}

static int allgatherv(const char *func, const void *sbuf, int scount, MPI_Datatype stype,
                      void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rtype,
                      MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf on an intercommunicator");
    if ((sbuf != MPI_IN_PLACE && (err = check_data(func, comm, sbuf, scount, stype))) ||
        (err = check_counts(func, comm, "displs", rcounts, displs,
                            c->is_inter ? c->remote_size : c->size)) ||
        (err = check_data(func, comm, rbuf, 0, rtype)))
        return err;
    if (rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    return done(func, comm,
                tern_coll_allgatherv(c, sbuf, (size_t)scount, stype, rbuf, rcounts, displs, rtype,
                                     REQ_P(m, r), m.persistent),
                &r, m);
}

static int alltoall(const char *func, const void *sbuf, int scount, MPI_Datatype stype,
                    void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf on an intercommunicator");
    if ((sbuf != MPI_IN_PLACE && (err = check_data(func, comm, sbuf, scount, stype))) ||
        (err = check_data(func, comm, rbuf, rcount, rtype)))
        return err;
    if (rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    return done(func, comm,
                tern_coll_alltoall(c, sbuf, (size_t)scount, stype, rbuf, (size_t)rcount, rtype,
                                   REQ_P(m, r), m.persistent),
                &r, m);
}

static int check_types(const char *func, MPI_Comm comm, const MPI_Datatype *types, int n)
{
    if (!types)
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "the datatypes array is NULL");
    size_t size;
    for (int i = 0; i < n; i++) {
        int err = tern_check_datatype(func, comm, types[i], &size);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

static int alltoallvw(const char *func, const void *sbuf, const int *scounts, const int *sdispls,
                      const MPI_Datatype *stypes, MPI_Datatype stype, void *rbuf,
                      const int *rcounts, const int *rdispls, const MPI_Datatype *rtypes,
                      MPI_Datatype rtype, int is_w, MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    int p = c->is_inter ? c->remote_size : c->size;
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf on an intercommunicator");
    if (sbuf != MPI_IN_PLACE) {
        if ((err = check_counts(func, comm, "sdispls", scounts, sdispls, p)) ||
            (is_w ? (err = check_types(func, comm, stypes, p))
                  : (err = check_data(func, comm, sbuf, 0, stype))))
            return err;
    }
    if ((err = check_counts(func, comm, "rdispls", rcounts, rdispls, p)) ||
        (is_w ? (err = check_types(func, comm, rtypes, p))
              : (err = check_data(func, comm, rbuf, 0, rtype))))
        return err;
    if (rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    return done(func, comm,
                tern_coll_alltoallvw(c, sbuf, scounts, sdispls, is_w ? stypes : NULL, stype, rbuf,
                                     rcounts, rdispls, is_w ? rtypes : NULL, rtype, REQ_P(m, r),
                                     m.persistent),
                &r, m);
}

/* ---- reductions ------------------------------------------------------- */

static int check_reduction(const char *func, MPI_Comm comm, const void *sbuf, void *rbuf,
                           int count, MPI_Datatype dt, MPI_Op op, int need_rbuf)
{
    int err;
    if ((err = check_data(func, comm, sbuf, count, dt)) ||
        (need_rbuf && (err = check_data(func, comm, rbuf, count, dt))) ||
        (err = check_op(func, comm, op, dt)))
        return err;
    if (need_rbuf && rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    return MPI_SUCCESS;
}

static int reduce(const char *func, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                  MPI_Op op, int root, MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if (c->is_inter) {
        if ((err = check_root(func, c, root)))
            return err;
        if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
            return in_place_misuse(func, comm, "a buffer on an intercommunicator");
        if ((err = check_data(func, comm, root >= 0 ? sbuf : rbuf, count, dt)) ||
            (err = check_op(func, comm, op, dt)))
            return err;
        return done(func, comm,
                    tern_coll_reduce(c, sbuf, rbuf, (size_t)count, dt, op, root, REQ_P(m, r),
                                     m.persistent),
                    &r, m);
    }
    if ((err = check_root(func, c, root)) ||
        (err = check_reduction(func, comm, sbuf, rbuf, count, dt, op, c->rank == root)))
        return err;
    if (sbuf == MPI_IN_PLACE && c->rank != root)
        return in_place_misuse(func, comm, "sendbuf on a non-root rank");
    return done(func, comm,
                tern_coll_reduce(c, sbuf, rbuf, (size_t)count, dt, op, root, REQ_P(m, r),
                                 m.persistent),
                &r, m);
}

static int allreduce(const char *func, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                     MPI_Op op, MPI_Comm comm, call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf on an intercommunicator");
    if ((err = check_reduction(func, comm, sbuf, rbuf, count, dt, op, 1)))
        return err;
    return done(func, comm,
                tern_coll_allreduce(c, sbuf, rbuf, (size_t)count, dt, op, REQ_P(m, r),
                                    m.persistent),
                &r, m);
}

/* block: reduce_scatter_block (rcount each); else rcounts[]. */
static int reduce_scatter(const char *func, const void *sbuf, void *rbuf, const int *rcounts,
                          int rcount, int block, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                          call_mode_t m)
{
    ENTRY_INTER(func, comm, c, m);
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf on an intercommunicator");
    if (!block ? (err = check_counts(func, comm, NULL, rcounts, NULL, c->size))
               : (err = tern_check_count(func, comm, rcount)))
        return err;
    if (block)
        rcounts = NULL;
    int mine = rcounts ? rcounts[c->rank] : rcount;
    if ((err = check_reduction(func, comm, sbuf, rbuf, mine, dt, op, 1)))
        return err;
    return done(func, comm,
                tern_coll_reduce_scatter(c, sbuf, rbuf, rcounts, (size_t)rcount, dt, op,
                                         REQ_P(m, r), m.persistent),
                &r, m);
}

static int scan(const char *func, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                MPI_Op op, int exclusive, MPI_Comm comm, call_mode_t m)
{
    ENTRY(func, comm, c, m);
    if ((err = check_reduction(func, comm, sbuf, rbuf, count, dt, op, 1)))
        return err;
    return done(func, comm,
                tern_coll_scan(c, sbuf, rbuf, (size_t)count, dt, op, exclusive, REQ_P(m, r),
                               m.persistent),
                &r, m);
}

/* ---- the public names: blocking, nonblocking, persistent -------------- */

#define REQ_CHECK(func, comm, request)                                         \
    do {                                                                       \
        if (!(request))                                                        \
            return tern_mpi_error(comm, MPI_ERR_ARG, func, "request is NULL"); \
    } while (0)

#define GATHER_ARGS                                                            \
    const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,  \
        MPI_Datatype rtype, int root, MPI_Comm comm
TERN_PMPI_ALIAS(Gather)
int PMPI_Gather(GATHER_ARGS)
{
    return gather("MPI_Gather", sbuf, scount, stype, rbuf, rcount, rtype, root, comm, BLOCKING);
}
TERN_PMPI_ALIAS(Igather)
int PMPI_Igather(GATHER_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Igather", comm, request);
    return gather("MPI_Igather", sbuf, scount, stype, rbuf, rcount, rtype, root, comm,
                  NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Gather_init)
int PMPI_Gather_init(GATHER_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Gather_init", comm, request);
    return gather("MPI_Gather_init", sbuf, scount, stype, rbuf, rcount, rtype, root, comm,
                  PERSISTENT(request));
}
TERN_PMPI_ALIAS(Scatter)
int PMPI_Scatter(GATHER_ARGS)
{
    return scatter("MPI_Scatter", sbuf, scount, stype, rbuf, rcount, rtype, root, comm, BLOCKING);
}
TERN_PMPI_ALIAS(Iscatter)
int PMPI_Iscatter(GATHER_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Iscatter", comm, request);
    return scatter("MPI_Iscatter", sbuf, scount, stype, rbuf, rcount, rtype, root, comm,
                   NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Scatter_init)
int PMPI_Scatter_init(GATHER_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Scatter_init", comm, request);
    return scatter("MPI_Scatter_init", sbuf, scount, stype, rbuf, rcount, rtype, root, comm,
                   PERSISTENT(request));
}

#define GATHERV_ARGS                                                           \
    const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,          \
        const int *displs, MPI_Datatype rtype, int root, MPI_Comm comm
TERN_PMPI_ALIAS(Gatherv)
int PMPI_Gatherv(GATHERV_ARGS)
{
    return gatherv("MPI_Gatherv", sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
                   BLOCKING);
}
TERN_PMPI_ALIAS(Igatherv)
int PMPI_Igatherv(GATHERV_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Igatherv", comm, request);
    return gatherv("MPI_Igatherv", sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
                   NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Gatherv_init)
int PMPI_Gatherv_init(GATHERV_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Gatherv_init", comm, request);
    return gatherv("MPI_Gatherv_init", sbuf, scount, stype, rbuf, rcounts, displs, rtype, root,
                   comm, PERSISTENT(request));
}

#define SCATTERV_ARGS                                                          \
    const void *sbuf, const int *scounts, const int *displs, MPI_Datatype stype, void *rbuf,   \
        int rcount, MPI_Datatype rtype, int root, MPI_Comm comm
TERN_PMPI_ALIAS(Scatterv)
int PMPI_Scatterv(SCATTERV_ARGS)
{
    return scatterv("MPI_Scatterv", sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
                    BLOCKING);
}
TERN_PMPI_ALIAS(Iscatterv)
int PMPI_Iscatterv(SCATTERV_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Iscatterv", comm, request);
    return scatterv("MPI_Iscatterv", sbuf, scounts, displs, stype, rbuf, rcount, rtype, root,
                    comm, NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Scatterv_init)
int PMPI_Scatterv_init(SCATTERV_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Scatterv_init", comm, request);
    return scatterv("MPI_Scatterv_init", sbuf, scounts, displs, stype, rbuf, rcount, rtype, root,
                    comm, PERSISTENT(request));
}

#define ALLGATHER_ARGS                                                         \
    const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,  \
        MPI_Datatype rtype, MPI_Comm comm
TERN_PMPI_ALIAS(Allgather)
int PMPI_Allgather(ALLGATHER_ARGS)
{
    return allgather("MPI_Allgather", sbuf, scount, stype, rbuf, rcount, rtype, comm, BLOCKING);
}
TERN_PMPI_ALIAS(Iallgather)
int PMPI_Iallgather(ALLGATHER_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Iallgather", comm, request);
    return allgather("MPI_Iallgather", sbuf, scount, stype, rbuf, rcount, rtype, comm,
                     NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Allgather_init)
int PMPI_Allgather_init(ALLGATHER_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Allgather_init", comm, request);
    return allgather("MPI_Allgather_init", sbuf, scount, stype, rbuf, rcount, rtype, comm,
                     PERSISTENT(request));
}
TERN_PMPI_ALIAS(Alltoall)
int PMPI_Alltoall(ALLGATHER_ARGS)
{
    return alltoall("MPI_Alltoall", sbuf, scount, stype, rbuf, rcount, rtype, comm, BLOCKING);
}
TERN_PMPI_ALIAS(Ialltoall)
int PMPI_Ialltoall(ALLGATHER_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Ialltoall", comm, request);
    return alltoall("MPI_Ialltoall", sbuf, scount, stype, rbuf, rcount, rtype, comm,
                    NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Alltoall_init)
int PMPI_Alltoall_init(ALLGATHER_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Alltoall_init", comm, request);
    return alltoall("MPI_Alltoall_init", sbuf, scount, stype, rbuf, rcount, rtype, comm,
                    PERSISTENT(request));
}

#define ALLGATHERV_ARGS                                                        \
    const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,          \
        const int *displs, MPI_Datatype rtype, MPI_Comm comm
TERN_PMPI_ALIAS(Allgatherv)
int PMPI_Allgatherv(ALLGATHERV_ARGS)
{
    return allgatherv("MPI_Allgatherv", sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                      BLOCKING);
}
TERN_PMPI_ALIAS(Iallgatherv)
int PMPI_Iallgatherv(ALLGATHERV_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Iallgatherv", comm, request);
    return allgatherv("MPI_Iallgatherv", sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                      NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Allgatherv_init)
int PMPI_Allgatherv_init(ALLGATHERV_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Allgatherv_init", comm, request);
    return allgatherv("MPI_Allgatherv_init", sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                      comm, PERSISTENT(request));
}

#define ALLTOALLV_ARGS                                                         \
    const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,  \
        const int *rcounts, const int *rdispls, MPI_Datatype rtype, MPI_Comm comm
#define ALLTOALLV_CALL(func, m)                                                \
    alltoallvw(func, sbuf, scounts, sdispls, NULL, stype, rbuf, rcounts, rdispls, NULL, rtype, \
               0, comm, m)
TERN_PMPI_ALIAS(Alltoallv)
int PMPI_Alltoallv(ALLTOALLV_ARGS) { return ALLTOALLV_CALL("MPI_Alltoallv", BLOCKING); }
TERN_PMPI_ALIAS(Ialltoallv)
int PMPI_Ialltoallv(ALLTOALLV_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Ialltoallv", comm, request);
    return ALLTOALLV_CALL("MPI_Ialltoallv", NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Alltoallv_init)
int PMPI_Alltoallv_init(ALLTOALLV_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Alltoallv_init", comm, request);
    return ALLTOALLV_CALL("MPI_Alltoallv_init", PERSISTENT(request));
}

#define ALLTOALLW_ARGS                                                         \
    const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],   \
        void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[],     \
        MPI_Comm comm
#define ALLTOALLW_CALL(func, m)                                                \
    alltoallvw(func, sbuf, scounts, sdispls, stypes, MPI_DATATYPE_NULL, rbuf, rcounts, rdispls, \
               rtypes, MPI_DATATYPE_NULL, 1, comm, m)
TERN_PMPI_ALIAS(Alltoallw)
int PMPI_Alltoallw(ALLTOALLW_ARGS) { return ALLTOALLW_CALL("MPI_Alltoallw", BLOCKING); }
TERN_PMPI_ALIAS(Ialltoallw)
int PMPI_Ialltoallw(ALLTOALLW_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Ialltoallw", comm, request);
    return ALLTOALLW_CALL("MPI_Ialltoallw", NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Alltoallw_init)
int PMPI_Alltoallw_init(ALLTOALLW_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Alltoallw_init", comm, request);
    return ALLTOALLW_CALL("MPI_Alltoallw_init", PERSISTENT(request));
}

#define REDUCE_ARGS                                                            \
    const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm
TERN_PMPI_ALIAS(Reduce)
int PMPI_Reduce(REDUCE_ARGS)
{
    return reduce("MPI_Reduce", sbuf, rbuf, count, dt, op, root, comm, BLOCKING);
}
TERN_PMPI_ALIAS(Ireduce)
int PMPI_Ireduce(REDUCE_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Ireduce", comm, request);
    return reduce("MPI_Ireduce", sbuf, rbuf, count, dt, op, root, comm, NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Reduce_init)
int PMPI_Reduce_init(REDUCE_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Reduce_init", comm, request);
    return reduce("MPI_Reduce_init", sbuf, rbuf, count, dt, op, root, comm, PERSISTENT(request));
}

#define ALLREDUCE_ARGS                                                         \
    const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm
TERN_PMPI_ALIAS(Allreduce)
int PMPI_Allreduce(ALLREDUCE_ARGS)
{
    return allreduce("MPI_Allreduce", sbuf, rbuf, count, dt, op, comm, BLOCKING);
}
TERN_PMPI_ALIAS(Iallreduce)
int PMPI_Iallreduce(ALLREDUCE_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Iallreduce", comm, request);
    return allreduce("MPI_Iallreduce", sbuf, rbuf, count, dt, op, comm, NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Allreduce_init)
int PMPI_Allreduce_init(ALLREDUCE_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Allreduce_init", comm, request);
    return allreduce("MPI_Allreduce_init", sbuf, rbuf, count, dt, op, comm, PERSISTENT(request));
}
TERN_PMPI_ALIAS(Scan)
int PMPI_Scan(ALLREDUCE_ARGS) { return scan("MPI_Scan", sbuf, rbuf, count, dt, op, 0, comm, BLOCKING); }
TERN_PMPI_ALIAS(Iscan)
int PMPI_Iscan(ALLREDUCE_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Iscan", comm, request);
    return scan("MPI_Iscan", sbuf, rbuf, count, dt, op, 0, comm, NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Scan_init)
int PMPI_Scan_init(ALLREDUCE_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Scan_init", comm, request);
    return scan("MPI_Scan_init", sbuf, rbuf, count, dt, op, 0, comm, PERSISTENT(request));
}
TERN_PMPI_ALIAS(Exscan)
int PMPI_Exscan(ALLREDUCE_ARGS)
{
    return scan("MPI_Exscan", sbuf, rbuf, count, dt, op, 1, comm, BLOCKING);
}
TERN_PMPI_ALIAS(Iexscan)
int PMPI_Iexscan(ALLREDUCE_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Iexscan", comm, request);
    return scan("MPI_Iexscan", sbuf, rbuf, count, dt, op, 1, comm, NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Exscan_init)
int PMPI_Exscan_init(ALLREDUCE_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Exscan_init", comm, request);
    return scan("MPI_Exscan_init", sbuf, rbuf, count, dt, op, 1, comm, PERSISTENT(request));
}

#define RS_ARGS                                                                \
    const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm
TERN_PMPI_ALIAS(Reduce_scatter)
int PMPI_Reduce_scatter(RS_ARGS)
{
    return reduce_scatter("MPI_Reduce_scatter", sbuf, rbuf, rcounts, 0, 0, dt, op, comm, BLOCKING);
}
TERN_PMPI_ALIAS(Ireduce_scatter)
int PMPI_Ireduce_scatter(RS_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Ireduce_scatter", comm, request);
    return reduce_scatter("MPI_Ireduce_scatter", sbuf, rbuf, rcounts, 0, 0, dt, op, comm,
                          NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Reduce_scatter_init)
int PMPI_Reduce_scatter_init(RS_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Reduce_scatter_init", comm, request);
    return reduce_scatter("MPI_Reduce_scatter_init", sbuf, rbuf, rcounts, 0, 0, dt, op, comm,
                          PERSISTENT(request));
}

#define RSB_ARGS                                                               \
    const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm
TERN_PMPI_ALIAS(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(RSB_ARGS)
{
    return reduce_scatter("MPI_Reduce_scatter_block", sbuf, rbuf, NULL, rcount, 1, dt, op, comm,
                          BLOCKING);
}
TERN_PMPI_ALIAS(Ireduce_scatter_block)
int PMPI_Ireduce_scatter_block(RSB_ARGS, MPI_Request *request)
{
    REQ_CHECK("MPI_Ireduce_scatter_block", comm, request);
    return reduce_scatter("MPI_Ireduce_scatter_block", sbuf, rbuf, NULL, rcount, 1, dt, op, comm,
                          NONBLOCKING(request));
}
TERN_PMPI_ALIAS(Reduce_scatter_block_init)
int PMPI_Reduce_scatter_block_init(RSB_ARGS, MPI_Info info, MPI_Request *request)
{
    (void)info;
    REQ_CHECK("MPI_Reduce_scatter_block_init", comm, request);
    return reduce_scatter("MPI_Reduce_scatter_block_init", sbuf, rbuf, NULL, rcount, 1, dt, op, comm,
                          PERSISTENT(request));
}
