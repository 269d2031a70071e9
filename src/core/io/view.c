/* File views (view.h). */
#include "core/io/view.h"
#include "core/io/io_datarep.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const datarep_names[] = {
    [TERN_DATAREP_NATIVE] = "native",
    [TERN_DATAREP_INTERNAL] = "internal",
    [TERN_DATAREP_EXTERNAL32] = "external32",
    [TERN_DATAREP_USER] = "user",
};

const char *tern_io_datarep_name(tern_datarep_t d)
{
    return datarep_names[d];
}

const char *tern_io_view_datarep(const tern_io_view_t *v)
{
    return v->rep ? tern_io_datarep_name_of(v->rep) : datarep_names[v->datarep];
}

static void set_contiguous(tern_io_view_t *v, long size)
{
    v->segs_one = (tern_dt_seg_t){.offset = 0, .len = (size_t)size};
    v->before_one = 0;
    v->segs = &v->segs_one;
    v->before = &v->before_one;
    v->nsegs = 1;
}

void tern_io_view_default(tern_io_view_t *v)
{
    memset(v, 0, sizeof *v);
    v->etype = v->filetype = MPI_BYTE;
    v->datarep = TERN_DATAREP_NATIVE;
    v->esize = v->fsize = 1;
    v->fextent = 1;
    set_contiguous(v, 1);
}

void tern_io_view_free(tern_io_view_t *v)
{
    if (v->segs != &v->segs_one) {
        free(v->segs);
        free(v->before);
    }
    tern_datatype_release(v->etype);
    tern_datatype_release(v->filetype);
    tern_io_view_default(v);
}

/* The view of etype and filetype at disp, whose data lies in the file as
 * placed's does (filetype itself, or its layout in the representation),
 * etypes of esize bytes there. */
static tern_status_t view_place(tern_io_view_t *v, MPI_Offset disp, MPI_Datatype etype,
                                MPI_Datatype filetype, MPI_Datatype placed, long esize,
                                int writable)
{
    long fsize = tern_datatype_size(placed);
    if (esize <= 0)
        return tern_status_detail(TERN_ERR_TYPE, "etype has no data (size %ld)", esize);
    if (fsize == 0) {
        /* A filetype without data is whole etypes too (none): ROMIO takes
         * it, and PnetCDF sets one on the ranks with nothing to move in a
         * collective access. Only accesses of no data are possible. */
        v->disp = disp;
        v->etype = etype;
        v->filetype = filetype;
        v->esize = esize;
        v->fsize = 0;
        v->fextent = tern_datatype_extent(placed);
        v->segs = NULL;
        v->before = NULL;
        v->nsegs = 0;
        tern_datatype_retain(etype);
        tern_datatype_retain(filetype);
        return TERN_OK;
    }
    if (fsize < 0 || fsize % esize != 0)
        return tern_status_detail(TERN_ERR_TYPE,
                                  "filetype's %ld bytes of data are not whole etypes of %ld "
                                  "bytes",
                                  fsize, esize);
    long extent = tern_datatype_extent(placed);
    if (extent <= 0)
        return tern_status_detail(TERN_ERR_TYPE, "filetype's extent %ld is not positive",
                                  extent);
    tern_dt_seg_t *segs = NULL;
    size_t n = 0;
    tern_status_t st = tern_datatype_flatten(1, placed, &segs, &n);
    if (st != TERN_OK)
        return st;
    size_t *before = malloc((n ? n : 1) * sizeof *before);
    if (!before) {
        free(segs);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a file view");
    }
    size_t sum = 0;
    for (size_t j = 0; j < n; j++) {
        /* MPI: the filetype's displacements are non-negative and ascend
         * (14.3); a file open for writing must not see a byte twice. */
        if (segs[j].offset < 0 ||
            (j > 0 && segs[j].offset < segs[j - 1].offset + (writable ? (MPI_Aint)segs[j - 1].len : 0))) {
            MPI_Aint off = segs[j].offset;
            free(segs);
            free(before);
            /* MPI_ERR_IO, as ROMIO (MPICH's io/tst_fileview expects it). */
            return tern_status_detail(TERN_ERR_FILE_IO,
                                      "filetype's data at byte %ld %s", (long)off,
                                      off < 0 ? "has a negative displacement"
                                              : writable ? "overlaps or precedes earlier data "
                                                           "(the file is open for writing)"
                                                         : "precedes earlier data");
        }
        before[j] = sum;
        sum += segs[j].len;
    }
    v->disp = disp;
    v->etype = etype;
    v->filetype = filetype;
    v->esize = esize;
    v->fsize = fsize;
    v->fextent = extent;
    if (n == 1 && segs[0].offset == 0 && (MPI_Aint)segs[0].len == extent) {
        free(segs);
        free(before);
        set_contiguous(v, fsize);
    } else {
        v->segs = segs;
        v->before = before;
        v->nsegs = n;
    }
    tern_datatype_retain(etype);
    tern_datatype_retain(filetype);
    return TERN_OK;
}

/* The sizes of a view in its representation: the etype's bytes, and the
 * filetype whose pieces, size and extent place the data (for a converting
 * representation its layout in the file, *layout to release). */
static tern_status_t rep_sizes(const struct tern_io_datarep *rep, MPI_Datatype etype,
                               MPI_Datatype filetype, long *esize, MPI_Datatype *placed,
                               MPI_Datatype *layout)
{
    *layout = MPI_DATATYPE_NULL;
    *placed = filetype;
    if (!rep) {
        *esize = tern_datatype_size(etype);
        return TERN_OK;
    }
    size_t e = 0;
    tern_status_t st = tern_io_datarep_file_bytes(rep, 1, etype, &e);
    if (st == TERN_OK)
        st = tern_io_datarep_layout(rep, filetype, layout);
    if (st == TERN_OK)
        *placed = *layout;
    *esize = (long)e;
    return st;
}

tern_status_t tern_io_view_make(tern_io_view_t *v, MPI_Offset disp, MPI_Datatype etype,
                                MPI_Datatype filetype, const char *datarep, int writable)
{
    tern_io_view_default(v);
    const struct tern_io_datarep *rep = NULL;
    if (strcasecmp(datarep, "native") == 0)
        v->datarep = TERN_DATAREP_NATIVE;
    else if (strcasecmp(datarep, "internal") == 0)
        v->datarep = TERN_DATAREP_INTERNAL;
    else if ((rep = tern_io_datarep_find(datarep)) != NULL)
        v->datarep = strcasecmp(datarep, "external32") == 0 ? TERN_DATAREP_EXTERNAL32
                                                            : TERN_DATAREP_USER;
    else
        return tern_status_detail(TERN_ERR_DATAREP,
                                  "datarep=\"%s\" is none of native, internal, external32 and "
                                  "the representations registered with MPI_Register_datarep",
                                  datarep);
    long esize = 0;
    MPI_Datatype placed, layout;
    tern_status_t st = rep_sizes(rep, etype, filetype, &esize, &placed, &layout);
    if (st == TERN_OK)
        st = view_place(v, disp, etype, filetype, placed, esize, writable);
    if (layout != MPI_DATATYPE_NULL)
        tern_datatype_release(layout);
    if (st == TERN_OK)
        v->rep = rep;
    return st;
}

/* The piece holding data byte r (0 <= r < fsize) of one filetype. */
static size_t piece_of(const tern_io_view_t *v, size_t r)
{
    size_t lo = 0, hi = v->nsegs - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (v->before[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

MPI_Offset tern_io_view_offset(const tern_io_view_t *v, MPI_Offset pos)
{
    if (v->fsize == 0)
        return v->disp;
    MPI_Offset k = pos / v->fsize;
    size_t r = (size_t)(pos % v->fsize);
    size_t j = piece_of(v, r);
    return v->disp + k * v->fextent + v->segs[j].offset + (MPI_Offset)(r - v->before[j]);
}

int tern_io_view_dense(const tern_io_view_t *v)
{
    return v->fsize > 0 && v->nsegs == 1 && v->segs[0].offset == 0 &&
           (MPI_Aint)v->segs[0].len == v->fextent;
}

tern_status_t tern_io_view_walk(const tern_io_view_t *v, MPI_Offset pos, size_t len,
                                tern_io_piece_fn fn, void *arg)
{
    if (len == 0)
        return TERN_OK;
    if (v->fsize == 0)
        return tern_status_detail(TERN_ERR_ARG, "the view's filetype has no data: an access "
                                  "through it can move none, not %zu bytes", len);
    /* A filetype without holes (the default view's MPI_BYTE, any
     * contiguous type): the range is one piece, not one per tile. */
    if (tern_io_view_dense(v))
        return fn(v->disp + pos, len, arg);
    MPI_Offset k = pos / v->fsize;
    size_t r = (size_t)(pos % v->fsize);
    size_t j = piece_of(v, r);
    size_t in = r - v->before[j];
    MPI_Offset run_off = -1;
    size_t run_len = 0;
    while (len > 0) {
        MPI_Offset off = v->disp + k * v->fextent + v->segs[j].offset + (MPI_Offset)in;
        size_t n = v->segs[j].len - in;
        if (n > len)
            n = len;
        if (run_len && run_off + (MPI_Offset)run_len == off) {
            run_len += n;
        } else {
            if (run_len) {
                tern_status_t st = fn(run_off, run_len, arg);
                if (st != TERN_OK)
                    return st;
            }
            run_off = off;
            run_len = n;
        }
        len -= n;
        in = 0;
        if (++j == v->nsegs) {
            j = 0;
            k++;
        }
    }
    return fn(run_off, run_len, arg);
}

MPI_Offset tern_io_view_bytes_before(const tern_io_view_t *v, MPI_Offset off)
{
    if (off <= v->disp || v->fsize == 0)
        return 0;
    MPI_Offset rel = off - v->disp;
    MPI_Offset k = rel / v->fextent, r = rel % v->fextent;
    MPI_Offset bytes = k * v->fsize;
    for (size_t j = 0; j < v->nsegs; j++) {
        MPI_Offset start = v->segs[j].offset, end = start + (MPI_Offset)v->segs[j].len;
        if (r >= end)
            bytes += (MPI_Offset)v->segs[j].len;
        else if (r > start)
            bytes += r - start;
    }
    return bytes;
}
