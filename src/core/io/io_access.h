/* Data access (MPI-5.0 14.4): reads and writes through a file's view, at
 * explicit offsets, at the individual file pointer and at the shared one;
 * blocking, nonblocking, collective, split collective and ordered. One
 * entry takes them all: what it does is the flags' (TERN_IO_*). */
#ifndef TERN_CORE_IO_ACCESS_H
#define TERN_CORE_IO_ACCESS_H

#include "core/datatype/dtype_nums.h"
#include "core/io/file.h"

enum {
    TERN_IO_READ = 0,
    TERN_IO_WRITE = 1,
    /* Where (one of): */
    TERN_IO_AT = 0 << 1,         /* an explicit offset */
    TERN_IO_INDIVIDUAL = 1 << 1, /* the individual file pointer */
    TERN_IO_SHARED = 2 << 1,     /* the shared file pointer */
    TERN_IO_ORDERED = 3 << 1,    /* the shared pointer, ranks in order (collective) */
    TERN_IO_WHERE = 3 << 1,
    TERN_IO_COLLECTIVE = 1 << 3,
};

/* Moves count elements of dt between buf and the file: flags as above,
 * offset for TERN_IO_AT (etypes of the view). req_p NULL: blocking, the
 * status filled; otherwise a request, complete when the data has moved. */
tern_status_t tern_file_access(tern_file_t *f, int flags, MPI_Offset offset, void *buf,
                               MPI_Count count, MPI_Datatype dt, MPI_Status *status,
                               tern_req_t **req_p);
/* Moves stream bytes [pos, pos + len) of f's view between mem
 * (contiguous) and the file, under the atomic-mode lock; *moved: bytes
 * moved (fewer only for a read at the end of the file). Touches no MPI
 * object but f's descriptor and view: the I/O worker calls it. */
tern_status_t tern_io_move(tern_file_t *f, int write, MPI_Offset pos, char *mem, size_t len,
                           size_t *moved);

/* Split collectives: _begin starts (flags as above, TERN_IO_COLLECTIVE
 * implied), _end returns its status; one at a time per file. */
tern_status_t tern_file_split_begin(tern_file_t *f, int flags, MPI_Offset offset, void *buf,
                                    MPI_Count count, MPI_Datatype dt);
tern_status_t tern_file_split_end(tern_file_t *f, const void *buf, MPI_Status *status);

/* Pointers (etypes of the view). */
tern_status_t tern_file_seek(tern_file_t *f, MPI_Offset offset, int whence);
tern_status_t tern_file_get_position(tern_file_t *f, MPI_Offset *offset);
tern_status_t tern_file_seek_shared(tern_file_t *f, MPI_Offset offset, int whence);
tern_status_t tern_file_get_position_shared(tern_file_t *f, MPI_Offset *offset);
tern_status_t tern_file_get_byte_offset(tern_file_t *f, MPI_Offset offset, MPI_Offset *disp);

/* Views (view.h) on a file. */
tern_status_t tern_file_set_view(tern_file_t *f, MPI_Offset disp, MPI_Datatype etype,
                                 MPI_Datatype filetype, const char *datarep, MPI_Info info);
tern_status_t tern_file_get_view(tern_file_t *f, MPI_Offset *disp, MPI_Datatype *etype,
                                 MPI_Datatype *filetype, char *datarep);
tern_status_t tern_file_get_type_extent(tern_file_t *f, MPI_Datatype dt, tern_num_ref_t extent);

#endif
