/* MPI-IO file handles (file.h). */
#include "core/io/file.h"
#include "core/io/io_async.h"
#include "core/io/io_shared.h"
#include "core/coll/coll.h"
#include "core/coll/shm_region.h"
#include "core/comm/comm_create.h"
#include "core/comm/comm_query.h"
#include "core/comm/ulfm.h"
#include "core/runtime/handle_table.h"
#include "base/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static tern_handle_table_t files = TERN_HANDLE_TABLE(TERN_KIND_FILE, 8);
/* MPI_FILE_NULL's handler: the default of new files (MPI-5.0 9.3). */
static MPI_Errhandler default_errhandler = MPI_ERRORS_RETURN;

tern_file_t *tern_file_lookup(MPI_File fh)
{
    return tern_handle_get(&files, fh);
}

MPI_Errhandler *tern_file_errhandler_slot(tern_file_t *f)
{
    return f ? &f->errhandler : &default_errhandler;
}

MPI_Errhandler tern_file_errhandler_of(MPI_File fh)
{
    return *tern_file_errhandler_slot(tern_file_lookup(fh));
}

static int has_errhandler(const void *obj, const void *arg)
{
    return ((const tern_file_t *)obj)->errhandler == *(const MPI_Errhandler *)arg;
}

int tern_file_errhandler_in_use(MPI_Errhandler eh)
{
    return default_errhandler == eh || tern_handle_find(&files, has_errhandler, &eh) != NULL;
}

/* ---- agreement ---------------------------------------------------------- */

/* The error a rank returns when another rank's part of a collective file
 * call failed with st: the class is theirs, the text names the rank. */
static tern_status_t failed_on(tern_status_t st, const char *name, const char *what, int rank)
{
    return tern_status_detail(st, "file '%s': %s failed on rank %d: %s", name, what, rank,
                              tern_status_string(st));
}

/* The worst status of the ranks of c and the rank that had it: a
 * collective's arguments or system calls may fail on some ranks only, and
 * every rank must return the same class (none may hang or go on alone). */
static tern_status_t agree(tern_comm_t *c, tern_status_t mine, const char *name,
                           const char *what)
{
    int in[2] = {(int)mine, c->rank}, out[2];
    tern_status_t st = tern_coll_allreduce(c, in, out, 1, MPI_2INT, MPI_MAXLOC, NULL, 0);
    if (st != TERN_OK)
        return st;
    if (out[0] == TERN_OK || mine != TERN_OK)
        return mine;
    return failed_on((tern_status_t)out[0], name, what, out[1]);
}

tern_status_t tern_file_agree(tern_file_t *f, tern_status_t mine, const char *what)
{
    return agree(f->comm, mine, f->name, what);
}

tern_status_t tern_file_agree_on(tern_file_t *f, tern_comm_t *comm, tern_status_t mine,
                                 const char *what)
{
    return agree(comm, mine, f->name, what);
}

tern_status_t tern_file_agree_level(tern_file_t *f, tern_status_t mine, int level, int *worst_level,
                                    const char *what)
{
    /* The level rides in the low two bits of the status: MAXLOC still
     * finds the worst status (and its rank), and while every status is
     * TERN_OK the maximum's bits are the highest level of any rank. */
    int in[2] = {((int)mine << 2) | (level & 3), f->comm->rank}, out[2];
    tern_status_t st = tern_coll_allreduce(f->comm, in, out, 1, MPI_2INT, MPI_MAXLOC, NULL, 0);
    *worst_level = 3;
    if (st != TERN_OK)
        return st;
    tern_status_t worst = (tern_status_t)(out[0] >> 2);
    if (worst == TERN_OK) {
        *worst_level = out[0] & 3;
        return TERN_OK;
    }
    if (mine != TERN_OK)
        return mine;
    return failed_on(worst, f->name, what, out[1]);
}

/* ---- hints -------------------------------------------------------------- */

static const char *const switch_words[] = {"disable", "enable", "automatic"};

static void parse_switch(const tern_info_t *in, const char *key, int *v)
{
    const char *s = in ? tern_info_get(in, key) : NULL;
    for (int i = 0; s && i < 3; i++)
        if (strcasecmp(s, switch_words[i]) == 0)
            *v = i;
}

/* ROMIO's boolean hints (direct_write, direct_read): "true" or "false". */
static void parse_bool(const tern_info_t *in, const char *key, int *v)
{
    const char *s = in ? tern_info_get(in, key) : NULL;
    if (s && strcasecmp(s, "true") == 0)
        *v = 1;
    else if (s && strcasecmp(s, "false") == 0)
        *v = 0;
}

static void parse_number(const tern_info_t *in, const char *key, long long *v)
{
    const char *s = in ? tern_info_get(in, key) : NULL;
    char *end;
    long long x = s ? strtoll(s, &end, 10) : 0;
    if (s && *s && !*end && x > 0)
        *v = x;
}

/* Hints a file understands; others are kept and reported as given. */
static void apply_hints(tern_file_t *f, const tern_info_t *in)
{
    tern_io_hints_t *h = &f->hints;
    long long nodes = h->cb_nodes, factor = h->striping_factor;
    parse_number(in, "cb_buffer_size", &h->cb_buffer_size);
    parse_number(in, "cb_nodes", &nodes);
    parse_number(in, "ind_rd_buffer_size", &h->ind_rd_buffer_size);
    parse_number(in, "ind_wr_buffer_size", &h->ind_wr_buffer_size);
    parse_number(in, "striping_unit", &h->striping_unit);
    parse_number(in, "striping_factor", &factor);
    parse_switch(in, "romio_cb_read", &h->cb_read);
    parse_switch(in, "romio_cb_write", &h->cb_write);
    parse_switch(in, "romio_ds_read", &h->ds_read);
    parse_switch(in, "romio_ds_write", &h->ds_write);
    parse_bool(in, "direct_write", &h->direct_write);
    parse_bool(in, "direct_read", &h->direct_read);
    if (f->fd.fd >= 0) /* set_info; at open, once every rank has the file open */
        f->drv->set_direct(&f->fd, h->direct_write, h->direct_read);
    h->cb_nodes = nodes > f->comm->size ? f->comm->size : (int)nodes;
    h->striping_factor = (int)factor;
}

static void default_hints(tern_io_hints_t *h)
{
    *h = (tern_io_hints_t){
        .cb_buffer_size = (long long)tern_knob_size(TERN_KNOB_IO_CB_BUFFER_SIZE),
        .cb_read = 2,
        .cb_write = 2,
        .ind_rd_buffer_size = (long long)tern_knob_size(TERN_KNOB_IO_IND_BUFFER_SIZE),
        .ind_wr_buffer_size = (long long)tern_knob_size(TERN_KNOB_IO_IND_BUFFER_SIZE),
        .ds_read = 2,
        .ds_write = 2,
        .direct_write = tern_knob_bool(TERN_KNOB_IO_DIRECT_WRITE),
        .direct_read = tern_knob_bool(TERN_KNOB_IO_DIRECT_READ),
    };
}

tern_status_t tern_file_info_copy(MPI_Info info, MPI_Info *copy)
{
    *copy = MPI_INFO_NULL;
    return tern_info_lookup(info) ? tern_info_dup(info, copy) : TERN_OK;
}

void tern_file_info_keep(tern_file_t *f, MPI_Info copy)
{
    const tern_info_t *in = tern_info_lookup(copy);
    if (!in)
        return;
    if (f->info != MPI_INFO_NULL)
        tern_info_free(f->info);
    f->info = copy;
    apply_hints(f, in);
}

/* Keeps the program's hints (a copy) for get_info. */
static tern_status_t keep_info(tern_file_t *f, MPI_Info info)
{
    MPI_Info copy;
    tern_status_t st = tern_file_info_copy(info, &copy);
    if (st == TERN_OK)
        tern_file_info_keep(f, copy);
    return st;
}

/* ---- open and close ----------------------------------------------------- */

static tern_status_t check_amode(const char *name, int amode)
{
    int access = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
    const int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |
                      MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL |
                      MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;
    const char *why = NULL;
    if (amode & ~known)
        why = "has bits that are no MPI_MODE_* flag";
    else if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY && access != MPI_MODE_RDWR)
        why = "needs exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR";
    else if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        why = "has MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
    else if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL))
        why = "has MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
    if (why)
        return tern_status_detail(TERN_ERR_AMODE, "file '%s': amode 0x%x %s", name,
                                  (unsigned)amode, why);
    return TERN_OK;
}

static void file_free(tern_file_t *f)
{
    tern_io_view_free(&f->view);
    if (f->info != MPI_INFO_NULL)
        tern_info_free(f->info);
    if (f->handle != MPI_FILE_NULL)
        tern_handle_release(&files, f->handle);
    tern_io_async_coll_end(f, !f->comm);
    if (f->comm)
        tern_comm_destroy(f->comm);
    free(f->name);
    free(f);
}

/* Rank 0 opens the file between the reduce and the bcast of open's one
 * agreement, once every rank's checks passed: every rank has then entered
 * the open (what a rank did before its call, such as rank 0 deleting the
 * file, is done), and MPI_MODE_CREATE and MPI_MODE_EXCL hold for the job,
 * not for each rank. A windowed agreement may run the hook again: it
 * opens once. */
typedef struct {
    tern_file_t *f;
    const char *path;
    int tried;
    tern_status_t st;
} root_open_t;

static tern_status_t root_open(void *arg, tern_ctx_mask_t *mask)
{
    root_open_t *o = arg;
    (void)mask;
    if (!o->tried) {
        o->tried = 1;
        o->st = o->f->drv->open(o->path, o->f->amode, &o->f->fd);
    }
    return o->st;
}

static void open_failed(tern_file_t *f, char *name, MPI_Info info_copy)
{
    if (info_copy != MPI_INFO_NULL)
        tern_info_free(info_copy);
    if (!f) {
        free(name);
        return;
    }
    if (f->fd.fd >= 0)
        f->drv->close(&f->fd);
    file_free(f);
}

tern_status_t tern_file_open(tern_comm_t *comm, const char *filename, int amode, MPI_Info info,
                             MPI_File *fh)
{
    *fh = MPI_FILE_NULL;
    if (comm->is_inter)
        return tern_status_detail(TERN_ERR_COMM, "file '%s': MPI_File_open needs an "
                                  "intracommunicator", filename);
    tern_status_t st = check_amode(filename, amode);
    tern_file_t *f = calloc(1, sizeof *f);
    char *name = strdup(filename);
    MPI_Info info_copy = MPI_INFO_NULL;
    const char *path = filename;
    if (f) {
        f->handle = MPI_FILE_NULL;
        f->name = name;
        f->amode = amode;
        f->info = MPI_INFO_NULL;
        f->errhandler = default_errhandler;
        f->fd.fd = -1;
        f->fd.direct_fd = -1;
        tern_io_view_default(&f->view);
        f->views_dense = f->views_direct = 1; /* every rank's view is the default */
        f->drv = tern_io_driver_for(filename, &path);
    }
    if (st == TERN_OK && (!f || !name))
        st = tern_status_detail(TERN_ERR_NOMEM, "out of memory for file '%s'", filename);
    if (st == TERN_OK)
        st = tern_file_info_copy(info, &info_copy);
    /* Under load every collective round of an open costs a rank's time
     * slice: the duplicate's context-id agreement carries every rank's
     * checks and rank 0's open (root_open), and the others open what it
     * made after it; one allreduce agrees on their opens. The program
     * passes one amode on every rank (MPI_ERR_NOT_SAME is not required of
     * it; a mismatch fails like any other). */
    if (st == TERN_OK)
        st = tern_handle_new(&files, f, &f->handle);
    root_open_t opening = {.f = f, .path = path};
    tern_comm_t *dup;
    int who;
    tern_status_t mine = st;
    st = tern_comm_dup_checked(comm, mine, root_open, &opening, &dup, &who);
    if (st != TERN_OK && mine == TERN_OK && who >= 0 && who != comm->rank)
        st = failed_on(st, filename, "MPI_File_open", who);
    if (st != TERN_OK) {
        open_failed(f, name, info_copy);
        return st;
    }
    f->comm = dup;
    /* Two ranks: a collective is one exchange by point-to-point, as fast
     * as the shm algorithms, and a region costs each open and close a
     * segment's creation (docs/performance.md, the short 2-rank reads). */
    if (f->comm->size <= 2)
        tern_shm_coll_off(f->comm);
    default_hints(&f->hints);
    tern_file_info_keep(f, info_copy);
    if (f->comm->rank != 0)
        st = f->drv->open(path, amode & ~(MPI_MODE_CREATE | MPI_MODE_EXCL), &f->fd);
    st = agree(f->comm, st, filename, "MPI_File_open");
    if (st == TERN_OK)
        f->drv->set_direct(&f->fd, f->hints.direct_write, f->hints.direct_read);
    int shared = 0;
    if (st == TERN_OK)
        shared = (st = tern_io_shared_open(f)) == TERN_OK;
    if (st == TERN_OK && (amode & MPI_MODE_APPEND)) {
        /* Both pointers start at the end of the file. */
        MPI_Offset size = 0;
        st = agree(f->comm, f->drv->get_size(&f->fd, &size), filename, "MPI_File_open");
        f->fp = size;
        if (st == TERN_OK)
            st = tern_io_shared_set(f, size);
    }
    if (st != TERN_OK) {
        if (shared)
            (void)tern_io_shared_close(f);
        open_failed(f, NULL, MPI_INFO_NULL);
        return st;
    }
    f->fd.path = f->name + (path - filename);
    /* Its buffered nonblocking collectives run on a thread of their own
     * under the entry points' lock: on from here (io_async.h). */
    tern_io_async_coll_open(f);
    *fh = f->handle;
    return TERN_OK;
}

tern_status_t tern_file_revoked_error(const tern_file_t *f)
{
    return tern_status_detail(TERN_ERR_REVOKED, "file '%s' is revoked (MPIX_File_revoke)",
                              f->name);
}

tern_status_t tern_file_revoke(tern_file_t *f)
{
    tern_status_t st = tern_ulfm_revoke(f->comm);
    if (st == TERN_OK && tern_io_async_coll_comm(f))
        st = tern_ulfm_revoke(tern_io_async_coll_comm(f));
    if (st == TERN_OK)
        st = tern_io_shared_revoke(f);
    return st;
}

/* Close's one round: every rank's status after its descriptor is closed,
 * the worst on every rank (a failed close(2) or deletion reaches all).
 * With MPI_MODE_DELETE_ON_CLOSE a reduce and a bcast, rank 0 deleting
 * between them, once every rank has closed, and every rank returning
 * after the file is gone (ROMIO's order) with the deletion's status;
 * otherwise an allreduce. */
static tern_status_t close_agree(tern_file_t *f, tern_status_t mine)
{
    tern_comm_t *c = f->comm;
    int in[2] = {(int)mine, c->rank}, out[2] = {TERN_OK, 0};
    tern_status_t st;
    if (!(f->amode & MPI_MODE_DELETE_ON_CLOSE)) {
        st = tern_coll_allreduce(c, in, out, 1, MPI_2INT, MPI_MAXLOC, NULL, 0);
    } else {
        st = tern_coll_reduce(c, in, out, 1, MPI_2INT, MPI_MAXLOC, 0, NULL, 0);
        if (st == TERN_OK && c->rank == 0) {
            tern_status_t dst = f->drv->remove(f->fd.path);
            if (dst != TERN_OK && out[0] == TERN_OK) {
                out[0] = (int)dst;
                out[1] = 0;
                if (mine == TERN_OK)
                    mine = dst;
            }
        }
        if (st == TERN_OK)
            st = tern_coll_bcast(c, out, 2, MPI_INT, 0, NULL, 0);
    }
    if (st != TERN_OK)
        return st;
    if (out[0] == TERN_OK || mine != TERN_OK)
        return mine;
    return failed_on((tern_status_t)out[0], f->name, "MPI_File_close", out[1]);
}

tern_status_t tern_file_close(tern_file_t *f, MPI_File *fh)
{
    if (f->split_active)
        return tern_status_detail(TERN_ERR_FILE_IO, "file '%s': MPI_File_close while a split "
                                  "collective is under way (call its _end first)", f->name);
    /* This rank's queued writes are done before its descriptor goes; the
     * other ranks' descriptors are their own. */
    tern_io_async_drain(f);
    tern_status_t st = f->drv->close(&f->fd);
    /* One round (it was a barrier, and two more rounds to delete): no
     * rank returns before every rank has closed, so a program may read
     * the others' bytes once its own close returns, and the shared
     * pointer's word outlives every rank's last use. A revoked file's
     * members cannot meet on it: each closes alone (a deletion, which
     * needs them all, fails with the revocation). */
    if (!f->comm->revoked || (f->amode & MPI_MODE_DELETE_ON_CLOSE))
        st = close_agree(f, st);
    tern_status_t wst = tern_io_shared_close(f);
    if (st == TERN_OK)
        st = wst;
    file_free(f);
    *fh = MPI_FILE_NULL;
    return st;
}

tern_status_t tern_file_delete(const char *filename, MPI_Info info)
{
    (void)info;
    const char *path;
    const tern_io_driver_t *drv = tern_io_driver_for(filename, &path);
    return drv->remove(path);
}

void tern_io_finalize(void)
{
    tern_io_async_finalize();
    for (uint32_t i = 0; i < files.len; i++) {
        tern_file_t *f = files.slots[i];
        if (!f)
            continue;
        /* No collectives now: the fd goes, the windows and communicators
         * go with theirs (its buffered collectives' thread first, after
         * the ones still queued). */
        tern_io_async_coll_end(f, 1);
        f->drv->close(&f->fd);
        if (f->amode & MPI_MODE_DELETE_ON_CLOSE && f->comm->rank == 0)
            f->drv->remove(f->fd.path);
        tern_io_shared_forget(f);
        f->comm = NULL;
        file_free(f);
    }
    default_errhandler = MPI_ERRORS_RETURN;
}

/* ---- size, hints, atomicity -------------------------------------------- */

/* One allreduce for resize's checks (they were two rounds): size valid
 * (mine: this rank's check) and the same on every rank (MPI_ERR_NOT_SAME
 * otherwise). A failed check travels as its status and rank, so every
 * rank fails with it and none resizes. */
static tern_status_t agree_size(tern_file_t *f, tern_status_t mine, MPI_Offset size,
                                const char *what)
{
    MPI_Offset failed = mine == TERN_OK ? -1 : ((MPI_Offset)mine << 32) | f->comm->rank;
    MPI_Offset in[3] = {size, -size, failed}, out[3];
    tern_status_t st = tern_coll_allreduce(f->comm, in, out, 3, MPI_OFFSET, MPI_MAX, NULL, 0);
    if (st != TERN_OK || mine != TERN_OK)
        return st != TERN_OK ? st : mine;
    if (out[2] >= 0)
        return failed_on((tern_status_t)(out[2] >> 32), f->name, what, (int)(out[2] & 0xffffffff));
    if (out[0] != -out[1])
        return tern_status_detail(TERN_ERR_NOT_SAME,
                                  "file '%s': %s: size differs between ranks (%lld to %lld)",
                                  f->name, what, -out[1], out[0]);
    return TERN_OK;
}

static tern_status_t check_size(tern_file_t *f, MPI_Offset size, const char *what)
{
    if (size < 0)
        return tern_status_detail(TERN_ERR_ARG, "file '%s': %s: size=%lld is negative", f->name,
                                  what, size);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return tern_status_detail(TERN_ERR_NOT_SUPPORTED, "file '%s': %s on a file opened with "
                                  "MPI_MODE_SEQUENTIAL", f->name, what);
    return TERN_OK;
}

/* Rank 0 changes the file; every rank gets its status. */
static tern_status_t resize(tern_file_t *f, MPI_Offset size, int allocate, const char *what)
{
    tern_status_t st = agree_size(f, check_size(f, size, what), size, what);
    if (st != TERN_OK)
        return st;
    if (!(f->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)))
        st = tern_status_detail(TERN_ERR_READ_ONLY, "file '%s': %s on a file opened "
                                "MPI_MODE_RDONLY", f->name, what);
    else if (f->comm->rank == 0)
        st = allocate ? f->drv->preallocate(&f->fd, size) : f->drv->set_size(&f->fd, size);
    return agree(f->comm, st, f->name, what);
}

tern_status_t tern_file_set_size(tern_file_t *f, MPI_Offset size)
{
    tern_status_t rv = tern_file_check_revoked(f);
    if (rv != TERN_OK)
        return rv;
    return resize(f, size, 0, "MPI_File_set_size");
}

tern_status_t tern_file_preallocate(tern_file_t *f, MPI_Offset size)
{
    tern_status_t rv = tern_file_check_revoked(f);
    if (rv != TERN_OK)
        return rv;
    return resize(f, size, 1, "MPI_File_preallocate");
}

tern_status_t tern_file_get_size(tern_file_t *f, MPI_Offset *size)
{
    return f->drv->get_size(&f->fd, size);
}

tern_status_t tern_file_get_group(tern_file_t *f, MPI_Group *group)
{
    return tern_comm_get_group(f->comm, group);
}

tern_status_t tern_file_get_amode(tern_file_t *f, int *amode)
{
    *amode = f->amode;
    return TERN_OK;
}

tern_status_t tern_file_set_info(tern_file_t *f, MPI_Info info)
{
    tern_status_t rv = tern_file_check_revoked(f);
    if (rv != TERN_OK)
        return rv;
    /* The hints change under no queued collective (its rounds read them). */
    tern_io_async_drain(f);
    return agree(f->comm, keep_info(f, info), f->name, "MPI_File_set_info");
}

static tern_status_t put_number(tern_info_t *out, const char *key, long long v)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", v);
    return tern_info_set(out, key, text);
}

tern_status_t tern_file_get_info(tern_file_t *f, MPI_Info *info_used)
{
    tern_status_t st = f->info != MPI_INFO_NULL ? tern_info_dup(f->info, info_used)
                                                : tern_info_create(info_used);
    if (st != TERN_OK)
        return st;
    tern_info_t *out = tern_info_lookup(*info_used);
    const tern_io_hints_t *h = &f->hints;
    int nodes = h->cb_nodes ? h->cb_nodes : f->comm->size;
    if ((st = put_number(out, "cb_buffer_size", h->cb_buffer_size)) != TERN_OK ||
        (st = put_number(out, "cb_nodes", nodes)) != TERN_OK ||
        (st = tern_info_set(out, "romio_cb_read", switch_words[h->cb_read])) != TERN_OK ||
        (st = tern_info_set(out, "romio_cb_write", switch_words[h->cb_write])) != TERN_OK ||
        (st = put_number(out, "ind_rd_buffer_size", h->ind_rd_buffer_size)) != TERN_OK ||
        (st = put_number(out, "ind_wr_buffer_size", h->ind_wr_buffer_size)) != TERN_OK ||
        (st = tern_info_set(out, "romio_ds_read", switch_words[h->ds_read])) != TERN_OK ||
        (st = tern_info_set(out, "romio_ds_write", switch_words[h->ds_write])) != TERN_OK ||
        (st = tern_info_set(out, "direct_write", f->fd.direct_write ? "true" : "false")) != TERN_OK ||
        (st = tern_info_set(out, "direct_read", f->fd.direct_read ? "true" : "false")) != TERN_OK ||
        (st = tern_info_set(out, "filename", f->name)) != TERN_OK)
        tern_info_free(*info_used);
    else if (h->striping_unit && (st = put_number(out, "striping_unit", h->striping_unit)) != TERN_OK)
        tern_info_free(*info_used);
    return st;
}

tern_status_t tern_file_set_atomicity(tern_file_t *f, int flag)
{
    tern_status_t rv = tern_file_check_revoked(f);
    if (rv != TERN_OK)
        return rv;
    int in[2] = {!!flag, !flag}, out[2];
    tern_status_t st = tern_coll_allreduce(f->comm, in, out, 2, MPI_INT, MPI_MAX, NULL, 0);
    if (st == TERN_OK && out[0] && out[1])
        return tern_status_detail(TERN_ERR_NOT_SAME, "file '%s': MPI_File_set_atomicity: flag "
                                  "differs between ranks", f->name);
    if (st == TERN_OK)
        f->atomic = !!flag;
    return st;
}

tern_status_t tern_file_get_atomicity(tern_file_t *f, int *flag)
{
    *flag = f->atomic;
    return TERN_OK;
}

tern_status_t tern_file_sync(tern_file_t *f)
{
    tern_status_t rv = tern_file_check_revoked(f);
    if (rv != TERN_OK)
        return rv;
    tern_status_t st = TERN_OK;
    if (f->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR))
        st = f->drv->sync(&f->fd);
    return agree(f->comm, st, f->name, "MPI_File_sync");
}
