#include "core/runtime/user_errors.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int live;
    int cls;       /* its own value for a class */
    int n_codes;   /* a class: live codes of it */
    char *string;  /* NULL: none added */
} entry_t;

static entry_t *entries; /* value = TERN_USER_ERROR_BASE + index */
static int n_entries, cap_entries;

static entry_t *live_entry(int value)
{
    if (value < TERN_USER_ERROR_BASE)
        return NULL;
    long i = (long)value - TERN_USER_ERROR_BASE;
    return i < n_entries && entries[i].live ? &entries[i] : NULL;
}

static tern_status_t new_entry(int cls, int *value_p)
{
    int i = 0;
    while (i < n_entries && entries[i].live)
        i++;
    if (i == n_entries) {
        if (n_entries == INT_MAX - TERN_USER_ERROR_BASE)
            return tern_status_detail(TERN_ERR_LIMIT, "all error values are in use");
        if (n_entries == cap_entries) {
            int ncap = cap_entries ? cap_entries * 2 : 64;
            entry_t *n = realloc(entries, (size_t)ncap * sizeof *n);
            if (!n)
                return TERN_ERR_NOMEM;
            entries = n;
            cap_entries = ncap;
        }
        n_entries++;
    }
    int value = TERN_USER_ERROR_BASE + i;
    entries[i] = (entry_t){.live = 1, .cls = cls < 0 ? value : cls};
    *value_p = value;
    return TERN_OK;
}

tern_status_t tern_user_error_add_class(int *errorclass)
{
    return new_entry(-1, errorclass);
}

tern_status_t tern_user_error_add_code(int errorclass, int *errorcode)
{
    entry_t *c = live_entry(errorclass);
    int predefined = errorclass > MPI_SUCCESS && errorclass <= MPI_ERR_ABI;
    if (!predefined && (!c || c->cls != errorclass))
        return tern_status_detail(TERN_ERR_ARG, "errorclass %d is not an error class",
                                  errorclass);
    tern_status_t st = new_entry(errorclass, errorcode);
    if (st == TERN_OK && !predefined)
        live_entry(errorclass)->n_codes++; /* entries may have moved */
    return st;
}

tern_status_t tern_user_error_add_string(int errorcode, const char *string)
{
    entry_t *e = live_entry(errorcode);
    if (!e)
        return tern_status_detail(TERN_ERR_ARG, "errorcode %d was not added by the program%s",
                                  errorcode,
                                  errorcode <= MPI_ERR_LASTCODE ? " (predefined codes keep "
                                                                  "their text)" : "");
    size_t n = strlen(string);
    if (n >= MPI_MAX_ERROR_STRING)
        return tern_status_detail(TERN_ERR_ARG,
                                  "string of %zu characters (at most MPI_MAX_ERROR_STRING-1 = %d)",
                                  n, MPI_MAX_ERROR_STRING - 1);
    char *s = strdup(string);
    if (!s)
        return TERN_ERR_NOMEM;
    free(e->string);
    e->string = s;
    return TERN_OK;
}

static void release(entry_t *e)
{
    e->live = 0;
    /* Trailing dead entries go, so MPI_LASTUSEDCODE comes down again. */
    while (n_entries && !entries[n_entries - 1].live)
        n_entries--;
}

tern_status_t tern_user_error_remove_class(int errorclass)
{
    entry_t *e = live_entry(errorclass);
    if (!e || e->cls != errorclass)
        return tern_status_detail(TERN_ERR_ARG, "errorclass %d was not added by "
                                  "MPI_Add_error_class", errorclass);
    if (e->n_codes)
        return tern_status_detail(TERN_ERR_ARG, "errorclass %d still has %d error code(s)",
                                  errorclass, e->n_codes);
    if (e->string)
        return tern_status_detail(TERN_ERR_ARG, "errorclass %d still has an error string",
                                  errorclass);
    release(e);
    return TERN_OK;
}

tern_status_t tern_user_error_remove_code(int errorcode)
{
    entry_t *e = live_entry(errorcode);
    if (!e || e->cls == errorcode)
        return tern_status_detail(TERN_ERR_ARG, "errorcode %d was not added by "
                                  "MPI_Add_error_code", errorcode);
    if (e->string)
        return tern_status_detail(TERN_ERR_ARG, "errorcode %d still has an error string",
                                  errorcode);
    entry_t *c = live_entry(e->cls);
    if (c)
        c->n_codes--;
    release(e);
    return TERN_OK;
}

tern_status_t tern_user_error_remove_string(int errorcode)
{
    entry_t *e = live_entry(errorcode);
    if (!e || !e->string)
        return tern_status_detail(TERN_ERR_ARG, "errorcode %d has no string added by "
                                  "MPI_Add_error_string", errorcode);
    free(e->string);
    e->string = NULL;
    return TERN_OK;
}

int tern_user_error_class(int value)
{
    entry_t *e = live_entry(value);
    return e ? e->cls : -1;
}

const char *tern_user_error_string(int value)
{
    entry_t *e = live_entry(value);
    return e ? (e->string ? e->string : "") : NULL;
}

int tern_user_error_last(void)
{
    return n_entries ? TERN_USER_ERROR_BASE + n_entries - 1 : MPI_ERR_LASTCODE;
}
