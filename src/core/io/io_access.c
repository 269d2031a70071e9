/* Data access through a view (io_access.h). */
#include "core/io/io_access.h"
#include "core/io/io_async.h"
#include "core/io/io_coll.h"
#include "core/coll/coll.h"
#include "core/comm/sendrecv.h"
#include "core/datatype/dtype_build.h"
#include "core/io/io_datarep.h"
#include "core/io/io_sieve.h"
#include "core/io/io_shared.h"

#include <stdlib.h>
#include <string.h>

/* ---- moving bytes --------------------------------------------------------- */

/* Moves [pos, pos + len) of the stream between mem and the file (data
 * sieving decides how, io_sieve.h); the atomic-mode lock, when f is
 * atomic, is the caller's. *done: bytes moved (fewer on a read only at the
 * end of the file). */
static tern_status_t move_range(tern_file_t *f, int write, MPI_Offset pos, char *mem, size_t len,
                                size_t *done)
{
    return tern_io_sieve_move(f, write, pos, mem, len, f->atomic, done);
}

/* Bytes of packing buffer for non-contiguous memory: the data moves in
 * rounds of this much. */
#define STAGE_BYTES ((size_t)4 << 20)

/* Atomic mode: locks the file bytes that stream bytes [pos, pos + len)
 * span, so that a concurrent access sees all of it or none; *lo, *hi:
 * the locked range, for the unlock. */
static tern_status_t lock_span(tern_file_t *f, int write, MPI_Offset pos, size_t len,
                               MPI_Offset *lo, MPI_Offset *hi)
{
    *lo = tern_io_view_offset(&f->view, pos);
    *hi = tern_io_view_offset(&f->view, pos + (MPI_Offset)len - 1) + 1;
    return f->drv->lock(&f->fd, *lo, *hi - *lo, write);
}

/* tern_io_move; held: the caller holds the atomic-mode lock already. */
static tern_status_t io_move(tern_file_t *f, int write, MPI_Offset pos, char *mem, size_t len,
                             int held, size_t *moved)
{
    *moved = 0;
    if (len == 0)
        return TERN_OK;
    MPI_Offset lo = 0, hi = 0;
    tern_status_t st;
    int lock = f->atomic && !held;
    if (lock && (st = lock_span(f, write, pos, len, &lo, &hi)) != TERN_OK)
        return st;
    st = move_range(f, write, pos, mem, len, moved);
    if (lock) {
        tern_status_t ust = f->drv->unlock(&f->fd, lo, hi - lo);
        if (st == TERN_OK)
            st = ust;
    }
    return st;
}

tern_status_t tern_io_move(tern_file_t *f, int write, MPI_Offset pos, char *mem, size_t len,
                           size_t *moved)
{
    return io_move(f, write, pos, mem, len, 0, moved);
}

/* Moves count elements of dt at buf to or from stream bytes from pos;
 * *bytes: how many moved (native: the status's), *moved: the stream bytes
 * they took (the same but in a converting representation, io_datarep.h).
 * Non-contiguous memory is packed in rounds; atomic mode locks the whole
 * access, not each round. */
static tern_status_t transfer(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                              MPI_Count count, MPI_Datatype dt, size_t *bytes, size_t *moved)
{
    size_t total = (size_t)count * (size_t)tern_datatype_size(dt);
    *bytes = *moved = 0;
    tern_status_t st = TERN_OK;
    if (f->view.rep && (st = tern_io_datarep_file_bytes(f->view.rep, count, dt, &total)) != TERN_OK)
        return st;
    if (total == 0)
        return TERN_OK;
    if (!f->view.rep && tern_datatype_is_contig(dt)) {
        st = tern_io_move(f, write, pos, (char *)buf + tern_datatype_true_lb(dt), total, bytes);
        *moved = *bytes;
        return st;
    }
    MPI_Offset lo = 0, hi = 0;
    int atomic = f->atomic;
    if (atomic && (st = lock_span(f, write, pos, total, &lo, &hi)) != TERN_OK)
        return st; /* the rounds below lock nothing more */
    if (f->view.rep) {
        st = tern_io_datarep_transfer(f, f->view.rep, write, pos, buf, count, dt, STAGE_BYTES,
                                      move_range, bytes, moved);
    } else {
        size_t stage = total < STAGE_BYTES ? total : STAGE_BYTES;
        char *tmp = malloc(stage);
        if (!tmp)
            st = tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of memory for %zu bytes of "
                                    "packing buffer", f->name, stage);
        for (size_t off = 0; tmp && st == TERN_OK && off < total;) {
            size_t n = total - off < stage ? total - off : stage, got = 0;
            if (write && (st = tern_datatype_pack_range(buf, (size_t)count, dt, off, tmp, n)) != TERN_OK)
                break;
            st = io_move(f, write, pos + (MPI_Offset)off, tmp, n, atomic, &got);
            if (st == TERN_OK && !write && got)
                st = tern_datatype_unpack_range(tmp, got, buf, (size_t)count, dt, off);
            off += got;
            *bytes = off;
            if (got < n)
                break; /* end of the file */
        }
        free(tmp);
        *moved = *bytes;
    }
    if (atomic) {
        tern_status_t ust = f->drv->unlock(&f->fd, lo, hi - lo);
        if (st == TERN_OK)
            st = ust;
    }
    return st;
}

/* transfer's move of an access through a converting view whose file form
 * (len bytes, a write's already converted) is at stage, which it frees:
 * one call of the file system, under the atomic-mode lock when f is
 * atomic; a read converts the whole items it got. */
static tern_status_t move_staged(tern_file_t *f, int write, MPI_Offset pos, char *stage,
                                 size_t len, void *buf, MPI_Count count, MPI_Datatype dt,
                                 size_t *bytes, size_t *moved)
{
    size_t got = 0;
    *bytes = *moved = 0;
    tern_status_t st = tern_io_move(f, write, pos, stage, len, &got);
    if (st == TERN_OK)
        st = tern_io_datarep_unstage(f, f->view.rep, write, stage, got, buf, count, dt, bytes,
                                     moved);
    free(stage);
    return st;
}

/* ---- the entry -------------------------------------------------------------- */

static tern_status_t check_access(tern_file_t *f, int flags, MPI_Offset offset)
{
    int where = flags & TERN_IO_WHERE;
    if ((flags & TERN_IO_WRITE) && !(f->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)))
        return tern_status_detail(TERN_ERR_READ_ONLY, "file '%s' was opened MPI_MODE_RDONLY",
                                  f->name);
    if (!(flags & TERN_IO_WRITE) && (f->amode & MPI_MODE_WRONLY))
        return tern_status_detail(TERN_ERR_ACCESS, "file '%s' was opened MPI_MODE_WRONLY",
                                  f->name);
    if ((f->amode & MPI_MODE_SEQUENTIAL) && where != TERN_IO_SHARED && where != TERN_IO_ORDERED)
        return tern_status_detail(TERN_ERR_NOT_SUPPORTED,
                                  "file '%s' was opened MPI_MODE_SEQUENTIAL: only the shared "
                                  "file pointer may be used", f->name);
    if (where == TERN_IO_AT && offset < 0)
        return tern_status_detail(TERN_ERR_ARG, "file '%s': offset=%lld is negative", f->name,
                                  offset);
    return TERN_OK;
}

/* Etypes that count elements of dt fill (whole ones; a partial one counts),
 * in the view's representation (a type it cannot size counts none: the
 * access itself then fails with the reason). */
/* Whether f's nonblocking accesses may move their data after the call:
 * a native view, or one whose conversion is Tern's own (io_datarep.h). */
static int async_ok(const tern_file_t *f)
{
    return !f->view.rep || tern_io_datarep_async_ok(f->view.rep);
}

static MPI_Offset etypes_of(const tern_file_t *f, MPI_Count count, MPI_Datatype dt)
{
    size_t file_bytes = 0;
    MPI_Offset bytes = (MPI_Offset)count * tern_datatype_size(dt);
    if (f->view.rep)
        bytes = tern_io_datarep_file_bytes(f->view.rep, count, dt, &file_bytes) == TERN_OK
                    ? (MPI_Offset)file_bytes : 0;
    return (bytes + f->view.esize - 1) / f->view.esize;
}

/* Ordered access: each rank's place after the ranks before it; rank 0
 * moves the shared pointer past them all. */
static tern_status_t ordered_place(tern_file_t *f, MPI_Offset mine, MPI_Offset *at)
{
    int n = f->comm->size;
    MPI_Offset *all = malloc((size_t)n * sizeof *all);
    if (!all)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for an ordered access");
    tern_status_t st = tern_coll_allgather(f->comm, &mine, 1, MPI_OFFSET, all, 1, MPI_OFFSET,
                                           NULL, 0);
    MPI_Offset before = 0, total = 0, base = 0;
    for (int i = 0; i < n; i++) {
        if (i < f->comm->rank)
            before += all[i];
        total += all[i];
    }
    free(all);
    if (st == TERN_OK && f->comm->rank == 0)
        st = tern_io_shared_fetch_add(f, total, &base);
    if (st == TERN_OK)
        st = tern_coll_bcast(f->comm, &base, 1, MPI_OFFSET, 0, NULL, 0);
    *at = base + before;
    return st;
}

/* Does the access, or (req_p) starts it: the file system's part of an
 * access that needs no other rank runs on the I/O worker and *req_p
 * completes when it is done; otherwise *req_p stays NULL and the data has
 * moved. */
static tern_status_t access_now(tern_file_t *f, int flags, MPI_Offset offset, void *buf,
                                MPI_Count count, MPI_Datatype dt, size_t *bytes,
                                tern_req_t **req_p)
{
    int where = flags & TERN_IO_WHERE;
    tern_status_t st = check_access(f, flags, offset);
    MPI_Offset at = offset;
    *bytes = 0;
    if (where == TERN_IO_ORDERED) {
        /* Collective: every rank takes part even when its own check
         * failed, so that none waits for it. */
        tern_status_t ost = ordered_place(f, st == TERN_OK ? etypes_of(f, count, dt) : 0, &at);
        if (st == TERN_OK)
            st = ost;
    } else if (st == TERN_OK && where == TERN_IO_SHARED) {
        st = tern_io_shared_fetch_add(f, etypes_of(f, count, dt), &at);
    } else if (where == TERN_IO_INDIVIDUAL) {
        at = f->fp;
    }
    int write = flags & TERN_IO_WRITE, used = 0;
    size_t moved = 0; /* stream bytes: the file's form (io_datarep.h) */
    /* A converting view's access staged for a collective that then moved
     * nothing: this rank's own access moves these bytes (no second
     * conversion). */
    char *staged = NULL;
    size_t staged_len = 0;
    if ((flags & TERN_IO_COLLECTIVE) && where != TERN_IO_ORDERED &&
        tern_io_coll_wanted(f, write)) {
        /* Every rank takes part, those whose own check failed with no
         * data, so that none waits for them. A converting view (the same
         * on every rank) converts around the exchange. */
        MPI_Offset cpos = st == TERN_OK ? at * f->view.esize : -1;
        tern_status_t cst;
        if (async_ok(f) && req_p && tern_io_async_coll_ok(f)) {
            /* Nonblocking or split: the decision here, the rounds on the
             * file's thread while the program computes (io_async.h); a
             * rank whose own check failed takes part there with no data.
             * Through external32 the plan moves the access's file form,
             * a write's converted now, a read's after the rounds. */
            tern_io_coll_t *plan = NULL;
            tern_io_async_conv_t conv = {.rep = f->view.rep, .write = write, .buf = buf,
                                         .count = count};
            size_t total = 0;
            if (conv.rep && cpos >= 0 &&
                (st = tern_io_datarep_stage(f, conv.rep, write, buf, count, dt, &conv.stage,
                                            &total)) != TERN_OK)
                cpos = -1; /* takes part with no data */
            if (conv.rep)
                cst = tern_io_coll_prepare(f, write, total ? cpos : -1,
                                           conv.stage ? conv.stage : (char *)&total,
                                           (MPI_Count)total, MPI_BYTE, &plan, &used);
            else
                cst = tern_io_coll_prepare(f, write, cpos, buf, count, dt, &plan, &used);
            if (!plan && st == TERN_OK && cst == TERN_OK) {
                staged = conv.stage;
                staged_len = total;
            } else if (!plan) {
                free(conv.stage);
            }
            if (plan) {
                cst = tern_io_async_coll(f, plan, dt, conv.rep ? &conv : NULL,
                                         st == TERN_OK ? req_p : NULL);
                if (st == TERN_OK && cst == TERN_OK && where == TERN_IO_INDIVIDUAL)
                    f->fp += etypes_of(f, count, dt); /* by what was asked, at once */
                return st != TERN_OK ? st : cst;
            }
        } else {
            cst = f->view.rep
                      ? tern_io_datarep_coll(f, write, cpos, buf, count, dt, bytes, &moved, &used,
                                             &staged, &staged_len)
                      : tern_io_coll_access(f, write, cpos, buf, count, dt, bytes, &used);
        }
        if (!f->view.rep)
            moved = *bytes;
        if (st == TERN_OK)
            st = cst;
    }
    if (st != TERN_OK) {
        free(staged);
        return st;
    }
    if (!used && req_p && async_ok(f)) {
        /* The pointer moves by what was asked, at once (MPI 14.4.3). A
         * registered representation's access stays in the call (its
         * conversion functions are the program's, called on its thread). */
        st = tern_io_async_start(f, write, at * f->view.esize, buf, count, dt, staged,
                                 staged_len, req_p);
        if (st == TERN_OK && where == TERN_IO_INDIVIDUAL)
            f->fp += etypes_of(f, count, dt);
        return st;
    }
    if (!used && staged)
        st = move_staged(f, write, at * f->view.esize, staged, staged_len, buf, count, dt,
                         bytes, &moved);
    else if (!used)
        st = transfer(f, write, at * f->view.esize, buf, count, dt, bytes, &moved);
    if (where == TERN_IO_INDIVIDUAL)
        f->fp += ((MPI_Offset)moved + f->view.esize - 1) / f->view.esize;
    return st;
}

static void set_status(MPI_Status *status, size_t bytes)
{
    if (status != MPI_STATUS_IGNORE)
        tern_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, status->MPI_ERROR, bytes, 0);
}

tern_status_t tern_file_access(tern_file_t *f, int flags, MPI_Offset offset, void *buf,
                               MPI_Count count, MPI_Datatype dt, MPI_Status *status,
                               tern_req_t **req_p)
{
    tern_status_t rv = tern_file_check_revoked(f);
    if (rv != TERN_OK)
        return rv;
    size_t bytes = 0;
    tern_req_t *req = NULL;
    tern_status_t st = access_now(f, flags, offset, buf, count, dt, &bytes, req_p ? &req : NULL);
    if (!req_p) {
        if (st == TERN_OK)
            set_status(status, bytes);
        return st;
    }
    if (st != TERN_OK || req) {
        *req_p = req;
        return st;
    }
    /* A collective whose data has moved: complete from the start. */
    req = tern_req_alloc(TERN_REQ_GENERIC);
    if (!req)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a request");
    req->comm = MPI_COMM_NULL;
    req->status_source = MPI_ANY_SOURCE;
    req->status_tag = MPI_ANY_TAG;
    req->status_bytes = bytes;
    tern_req_complete(req);
    *req_p = req;
    return TERN_OK;
}

tern_status_t tern_file_split_begin(tern_file_t *f, int flags, MPI_Offset offset, void *buf,
                                    MPI_Count count, MPI_Datatype dt)
{
    tern_status_t rv = tern_file_check_revoked(f);
    if (rv != TERN_OK)
        return rv;
    if (f->split_active)
        return tern_status_detail(TERN_ERR_FILE_IO, "file '%s': a split collective is already "
                                  "under way (call its _end first)", f->name);
    size_t bytes = 0;
    tern_req_t *req = NULL;
    /* The I/O worker (every rank moves its own range) or the file's
     * thread (buffered through aggregators) moves the data while the
     * program computes, and _end waits for it. */
    f->split_error = access_now(f, flags | TERN_IO_COLLECTIVE, offset, buf, count, dt, &bytes,
                                &req);
    f->split_req = f->split_error == TERN_OK ? req : NULL;
    f->split_active = 1;
    set_status(&f->split_status, bytes);
    return TERN_OK;
}

tern_status_t tern_file_split_end(tern_file_t *f, const void *buf, MPI_Status *status)
{
    (void)buf;
    if (!f->split_active)
        return tern_status_detail(TERN_ERR_FILE_IO, "file '%s': no split collective is under "
                                  "way (call its _begin first)", f->name);
    f->split_active = 0;
    if (f->split_req) {
        tern_req_t *req = f->split_req;
        f->split_req = NULL;
        tern_status_t st = tern_req_wait_result(req, status);
        tern_req_release(req);
        return st;
    }
    if (f->split_error == TERN_OK && status != MPI_STATUS_IGNORE) {
        int error = status->MPI_ERROR;
        *status = f->split_status;
        status->MPI_ERROR = error;
    }
    return f->split_error;
}

/* ---- pointers ------------------------------------------------------------ */

/* The end of the file in etypes of the view (MPI_SEEK_END). */
static tern_status_t end_etypes(tern_file_t *f, MPI_Offset *end)
{
    MPI_Offset size = 0;
    tern_status_t st = f->drv->get_size(&f->fd, &size);
    if (st == TERN_OK)
        *end = (tern_io_view_bytes_before(&f->view, size) + f->view.esize - 1) / f->view.esize;
    return st;
}

static tern_status_t new_position(tern_file_t *f, MPI_Offset cur, MPI_Offset offset, int whence,
                                  MPI_Offset *pos)
{
    MPI_Offset base = 0;
    tern_status_t st = TERN_OK;
    switch (whence) {
    case MPI_SEEK_SET: base = 0; break;
    case MPI_SEEK_CUR: base = cur; break;
    case MPI_SEEK_END: st = end_etypes(f, &base); break;
    default:
        return tern_status_detail(TERN_ERR_ARG, "file '%s': whence=%d is none of MPI_SEEK_SET, "
                                  "MPI_SEEK_CUR and MPI_SEEK_END", f->name, whence);
    }
    if (st == TERN_OK && base + offset < 0)
        st = tern_status_detail(TERN_ERR_ARG, "file '%s': the new position %lld (offset=%lld) "
                                "is before the start of the view", f->name, base + offset, offset);
    *pos = base + offset;
    return st;
}

tern_status_t tern_file_seek(tern_file_t *f, MPI_Offset offset, int whence)
{
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return tern_status_detail(TERN_ERR_NOT_SUPPORTED, "file '%s' was opened "
                                  "MPI_MODE_SEQUENTIAL: it has no individual file pointer",
                                  f->name);
    MPI_Offset pos = 0;
    tern_status_t st = new_position(f, f->fp, offset, whence, &pos);
    if (st == TERN_OK)
        f->fp = pos;
    return st;
}

tern_status_t tern_file_get_position(tern_file_t *f, MPI_Offset *offset)
{
    *offset = f->fp;
    return TERN_OK;
}

tern_status_t tern_file_seek_shared(tern_file_t *f, MPI_Offset offset, int whence)
{
    tern_status_t rv = tern_file_check_revoked(f);
    if (rv != TERN_OK)
        return rv;
    /* Collective: rank 0 decides from its arguments (every rank passes the
     * same), all agree on the outcome. */
    MPI_Offset cur = 0, pos = 0;
    tern_status_t st = TERN_OK;
    if (f->comm->rank == 0) {
        st = tern_io_shared_fetch_add(f, 0, &cur);
        if (st == TERN_OK)
            st = new_position(f, cur, offset, whence, &pos);
    }
    st = tern_file_agree(f, st, "MPI_File_seek_shared");
    return st == TERN_OK ? tern_io_shared_set(f, pos) : st;
}

tern_status_t tern_file_get_position_shared(tern_file_t *f, MPI_Offset *offset)
{
    return tern_io_shared_fetch_add(f, 0, offset);
}

tern_status_t tern_file_get_byte_offset(tern_file_t *f, MPI_Offset offset, MPI_Offset *disp)
{
    if (offset < 0)
        return tern_status_detail(TERN_ERR_ARG, "file '%s': offset=%lld is negative", f->name,
                                  offset);
    *disp = tern_io_view_offset(&f->view, offset * f->view.esize);
    return TERN_OK;
}

/* ---- views ---------------------------------------------------------------- */

tern_status_t tern_file_set_view(tern_file_t *f, MPI_Offset disp, MPI_Datatype etype,
                                 MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
    tern_status_t st = tern_file_check_revoked(f);
    if (st != TERN_OK)
        return st;
    MPI_Offset cur = 0;
    tern_io_async_drain(f);
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        /* Only with MPI_MODE_SEQUENTIAL: the shared pointer's byte. */
        if (!(f->amode & MPI_MODE_SEQUENTIAL))
            st = tern_status_detail(TERN_ERR_ARG, "file '%s': disp=MPI_DISPLACEMENT_CURRENT "
                                    "needs a file opened MPI_MODE_SEQUENTIAL", f->name);
        else if ((st = tern_io_shared_fetch_add(f, 0, &cur)) == TERN_OK)
            disp = tern_io_view_offset(&f->view, cur * f->view.esize);
    } else if (disp < 0) {
        st = tern_status_detail(TERN_ERR_ARG, "file '%s': disp=%lld is negative", f->name, disp);
    }
    if (f->split_active && st == TERN_OK)
        st = tern_status_detail(TERN_ERR_FILE_IO, "file '%s': MPI_File_set_view while a split "
                                "collective is under way", f->name);
    tern_io_view_t v;
    tern_io_view_default(&v);
    MPI_Info copy = MPI_INFO_NULL;
    if (st == TERN_OK)
        st = tern_io_view_make(&v, disp, etype, filetype, datarep,
                               (f->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) != 0);
    if (st == TERN_OK)
        st = tern_file_info_copy(info, &copy);
    /* With the outcome (the view and the hints), how directly every rank's
     * new view is accessed (collective accesses through such views need no
     * exchange, io_coll.h): 0 no holes, 1 only large pieces, 2 neither
     * (no holes implies large pieces). One allreduce for all. */
    int level = st != TERN_OK               ? 2
                : tern_io_view_dense(&v)      ? 0
                : tern_io_coll_view_direct(&v) ? 1
                                              : 2;
    int worst = 3;
    st = tern_file_agree_level(f, st, level, &worst, "MPI_File_set_view");
    if (st != TERN_OK) {
        if (copy != MPI_INFO_NULL)
            tern_info_free(copy);
        tern_io_view_free(&v);
        return st;
    }
    tern_file_info_keep(f, copy);
    tern_io_view_free(&f->view);
    f->view = v;
    f->views_dense = worst == 0;
    f->views_direct = worst <= 1;
    if (v.segs == &v.segs_one) {
        f->view.segs = &f->view.segs_one;
        f->view.before = &f->view.before_one;
    }
    /* Both pointers go back to the start of the new view. */
    f->fp = 0;
    return tern_io_shared_set(f, 0);
}

tern_status_t tern_file_get_view(tern_file_t *f, MPI_Offset *disp, MPI_Datatype *etype,
                                 MPI_Datatype *filetype, char *datarep)
{
    /* Derived types come back as new handles (the program frees them, as
     * with ROMIO); predefined ones as they are. */
    MPI_Datatype e = f->view.etype, t = f->view.filetype;
    tern_status_t st = TERN_OK;
    if (!tern_datatype_is_predefined(e))
        st = tern_dtype_dup(f->view.etype, &e);
    if (st == TERN_OK && !tern_datatype_is_predefined(t))
        st = tern_dtype_dup(f->view.filetype, &t);
    if (st != TERN_OK)
        return st;
    *disp = f->view.disp;
    *etype = e;
    *filetype = t;
    strcpy(datarep, tern_io_view_datarep(&f->view));
    return TERN_OK;
}

tern_status_t tern_file_get_type_extent(tern_file_t *f, MPI_Datatype dt, tern_num_ref_t extent)
{
    /* native and internal: the extent in memory; otherwise in the file's
     * representation (its layout, io_datarep.h). */
    MPI_Aint x = tern_datatype_extent(dt);
    tern_status_t st = f->view.rep ? tern_io_datarep_type_extent(f->view.rep, dt, &x) : TERN_OK;
    if (st == TERN_OK)
        tern_num_ref_set(extent, x);
    return st;
}
