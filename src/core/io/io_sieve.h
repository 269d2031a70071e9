/* Data sieving: how an independent access moves the file pieces of a
 * range of its stream (MPI-5.0 14.6 leaves it to the implementation; the
 * hints are ROMIO's, docs/design.md "I/O").
 *
 * The pieces of the range come in file order from the view. They are
 * gathered into groups whose span (first piece's start to last piece's
 * end) fits the sieving buffer: ind_rd_buffer_size for reads,
 * ind_wr_buffer_size for writes. A group is moved either piece by piece
 * (one pread/pwrite each) or sieved:
 *  - a read reads the group's whole span once and copies the pieces out;
 *  - a write takes an exclusive byte-range lock on the span, reads it,
 *    copies the pieces in and writes the span back (read-modify-write), so
 *    that another process's bytes in the gaps are written back as they
 *    were and a concurrent sieving writer waits for the lock. Pieces of a
 *    non-contiguous write that go one by one are written under a shared
 *    lock on their group's span, so they never land inside another
 *    process's read-modify-write. A contiguous write takes no lock (ROMIO
 *    neither): a program that mixes one with another process's sieving
 *    writes over the same bytes sets romio_ds_write to disable. On a file
 *    system without byte-range locks a write group goes piece by piece,
 *    unlocked (right for writers of disjoint bytes).
 * romio_ds_read and romio_ds_write choose: enable sieves every group of
 * two pieces or more, disable none, automatic (the default) those where it
 * pays by a cost model: a system call costs about as much as copying
 * SIEVE_CALL_BYTES (io_sieve.c), so a group is sieved when its span plus
 * one call is cheaper than one call per piece (writes count the span
 * twice, read and written back, and the lock's two calls), and a gap
 * longer than that ends a group. Files opened MPI_MODE_WRONLY that the
 * driver could not open for reading too, and accesses already under the
 * atomic-mode lock, write piece by piece or sieve without a second lock. */
#ifndef TERN_CORE_IO_SIEVE_H
#define TERN_CORE_IO_SIEVE_H

#include "core/io/file.h"

/* Moves stream bytes [pos, pos + len) of f's view between mem (contiguous)
 * and the file; held: the caller holds the atomic-mode lock over the
 * access's whole span (a sieving write then locks nothing more). *done:
 * bytes moved (fewer only on a read that met the end of the file). */
tern_status_t tern_io_sieve_move(tern_file_t *f, int write, MPI_Offset pos, char *mem,
                                 size_t len, int held, size_t *done);

#endif
