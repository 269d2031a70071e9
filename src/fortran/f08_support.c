/* Choice buffers of module mpi_f08 (CFI descriptors) and the errors the
 * binding finds itself; see f08_support.h. */
#include "fortran/f08_support.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The words of the last error the binding found (one per thread: the
 * raise follows the finding in the same call). */
static _Thread_local char f08_error[256];

static int section_error(const char *fn, const char *arg, const char *why)
{
    snprintf(f08_error, sizeof f08_error, "%s: %s: %s", fn, arg, why);
    return -1; /* raised by tern_f08_raise_* as MPI_ERR_BUFFER */
}

/* The datatype of all n elements of the section: one hvector per
 * dimension, innermost first, over the user's datatype. */
static int section_nest(const CFI_cdesc_t *d, MPI_Datatype type, MPI_Datatype *out)
{
    MPI_Datatype t = type;
    for (int i = 0; i < d->rank; i++) {
        MPI_Datatype nt;
        int rc = MPI_Type_create_hvector((int)d->dim[i].extent, 1, (MPI_Aint)d->dim[i].sm, t, &nt);
        if (t != type)
            MPI_Type_free(&t);
        if (rc != MPI_SUCCESS)
            return rc;
        t = nt;
    }
    *out = t;
    return MPI_SUCCESS;
}

/* The datatype of the first count elements (in array element order): one
 * displacement each. */
static int section_first(const CFI_cdesc_t *d, MPI_Count count, MPI_Datatype type,
                         MPI_Datatype *out)
{
    MPI_Aint *displs = malloc((size_t)count * sizeof *displs);
    if (!displs)
        return MPI_ERR_NO_MEM;
    CFI_index_t idx[CFI_MAX_RANK] = {0};
    for (MPI_Count k = 0; k < count; k++) {
        MPI_Aint at = 0;
        for (int i = 0; i < d->rank; i++)
            at += (MPI_Aint)(idx[i] * d->dim[i].sm);
        displs[k] = at;
        for (int i = 0; i < d->rank && ++idx[i] == d->dim[i].extent; i++)
            idx[i] = 0;
    }
    int rc = MPI_Type_create_hindexed_block((int)count, 1, displs, type, out);
    free(displs);
    return rc;
}

/* CFI_is_contiguous without libgfortran (libmpifort's C does not link it):
 * each dimension's stride is the elements below it. */
static int contiguous(const CFI_cdesc_t *d)
{
    CFI_index_t want = (CFI_index_t)d->elem_len;
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent > 1 && d->dim[i].sm != want)
            return 0;
        want *= d->dim[i].extent;
    }
    return 1;
}

/* Copies element k of the section d to or from the contiguous tmp, for
 * every k (array element order). */
static void section_copy(const CFI_cdesc_t *d, char *tmp, int to_tmp)
{
    CFI_index_t idx[CFI_MAX_RANK] = {0}, n = 1;
    for (int i = 0; i < d->rank; i++)
        n *= d->dim[i].extent;
    for (CFI_index_t k = 0; k < n; k++) {
        char *at = d->base_addr;
        for (int i = 0; i < d->rank; i++)
            at += idx[i] * d->dim[i].sm;
        if (to_tmp)
            memcpy(tmp + k * (CFI_index_t)d->elem_len, at, d->elem_len);
        else
            memcpy(at, tmp + k * (CFI_index_t)d->elem_len, d->elem_len);
        for (int i = 0; i < d->rank && ++idx[i] == d->dim[i].extent; i++)
            idx[i] = 0;
    }
}

/* A blocking call's way for a section no datatype describes: a copy. */
static int section_by_copy(const CFI_cdesc_t *d, CFI_index_t n, int flags, tern_f08_section_t *s)
{
    if (!(s->tmp = malloc((size_t)n * d->elem_len)))
        return MPI_ERR_NO_MEM;
    /* Copied in whatever the direction: copying back what the call did
     * not write leaves the section as it was. */
    section_copy(d, s->tmp, 1);
    s->d = d;
    s->copy_out = (flags & TERN_F08_COPY_OUT) != 0;
    s->addr = s->tmp;
    return MPI_SUCCESS;
}

int tern_f08_section(const CFI_cdesc_t *d, MPI_Count *count, MPI_Datatype *type, int flags,
                     tern_f08_section_t *s, const char *fn, const char *arg)
{
    s->made = MPI_DATATYPE_NULL;
    s->tmp = NULL;
    s->addr = tern_f_buf(d->base_addr);
    if (s->addr != d->base_addr || contiguous(d) || (flags & TERN_F08_ADDRESS))
        return MPI_SUCCESS;
    CFI_index_t n = 1;
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent > INT_MAX)
            return section_error(fn, arg, "a non-contiguous section with a dimension "
                                          "longer than INT_MAX elements");
        n *= d->dim[i].extent;
    }
    if (n == 0 || (count && *count == 0))
        return MPI_SUCCESS;
    if ((!count || !type) && (flags & TERN_F08_COPY_IN))
        return section_by_copy(d, n, flags, s);
    if (!count || !type)
        return section_error(fn, arg, "a non-contiguous array section in a nonblocking or "
                                      "persistent call that has no count and datatype of "
                                      "this buffer's own (v/w collectives, a count shared "
                                      "by two buffers, a window or buffer to attach): pass "
                                      "a contiguous array");
    MPI_Aint lb, extent;
    int rc = MPI_Type_get_extent(*type, &lb, &extent);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((extent != (MPI_Aint)d->elem_len || lb != 0) && (flags & TERN_F08_COPY_IN))
        return section_by_copy(d, n, flags, s);
    if (extent != (MPI_Aint)d->elem_len || lb != 0) {
        char why[160];
        snprintf(why, sizeof why, "a non-contiguous array section of %zu-byte elements with a "
                 "datatype of extent %ld (lower bound %ld): they must agree",
                 d->elem_len, (long)extent, (long)lb);
        return section_error(fn, arg, why);
    }
    if (*count > n) {
        char why[160];
        snprintf(why, sizeof why, "count %lld exceeds the section's %lld elements",
                 (long long)*count, (long long)n);
        return section_error(fn, arg, why);
    }
    rc = *count == n ? section_nest(d, *type, &s->made) : section_first(d, *count, *type, &s->made);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&s->made);
    if (rc != MPI_SUCCESS) {
        if (s->made != MPI_DATATYPE_NULL)
            MPI_Type_free(&s->made);
        return rc;
    }
    *count = 1;
    *type = s->made;
    return MPI_SUCCESS;
}

void tern_f08_section_done(tern_f08_section_t *s)
{
    if (s->tmp) {
        if (s->copy_out)
            section_copy(s->d, s->tmp, 0);
        free(s->tmp);
        s->tmp = NULL;
    }
    /* A pending nonblocking operation keeps the datatype alive. */
    if (s->made != MPI_DATATYPE_NULL)
        MPI_Type_free(&s->made);
}

int tern_f08_raise_comm(MPI_Fint comm, int code)
{
    if (code != -1)
        return code;
    MPI_Comm c = MPI_Comm_f2c(comm);
    if (c == MPI_COMM_NULL)
        c = MPI_COMM_WORLD;
    MPI_Errhandler eh;
    if (MPI_Comm_get_errhandler(c, &eh) == MPI_SUCCESS) {
        int quiet = eh == MPI_ERRORS_RETURN;
        MPI_Errhandler_free(&eh);
        if (!quiet)
            fprintf(stderr, "%s\n", f08_error);
    }
    MPI_Comm_call_errhandler(c, MPI_ERR_BUFFER);
    return MPI_ERR_BUFFER;
}

int tern_f08_raise_win(MPI_Fint win, int code)
{
    if (code != -1)
        return code;
    MPI_Win w = MPI_Win_f2c(win);
    MPI_Errhandler eh;
    if (MPI_Win_get_errhandler(w, &eh) == MPI_SUCCESS) {
        int quiet = eh == MPI_ERRORS_RETURN;
        MPI_Errhandler_free(&eh);
        if (!quiet)
            fprintf(stderr, "%s\n", f08_error);
    }
    MPI_Win_call_errhandler(w, MPI_ERR_BUFFER);
    return MPI_ERR_BUFFER;
}
