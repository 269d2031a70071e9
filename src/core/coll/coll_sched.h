/* Collective schedules: every collective algorithm is written once, as a
 * list of steps (send, receive, local reduction, copy, pack, unpack), and
 * the same schedule serves the blocking call (run to completion), the
 * nonblocking one (advanced by a progress hook) and the persistent one
 * (restarted by MPI_Start). A blocking call's schedule is "immediate": each
 * step runs as the algorithm adds it, in the same order, so no step list
 * is stored or interpreted.
 *
 * Execution: consecutive send/receive steps are posted together; a local
 * step (reduce, copy, pack, unpack) or an explicit fence first waits for
 * every posted transfer. So an algorithm's rounds are "post all transfers,
 * wait, combine", and the order of local reductions is fixed by the
 * schedule, never by message arrival: results are bitwise reproducible.
 *
 * Tags: a schedule takes the communicator's next collective tag
 * (tern_comm_next_coll_tag: blocking and nonblocking collectives count
 * apart) on the collective context (context_id + 1). Every rank calls
 * collectives in the same order, so the numbers agree, and concurrent
 * nonblocking collectives on one communicator never match each other's
 * messages. Within one schedule,
 * MPI's non-overtaking order keeps a pair's messages in sequence. */
#ifndef TERN_CORE_COLL_SCHED_H
#define TERN_CORE_COLL_SCHED_H

#include "base/status.h"
#include "core/comm/comm.h"
#include "core/pt2pt/request.h"
#include <mpi.h>
#include <stddef.h>

typedef struct tern_sched tern_sched_t;

/* A schedule on comm using the next collective tag of its kind. NULL: out
 * of memory. Freed schedules are pooled with their buffers, so a small
 * collective allocates nothing.
 * blocking: an "immediate" schedule for a blocking call: each step runs as
 * it is added, in the order a deferred run would (transfers posted at once,
 * local steps and fences after every posted transfer completed), so no step
 * list is kept or interpreted; tern_sched_run then waits for the last
 * transfers. Such a schedule cannot become a request. */
tern_sched_t *tern_sched_create(tern_comm_t *comm, int blocking);
void tern_sched_free(tern_sched_t *s);
/* Every receive must get exactly the bytes it posts (a broadcast, whose
 * ranks pass the same count and type): a larger or smaller message fails
 * the schedule with TERN_ERR_TRUNCATE and words naming both sizes, and its
 * later sends go out empty so the ranks they reach fail too. */
void tern_sched_exact_sizes(tern_sched_t *s);

/* Building (errors are remembered and returned by start/run). Peers are
 * ranks of comm (for intercommunicators: ranks of the remote group). */
void tern_sched_send(tern_sched_t *s, const void *buf, size_t bytes, int peer);
void tern_sched_recv(tern_sched_t *s, void *buf, size_t bytes, int peer);
/* inout = in op inout over count elements of dt (packed). */
void tern_sched_reduce(tern_sched_t *s, const void *in, void *inout, size_t count,
                       MPI_Datatype dt, MPI_Op op);
/* memmove-like copy; a copy onto itself is skipped. */
void tern_sched_copy(tern_sched_t *s, const void *src, void *dst, size_t bytes);
void tern_sched_pack(tern_sched_t *s, const void *buf, size_t count, MPI_Datatype dt, void *out);
void tern_sched_unpack(tern_sched_t *s, const void *in, void *buf, size_t count, MPI_Datatype dt);
/* Send/receive steps added from now on run on comm: the schedule's own
 * communicator, or (intercommunicator collectives) its local_comm, which
 * gets its own collective tag for this schedule. */
void tern_sched_use_comm(tern_sched_t *s, tern_comm_t *comm);
/* Keeps a user op alive while the schedule exists (MPI_Op_free may come
 * before a nonblocking or persistent collective completes). */
void tern_sched_hold_op(tern_sched_t *s, MPI_Op op);
/* A step done when fn(ctx, &st) returns nonzero (st: its error, TERN_OK
 * before the call); like a local step it first waits for every posted
 * transfer, and until it is done the schedule goes no further: a blocking
 * call keeps calling it (progressing, yielding when oversubscribed), a
 * nonblocking one calls it again from progress. It must return at once
 * when it cannot go on. dt (or MPI_DATATYPE_NULL) is kept alive with the
 * step. The shm collectives wait on their flags with it. */
typedef int (*tern_sched_poll_fn)(void *ctx, tern_status_t *st);
void tern_sched_poll(tern_sched_t *s, tern_sched_poll_fn fn, void *ctx, MPI_Datatype dt);
/* Words for the error a poll step is about to return (the first one
 * noted wins): the blocking call's detail, the request's error text. */
void tern_sched_note(tern_sched_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Wait for every transfer posted so far. */
void tern_sched_fence(tern_sched_t *s);
/* Scratch memory owned by the schedule (freed with it); NULL on failure
 * (also recorded as the schedule's error). */
void *tern_sched_tmp(tern_sched_t *s, size_t bytes);
/* The first error of the building phase, if any. */
tern_status_t tern_sched_error(const tern_sched_t *s);

/* Blocking: start and run to completion. */
tern_status_t tern_sched_run(tern_sched_t *s);

/* Nonblocking: a generic request that owns the schedule; it starts now
 * (persistent = 0) or at each MPI_Start (persistent = 1). */
tern_status_t tern_sched_request(tern_sched_t *s, int persistent, tern_req_t **req_p);

#endif
