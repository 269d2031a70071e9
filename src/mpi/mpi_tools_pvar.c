/* Performance variables of the tools interface (mpi_tools.h): the rows of
 * base/pvars.def (index = row), then one counter per collective algorithm
 * (tern_coll_<coll>_<algorithm>, in the order of tern_coll_algorithms).
 *
 * The engine keeps one running value per variable (base/pvars.h); a
 * handle keeps what makes its own view of it:
 *   COUNTER, TIMER   accum + (started ? now - base : 0); start sets base,
 *                    stop folds the run into accum, reset and write set
 *                    accum (and base = now).
 *   HIGHWATERMARK    max(mark, engine's mark while started). The engine's
 *                    mark is shared, so a reset (or start, or write) of one
 *                    handle first folds it into every other started handle
 *                    of the variable, then sets it back to the level now.
 *   LEVEL, SIZE      the value now; continuous and read-only.
 * A variable bound to a communicator or window (pvars.def, BIND) reads
 * the counts of the object its handle was allocated for: the handle binds
 * a record to the object (base/pvars.h, "Counts of one object"), counted
 * from then on, and keeps it until it is freed (the object may end first:
 * the handle then keeps its last counts).
 * Timers run (the entry guard times calls: core/runtime/api_lock.c)
 * only while some timer handle is started (timers_started).
 * Counters and marks start stopped (continuous = 0), as a tool expects of
 * a session's own measurement; readreset reads the engine once, so it is
 * atomic (atomic = 1). */
#include "mpi/mpi_tools.h"
#include "core/coll/coll.h"
#include "core/comm/comm.h"
#include "core/rma/window.h"
#include "core/runtime/api_lock.h"
#include "base/pvars.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[64];
    int cls, bind, verbosity, category;
    const char *desc;
    uint64_t *value; /* NULL: the sum of tern_pvar_coll (tern_coll_calls) */
} pvar_t;

static const struct {
    const char *id, *category, *doc;
    int cls, bind, verbosity;
} rows[TERN_PVAR_N] = {
#define TERN_PVAR(id, cls, bind, verb, cat, doc)                                                   \
    {#id, cat, doc, MPI_T_PVAR_CLASS_##cls, MPI_T_BIND_##bind, MPI_T_VERBOSITY_##verb},
#include "base/pvars.def"
};

static pvar_t *pvars;
static int n_pvars;

/* The table, made at the first use (the names are lower case). */
static int pvars_build(void)
{
    if (pvars)
        return MPI_SUCCESS;
    size_t na;
    const tern_coll_algo_t *all = tern_coll_algorithms(&na);
    pvar_t *p = calloc(TERN_PVAR_N + na, sizeof *p);
    if (!p)
        return MPI_T_ERR_MEMORY;
    for (int i = 0; i < TERN_PVAR_N; i++) {
        snprintf(p[i].name, sizeof p[i].name, "tern_%s", rows[i].id);
        for (char *c = p[i].name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        p[i].cls = rows[i].cls;
        p[i].bind = rows[i].bind;
        p[i].verbosity = rows[i].verbosity;
        p[i].category = tern_t_category_of(rows[i].category);
        p[i].desc = rows[i].doc;
        p[i].value = i == TERN_PVAR_COLL_CALLS ? NULL : &tern_pvar_values[i];
    }
    for (size_t a = 0; a < na; a++) {
        pvar_t *v = &p[TERN_PVAR_N + a];
        snprintf(v->name, sizeof v->name, "tern_coll_%s_%s", tern_coll_kind_name(all[a].kind),
                 all[a].name);
        v->cls = MPI_T_PVAR_CLASS_COUNTER;
        v->bind = MPI_T_BIND_NO_OBJECT;
        v->verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
        v->category = tern_t_category_of("coll");
        v->desc = "calls of this collective that chose this algorithm (blocking, nonblocking "
                  "and persistent starts; the enumeration tern_coll_algorithm names them in "
                  "the same order)";
        v->value = &tern_pvar_coll[a];
    }
    n_pvars = (int)(TERN_PVAR_N + na);
    pvars = p;
    return MPI_SUCCESS;
}

int tern_t_pvar_count(void)
{
    return pvars_build() == MPI_SUCCESS ? n_pvars : 0;
}

int tern_t_pvar_category(int i)
{
    return pvars[i].category;
}

static int continuous(const pvar_t *v)
{
    return v->cls == MPI_T_PVAR_CLASS_LEVEL || v->cls == MPI_T_PVAR_CLASS_SIZE;
}

/* The engine's value. Every caller holds the entry points' lock (the
 * engine writes under it: base/pvars.h); an atomic load for the I/O
 * counts, which the I/O worker adds atomically. The calls of all
 * collectives are not counted apart (one add less per collective): they
 * are the sum of the per-algorithm counts. */
static uint64_t now(const pvar_t *v)
{
    if (!v->value) {
        uint64_t sum = 0;
        for (int a = 0; a < TERN_PVAR_COLL_MAX; a++)
            sum += tern_pvar_coll[a];
        return sum;
    }
    return __atomic_load_n(v->value, __ATOMIC_RELAXED);
}

/* The engine's lock, then the interface's (the order an event raise
 * takes them in), for the rest of the block. */
#define PVAR_GUARD()                                                                               \
    __attribute__((cleanup(tern_api_leave))) int api_held_ = tern_api_enter();                    \
    TERN_T_CHECK_INIT()

int tern_t_pvar_get_num(int *num_pvar)
{
    TERN_T_CHECK_INIT();
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    if (pvars_build() != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    *num_pvar = n_pvars;
    return MPI_SUCCESS;
}

int tern_t_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                         int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                         int *desc_len, int *bind, int *readonly, int *cont, int *atomic)
{
    TERN_T_CHECK_INIT();
    if (pvars_build() != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    if (pvar_index < 0 || pvar_index >= n_pvars)
        return MPI_T_ERR_INVALID_INDEX;
    const pvar_t *v = &pvars[pvar_index];
    tern_t_string(v->name, name, name_len);
    if (verbosity)
        *verbosity = v->verbosity;
    if (var_class)
        *var_class = v->cls;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    tern_t_string(v->desc, desc, desc_len);
    if (bind)
        *bind = v->bind;
    if (readonly)
        *readonly = continuous(v);
    if (cont)
        *cont = continuous(v);
    if (atomic)
        *atomic = !continuous(v);
    return MPI_SUCCESS;
}

int tern_t_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    TERN_T_CHECK_INIT();
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    if (pvars_build() != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    for (int i = 0; i < n_pvars; i++)
        if (pvars[i].cls == var_class && strcmp(pvars[i].name, name) == 0) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

/* ------------------------------------------------------------------------ */
/* Sessions and handles. */

struct tern_t_pvar_s {
    struct tern_t_pvar_s *next;
    tern_pvar_obj_t *obj; /* a bound variable's object record */
    int index;
    int started;
    uint64_t accum, base; /* counters */
    uint64_t mark;        /* high-water marks */
};

struct tern_t_session_s {
    struct tern_t_session_s *next;
    struct tern_t_pvar_s *handles;
};

static struct tern_t_session_s *sessions;

static int session_valid(MPI_T_pvar_session s)
{
    for (struct tern_t_session_s *p = sessions; p; p = p->next)
        if (p == s)
            return 1;
    return 0;
}

static int handle_valid(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    for (struct tern_t_pvar_s *p = s->handles; p; p = p->next)
        if (p == h)
            return 1;
    return 0;
}

/* Started timer handles: while there is one, the entry guard times calls. */
static int timers_started;

static void timer_run(const struct tern_t_pvar_s *h, int on)
{
    if (pvars[h->index].cls != MPI_T_PVAR_CLASS_TIMER)
        return;
    if (on ? timers_started++ == 0 : --timers_started == 0)
        tern_api_time_calls(on);
}

static void handle_free(struct tern_t_pvar_s *h)
{
    if (h->started && !continuous(&pvars[h->index]))
        timer_run(h, 0);
    if (h->obj)
        tern_pvar_obj_unbind(h->obj);
    free(h);
}

static void session_free(struct tern_t_session_s *s)
{
    while (s->handles) {
        struct tern_t_pvar_s *h = s->handles;
        s->handles = h->next;
        handle_free(h);
    }
    free(s);
}

void tern_t_pvar_release_all(void)
{
    while (sessions) {
        struct tern_t_session_s *s = sessions;
        sessions = s->next;
        session_free(s);
    }
}

int tern_t_pvar_session_create(MPI_T_pvar_session *session)
{
    TERN_T_CHECK_INIT();
    if (!session)
        return MPI_T_ERR_INVALID;
    struct tern_t_session_s *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_T_ERR_OUT_OF_SESSIONS;
    s->next = sessions;
    sessions = s;
    *session = s;
    return MPI_SUCCESS;
}

int tern_t_pvar_session_free(MPI_T_pvar_session *session)
{
    PVAR_GUARD();
    if (!session)
        return MPI_T_ERR_INVALID;
    if (!session_valid(*session))
        return MPI_T_ERR_INVALID_SESSION;
    for (struct tern_t_session_s **p = &sessions; *p; p = &(*p)->next)
        if (*p == *session) {
            *p = (*session)->next;
            break;
        }
    session_free(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

/* The record of the object a bound variable's handle is for. */
static int bind_object(int bind, void *obj_handle, tern_pvar_obj_t **obj_p)
{
    if (bind == MPI_T_BIND_NO_OBJECT)
        return MPI_SUCCESS;
    if (!obj_handle)
        return MPI_T_ERR_INVALID;
    tern_pvar_obj_t *o = NULL;
    if (bind == MPI_T_BIND_MPI_COMM) {
        MPI_Comm comm = *(MPI_Comm *)obj_handle;
        tern_comm_t *c = comm == MPI_COMM_NULL ? NULL : tern_comm_lookup(comm);
        if (!c)
            return MPI_T_ERR_INVALID_HANDLE;
        o = tern_pvar_obj_bind(c, 1, c->context_id);
    } else {
        MPI_Win win = *(MPI_Win *)obj_handle;
        tern_win_t *w = win == MPI_WIN_NULL ? NULL : tern_win_lookup(win);
        if (!w)
            return MPI_T_ERR_INVALID_HANDLE;
        o = tern_pvar_obj_bind(w, 0, 0);
    }
    if (!o)
        return MPI_T_ERR_OUT_OF_HANDLES;
    *obj_p = o;
    return MPI_SUCCESS;
}

int tern_t_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    PVAR_GUARD();
    if (!session_valid(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (pvars_build() != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    if (pvar_index < 0 || pvar_index >= n_pvars)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    tern_pvar_obj_t *obj = NULL;
    int err = bind_object(pvars[pvar_index].bind, obj_handle, &obj);
    if (err != MPI_SUCCESS)
        return err;
    struct tern_t_pvar_s *h = calloc(1, sizeof *h);
    if (!h) {
        if (obj)
            tern_pvar_obj_unbind(obj);
        return MPI_T_ERR_OUT_OF_HANDLES;
    }
    h->obj = obj;
    h->index = pvar_index;
    h->started = continuous(&pvars[pvar_index]);
    h->next = session->handles;
    session->handles = h;
    *handle = h;
    *count = 1;
    return MPI_SUCCESS;
}

int tern_t_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    PVAR_GUARD();
    if (!session_valid(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (!handle)
        return MPI_T_ERR_INVALID;
    if (!handle_valid(session, *handle))
        return MPI_T_ERR_INVALID_HANDLE;
    for (struct tern_t_pvar_s **p = &session->handles; *p; p = &(*p)->next)
        if (*p == *handle) {
            *p = (*handle)->next;
            break;
        }
    handle_free(*handle);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

/* A high-water mark's engine value is shared: every started handle of
 * variable index but skip takes in what it shows now, then the mark
 * restarts from the level now (the row before the mark's). */
static void mark_restart(int index, const struct tern_t_pvar_s *skip)
{
    uint64_t mark = now(&pvars[index]);
    for (struct tern_t_session_s *s = sessions; s; s = s->next)
        for (struct tern_t_pvar_s *h = s->handles; h; h = h->next)
            if (h != skip && h->index == index && h->started && mark > h->mark)
                h->mark = mark;
    tern_pvar_set((tern_pvar_id_t)index, tern_pvar_get((tern_pvar_id_t)(index - 1)));
}

/* The engine's value a handle sees: its object's count, or the
 * process's. */
static uint64_t engine(const struct tern_t_pvar_s *h)
{
    return h->obj ? h->obj->v[h->index] : now(&pvars[h->index]);
}

static uint64_t value_of(const struct tern_t_pvar_s *h)
{
    const pvar_t *v = &pvars[h->index];
    if (continuous(v))
        return now(v);
    if (v->cls == MPI_T_PVAR_CLASS_HIGHWATERMARK) {
        uint64_t mark = now(v);
        return h->started && mark > h->mark ? mark : h->mark;
    }
    return h->accum + (h->started ? engine(h) - h->base : 0);
}

/* Sets handle h's value to x (reset: x = 0; for a mark, the level now). */
static void set_value(struct tern_t_pvar_s *h, uint64_t x, int reset)
{
    const pvar_t *v = &pvars[h->index];
    if (v->cls == MPI_T_PVAR_CLASS_HIGHWATERMARK) {
        mark_restart(h->index, h);
        h->mark = reset ? tern_pvar_get((tern_pvar_id_t)(h->index - 1)) : x;
        return;
    }
    h->accum = x;
    h->base = engine(h);
}

static int start_one(struct tern_t_pvar_s *h)
{
    const pvar_t *v = &pvars[h->index];
    if (continuous(v))
        return MPI_T_ERR_PVAR_NO_STARTSTOP;
    if (h->started)
        return MPI_SUCCESS;
    if (v->cls == MPI_T_PVAR_CLASS_HIGHWATERMARK) {
        mark_restart(h->index, h);
        uint64_t level = tern_pvar_get((tern_pvar_id_t)(h->index - 1));
        if (level > h->mark)
            h->mark = level;
    } else {
        h->base = engine(h);
    }
    h->started = 1;
    timer_run(h, 1);
    return MPI_SUCCESS;
}

static int stop_one(struct tern_t_pvar_s *h)
{
    if (continuous(&pvars[h->index]))
        return MPI_T_ERR_PVAR_NO_STARTSTOP;
    if (!h->started)
        return MPI_SUCCESS;
    uint64_t x = value_of(h);
    h->started = 0;
    timer_run(h, 0);
    h->accum = h->mark = x;
    return MPI_SUCCESS;
}

static int reset_one(struct tern_t_pvar_s *h)
{
    if (continuous(&pvars[h->index]))
        return MPI_T_ERR_PVAR_NO_WRITE;
    set_value(h, 0, 1);
    return MPI_SUCCESS;
}

/* start, stop and reset: one handle, or every handle of the session
 * that allows it (MPI_T_PVAR_ALL_HANDLES). */
static int each(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                int (*fn)(struct tern_t_pvar_s *h))
{
    PVAR_GUARD();
    if (!session_valid(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (struct tern_t_pvar_s *h = session->handles; h; h = h->next)
            if (!continuous(&pvars[h->index]))
                fn(h);
        return MPI_SUCCESS;
    }
    if (!handle_valid(session, handle))
        return MPI_T_ERR_INVALID_HANDLE;
    return fn(handle);
}

int tern_t_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return each(session, handle, start_one);
}

int tern_t_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return each(session, handle, stop_one);
}

int tern_t_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return each(session, handle, reset_one);
}

static int one(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    if (!session_valid(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES || !handle_valid(session, handle))
        return MPI_T_ERR_INVALID_HANDLE;
    return buf ? MPI_SUCCESS : MPI_T_ERR_INVALID;
}

int tern_t_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    PVAR_GUARD();
    int err = one(session, handle, buf);
    if (err == MPI_SUCCESS)
        *(unsigned long long *)buf = value_of(handle);
    return err;
}

int tern_t_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    PVAR_GUARD();
    int err = one(session, handle, buf);
    if (err != MPI_SUCCESS)
        return err;
    if (continuous(&pvars[handle->index]))
        return MPI_T_ERR_PVAR_NO_WRITE;
    set_value(handle, *(const unsigned long long *)buf, 0);
    return MPI_SUCCESS;
}

int tern_t_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    PVAR_GUARD();
    int err = one(session, handle, buf);
    if (err != MPI_SUCCESS)
        return err;
    const pvar_t *v = &pvars[handle->index];
    if (continuous(v))
        return MPI_T_ERR_PVAR_NO_WRITE;
    if (v->cls == MPI_T_PVAR_CLASS_HIGHWATERMARK) {
        *(unsigned long long *)buf = value_of(handle);
        set_value(handle, 0, 1);
        return MPI_SUCCESS;
    }
    /* One read of the engine serves both halves: nothing counted between
     * them is lost. */
    uint64_t x = engine(handle);
    *(unsigned long long *)buf = handle->accum + (handle->started ? x - handle->base : 0);
    handle->accum = 0;
    handle->base = x;
    return MPI_SUCCESS;
}
