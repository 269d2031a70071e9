/* Nonblocking I/O that progresses while the program computes: a worker
 * thread per process runs the file system's calls of independent
 * nonblocking accesses (MPI_File_iread/iwrite and their _at and _shared
 * forms, and the collective ones whose ranks each move their own range).
 * The calling thread does what needs MPI (the shared pointer, the
 * collective's decision) and packs non-contiguous memory (or converts a
 * write to external32) before queuing; the progress engine completes the
 * request (and unpacks or converts a read) once the worker is done, so no
 * request or datatype is touched by two threads. A registered
 * representation's accesses run in the call (io_datarep.h).
 * Collectives that buffer through aggregators are communication: each
 * file has a thread of its own for them that runs their rounds under the
 * entry points' lock (docs/design.md, "I/O"). */
#ifndef TERN_CORE_IO_ASYNC_H
#define TERN_CORE_IO_ASYNC_H

#include "core/io/file.h"
#include "core/io/io_coll.h"

/* Queues the move of count elements of dt between buf and stream bytes
 * from pos of f's view; *req_p: a request that completes when it is done.
 * staged: NULL, or through a converting view the access's file form made
 * already (tern_io_datarep_stage, staged_len bytes), which the request
 * takes (freed on failure too). */
tern_status_t tern_io_async_start(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                                  MPI_Count count, MPI_Datatype dt, char *staged,
                                  size_t staged_len, tern_req_t **req_p);
/* A buffered collective (io_coll.h) of f whose rounds run on f's own
 * thread, on a duplicate of f's communicator, under the entry points'
 * lock, in the order the calls queued them (the same on every rank, as
 * the standard requires of nonblocking collectives): the thread starts
 * with f's first. plan: prepared by every rank (this one's then owned by
 * the queue); req_p NULL: this rank's own call failed, it takes part
 * with no data and no request; otherwise *req_p completes with the
 * rounds' status and bytes. dt is retained until then. A failure to
 * queue runs the rounds in the call instead (the others wait for them
 * on the same communicator), so every rank still takes part.
 * conv: NULL, or for an access through a converting view (its plan then
 * moves conv->stage as bytes) what completes it: a read converted into
 * conv->buf (count elements of dt) after the rounds; the stage is the
 * queue's from the call on. */
typedef struct {
    const struct tern_io_datarep *rep; /* NULL: no conversion */
    int write;
    char *stage; /* the access's file form (io_datarep.h) */
    void *buf;
    MPI_Count count;
} tern_io_async_conv_t;
tern_status_t tern_io_async_coll(tern_file_t *f, tern_io_coll_t *plan, MPI_Datatype dt,
                                 const tern_io_async_conv_t *conv, tern_req_t **req_p);
/* Whether f's buffered nonblocking collectives may go to its thread: f's
 * communicator has more than one rank (the same answer everywhere), and
 * the entry points lock (MPI_File_open turned it on for such files). */
int tern_io_async_coll_ok(const tern_file_t *f);
/* At MPI_File_open of a file over more than one rank: turns the entry
 * points' lock on (the caller is then the only thread in MPI). */
void tern_io_async_coll_open(const tern_file_t *f);
/* Stops f's thread and frees its queue (f's accesses drained);
 * keep_comm: the duplicate communicator goes with the others
 * (MPI_Finalize). */
void tern_io_async_coll_end(tern_file_t *f, int keep_comm);
/* The duplicate communicator of f's thread, or NULL (MPIX_File_revoke
 * revokes it too). */
tern_comm_t *tern_io_async_coll_comm(const tern_file_t *f);
/* Waits until f has no queued or running access (MPI_File_close, set_view,
 * set_size: the program must have completed them; this keeps a late one
 * from touching a closed descriptor). */
void tern_io_async_drain(tern_file_t *f);
/* Stops the worker (MPI_Finalize). */
void tern_io_async_finalize(void);

#endif
