/* MPI-IO file handles (MPI-5.0 chapter 14): the file object, opening and
 * closing, sizes, hints, atomicity and the file's error handler.
 *
 * A file owns a duplicate of the communicator it was opened on: the
 * collectives of the file (open, close, set_view, collective data access)
 * run on it, apart from the program's traffic. Its handle is an integer of
 * kind TERN_KIND_FILE like every other handle; MPI_FILE_NULL is the kind's
 * null handle and holds the default file error handler (MPI_ERRORS_RETURN
 * until set), which new files start with and which errors of calls that
 * have no file (MPI_File_open, MPI_File_delete) go to. */
#ifndef TERN_CORE_IO_FILE_H
#define TERN_CORE_IO_FILE_H

#include "base/status.h"
#include "core/comm/comm.h"
#include "core/info/info.h"
#include "core/io/io_driver.h"
#include "core/io/view.h"
#include "core/pt2pt/request.h"
#include <mpi.h>

struct tern_win;

/* The hints a file uses (MPI_File_get_info reports them by these names,
 * ROMIO's; docs/design.md, "I/O"). */
typedef struct tern_io_hints {
    long long cb_buffer_size;     /* bytes an aggregator moves per round */
    int cb_nodes;                 /* aggregators (0: one per node) */
    int cb_read, cb_write;        /* collective buffering: 0 disable, 1 enable, 2 automatic */
    long long ind_rd_buffer_size; /* data sieving for independent reads */
    long long ind_wr_buffer_size;
    int ds_read, ds_write;        /* data sieving: 0 disable, 1 enable, 2 automatic */
    long long striping_unit;      /* reported; file domains align to it when set */
    int striping_factor;
    int direct_write, direct_read; /* asked for (O_DIRECT; fd.direct_*: in effect) */
} tern_io_hints_t;

typedef struct tern_file {
    MPI_File handle;
    tern_comm_t *comm;     /* duplicate of the opening communicator */
    char *name;            /* as the program gave it (messages, get_info) */
    const tern_io_driver_t *drv;
    tern_io_fd_t fd;
    int amode;
    int atomic;            /* MPI_File_set_atomicity */
    MPI_Errhandler errhandler;
    MPI_Info info;         /* the hints the program gave (MPI_INFO_NULL: none) */
    tern_io_hints_t hints;
    tern_io_view_t view;
    /* Every rank's view reads without buffering (tern_io_coll_view_direct:
     * no holes, or pieces so large that one system call each costs little
     * beside them); views_dense: every rank's view has no holes (collective
     * writes in nonatomic mode need no exchange then). Agreed at open (the
     * default view: yes) and set_view. */
    int views_direct;
    int views_dense;
    MPI_Offset fp;         /* individual file pointer, etypes of the view */
    /* Shared file pointer (etypes of the view, io_shared.h): a word of
     * shared memory on one node, mapped at its first use (NULL before), or
     * across nodes an MPI_Offset at rank 0 of a window. */
    MPI_Offset *shared_word;
    struct tern_win *shared_win;
    /* A split collective under way (MPI_File_*_all_begin ... _end): its
     * result, returned by the _end call, or (split_req) the I/O worker's
     * request that moves its data, waited for by the _end call. */
    int split_active;
    MPI_Status split_status;
    tern_status_t split_error;
    tern_req_t *split_req;
    /* The thread and queue of this file's nonblocking and split
     * collectives that buffer through aggregators (io_async.h), or NULL
     * before the first. */
    struct tern_io_cq *cq;
} tern_file_t;

/* The file of a handle, NULL if not a live one (MPI_FILE_NULL included). */
tern_file_t *tern_file_lookup(MPI_File fh);
/* The error handler of a file, or the default's for MPI_FILE_NULL (f NULL):
 * what MPI_File_set/get_errhandler change and read. */
MPI_Errhandler *tern_file_errhandler_slot(tern_file_t *f);
/* The handler an error on handle fh goes to (the default's unless fh is a
 * live file). */
MPI_Errhandler tern_file_errhandler_of(MPI_File fh);
/* Whether a live file (or the default) has handler eh. */
int tern_file_errhandler_in_use(MPI_Errhandler eh);
/* Closes every file still open at MPI_Finalize (erroneous, but the files
 * are flushed and nothing is left behind). */
void tern_io_finalize(void);

/* The MPI_File procedures on checked arguments. */
tern_status_t tern_file_open(tern_comm_t *comm, const char *filename, int amode, MPI_Info info,
                             MPI_File *fh);
tern_status_t tern_file_close(tern_file_t *f, MPI_File *fh);
tern_status_t tern_file_delete(const char *filename, MPI_Info info);
tern_status_t tern_file_set_size(tern_file_t *f, MPI_Offset size);
tern_status_t tern_file_preallocate(tern_file_t *f, MPI_Offset size);
tern_status_t tern_file_get_size(tern_file_t *f, MPI_Offset *size);
tern_status_t tern_file_get_group(tern_file_t *f, MPI_Group *group);
tern_status_t tern_file_get_amode(tern_file_t *f, int *amode);
tern_status_t tern_file_set_info(tern_file_t *f, MPI_Info info);
tern_status_t tern_file_get_info(tern_file_t *f, MPI_Info *info_used);
tern_status_t tern_file_set_atomicity(tern_file_t *f, int flag);
tern_status_t tern_file_get_atomicity(tern_file_t *f, int *flag);
tern_status_t tern_file_sync(tern_file_t *f);
/* ULFM (MPIX_File_revoke, the ULFM specification's): revokes the file's
 * communicators (its own and its shared pointer's window's, if any), so every
 * member's operations on it but the local queries fail with
 * TERN_ERR_REVOKED through the file's handler, and MPI_File_close needs
 * nobody else. tern_file_check_revoked is the check of those operations. */
tern_status_t tern_file_revoke(tern_file_t *f);
tern_status_t tern_file_revoked_error(const tern_file_t *f);
static inline tern_status_t tern_file_check_revoked(const tern_file_t *f)
{
    return __builtin_expect(f->comm->revoked, 0) ? tern_file_revoked_error(f) : TERN_OK;
}

/* A status that every rank of f's communicator shares: the worst of the
 * ranks' (a collective fails everywhere or nowhere); a rank whose own call
 * succeeded gets a detail naming the rank that failed. */
tern_status_t tern_file_agree(tern_file_t *f, tern_status_t mine, const char *what);
/* The same on comm (a duplicate of f's: its buffered collectives' thread). */
tern_status_t tern_file_agree_on(tern_file_t *f, tern_comm_t *comm, tern_status_t mine,
                                 const char *what);
/* A file's hints in two steps, so that a collective call can agree on
 * them with its other steps in one allreduce: the program's info copied
 * (the step that may fail; *copy MPI_INFO_NULL for MPI_INFO_NULL), then,
 * once agreed, kept as the file's and its hints applied (the copy is the
 * file's from there; MPI_INFO_NULL: nothing changes). */
tern_status_t tern_file_info_copy(MPI_Info info, MPI_Info *copy);
void tern_file_info_keep(tern_file_t *f, MPI_Info copy);
/* tern_file_agree and, in the same allreduce, the highest of the ranks'
 * levels (0-3; *worst_level 3 when the status is not TERN_OK): one
 * collective round for both. */
tern_status_t tern_file_agree_level(tern_file_t *f, tern_status_t mine, int level, int *worst_level,
                                    const char *what);

#endif
