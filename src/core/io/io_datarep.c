/* Data representations (io_datarep.h). */
#include "core/io/io_datarep.h"
#include "core/datatype/datatype.h"
#include "core/datatype/dtype_filerep.h"
#include "core/io/file.h"
#include "core/io/io_coll.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* File extents a registered representation gave, so that its function is
 * asked once per predefined type. */
#define EXTENT_CACHE 32

struct tern_io_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    int external32;
    int large; /* registered with MPI_Register_datarep_c */
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
    struct {
        MPI_Datatype type;
        MPI_Aint extent;
    } cache[EXTENT_CACHE];
    int ncache;
    tern_io_datarep_t *next;
};

static tern_io_datarep_t external32 = {.name = "external32", .external32 = 1};
/* Registered ones, newest first (under the library's lock like every call). */
static tern_io_datarep_t *registered;

const tern_io_datarep_t *tern_io_datarep_find(const char *name)
{
    if (strcasecmp(name, "external32") == 0)
        return &external32;
    for (tern_io_datarep_t *r = registered; r; r = r->next)
        if (strcmp(r->name, name) == 0)
            return r;
    return NULL;
}

const char *tern_io_datarep_name_of(const tern_io_datarep_t *rep)
{
    return rep->name;
}

static tern_status_t add(const char *name, tern_io_datarep_t *proto)
{
    size_t len = strlen(name);
    if (len == 0 || len >= MPI_MAX_DATAREP_STRING)
        return tern_status_detail(TERN_ERR_ARG, "datarep=\"%.64s\" has %zu characters (1 to %d "
                                  "allowed)", name, len, MPI_MAX_DATAREP_STRING - 1);
    if (!proto->extent_fn)
        return tern_status_detail(TERN_ERR_ARG, "datarep=\"%s\": dtype_file_extent_fn is NULL",
                                  name);
    if (strcasecmp(name, "native") == 0 || strcasecmp(name, "internal") == 0 ||
        tern_io_datarep_find(name))
        return tern_status_detail(TERN_ERR_DUP_DATAREP, "datarep=\"%s\" is already defined",
                                  name);
    tern_io_datarep_t *r = malloc(sizeof *r);
    if (!r)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for datarep \"%s\"", name);
    *r = *proto;
    memcpy(r->name, name, len + 1);
    r->next = registered;
    registered = r;
    return TERN_OK;
}

tern_status_t tern_io_datarep_register(const char *name, MPI_Datarep_conversion_function *read_fn,
                                       MPI_Datarep_conversion_function *write_fn,
                                       MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    tern_io_datarep_t proto = {.read_fn = read_fn, .write_fn = write_fn, .extent_fn = extent_fn,
                               .extra_state = extra_state};
    return add(name, &proto);
}

tern_status_t tern_io_datarep_register_c(const char *name,
                                         MPI_Datarep_conversion_function_c *read_fn,
                                         MPI_Datarep_conversion_function_c *write_fn,
                                         MPI_Datarep_extent_function *extent_fn,
                                         void *extra_state)
{
    tern_io_datarep_t proto = {.large = 1, .read_fn_c = read_fn, .write_fn_c = write_fn,
                               .extent_fn = extent_fn, .extra_state = extra_state};
    return add(name, &proto);
}

/* ---- sizes ------------------------------------------------------------------ */

/* The representation's file extent of a predefined type (tern_dt_extent_fn). */
static tern_status_t extent_of(MPI_Datatype basic, MPI_Aint *extent, void *arg)
{
    tern_io_datarep_t *rep = arg;
    if (rep->external32)
        return tern_dtype_ext32_extent(basic, extent, NULL);
    for (int i = 0; i < rep->ncache; i++)
        if (rep->cache[i].type == basic) {
            *extent = rep->cache[i].extent;
            return TERN_OK;
        }
    MPI_Aint x = 0;
    int rc = rep->extent_fn(basic, &x, rep->extra_state);
    if (rc != MPI_SUCCESS)
        return tern_status_detail(TERN_ERR_CONVERSION, "the dtype_file_extent_fn of datarep "
                                  "\"%s\" returned %d for %s", rep->name, rc,
                                  tern_datatype_name(basic));
    if (x <= 0)
        return tern_status_detail(TERN_ERR_CONVERSION, "the dtype_file_extent_fn of datarep "
                                  "\"%s\" gave %s the extent %ld (not positive)", rep->name,
                                  tern_datatype_name(basic), (long)x);
    if (rep->ncache < EXTENT_CACHE) {
        rep->cache[rep->ncache].type = basic;
        rep->cache[rep->ncache++].extent = x;
    }
    *extent = x;
    return TERN_OK;
}

static tern_status_t span(const tern_io_datarep_t *rep, MPI_Datatype dt, size_t limit,
                          tern_dt_span_t *s)
{
    return tern_dtype_file_span(dt, extent_of, (void *)rep, limit, s);
}

tern_status_t tern_io_datarep_layout(const tern_io_datarep_t *rep, MPI_Datatype dt,
                                     MPI_Datatype *out)
{
    return tern_dtype_file_layout(dt, extent_of, (void *)rep, out);
}

tern_status_t tern_io_datarep_type_extent(const tern_io_datarep_t *rep, MPI_Datatype dt,
                                          MPI_Aint *extent)
{
    MPI_Datatype l;
    tern_status_t st = tern_io_datarep_layout(rep, dt, &l);
    if (st == TERN_OK) {
        *extent = tern_datatype_extent(l);
        tern_datatype_release(l);
    }
    return st;
}

tern_status_t tern_io_datarep_file_bytes(const tern_io_datarep_t *rep, MPI_Count count,
                                         MPI_Datatype dt, size_t *bytes)
{
    tern_dt_span_t s;
    tern_status_t st = span(rep, dt, SIZE_MAX, &s);
    *bytes = st == TERN_OK ? (size_t)count * s.file_bytes : 0;
    return st;
}

/* ---- conversion ------------------------------------------------------------- */

/* A chunk of an access: its items from item `pos` of the buffer, at native
 * packed byte `skip`, and their bytes. */
typedef struct {
    MPI_Offset pos;
    size_t skip;
    tern_dt_span_t n;
} chunk_t;

static tern_status_t convert(tern_file_t *f, const tern_io_datarep_t *rep, int write, void *buf,
                             MPI_Count count, MPI_Datatype dt, const chunk_t *c, char *file)
{
    if (c->n.items == 0)
        return TERN_OK;
    if (rep->external32) {
        tern_status_t st = tern_dtype_ext32_range(buf, (size_t)count, dt, c->skip,
                                                  c->n.native_bytes, file, write);
        if (st == TERN_ERR_CONVERSION)
            st = tern_status_detail(st, "file '%s': a value of the buffer (%s) does not fit its "
                                    "external32 size", f->name, tern_datatype_name(dt));
        return st;
    }
    MPI_Datarep_conversion_function *fn = write ? rep->write_fn : rep->read_fn;
    MPI_Datarep_conversion_function_c *fn_c = write ? rep->write_fn_c : rep->read_fn_c;
    const char *which = write ? "write_conversion_fn" : "read_conversion_fn";
    if (!(rep->large ? (void *)fn_c : (void *)fn)) {
        /* MPI_CONVERSION_FN_NULL: the items as they are in memory. */
        if (c->n.file_bytes != c->n.native_bytes)
            return tern_status_detail(TERN_ERR_CONVERSION, "file '%s': datarep \"%s\" has "
                                      "MPI_CONVERSION_FN_NULL as %s but its file extents of %s "
                                      "differ from the native sizes", f->name, rep->name, which,
                                      tern_datatype_name(dt));
        return write ? tern_datatype_pack_range(buf, (size_t)count, dt, c->skip, file,
                                                c->n.native_bytes)
                     : tern_datatype_unpack_range(file, c->n.native_bytes, buf, (size_t)count,
                                                  dt, c->skip);
    }
    int rc;
    if (rep->large) {
        rc = fn_c(buf, dt, (MPI_Count)c->n.items, file, c->pos, rep->extra_state);
    } else {
        if (c->n.items > INT_MAX)
            return tern_status_detail(TERN_ERR_COUNT, "file '%s': %zu data items are more than "
                                      "the int count of %s of datarep \"%s\" holds "
                                      "(MPI_Register_datarep_c takes MPI_Count)", f->name,
                                      c->n.items, which, rep->name);
        rc = fn(buf, dt, (int)c->n.items, file, c->pos, rep->extra_state);
    }
    if (rc != MPI_SUCCESS)
        return tern_status_detail(TERN_ERR_CONVERSION, "file '%s': the %s of datarep \"%s\" "
                                  "returned %d (items %lld to %lld of %s)", f->name, which,
                                  rep->name, rc, (long long)c->pos,
                                  (long long)c->pos + (long long)c->n.items - 1,
                                  tern_datatype_name(dt));
    return TERN_OK;
}

/* The items of element e (each of `one`) from item q (whose bytes in the
 * element are at) whose file bytes fit in room past them: c->n. */
static tern_status_t inside(const tern_io_datarep_t *rep, MPI_Datatype dt,
                            const tern_dt_span_t *at, size_t room, tern_dt_span_t *n)
{
    tern_dt_span_t upto;
    tern_status_t st = span(rep, dt, at->file_bytes + room, &upto);
    if (st != TERN_OK)
        return st;
    n->items = upto.items - at->items;
    n->file_bytes = upto.file_bytes - at->file_bytes;
    n->native_bytes = upto.native_bytes - at->native_bytes;
    return TERN_OK;
}

/* The whole items in the first got file bytes of elements of `one` each. */
static tern_status_t whole_items(const tern_io_datarep_t *rep, MPI_Datatype dt,
                                 const tern_dt_span_t *one, size_t got, tern_dt_span_t *part)
{
    size_t el = got / one->file_bytes;
    tern_dt_span_t zero = {0, 0, 0};
    tern_status_t st = inside(rep, dt, &zero, got % one->file_bytes, part);
    part->items += el * one->items;
    part->file_bytes += el * one->file_bytes;
    part->native_bytes += el * one->native_bytes;
    return st;
}

tern_status_t tern_io_datarep_transfer(tern_file_t *f, const tern_io_datarep_t *rep, int write,
                                       MPI_Offset pos, void *buf, MPI_Count count,
                                       MPI_Datatype dt, size_t stage, tern_io_move_fn move,
                                       size_t *bytes, size_t *moved)
{
    *bytes = *moved = 0;
    tern_dt_span_t one;
    tern_status_t st = span(rep, dt, SIZE_MAX, &one);
    if (st != TERN_OK || count == 0 || one.items == 0)
        return st;
    size_t total = (size_t)count * one.file_bytes;
    if (stage > total)
        stage = total;
    char *tmp = malloc(stage);
    if (!tmp)
        return tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of memory for %zu bytes of "
                                  "conversion buffer", f->name, stage);
    /* The cursor: element e, and the items of it already moved. */
    size_t e = 0;
    tern_dt_span_t at = {0, 0, 0};
    while (st == TERN_OK && e < (size_t)count) {
        chunk_t c = {.pos = (MPI_Offset)(e * one.items + at.items),
                     .skip = e * one.native_bytes + at.native_bytes};
        size_t whole = 0;
        if (at.items == 0 && one.file_bytes <= stage) {
            whole = stage / one.file_bytes;
            if (whole > (size_t)count - e)
                whole = (size_t)count - e;
            c.n = (tern_dt_span_t){whole * one.items, whole * one.file_bytes,
                                   whole * one.native_bytes};
        } else if ((st = inside(rep, dt, &at, stage, &c.n)) != TERN_OK) {
            break;
        } else if (c.n.items == 0) {
            st = tern_status_detail(TERN_ERR_CONVERSION, "file '%s': a data item of %s takes "
                                    "more than the %zu bytes of conversion buffer in datarep "
                                    "\"%s\"", f->name, tern_datatype_name(dt), stage, rep->name);
            break;
        }
        MPI_Offset spos = pos + (MPI_Offset)(e * one.file_bytes + at.file_bytes);
        size_t got = 0;
        int eof = 0;
        if (write) {
            if ((st = convert(f, rep, 1, buf, count, dt, &c, tmp)) == TERN_OK)
                st = move(f, 1, spos, tmp, c.n.file_bytes, &got);
        } else {
            st = move(f, 0, spos, tmp, c.n.file_bytes, &got);
            if (st == TERN_OK && got < c.n.file_bytes) {
                /* The end of the file: the whole items read. */
                eof = 1;
                tern_dt_span_t part = {0, 0, 0};
                if (whole)
                    st = whole_items(rep, dt, &one, got, &part);
                else
                    st = inside(rep, dt, &at, got, &part);
                c.n = part;
            }
            if (st == TERN_OK)
                st = convert(f, rep, 0, buf, count, dt, &c, tmp);
        }
        if (st != TERN_OK)
            break;
        *bytes += c.n.native_bytes;
        *moved += c.n.file_bytes;
        if (eof)
            break;
        if (whole) {
            e += whole;
        } else {
            at.items += c.n.items;
            at.file_bytes += c.n.file_bytes;
            at.native_bytes += c.n.native_bytes;
            if (at.items == one.items) {
                e++;
                at = (tern_dt_span_t){0, 0, 0};
            }
        }
    }
    free(tmp);
    return st;
}

int tern_io_datarep_async_ok(const tern_io_datarep_t *rep)
{
    return rep->external32;
}

tern_status_t tern_io_datarep_stage(tern_file_t *f, const tern_io_datarep_t *rep, int write,
                                    void *buf, MPI_Count count, MPI_Datatype dt, char **stage,
                                    size_t *len)
{
    *stage = NULL;
    *len = 0;
    tern_dt_span_t one = {0, 0, 0};
    tern_status_t st = span(rep, dt, SIZE_MAX, &one);
    size_t total = st == TERN_OK && one.items ? (size_t)count * one.file_bytes : 0;
    if (st != TERN_OK || total == 0)
        return st;
    char *tmp = malloc(total);
    if (!tmp)
        return tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of memory for %zu bytes of "
                                  "conversion buffer", f->name, total);
    if (write) {
        chunk_t c = {.pos = 0, .skip = 0,
                     .n = {(size_t)count * one.items, total, (size_t)count * one.native_bytes}};
        if ((st = convert(f, rep, 1, buf, count, dt, &c, tmp)) != TERN_OK) {
            free(tmp);
            return st;
        }
    }
    *stage = tmp;
    *len = total;
    return TERN_OK;
}

tern_status_t tern_io_datarep_unstage(tern_file_t *f, const tern_io_datarep_t *rep, int write,
                                      const char *stage, size_t got, void *buf, MPI_Count count,
                                      MPI_Datatype dt, size_t *bytes, size_t *moved)
{
    *bytes = *moved = 0;
    tern_dt_span_t one = {0, 0, 0};
    tern_status_t st = span(rep, dt, SIZE_MAX, &one);
    if (st != TERN_OK || !one.items || got == 0)
        return st;
    size_t total = (size_t)count * one.file_bytes;
    tern_dt_span_t done = {(size_t)count * one.items, total, (size_t)count * one.native_bytes};
    if (got < total)
        st = whole_items(rep, dt, &one, got, &done); /* a read met the end of the file */
    if (st == TERN_OK && !write) {
        chunk_t c = {.pos = 0, .skip = 0, .n = done};
        st = convert(f, rep, 0, buf, count, dt, &c, (char *)stage);
    }
    if (st == TERN_OK) {
        *bytes = done.native_bytes;
        *moved = done.file_bytes;
    }
    return st;
}

tern_status_t tern_io_datarep_coll(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                                   MPI_Count count, MPI_Datatype dt, size_t *bytes,
                                   size_t *moved, int *used, char **left, size_t *left_len)
{
    const tern_io_datarep_t *rep = f->view.rep;
    *bytes = *moved = 0;
    *used = 0;
    *left = NULL;
    *left_len = 0;
    char *stage = NULL;
    size_t total = 0;
    tern_status_t st = pos < 0 ? TERN_OK
                               : tern_io_datarep_stage(f, rep, write, buf, count, dt, &stage,
                                                       &total);
    /* Every rank takes part; one whose conversion failed with no data. */
    size_t got = 0;
    tern_status_t cst = tern_io_coll_access(f, write, st == TERN_OK && total ? pos : -1,
                                            stage ? stage : (char *)&got, (MPI_Count)total,
                                            MPI_BYTE, &got, used);
    if (st == TERN_OK)
        st = cst;
    if (st == TERN_OK && *used && total)
        st = tern_io_datarep_unstage(f, rep, write, stage, got, buf, count, dt, bytes, moved);
    if (st == TERN_OK && !*used) {
        /* Each rank moves its own: the stage goes with it (a write's
         * items converted once, not again by the independent path). */
        *left = stage;
        *left_len = total;
        return st;
    }
    free(stage);
    return st;
}
