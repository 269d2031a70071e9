/* File views (MPI-5.0 14.3): which bytes of a file a rank sees, and in
 * which representation (14.5; io_datarep.h: with external32 or a
 * registered representation, every size below is in the file's
 * representation: the stream is the data in the file's form, the pieces
 * are the filetype's layout in the file).
 *
 * A view is a displacement, an etype and a filetype tiled from the
 * displacement on. The data a rank reads or writes is a stream of bytes
 * (the packed form of the program's buffer); its byte p lands in the file
 * at disp + k * extent + the offset of byte r of one filetype's data
 * (k = p / size, r = p % size). One filetype's data is kept flattened:
 * its pieces (offset, length) in type-map order with their running sums,
 * so a position is found by a binary search and the pieces of an access
 * are walked in order. */
#ifndef TERN_CORE_IO_VIEW_H
#define TERN_CORE_IO_VIEW_H

#include "base/status.h"
#include "core/datatype/datatype.h"
#include <mpi.h>
#include <stddef.h>

typedef enum {
    TERN_DATAREP_NATIVE,
    TERN_DATAREP_INTERNAL,
    TERN_DATAREP_EXTERNAL32,
    TERN_DATAREP_USER /* registered with MPI_Register_datarep(_c) */
} tern_datarep_t;

struct tern_io_datarep;

typedef struct tern_io_view {
    MPI_Offset disp;
    MPI_Datatype etype, filetype; /* the view holds a reference on each */
    tern_datarep_t datarep;
    /* The representation that converts (external32, registered); NULL:
     * the file holds the data as memory does (native, internal). */
    const struct tern_io_datarep *rep;
    long esize;        /* bytes of one etype */
    long fsize;        /* bytes of data in one filetype */
    MPI_Aint fextent;  /* bytes one filetype spans in the file */
    tern_dt_seg_t *segs; /* one filetype's pieces (NULL: contiguous, segs_one) */
    size_t nsegs;
    size_t *before;    /* before[j]: data bytes in pieces 0..j-1 */
    tern_dt_seg_t segs_one;
    size_t before_one;
} tern_io_view_t;

/* The view every file starts with: displacement 0, MPI_BYTE, MPI_BYTE,
 * native. */
void tern_io_view_default(tern_io_view_t *v);
/* A view of etype and filetype at disp (checked: the filetype is made of
 * whole etypes, its pieces ascend); writable: pieces must not overlap. */
tern_status_t tern_io_view_make(tern_io_view_t *v, MPI_Offset disp, MPI_Datatype etype,
                                MPI_Datatype filetype, const char *datarep, int writable);
void tern_io_view_free(tern_io_view_t *v);

/* Calls fn(file offset, length, arg) for the file pieces of the stream
 * bytes [pos, pos + len), in order, adjacent pieces merged; stops at fn's
 * first non-OK status and returns it. */
typedef tern_status_t (*tern_io_piece_fn)(MPI_Offset off, size_t len, void *arg);
tern_status_t tern_io_view_walk(const tern_io_view_t *v, MPI_Offset pos, size_t len,
                                tern_io_piece_fn fn, void *arg);
/* Whether the view's filetype has no holes (the default view's MPI_BYTE,
 * any contiguous type): every access through it is one range of the
 * file. */
int tern_io_view_dense(const tern_io_view_t *v);
/* The file offset of stream byte pos. */
MPI_Offset tern_io_view_offset(const tern_io_view_t *v, MPI_Offset pos);
/* The stream bytes that lie before file offset off (the end of the file in
 * the view: MPI_SEEK_END, MPI_MODE_APPEND). */
MPI_Offset tern_io_view_bytes_before(const tern_io_view_t *v, MPI_Offset off);
/* The datarep's name. */
const char *tern_io_datarep_name(tern_datarep_t d);
/* The name of a view's datarep (MPI_File_get_view). */
const char *tern_io_view_datarep(const tern_io_view_t *v);

#endif
