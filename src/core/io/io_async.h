/* Nonblocking I/O that progresses while the program computes: a worker
 * thread per process runs the file system's calls of independent
 * nonblocking accesses (MPI_File_iread/iwrite and their _at and _shared
 * forms, and the collective ones whose ranks each move their own range).
 * The calling thread does what needs MPI (the shared pointer, the
 * collective's decision) and packs non-contiguous memory before queuing;
 * the progress engine completes the request (and unpacks a read) once the
 * worker is done, so no request or datatype is touched by two threads. */
#ifndef TERN_CORE_IO_ASYNC_H
#define TERN_CORE_IO_ASYNC_H

#include "core/io/file.h"

/* Queues the move of count elements of dt between buf and stream bytes
 * from pos of f's view; *req_p: a request that completes when it is done. */
tern_status_t tern_io_async_start(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                                  MPI_Count count, MPI_Datatype dt, tern_req_t **req_p);
/* Waits until f has no queued or running access (MPI_File_close, set_view,
 * set_size: the program must have completed them; this keeps a late one
 * from touching a closed descriptor). */
void tern_io_async_drain(tern_file_t *f);
/* Stops the worker (MPI_Finalize). */
void tern_io_async_finalize(void);

#endif
