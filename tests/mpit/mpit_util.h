/* What the MPI_T tests share: a call checked for the code it returns, one
 * performance-variable session, a handle found by name (its class and
 * binding checked) and a read of one value. */
#ifndef TERN_TESTS_MPIT_UTIL_H
#define TERN_TESTS_MPIT_UTIL_H

#include "../mpi/mtest.h"

#include <mpi.h>

#define RC(call, want)                                                                             \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(rc_ == (want), "%s returned %d, not %s (%d)", #call, rc_, #want, want);             \
    } while (0)

static MPI_T_pvar_session sess;

/* The index of the performance variable of that name and class, which
 * must bind to want_bind (negative: any binding). */
static inline int mpit_index(const char *name, int cls, int want_bind)
{
    int idx = -1, c = -1, bind = -1;
    RC(MPI_T_pvar_get_index(name, cls, &idx), MPI_SUCCESS);
    RC(MPI_T_pvar_get_info(idx, NULL, NULL, NULL, &c, NULL, NULL, NULL, NULL, &bind, NULL, NULL,
                           NULL), MPI_SUCCESS);
    CHECK(c == cls, "%s class %d, not %d", name, c, cls);
    CHECK(want_bind < 0 || bind == want_bind, "%s binds to %d, not %d", name, bind, want_bind);
    return idx;
}

/* A handle on sess of that variable for obj (NULL when unbound), one
 * value, started when asked. */
static inline MPI_T_pvar_handle mpit_handle(const char *name, int cls, int bind, void *obj,
                                            int start)
{
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int count = 0;
    RC(MPI_T_pvar_handle_alloc(sess, mpit_index(name, cls, bind), obj, &h, &count), MPI_SUCCESS);
    CHECK(count == 1, "%s count %d", name, count);
    if (start)
        RC(MPI_T_pvar_start(sess, h), MPI_SUCCESS);
    return h;
}

/* The handle's value (all ones if the read wrote nothing). */
static inline unsigned long long rd(MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    RC(MPI_T_pvar_read(sess, h, &v), MPI_SUCCESS);
    return v;
}

#endif
