/* Data representations other than native (MPI-5.0 14.5): external32 and
 * the representations a program registers with MPI_Register_datarep(_c).
 *
 * A view whose datarep is one of these (view.h: v->rep) sees the file in
 * the representation's form. Placement: the etype, the filetype and the
 * data of an access are measured in file bytes: the view's pieces are the
 * filetype's layout in the file (dtype_filerep.h: the type rebuilt with
 * each basic element taking its file extent; displacements counted in
 * elements scale, byte displacements are kept as given, 14.5.1), and the
 * stream of an access is the data items of the program's buffer in the
 * file's form, back to back. Conversion: a write converts the buffer's
 * items into a staging buffer and writes its bytes through the view; a
 * read reads the bytes and converts them into the buffer. external32's
 * conversion is the datatype engine's; a registered representation's is
 * the program's functions, called with the item position of each chunk
 * (MPI_CONVERSION_FN_NULL: the items are moved as they are in memory, and
 * their file extents must then be their native sizes). "internal" is
 * native in Tern (v->rep NULL for both). Registrations last as long as the
 * process (the standard has no call that removes one). */
#ifndef TERN_CORE_IO_DATAREP_H
#define TERN_CORE_IO_DATAREP_H

#include "base/status.h"
#include <mpi.h>
#include <stddef.h>

typedef struct tern_io_datarep tern_io_datarep_t;
struct tern_file;

/* The representation called name (external32 or a registered one); NULL
 * when there is none such (native and internal are not representations
 * here: the view takes them itself). */
const tern_io_datarep_t *tern_io_datarep_find(const char *name);
const char *tern_io_datarep_name_of(const tern_io_datarep_t *rep);

/* MPI_Register_datarep(_c): read_fn / write_fn NULL for no conversion
 * (MPI_CONVERSION_FN_NULL). TERN_ERR_DUP_DATAREP when name is taken
 * (native, internal and external32 included). */
tern_status_t tern_io_datarep_register(const char *name, MPI_Datarep_conversion_function *read_fn,
                                       MPI_Datarep_conversion_function *write_fn,
                                       MPI_Datarep_extent_function *extent_fn, void *extra_state);
tern_status_t tern_io_datarep_register_c(const char *name,
                                         MPI_Datarep_conversion_function_c *read_fn,
                                         MPI_Datarep_conversion_function_c *write_fn,
                                         MPI_Datarep_extent_function *extent_fn,
                                         void *extra_state);

/* dt's layout in the file (a new committed type; the caller releases it). */
tern_status_t tern_io_datarep_layout(const tern_io_datarep_t *rep, MPI_Datatype dt,
                                     MPI_Datatype *out);
/* dt's extent in the file (MPI_File_get_type_extent). */
tern_status_t tern_io_datarep_type_extent(const tern_io_datarep_t *rep, MPI_Datatype dt,
                                          MPI_Aint *extent);
/* The file bytes of count elements of dt (the stream an access moves). */
tern_status_t tern_io_datarep_file_bytes(const tern_io_datarep_t *rep, MPI_Count count,
                                         MPI_Datatype dt, size_t *bytes);

/* Moves len stream bytes between mem and the file from stream byte pos
 * (io_access.c's move_range); *done: bytes moved (fewer only on a read
 * that met the end of the file). */
typedef tern_status_t (*tern_io_move_fn)(struct tern_file *f, int write, MPI_Offset pos,
                                         char *mem, size_t len, size_t *done);
/* An access of count elements of dt at buf through f's view, whose
 * representation is rep, from stream byte pos: converted in chunks of at
 * most stage file bytes (or one data item); *bytes: native bytes of the
 * items moved (the status's count), *moved: their stream bytes. */
tern_status_t tern_io_datarep_transfer(struct tern_file *f, const tern_io_datarep_t *rep,
                                       int write, MPI_Offset pos, void *buf, MPI_Count count,
                                       MPI_Datatype dt, size_t stage, tern_io_move_fn move,
                                       size_t *bytes, size_t *moved);

/* Whether rep's conversion is Tern's own (external32), which may run away
 * from the program's thread: nonblocking accesses through such a view
 * queue like native ones (io_async.h). A registered representation's
 * functions are the program's and run in its calls. */
int tern_io_datarep_async_ok(const tern_io_datarep_t *rep);
/* The whole access of count elements of dt at buf in its file form, in
 * one buffer: *stage (malloc'd; NULL when *len is 0; the caller frees
 * it), *len its file bytes; a write's items are converted into it now. */
tern_status_t tern_io_datarep_stage(struct tern_file *f, const tern_io_datarep_t *rep,
                                    int write, void *buf, MPI_Count count, MPI_Datatype dt,
                                    char **stage, size_t *len);
/* After got file bytes of a staged access moved: a read converts the
 * whole data items among them into buf; *bytes: the native bytes of those
 * items (the status's count) and *moved their file bytes, for either
 * direction. */
tern_status_t tern_io_datarep_unstage(struct tern_file *f, const tern_io_datarep_t *rep,
                                      int write, const char *stage, size_t got, void *buf,
                                      MPI_Count count, MPI_Datatype dt, size_t *bytes,
                                      size_t *moved);

/* A collective access with collective buffering (io_coll.h) through f's
 * converting view: the whole access converted into a buffer of its file
 * form, which the aggregators move as bytes (reads: converted after). pos
 * -1: this rank takes part with no data. *used as tern_io_coll_access's
 * (0: nothing moved, each rank does its own access); *bytes, *moved as
 * tern_io_datarep_transfer's. *used 0 and OK: *left is the access's file
 * form made already (a write's items converted; NULL when it has no
 * bytes), *left_len its bytes, for the caller's own access to move and
 * free (so that no item is converted twice). */
tern_status_t tern_io_datarep_coll(struct tern_file *f, int write, MPI_Offset pos, void *buf,
                                   MPI_Count count, MPI_Datatype dt, size_t *bytes,
                                   size_t *moved, int *used, char **left, size_t *left_len);

#endif
