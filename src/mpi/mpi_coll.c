/* The semantic argument checks of the collectives (mpi_coll.h), called by
 * their generated entry points (src/mpi/gen/coll.c) after the communicator,
 * info and request checks; the core (src/core/coll/coll.c) does the rest. One
 * function serves the blocking, nonblocking and persistent forms. */
#include "mpi/mpi_coll.h"
#include "core/datatype/datatype.h"
#include "core/datatype/op.h"

#include <stdio.h>

/* count x dt at buf (buf may be MPI_IN_PLACE where the caller allows). */
static int check_data_any(const char *func, MPI_Comm comm, const void *buf, MPI_Count count,
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

/* The valid common case inline, with no call and no saved registers (a
 * 2-rank 8 B scatter's root checks two buffers a call): a count of 0 or
 * more of a common predefined type at a buffer that is not NULL, or none;
 * check_data_any gives the verdict on the rest. */
static inline __attribute__((always_inline)) int check_data(const char *func, MPI_Comm comm,
                                                           const void *buf, MPI_Count count,
                                                           MPI_Datatype dt)
{
    if (__builtin_expect(count >= 0 && tern_datatype_is_plain(dt) && (buf || !count), 1))
        return MPI_SUCCESS;
    return check_data_any(func, comm, buf, count, dt);
}

/* Intercommunicators: root is MPI_ROOT, MPI_PROC_NULL or a remote rank.
 * MPI-4.1 6.2.2: on an MPI_PROC_NULL rank only root and comm are
 * significant, on the MPI_ROOT rank only the root's arguments (receive side
 * of a gather or reduce, send side of a scatter), on the other group's
 * ranks only their own side: the checks below look at nothing else. */
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
    /* The valid case without a call: reductions are on the fast path. */
    if (__builtin_expect(!tern_op_is_valid(op), 0))
        return tern_check_op(func, comm, op);
    if (!tern_op_allowed(op, dt)) {
        const char *tn = tern_datatype_name(dt);
        return tern_mpi_error(comm, MPI_ERR_OP, func, "%s is not defined for datatype %s",
                              tern_op_name(op), tn ? tn : "(derived)");
    }
    return MPI_SUCCESS;
}

static int check_counts(const char *func, MPI_Comm comm, const char *what, tern_nums_t counts,
                        tern_nums_t displs, int n)
{
    if (!counts.p || (what && !displs.p))
        return tern_mpi_error(comm, MPI_ERR_ARG, func, "%s is NULL",
                              !counts.p ? "the counts array" : what);
    for (int i = 0; i < n; i++)
        if (tern_nums_at(counts, i) < 0)
            return tern_mpi_error(comm, MPI_ERR_COUNT, func, "count[%d] = %lld is negative", i,
                                  (long long)tern_nums_at(counts, i));
    return MPI_SUCCESS;
}

static int in_place_misuse(const char *func, MPI_Comm comm, const char *arg)
{
    return tern_mpi_error(comm, MPI_ERR_BUFFER, func, "MPI_IN_PLACE is not allowed as %s here",
                          arg);
}

/* MPI-4.1 2.7 forbids aliased arguments: sendbuf and recvbuf the same
 * buffer, both carrying data on this rank (MPI_IN_PLACE is the way to do
 * it). MPI_BOTTOM is exempt: types with absolute addresses make it two
 * different buffers. Called only when the pointers are equal, or one is
 * this rank's block of the other (own_block). */
static int aliased(const char *func, MPI_Comm comm, const void *buf)
{
    return tern_mpi_error(comm, MPI_ERR_BUFFER, func,
                          "sendbuf and recvbuf are the same buffer %p (or this rank's block of "
                          "it); use MPI_IN_PLACE as sendbuf to work in place",
                          buf);
}

#define SAME_BUF(sbuf, rbuf) \
    (__builtin_expect((sbuf) == (rbuf), 0) && (sbuf) != MPI_BOTTOM && (sbuf) != MPI_IN_PLACE)

/* sendbuf at this rank's own block of recvbuf (disp elements of dt in):
 * the other common way to alias, as MPICH catches it (MPICH's noalias). */
static int own_block(const void *sbuf, const void *rbuf, MPI_Count disp, MPI_Datatype dt)
{
    if (sbuf == MPI_IN_PLACE || sbuf == MPI_BOTTOM || rbuf == MPI_IN_PLACE || disp == 0)
        return SAME_BUF(sbuf, rbuf);
    long ext = tern_datatype_is_plain(dt) ? tern_datatype_plain_size(dt) : tern_datatype_extent(dt);
    return (const char *)rbuf + disp * ext == (const char *)sbuf;
}

static int any_count(tern_nums_t counts, int n)
{
    for (int i = 0; i < n; i++)
        if (tern_nums_at(counts, i) > 0)
            return 1;
    return 0;
}

/* ---- bcast ------------------------------------------------------------ */

int tern_check_bcast(const char *func, tern_comm_t *c, const void *buf, MPI_Count count,
                     MPI_Datatype dt, int root)
{
    MPI_Comm comm = c->handle;
    int err;
    if ((err = check_root(func, c, root)))
        return err;
    if (c->is_inter && root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((err = check_data(func, comm, buf, count, dt)))
        return err;
    if (buf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "the buffer");
    return MPI_SUCCESS;
}

/* ---- gather / scatter ------------------------------------------------- */

/* The side of a rooted intercommunicator collective this rank takes part
 * in (check_root): MPI_IN_PLACE has no meaning there. */
static int inter_side(const char *func, MPI_Comm comm, const void *buf, MPI_Count count,
                      MPI_Datatype dt, const char *arg)
{
    if (buf == MPI_IN_PLACE) {
        char what[64];
        snprintf(what, sizeof what, "%s on an intercommunicator", arg);
        return in_place_misuse(func, comm, what);
    }
    return check_data(func, comm, buf, count, dt);
}

int tern_check_gather(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                      MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                      int root)
{
    MPI_Comm comm = c->handle;
    int err;
    if ((err = check_root(func, c, root)))
        return err;
    if (c->is_inter)
        return root == MPI_ROOT ? inter_side(func, comm, rbuf, rcount, rtype, "recvbuf")
               : root >= 0      ? inter_side(func, comm, sbuf, scount, stype, "sendbuf")
                                : MPI_SUCCESS;
    int is_root = c->rank == root;
    if (sbuf != MPI_IN_PLACE && (err = check_data(func, comm, sbuf, scount, stype)))
        return err;
    if (sbuf == MPI_IN_PLACE && !is_root)
        return in_place_misuse(func, comm, "sendbuf on a non-root rank");
    if (is_root && (err = check_data(func, comm, rbuf, rcount, rtype)))
        return err;
    if (is_root && rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    if (is_root && own_block(sbuf, rbuf, (long)root * rcount, rtype) && scount > 0 && rcount > 0)
        return aliased(func, comm, sbuf);
    return MPI_SUCCESS;
}

int tern_check_gatherv(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                       MPI_Datatype stype, const void *rbuf, tern_nums_t rcounts,
                       tern_nums_t displs, MPI_Datatype rtype, int root)
{
    MPI_Comm comm = c->handle;
    int err;
    if ((err = check_root(func, c, root)))
        return err;
    if (c->is_inter) {
        if (root == MPI_ROOT)
            return (err = check_counts(func, comm, "displs", rcounts, displs, c->remote_size))
                       ? err
                       : inter_side(func, comm, rbuf, 0, rtype, "recvbuf");
        return root >= 0 ? inter_side(func, comm, sbuf, scount, stype, "sendbuf") : MPI_SUCCESS;
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
        if (own_block(sbuf, rbuf, tern_nums_at(displs, root), rtype) && scount > 0 &&
            any_count(rcounts, c->size))
            return aliased(func, comm, sbuf);
    }
    return MPI_SUCCESS;
}

int tern_check_scatter(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                       MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                       int root)
{
    MPI_Comm comm = c->handle;
    int err;
    if ((err = check_root(func, c, root)))
        return err;
    if (c->is_inter)
        return root == MPI_ROOT ? inter_side(func, comm, sbuf, scount, stype, "sendbuf")
               : root >= 0      ? inter_side(func, comm, rbuf, rcount, rtype, "recvbuf")
                                : MPI_SUCCESS;
    int is_root = c->rank == root;
    if (is_root && (err = check_data(func, comm, sbuf, scount, stype)))
        return err;
    if (is_root && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf");
    if (rbuf != MPI_IN_PLACE && (err = check_data(func, comm, rbuf, rcount, rtype)))
        return err;
    if (rbuf == MPI_IN_PLACE && !is_root)
        return in_place_misuse(func, comm, "recvbuf on a non-root rank");
    if (is_root && own_block(rbuf, sbuf, (long)root * scount, stype) && scount > 0 && rcount > 0)
        return aliased(func, comm, sbuf);
    return MPI_SUCCESS;
}

int tern_check_scatterv(const char *func, tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                        tern_nums_t displs, MPI_Datatype stype, const void *rbuf, MPI_Count rcount,
                        MPI_Datatype rtype, int root)
{
    MPI_Comm comm = c->handle;
    int err;
    if ((err = check_root(func, c, root)))
        return err;
    if (c->is_inter) {
        if (root == MPI_ROOT)
            return (err = check_counts(func, comm, "displs", scounts, displs, c->remote_size))
                       ? err
                       : inter_side(func, comm, sbuf, 0, stype, "sendbuf");
        return root >= 0 ? inter_side(func, comm, rbuf, rcount, rtype, "recvbuf") : MPI_SUCCESS;
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
    if (is_root && own_block(rbuf, sbuf, tern_nums_at(displs, root), stype) && rcount > 0 &&
        any_count(scounts, c->size))
        return aliased(func, comm, rbuf);
    return MPI_SUCCESS;
}

/* ---- allgather / alltoall --------------------------------------------- */

/* Allgather and alltoall: one block of each type per rank, either way. */
static int check_blocks(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype)
{
    MPI_Comm comm = c->handle;
    int err;
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf on an intercommunicator");
    if ((sbuf != MPI_IN_PLACE && (err = check_data(func, comm, sbuf, scount, stype))) ||
        (err = check_data(func, comm, rbuf, rcount, rtype)))
        return err;
    if (rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    if (SAME_BUF(sbuf, rbuf) && scount > 0 && rcount > 0)
        return aliased(func, comm, sbuf);
    return MPI_SUCCESS;
}

int tern_check_allgather(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                         MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype)
{
    int err = check_blocks(func, c, sbuf, scount, stype, rbuf, rcount, rtype);
    if (!err && !c->is_inter && scount > 0 && rcount > 0 &&
        own_block(sbuf, rbuf, (long)c->rank * rcount, rtype))
        return aliased(func, c->handle, sbuf);
    return err;
}

int tern_check_alltoall(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype)
{
    return check_blocks(func, c, sbuf, scount, stype, rbuf, rcount, rtype);
}

int tern_check_allgatherv(const char *func, tern_comm_t *c, const void *sbuf, MPI_Count scount,
                          MPI_Datatype stype, const void *rbuf, tern_nums_t rcounts,
                          tern_nums_t displs, MPI_Datatype rtype)
{
    MPI_Comm comm = c->handle;
    int err;
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf on an intercommunicator");
    if ((sbuf != MPI_IN_PLACE && (err = check_data(func, comm, sbuf, scount, stype))) ||
        (err = check_counts(func, comm, "displs", rcounts, displs,
                            c->is_inter ? c->remote_size : c->size)) ||
        (err = check_data(func, comm, rbuf, 0, rtype)))
        return err;
    if (rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    if ((SAME_BUF(sbuf, rbuf) || (!c->is_inter && own_block(sbuf, rbuf, tern_nums_at(displs, c->rank), rtype))) &&
        scount > 0 && any_count(rcounts, c->is_inter ? c->remote_size : c->size))
        return aliased(func, comm, sbuf);
    return MPI_SUCCESS;
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

/* Alltoallv (stypes and rtypes NULL: one type each side) and alltoallw (a
 * type per rank). */
static int check_alltoallvw(const char *func, tern_comm_t *c, const void *sbuf,
                            tern_nums_t scounts, tern_nums_t sdispls, const MPI_Datatype *stypes,
                            MPI_Datatype stype, const void *rbuf, tern_nums_t rcounts,
                            tern_nums_t rdispls, const MPI_Datatype *rtypes, MPI_Datatype rtype,
                            int is_w)
{
    MPI_Comm comm = c->handle;
    int err;
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
    if (SAME_BUF(sbuf, rbuf) && any_count(scounts, p) && any_count(rcounts, p))
        return aliased(func, comm, sbuf);
    return MPI_SUCCESS;
}

int tern_check_alltoallv(const char *func, tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                         tern_nums_t sdispls, MPI_Datatype stype, const void *rbuf,
                         tern_nums_t rcounts, tern_nums_t rdispls, MPI_Datatype rtype)
{
    return check_alltoallvw(func, c, sbuf, scounts, sdispls, NULL, stype, rbuf, rcounts, rdispls,
                            NULL, rtype, 0);
}

int tern_check_alltoallw(const char *func, tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                         tern_nums_t sdispls, const MPI_Datatype *stypes, const void *rbuf,
                         tern_nums_t rcounts, tern_nums_t rdispls, const MPI_Datatype *rtypes)
{
    return check_alltoallvw(func, c, sbuf, scounts, sdispls, stypes, MPI_DATATYPE_NULL, rbuf,
                            rcounts, rdispls, rtypes, MPI_DATATYPE_NULL, 1);
}

/* ---- reductions ------------------------------------------------------- */

static int check_reduction(const char *func, MPI_Comm comm, const void *sbuf, const void *rbuf,
                           MPI_Count count, MPI_Datatype dt, MPI_Op op, int need_rbuf)
{
    int err;
    if ((err = check_data(func, comm, sbuf, count, dt)) ||
        (need_rbuf && (err = check_data(func, comm, rbuf, count, dt))) ||
        (err = check_op(func, comm, op, dt)))
        return err;
    if (need_rbuf && rbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "recvbuf");
    if (need_rbuf && SAME_BUF(sbuf, rbuf) && count > 0)
        return aliased(func, comm, sbuf);
    return MPI_SUCCESS;
}

int tern_check_reduce(const char *func, tern_comm_t *c, const void *sbuf, const void *rbuf,
                      MPI_Count count, MPI_Datatype dt, MPI_Op op, int root)
{
    MPI_Comm comm = c->handle;
    int err;
    if (c->is_inter) {
        if ((err = check_root(func, c, root)) || root == MPI_PROC_NULL)
            return err;
        /* The root receives the result; the other group sends. */
        if ((err = root == MPI_ROOT ? inter_side(func, comm, rbuf, count, dt, "recvbuf")
                                    : inter_side(func, comm, sbuf, count, dt, "sendbuf")))
            return err;
        return check_op(func, comm, op, dt);
    }
    if ((err = check_root(func, c, root)) ||
        (err = check_reduction(func, comm, sbuf, rbuf, count, dt, op, c->rank == root)))
        return err;
    if (sbuf == MPI_IN_PLACE && c->rank != root)
        return in_place_misuse(func, comm, "sendbuf on a non-root rank");
    return MPI_SUCCESS;
}

int tern_check_allreduce(const char *func, tern_comm_t *c, const void *sbuf, const void *rbuf,
                         MPI_Count count, MPI_Datatype dt, MPI_Op op)
{
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, c->handle, "sendbuf on an intercommunicator");
    return check_reduction(func, c->handle, sbuf, rbuf, count, dt, op, 1);
}

/* block: reduce_scatter_block (rcount each); else rcounts[]. */
static int check_reduce_scatter(const char *func, tern_comm_t *c, const void *sbuf,
                                const void *rbuf, tern_nums_t rcounts, MPI_Count rcount, int block,
                                MPI_Datatype dt, MPI_Op op)
{
    MPI_Comm comm = c->handle;
    int err;
    if (c->is_inter && sbuf == MPI_IN_PLACE)
        return in_place_misuse(func, comm, "sendbuf on an intercommunicator");
    if (!block ? (err = check_counts(func, comm, NULL, rcounts, TERN_NO_NUMS, c->size))
               : (err = tern_check_count(func, comm, rcount)))
        return err;
    MPI_Count mine = block ? rcount : tern_nums_at(rcounts, c->rank);
    return check_reduction(func, comm, sbuf, rbuf, mine, dt, op, 1);
}

int tern_check_reduce_scatter(const char *func, tern_comm_t *c, const void *sbuf,
                              const void *rbuf, tern_nums_t rcounts, MPI_Datatype dt, MPI_Op op)
{
    return check_reduce_scatter(func, c, sbuf, rbuf, rcounts, 0, 0, dt, op);
}

int tern_check_reduce_scatter_block(const char *func, tern_comm_t *c, const void *sbuf,
                                    const void *rbuf, MPI_Count rcount, MPI_Datatype dt, MPI_Op op)
{
    return check_reduce_scatter(func, c, sbuf, rbuf, TERN_NO_NUMS, rcount, 1, dt, op);
}

int tern_check_scan(const char *func, tern_comm_t *c, const void *sbuf, const void *rbuf,
                    MPI_Count count, MPI_Datatype dt, MPI_Op op)
{
    if (c->is_inter)
        return tern_mpi_error(c->handle, MPI_ERR_COMM, func,
                              "MPI defines this collective on intracommunicators only");
    return check_reduction(func, c->handle, sbuf, rbuf, count, dt, op, 1);
}

/* ---- MPI_Reduce_local ------------------------------------------------- */

int tern_check_reduce_local(const char *func, const void *inbuf, const void *inoutbuf,
                            MPI_Count count, MPI_Datatype dt, MPI_Op op)
{
    size_t size;
    int err;
    if ((err = tern_check_count(func, MPI_COMM_NULL, count)) ||
        (err = tern_check_datatype(func, MPI_COMM_NULL, dt, &size)) ||
        (err = tern_check_buffer(func, MPI_COMM_NULL, inbuf, count, size)) ||
        (err = tern_check_buffer(func, MPI_COMM_NULL, inoutbuf, count, size)))
        return err;
    /* No in-place form here (inoutbuf is already both); MPICH's reduce_local. */
    if (inbuf == MPI_IN_PLACE)
        return in_place_misuse(func, MPI_COMM_NULL, "inbuf");
    if (inoutbuf == MPI_IN_PLACE)
        return in_place_misuse(func, MPI_COMM_NULL, "inoutbuf");
    if (SAME_BUF(inbuf, inoutbuf) && count > 0)
        return tern_mpi_error(MPI_COMM_NULL, MPI_ERR_BUFFER, func,
                              "inbuf and inoutbuf are the same buffer %p", inbuf);
    return check_op(func, MPI_COMM_NULL, op, dt);
}
