/* The shared file pointer of a file (MPI-5.0 14.4.4): one offset, in
 * etypes of the view, that every rank of the file's group moves by
 * fetch-and-add. Shared-pointer calls are not collective (but the ordered
 * ones, seek_shared and set_view), so its state must exist before any rank
 * may touch it, and most files never use it.
 *
 * A file whose ranks are all on one node keeps the pointer in a word of
 * shared memory that costs open nothing: its name follows from the file's
 * communicator ("/tern-<job>-sp-<leader world rank>-<context id>"), and the
 * first rank to use the pointer creates it (zero, the pointer at open),
 * the others attach to it; close (after its agreement) unlinks it. A file
 * across nodes keeps it in an MPI_Offset at rank 0 of a window over the
 * file's communicator, created by open. */
#ifndef TERN_CORE_IO_IO_SHARED_H
#define TERN_CORE_IO_IO_SHARED_H

#include "core/io/file.h"

/* Open's part (collective on f->comm, after the file is open everywhere):
 * the window across nodes, nothing on one node. */
tern_status_t tern_io_shared_open(tern_file_t *f);
/* Adds n etypes to the shared pointer; *old: its value before. */
tern_status_t tern_io_shared_fetch_add(tern_file_t *f, MPI_Offset n, MPI_Offset *old);
/* Sets the shared pointer (collective: rank 0 writes, all wait in one
 * barrier after). Call it right after an agreement of every rank: that
 * allreduce is the barrier before. */
tern_status_t tern_io_shared_set(tern_file_t *f, MPI_Offset value);
/* ULFM: revokes the window, if the file has one. */
tern_status_t tern_io_shared_revoke(tern_file_t *f);
/* Close's part, after its agreement (a round that every rank enters
 * after its last use of the pointer): frees the window (whose free is a
 * barrier) or, on one node, rank 0 removes the word. A revoked file meets
 * nobody: each rank removes the name. */
tern_status_t tern_io_shared_close(tern_file_t *f);
/* At MPI_Finalize with f still open: unmaps and removes the word, and
 * forgets the window (freed with the others), with no collective. */
void tern_io_shared_forget(tern_file_t *f);

#endif
