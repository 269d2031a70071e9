/* Collectives: entry points for the MPI layer, the algorithm contract and
 * the registry of algorithms.
 *
 * Every collective call goes: normalise the buffers to contiguous packed
 * views (coll.c; pack/unpack steps for non-contiguous types, MPI_IN_PLACE
 * turned into "the send view is the receive view"), pick an algorithm
 * (coll_select.c: TERN_<COLL>_ALGORITHM, else the selection table), let it
 * build a schedule (coll/<coll>_<algorithm>.c), then run the schedule
 * (blocking), start it (nonblocking) or keep it for MPI_Start
 * (persistent). */
#ifndef TERN_CORE_COLL_H
#define TERN_CORE_COLL_H

#include "base/profile.h"
#include "base/pvars.h"
#include "base/status.h"
#include "core/coll/coll_sched.h"
#include "core/comm/comm.h"
#include "core/datatype/dtype_nums.h"
#include "core/pt2pt/request.h"
#include <stdio.h>

typedef enum {
    TERN_COLL_BARRIER,
    TERN_COLL_BCAST,
    TERN_COLL_GATHER,
    TERN_COLL_GATHERV,
    TERN_COLL_SCATTER,
    TERN_COLL_SCATTERV,
    TERN_COLL_ALLGATHER,
    TERN_COLL_ALLGATHERV,
    TERN_COLL_ALLTOALL,
    TERN_COLL_ALLTOALLV,
    TERN_COLL_ALLTOALLW,
    TERN_COLL_REDUCE,
    TERN_COLL_ALLREDUCE,
    TERN_COLL_REDUCE_SCATTER,
    TERN_COLL_REDUCE_SCATTER_BLOCK,
    TERN_COLL_SCAN,
    TERN_COLL_EXSCAN,
    TERN_COLL_N
} tern_coll_kind_t;

/* reduce_scatter or reduce_scatter_block: the same code serves both. */
static inline int tern_coll_is_reduce_scatter(tern_coll_kind_t k)
{
    return k == TERN_COLL_REDUCE_SCATTER || k == TERN_COLL_REDUCE_SCATTER_BLOCK;
}

/* What an algorithm sees: contiguous packed buffers and byte counts.
 * A send view equal to the matching part of the receive view means "in
 * place" (copies onto themselves are skipped). */
typedef struct {
    tern_comm_t *comm;
    const void *sbuf;
    void *rbuf;
    /* bcast: the message; gather/scatter/allgather/alltoall: one rank's
     * block. */
    size_t bytes;
    /* Intercommunicator allgather/alltoall: one remote rank's block (the
     * groups may use different block sizes). */
    size_t rbytes;
    /* v and w variants, in bytes, one per rank: alltoallv/w use all four,
     * gatherv/allgatherv rcounts/rdispls, scatterv scounts/sdispls. */
    const size_t *scounts, *sdispls, *rcounts, *rdispls;
    /* Reductions: count elements of dt (packed element size esz), op.
     * reduce_scatter: rcounts[] are element counts per rank. */
    size_t count, esz;
    MPI_Datatype dt;
    MPI_Op op;
    int commutative;
    int root;
    /* A blocking call (run to completion now): the shm algorithms serve
     * only these. */
    int blocking;
} tern_coll_args_t;

typedef tern_status_t (*tern_coll_build_fn)(tern_sched_t *s, const tern_coll_args_t *a);

/* Algorithm flags: when an algorithm cannot serve a call, selection falls
 * back to the first registered one of the collective (always general). */
#define TERN_COLL_NEEDS_COMMUTATIVE 1u
#define TERN_COLL_NEEDS_POW2 2u
/* Worth it only when the communicator spans several nodes with several
 * ranks on some node. */
#define TERN_COLL_NODE_AWARE 8u
/* Serves intercommunicators (and only them). */
#define TERN_COLL_INTER 4u
/* Node-level shared memory (shm_region.h): blocking calls on communicators
 * whose ranks all share one node. */
#define TERN_COLL_SHM 16u

typedef struct {
    tern_coll_kind_t kind;
    const char *name;
    tern_coll_build_fn build;
    unsigned flags;
    unsigned index; /* in the registry: its tern_pvar_coll slot (TERN_COLL_ALGO_*) */
} tern_coll_algo_t;

/* The registry (coll_registry.c): every algorithm, in one list. */
const tern_coll_algo_t *tern_coll_algorithms(size_t *n_p);
/* "bcast" for TERN_COLL_BCAST. */
const char *tern_coll_kind_name(tern_coll_kind_t kind);
const tern_coll_algo_t *tern_coll_find(tern_coll_kind_t kind, const char *name);

/* Selection (coll_select.c). */
const tern_coll_algo_t *tern_coll_select(const tern_coll_args_t *a, tern_coll_kind_t kind,
                                         size_t msg_bytes);
/* Prints the selection table in effect (tern-info). */
void tern_coll_print_table(FILE *f);

/* Counts a call of algorithm al (its tern_pvar_coll slot and its bytes;
 * the calls of all collectives, tern_coll_calls, are the slots' sum) and,
 * when something watches (base/pvars.h: the job's profile, a tool's
 * handle bound to a communicator, a listener of the algorithm-chosen
 * event), tells the watchers out of line. Inline, with the slot stored in
 * the algorithm: out of line it cost each collective ~30 instructions, and
 * one watch word instead of a test per watcher saves a load and a branch
 * (docs/performance.md, "Cost of the tools interface's counters"). */
void tern_coll_count_watched(unsigned algo, const tern_comm_t *comm, size_t msg_bytes);
static inline void tern_coll_count(const tern_coll_algo_t *al, const tern_comm_t *comm,
                                   size_t msg_bytes)
{
    unsigned i = al->index;
    tern_pvar_coll_add(i, 1);
    tern_pvar_add(TERN_PVAR_COLL_BYTES, msg_bytes);
    if (__builtin_expect(tern_watching(), 0))
        tern_coll_count_watched(i, comm, msg_bytes);
}
/* The selection table in effect, row by row (tern-info --json): rows are
 * grouped by collective and tried in order. */
/* The load a selection row applies to: any, only while the node has no
 * more ranks than CPUs ("fit"), or only when it has more ("over";
 * tern_rt.node_oversubscribed). */
typedef enum { TERN_COLL_LOAD_ANY, TERN_COLL_LOAD_FIT, TERN_COLL_LOAD_OVER } tern_coll_load_t;
/* "any", "fit", "over". */
const char *tern_coll_load_name(tern_coll_load_t load);
typedef struct {
    tern_coll_kind_t kind;
    int max_procs;    /* 0: any */
    size_t max_bytes; /* SIZE_MAX: any */
    const tern_coll_algo_t *algo;
    tern_coll_load_t load;
} tern_coll_row_t;
/* *source_p: "built-in" or the TERN_COLL_TUNING_FILE path. */
const tern_coll_row_t *tern_coll_table(size_t *n_p, const char **source_p);
/* The algorithm TERN_<COLL>_ALGORITHM forces, or NULL (auto). */
const tern_coll_algo_t *tern_coll_forced(tern_coll_kind_t kind);
/* Forces kind's algorithm to the one named (auto: the selection table
 * again) from the next call on, and sets its knob (MPI_T_cvar_write);
 * TERN_ERR_ARG for a name no algorithm of kind has. */
tern_status_t tern_coll_set_forced(tern_coll_kind_t kind, const char *name);
/* The kind whose algorithm knob is id, or -1. */
int tern_coll_kind_of_knob(int knob_id);
/* The name of that knob: "TERN_BCAST_ALGORITHM". */
const char *tern_coll_algorithm_knob(tern_coll_kind_t kind);
/* When an algorithm can serve a call, in words ("commutative ops"), or ""
 * when always. */
const char *tern_coll_condition(const tern_coll_algo_t *al);

/* Runs a built schedule in the requested mode: req_p NULL blocks;
 * otherwise a request (started unless persistent). Consumes s. */
tern_status_t tern_coll_launch(tern_sched_t *s, tern_req_t **req_p, int persistent);

/* ---- entry points (coll.c) --------------------------------------------
 * Arguments are already checked by the MPI layer. req_p NULL: blocking;
 * else a nonblocking (persistent = 0) or persistent request. */
tern_status_t tern_coll_barrier(tern_comm_t *comm);
tern_status_t tern_coll_ibarrier(tern_comm_t *comm, tern_req_t **req_p, int persistent);
tern_status_t tern_coll_bcast(tern_comm_t *c, void *buf, size_t count, MPI_Datatype dt, int root,
                              tern_req_t **req_p, int persistent);
tern_status_t tern_coll_gather(tern_comm_t *c, const void *sbuf, size_t scount, MPI_Datatype stype,
                               void *rbuf, size_t rcount, MPI_Datatype rtype, int root,
                               tern_req_t **req_p, int persistent);
tern_status_t tern_coll_gatherv(tern_comm_t *c, const void *sbuf, size_t scount,
                                MPI_Datatype stype, void *rbuf, tern_nums_t rcounts,
                                tern_nums_t displs, MPI_Datatype rtype, int root,
                                tern_req_t **req_p, int persistent);
tern_status_t tern_coll_scatter(tern_comm_t *c, const void *sbuf, size_t scount,
                                MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype,
                                int root, tern_req_t **req_p, int persistent);
tern_status_t tern_coll_scatterv(tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                                 tern_nums_t displs, MPI_Datatype stype, void *rbuf, size_t rcount,
                                 MPI_Datatype rtype, int root, tern_req_t **req_p, int persistent);
tern_status_t tern_coll_allgather(tern_comm_t *c, const void *sbuf, size_t scount,
                                  MPI_Datatype stype, void *rbuf, size_t rcount,
                                  MPI_Datatype rtype, tern_req_t **req_p, int persistent);
tern_status_t tern_coll_allgatherv(tern_comm_t *c, const void *sbuf, size_t scount,
                                   MPI_Datatype stype, void *rbuf, tern_nums_t rcounts,
                                   tern_nums_t displs, MPI_Datatype rtype, tern_req_t **req_p,
                                   int persistent);
tern_status_t tern_coll_alltoall(tern_comm_t *c, const void *sbuf, size_t scount,
                                 MPI_Datatype stype, void *rbuf, size_t rcount, MPI_Datatype rtype,
                                 tern_req_t **req_p, int persistent);
/* alltoallv: one type each side; alltoallw: a type per rank and byte
 * displacements (stypes == NULL means alltoallv). */
tern_status_t tern_coll_alltoallvw(tern_comm_t *c, const void *sbuf, tern_nums_t scounts,
                                   tern_nums_t sdispls, const MPI_Datatype *stypes,
                                   MPI_Datatype stype, void *rbuf, tern_nums_t rcounts,
                                   tern_nums_t rdispls, const MPI_Datatype *rtypes,
                                   MPI_Datatype rtype, tern_req_t **req_p, int persistent);
tern_status_t tern_coll_reduce(tern_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                               MPI_Datatype dt, MPI_Op op, int root, tern_req_t **req_p,
                               int persistent);
tern_status_t tern_coll_allreduce(tern_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                                  MPI_Datatype dt, MPI_Op op, tern_req_t **req_p, int persistent);
/* rcounts.p NULL: reduce_scatter_block with rcount each. */
tern_status_t tern_coll_reduce_scatter(tern_comm_t *c, const void *sbuf, void *rbuf,
                                       tern_nums_t rcounts, size_t rcount, MPI_Datatype dt,
                                       MPI_Op op, tern_req_t **req_p, int persistent);
tern_status_t tern_coll_scan(tern_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                             MPI_Datatype dt, MPI_Op op, int exclusive, tern_req_t **req_p,
                             int persistent);

/* ---- algorithms (coll/<coll>_<algorithm>.c) --------------------------- */
#define TERN_COLL_ALGORITHMS(X)                                                \
    X(BARRIER, barrier, dissemination, 0)                                      \
    X(BCAST, bcast, binomial, 0)                                               \
    X(BCAST, bcast, scatter_allgather, 0)                                      \
    X(GATHER, gather, binomial, 0)                                             \
    X(GATHER, gather, linear, 0)                                               \
    X(GATHERV, gatherv, linear, 0)                                             \
    X(SCATTER, scatter, binomial, 0)                                           \
    X(SCATTER, scatter, linear, 0)                                             \
    X(SCATTERV, scatterv, linear, 0)                                           \
    X(ALLGATHER, allgather, ring, 0)                                           \
    X(ALLGATHER, allgather, recursive_doubling, TERN_COLL_NEEDS_POW2)          \
    X(ALLGATHER, allgather, bruck, 0)                                          \
    X(ALLGATHERV, allgatherv, ring, 0)                                         \
    X(ALLTOALL, alltoall, pairwise, 0)                                         \
    X(ALLTOALL, alltoall, direct, 0)                                           \
    X(ALLTOALL, alltoall, bruck, 0)                                            \
    X(ALLTOALLV, alltoallv, pairwise, 0)                                       \
    X(ALLTOALLW, alltoallw, pairwise, 0)                                       \
    X(REDUCE, reduce, binomial, 0)                                             \
    X(REDUCE, reduce, linear, 0)                                               \
    X(ALLREDUCE, allreduce, recursive_doubling, 0)                             \
    X(ALLREDUCE, allreduce, reduce_bcast, 0)                                   \
    X(ALLREDUCE, allreduce, ring, TERN_COLL_NEEDS_COMMUTATIVE)                 \
    X(ALLREDUCE, allreduce, rabenseifner, TERN_COLL_NEEDS_COMMUTATIVE)         \
    X(REDUCE_SCATTER, reduce_scatter, reduce_scatterv, 0)                      \
    X(REDUCE_SCATTER, reduce_scatter, ring, TERN_COLL_NEEDS_COMMUTATIVE)       \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block, reduce_scatterv, 0)          \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block, ring, TERN_COLL_NEEDS_COMMUTATIVE) \
    X(REDUCE_SCATTER, reduce_scatter, direct, 0)                               \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block, direct, 0)                   \
    X(REDUCE_SCATTER, reduce_scatter, recursive_halving, TERN_COLL_NEEDS_COMMUTATIVE) \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block, recursive_halving, TERN_COLL_NEEDS_COMMUTATIVE) \
    X(SCAN, scan, linear, 0)                                                   \
    X(SCAN, scan, recursive_doubling, 0)                                       \
    X(EXSCAN, exscan, linear, 0)                                               \
    X(EXSCAN, exscan, recursive_doubling, 0)                                   \
    X(BCAST, bcast, linear, 0)                                                 \
    X(BARRIER, barrier, node_aware, TERN_COLL_NODE_AWARE)                                         \
    X(BCAST, bcast, node_aware, TERN_COLL_NODE_AWARE)                                          \
    X(REDUCE, reduce, node_aware, TERN_COLL_NEEDS_COMMUTATIVE | TERN_COLL_NODE_AWARE)              \
    X(ALLREDUCE, allreduce, node_aware, TERN_COLL_NEEDS_COMMUTATIVE | TERN_COLL_NODE_AWARE)        \
    X(BARRIER, barrier, shm, TERN_COLL_SHM)                                    \
    X(BCAST, bcast, shm, TERN_COLL_SHM)                                        \
    X(REDUCE, reduce, shm, TERN_COLL_SHM)                                      \
    X(ALLREDUCE, allreduce, shm, TERN_COLL_SHM)                                \
    X(GATHER, gather, shm, TERN_COLL_SHM)                                      \
    X(SCATTER, scatter, shm, TERN_COLL_SHM)                                    \
    X(ALLGATHER, allgather, shm, TERN_COLL_SHM)                                \
    X(ALLTOALL, alltoall, shm, TERN_COLL_SHM)                                  \
    X(REDUCE_SCATTER, reduce_scatter, shm, TERN_COLL_SHM | TERN_COLL_NEEDS_COMMUTATIVE) \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block, shm, TERN_COLL_SHM | TERN_COLL_NEEDS_COMMUTATIVE) \
    X(BARRIER, barrier, inter, TERN_COLL_INTER)                                \
    X(BCAST, bcast, inter, TERN_COLL_INTER)                                    \
    X(GATHER, gather, inter, TERN_COLL_INTER)                                  \
    X(SCATTER, scatter, inter, TERN_COLL_INTER)                                \
    X(ALLGATHER, allgather, inter, TERN_COLL_INTER)                            \
    X(ALLTOALL, alltoall, inter, TERN_COLL_INTER)                              \
    X(REDUCE, reduce, inter, TERN_COLL_INTER)                                  \
    X(ALLREDUCE, allreduce, inter, TERN_COLL_INTER)                            \
    X(GATHERV, gatherv, inter, TERN_COLL_INTER)                                \
    X(SCATTERV, scatterv, inter, TERN_COLL_INTER)                              \
    X(ALLGATHERV, allgatherv, inter, TERN_COLL_INTER)                          \
    X(ALLTOALLV, alltoallv, inter, TERN_COLL_INTER)                            \
    X(ALLTOALLW, alltoallw, inter, TERN_COLL_INTER)                            \
    X(REDUCE_SCATTER, reduce_scatter, inter, TERN_COLL_INTER)                  \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block, inter, TERN_COLL_INTER)

/* The algorithms' indices in the registry, in the list's order. */
typedef enum {
#define TERN_COLL_ALGO_ID(K, coll, algo, flags) TERN_COLL_ALGO_##coll##_##algo,
    TERN_COLL_ALGORITHMS(TERN_COLL_ALGO_ID)
#undef TERN_COLL_ALGO_ID
    TERN_COLL_ALGO_N
} tern_coll_algo_id_t;

#define TERN_COLL_DECLARE(K, coll, algo, flags)                                \
    tern_status_t tern_coll_##coll##_##algo(tern_sched_t *s, const tern_coll_args_t *a);
TERN_COLL_ALGORITHMS(TERN_COLL_DECLARE)
#undef TERN_COLL_DECLARE

#endif
