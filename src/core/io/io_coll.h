/* Collective buffering (two-phase I/O) for the collective data-access
 * calls: a few ranks, the aggregators, each own a domain of the file's
 * bytes; in rounds of cb_buffer_size, every rank sends the aggregators the
 * pieces of its access that fall in their window (a list of file pieces,
 * then their data), and each aggregator writes the pieces it received,
 * in file order, one writev per run of adjacent pieces (reads: reads its
 * window once and sends every rank its pieces). Automatic buffering
 * leaves accesses that do not interleave, or whose pieces are large, to
 * each rank.
 * Pipelined: a thread of the call writes round k (reads round k + 1)
 * while the next exchange proceeds, in a second window.
 * docs/design.md, "I/O", says how aggregators and domains are chosen. */
#ifndef TERN_CORE_IO_COLL_H
#define TERN_CORE_IO_COLL_H

#include "core/io/file.h"

/* Every rank of f's communicator calls it together. pos: the first stream
 * byte of this rank's access (-1: the rank takes part with no data, e.g.
 * its own arguments were bad); *bytes: bytes moved for this rank. *used 0:
 * the accesses do not interleave and the hint is automatic, so nothing
 * moved: each rank does its own (the same answer on every rank); reads
 * of a file open read-only, outside fault-tolerant mode, with the hint
 * automatic, through views that read directly on every rank
 * (f->views_direct), and writes in nonatomic mode outside fault-tolerant
 * mode, with the hint automatic, through views
 * without holes on every rank (f->views_dense), decide so at once, with no
 * exchange at all. Returns this rank's status. */
tern_status_t tern_io_coll_access(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                                  MPI_Count count, MPI_Datatype dt, size_t *bytes, int *used);
/* The same in two steps, so that the rounds can run on another thread
 * (io_async.h): prepare, in the call on f's communicator, walks this
 * rank's pieces and allgathers the extents; *plan_p NULL: nothing to do
 * through aggregators (*used 0, the status this rank's; or an error).
 * run does the rounds and the agreement on comm (f's communicator or a
 * duplicate of it; every rank on the same one), under the entry points'
 * lock when another thread may use MPI; the caller frees the plan. The
 * plan keeps buf, count and dt (not a reference: the caller's). */
typedef struct tern_io_coll tern_io_coll_t;
tern_status_t tern_io_coll_prepare(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                                   MPI_Count count, MPI_Datatype dt, tern_io_coll_t **plan_p,
                                   int *used);
tern_status_t tern_io_coll_run(tern_io_coll_t *plan, tern_comm_t *comm, size_t *bytes);
void tern_io_coll_free(tern_io_coll_t *plan);
/* Whether f's collective calls use collective buffering for this
 * direction: the hint romio_cb_read/write (automatic: yes when the file's
 * communicator has more than one rank). */
int tern_io_coll_wanted(const tern_file_t *f, int write);
/* Whether reads through view v never gain from buffering: v has no holes
 * (every access one range), or every piece of its filetype is at least
 * the size that automatic buffering leaves to each rank (an access's
 * pieces are then all that large but its first and last). */
int tern_io_coll_view_direct(const tern_io_view_t *v);

#endif
