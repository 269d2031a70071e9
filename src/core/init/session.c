/* MPI sessions (session.h). */
#include "core/init/session.h"
#include "core/group/group.h"
#include "core/group/pset.h"
#include "core/comm/unmatched.h"
#include "core/init/init.h"
#include "core/pt2pt/bsend.h"
#include "core/runtime/handle_table.h"
#include "core/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static tern_handle_table_t sessions = TERN_HANDLE_TABLE(TERN_KIND_SESSION, 4);

static const char *const level_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                          "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

tern_session_t *tern_session_lookup(MPI_Session handle)
{
    return tern_handle_get(&sessions, handle);
}

static int has_errhandler(const void *obj, const void *arg)
{
    return ((const tern_session_t *)obj)->errhandler == *(const MPI_Errhandler *)arg;
}

int tern_session_errhandler_in_use(MPI_Errhandler eh)
{
    return tern_handle_find(&sessions, has_errhandler, &eh) != NULL;
}

/* The level the info's thread_level asks for: a level's name (any case),
 * else MPI_THREAD_SINGLE, the default. */
static tern_status_t requested_level(const tern_info_t *info, int *level)
{
    const char *v = info ? tern_info_get(info, "thread_level") : NULL;
    *level = MPI_THREAD_SINGLE;
    if (!v)
        return TERN_OK;
    for (int i = 0; i < 4; i++)
        if (strcasecmp(v, level_names[i]) == 0) {
            *level = i;
            return TERN_OK;
        }
    return tern_status_detail(TERN_ERR_ARG,
                              "info value thread_level=\"%s\" is not MPI_THREAD_SINGLE, "
                              "_FUNNELED, _SERIALIZED or _MULTIPLE", v);
}

tern_status_t tern_session_init(const tern_info_t *info, MPI_Errhandler errhandler,
                                MPI_Session *session)
{
    int required, provided;
    tern_status_t st = requested_level(info, &required);
    if (st != TERN_OK)
        return st;
    tern_session_t *s = calloc(1, sizeof *s);
    if (!s)
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a session");
    if ((st = tern_handle_new(&sessions, s, &s->handle)) != TERN_OK) {
        free(s);
        return st;
    }
    /* Counted before the runtime comes up, so that nothing can end it
     * between the two. */
    tern_rt.n_sessions++;
    if ((st = tern_runtime_init(required, &provided)) != TERN_OK) {
        tern_rt.n_sessions--;
        tern_handle_release(&sessions, s->handle);
        free(s);
        return st;
    }
    /* Its buffered-send pool (session_buffer.h), for the communicators
     * made from its groups to bind to. */
    if (!tern_bsend_session_pool((uint32_t)s->handle, 1)) {
        MPI_Session h = s->handle; /* finalize frees s */
        tern_session_finalize(&h);
        return tern_status_detail(TERN_ERR_NOMEM, "out of memory for a session's buffer record");
    }
    s->errhandler = errhandler;
    s->thread_level = provided;
    *session = s->handle;
    return TERN_OK;
}

tern_status_t tern_session_finalize(MPI_Session *session)
{
    tern_session_t *s = tern_session_lookup(*session);
    /* Its communicators receive nothing more: messages that arrived on
     * them unmatched are reported (MPI_Comm_free would have, had the
     * program freed them). */
    uint64_t unmatched = tern_rt.n_unmatched;
    (void)tern_unmatched_check_session((uint32_t)s->handle, "MPI_Session_finalize");
    /* Its buffered messages go out before it ends; a buffer still attached
     * is the user's again. */
    tern_bsend_pool_t *p = tern_bsend_session_pool((uint32_t)s->handle, 0);
    if (p)
        tern_bsend_pool_flush(p);
    tern_bsend_session_forget((uint32_t)s->handle);
    tern_handle_release(&sessions, s->handle);
    free(s);
    *session = MPI_SESSION_NULL;
    tern_rt.n_sessions--;
    tern_status_t st = tern_runtime_release("MPI_Session_finalize");
    return st != TERN_OK ? st : tern_unmatched_since(unmatched);
}

tern_status_t tern_session_get_num_psets(const tern_session_t *s, int *npset_names)
{
    (void)s; /* every session sees the same sets */
    *npset_names = TERN_PSET_COUNT;
    return TERN_OK;
}

tern_status_t tern_session_get_nth_pset(const tern_session_t *s, int n, int *pset_len,
                                        char *pset_name)
{
    (void)s;
    const char *name = tern_pset_name(n);
    if (!name)
        return tern_status_detail(TERN_ERR_ARG, "n=%d is out of range (there are %d psets)", n,
                                  TERN_PSET_COUNT);
    if (*pset_len < 0)
        return tern_status_detail(TERN_ERR_ARG, "pset_len=%d is negative", *pset_len);
    int len = (int)strlen(name);
    if (*pset_len > 0) {
        if (!pset_name)
            return tern_status_detail(TERN_ERR_ARG, "pset_name is NULL but pset_len=%d",
                                      *pset_len);
        snprintf(pset_name, (size_t)*pset_len, "%s", name);
    }
    *pset_len = len + 1;
    return TERN_OK;
}

tern_status_t tern_session_get_pset_info(const tern_session_t *s, const char *pset_name,
                                         MPI_Info *info)
{
    (void)s;
    int *ranks, n;
    tern_status_t st = tern_pset_members(pset_name, &ranks, &n);
    if (st != TERN_OK)
        return st;
    free(ranks);
    char size[16];
    snprintf(size, sizeof size, "%d", n);
    MPI_Info h;
    if ((st = tern_info_create(&h)) != TERN_OK)
        return st;
    if ((st = tern_info_set(tern_info_lookup(h), "mpi_size", size)) != TERN_OK) {
        tern_info_free(h);
        return st;
    }
    *info = h;
    return TERN_OK;
}

tern_status_t tern_session_get_info(const tern_session_t *s, MPI_Info *info_used)
{
    MPI_Info h;
    tern_status_t st = tern_info_create(&h);
    if (st != TERN_OK)
        return st;
    if ((st = tern_info_set(tern_info_lookup(h), "thread_level",
                            level_names[s->thread_level])) != TERN_OK) {
        tern_info_free(h);
        return st;
    }
    *info_used = h;
    return TERN_OK;
}

tern_status_t tern_session_group_from_pset(const tern_session_t *s, const char *pset_name,
                                           MPI_Group *newgroup)
{
    int *ranks, n;
    tern_status_t st = tern_pset_members(pset_name, &ranks, &n);
    if (st != TERN_OK)
        return st;
    st = tern_group_new(ranks, n, newgroup);
    if (st == TERN_OK)
        tern_group_set_session(*newgroup, s->handle);
    free(ranks);
    return st;
}
