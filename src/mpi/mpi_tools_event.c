/* Events of the tools interface (mpi_tools.h): the TERN_EVENT rows of
 * base/pvars.def, index = row, named tern_<id in lower case>.
 *
 * A registration (MPI_T_event_handle_alloc) holds up to one callback per
 * safety level. The engine raises an event under its own lock, in the
 * thread that runs progress (an MPI call, or the progress thread of
 * TERN_ASYNC_PROGRESS); that context asks a callback to be at least
 * MPI_T_CB_REQUIRE_MPI_RESTRICTED (MPI_T_CB_REQUIRE_THREAD_SAFE on the
 * progress thread, which runs beside the program's threads). The
 * callback of the lowest level that meets it runs at once, with an
 * instance on the raising stack (valid during the callback: read, copy,
 * timestamp and source take it); a registration without one counts the
 * event as dropped, and its dropped handler hears the count before the
 * next callback it runs. Raising costs the engine a load and a branch
 * while no callback is registered for the event (tern_event_on). */
#include "mpi/mpi_tools.h"
#include "core/pt2pt/progress_thread.h"
#include "base/pvars.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ELEMS = 4, N_SAFETY = 4 };

typedef struct {
    char name[64];
    int verbosity, category;
    const char *desc;
    int n;                     /* elements */
    MPI_Datatype types[MAX_ELEMS];
    MPI_Aint displs[MAX_ELEMS];
    size_t size;               /* bytes of the packed data */
} event_t;

static const struct {
    const char *id, *category, *elems, *doc;
    int verbosity;
} rows[TERN_EVENT_N] = {
#define TERN_EVENT(id, verb, cat, elems, doc) {#id, cat, elems, doc, MPI_T_VERBOSITY_##verb},
#include "base/pvars.def"
};

static event_t events[TERN_EVENT_N];
static int built;

/* The layout of each event's data: its elements ("name:int,name:ull")
 * packed in order, each at its natural alignment. */
static void events_build(void)
{
    if (built)
        return;
    for (int i = 0; i < TERN_EVENT_N; i++) {
        event_t *e = &events[i];
        snprintf(e->name, sizeof e->name, "tern_%s", rows[i].id);
        for (char *c = e->name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        e->verbosity = rows[i].verbosity;
        e->category = tern_t_category_of(rows[i].category);
        e->desc = rows[i].doc;
        size_t off = 0;
        for (const char *p = rows[i].elems; *p && e->n < MAX_ELEMS;) {
            const char *colon = strchr(p, ':');
            int ull = colon && strncmp(colon + 1, "ull", 3) == 0;
            size_t sz = ull ? sizeof(unsigned long long) : sizeof(int);
            off = (off + sz - 1) / sz * sz;
            e->types[e->n] = ull ? MPI_UNSIGNED_LONG_LONG : MPI_INT;
            e->displs[e->n] = (MPI_Aint)off;
            off += sz;
            e->n++;
            const char *comma = strchr(p, ',');
            p = comma ? comma + 1 : p + strlen(p);
        }
        e->size = off;
    }
    built = 1;
}

int tern_t_event_count(void)
{
    return TERN_EVENT_N;
}

int tern_t_event_category(int i)
{
    events_build();
    return events[i].category;
}

int tern_t_event_get_num(int *num_events)
{
    TERN_T_CHECK_INIT();
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = TERN_EVENT_N;
    return MPI_SUCCESS;
}

int tern_t_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype *array_of_datatypes, MPI_Aint *array_of_displacements,
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    {
        TERN_T_CHECK_INIT();
        if (event_index < 0 || event_index >= TERN_EVENT_N)
            return MPI_T_ERR_INVALID_INDEX;
        events_build();
        const event_t *e = &events[event_index];
        tern_t_string(e->name, name, name_len);
        if (verbosity)
            *verbosity = e->verbosity;
        if (num_elements) {
            /* In: the arrays' length; they get that many elements at most. */
            for (int k = 0; k < e->n && k < *num_elements; k++) {
                if (array_of_datatypes)
                    array_of_datatypes[k] = e->types[k];
                if (array_of_displacements)
                    array_of_displacements[k] = e->displs[k];
            }
            *num_elements = e->n;
        }
        if (enumtype)
            *enumtype = event_index == TERN_EVENT_COLL_ALGORITHM_CHOSEN ? tern_t_coll_enum()
                                                                         : MPI_T_ENUM_NULL;
        tern_t_string(e->desc, desc, desc_len);
        if (bind)
            *bind = MPI_T_BIND_NO_OBJECT;
    }
    return info ? tern_t_new_info(info) : MPI_SUCCESS;
}

int tern_t_event_get_index(const char *name, int *event_index)
{
    TERN_T_CHECK_INIT();
    if (!name || !event_index)
        return MPI_T_ERR_INVALID;
    events_build();
    for (int i = 0; i < TERN_EVENT_N; i++)
        if (strcmp(events[i].name, name) == 0) {
            *event_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

/* ------------------------------------------------------------------------ */
/* Registrations. */

struct tern_t_reg_s {
    struct tern_t_reg_s *next;
    int event;
    int listening; /* counted in tern_event_on[event] */
    struct {
        MPI_T_event_cb_function *fn;
        void *user_data;
    } cb[N_SAFETY];
    MPI_T_event_dropped_cb_function *dropped_fn;
    MPI_Count dropped;
};

struct tern_t_instance_s {
    int event;
    MPI_Count timestamp;
    unsigned char data[32];
};

static struct tern_t_reg_s *regs;

static int reg_valid(MPI_T_event_registration r)
{
    for (struct tern_t_reg_s *p = regs; p; p = p->next)
        if (p == r)
            return 1;
    return 0;
}

/* Whether r has a callback: then the engine raises its event. */
static void reg_listen(struct tern_t_reg_s *r)
{
    int any = 0;
    for (int s = 0; s < N_SAFETY; s++)
        any |= r->cb[s].fn != NULL;
    if (any != r->listening) {
        tern_event_listen(r->event, any ? 1 : -1);
        r->listening = any;
    }
}

void tern_t_event_release_all(void)
{
    while (regs) {
        struct tern_t_reg_s *r = regs;
        regs = r->next;
        if (r->listening)
            tern_event_listen(r->event, -1);
        free(r);
    }
}

int tern_t_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    TERN_T_CHECK_INIT();
    (void)obj_handle; /* every event binds to no object */
    (void)info;       /* no hint applies */
    if (event_index < 0 || event_index >= TERN_EVENT_N)
        return MPI_T_ERR_INVALID_INDEX;
    if (!event_registration)
        return MPI_T_ERR_INVALID;
    struct tern_t_reg_s *r = calloc(1, sizeof *r);
    if (!r)
        return MPI_T_ERR_OUT_OF_HANDLES;
    r->event = event_index;
    r->next = regs;
    regs = r;
    *event_registration = r;
    return MPI_SUCCESS;
}

static int check_reg(MPI_T_event_registration r)
{
    return reg_valid(r) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

static int check_safety(MPI_T_cb_safety s)
{
    return (int)s >= 0 && (int)s < N_SAFETY ? MPI_SUCCESS : MPI_T_ERR_INVALID;
}

int tern_t_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    TERN_T_CHECK_INIT();
    (void)info; /* no hint applies: all are ignored */
    return check_reg(event_registration);
}

int tern_t_event_handle_get_info(MPI_T_event_registration event_registration,
                                 MPI_Info *info_used)
{
    {
        TERN_T_CHECK_INIT();
        int err = check_reg(event_registration);
        if (err != MPI_SUCCESS)
            return err;
        if (!info_used)
            return MPI_T_ERR_INVALID;
    }
    return tern_t_new_info(info_used);
}

int tern_t_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function *event_cb_function)
{
    TERN_T_CHECK_INIT();
    (void)info;
    int err = check_reg(event_registration);
    if (err == MPI_SUCCESS)
        err = check_safety(cb_safety);
    if (err != MPI_SUCCESS)
        return err;
    /* A NULL function removes the level's callback (MPI-5.0 15.3.8.3). */
    event_registration->cb[cb_safety].fn = event_cb_function;
    event_registration->cb[cb_safety].user_data = user_data;
    reg_listen(event_registration);
    return MPI_SUCCESS;
}

int tern_t_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    TERN_T_CHECK_INIT();
    (void)info;
    int err = check_reg(event_registration);
    return err == MPI_SUCCESS ? check_safety(cb_safety) : err;
}

int tern_t_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    {
        TERN_T_CHECK_INIT();
        int err = check_reg(event_registration);
        if (err == MPI_SUCCESS)
            err = check_safety(cb_safety);
        if (err != MPI_SUCCESS)
            return err;
        if (!info_used)
            return MPI_T_ERR_INVALID;
    }
    return tern_t_new_info(info_used);
}

int tern_t_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function *free_cb_function)
{
    TERN_T_CHECK_INIT();
    int err = check_reg(event_registration);
    if (err != MPI_SUCCESS)
        return err;
    for (struct tern_t_reg_s **p = &regs; *p; p = &(*p)->next)
        if (*p == event_registration) {
            *p = event_registration->next;
            break;
        }
    if (event_registration->listening)
        tern_event_listen(event_registration->event, -1);
    /* No callback of it can run any more (it left the list under the lock
     * every raise takes): the free callback may run now. */
    if (free_cb_function)
        free_cb_function(event_registration, MPI_T_CB_REQUIRE_NONE, user_data);
    free(event_registration);
    return MPI_SUCCESS;
}

int tern_t_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function *dropped_cb_function)
{
    TERN_T_CHECK_INIT();
    int err = check_reg(event_registration);
    if (err == MPI_SUCCESS)
        event_registration->dropped_fn = dropped_cb_function;
    return err;
}

/* ------------------------------------------------------------------------ */
/* Raising and instances. */

static void sink(tern_event_id_t id, uint64_t timestamp, const int64_t *values)
{
    TERN_T_GUARD();
    if (!tern_t_initialized())
        return;
    events_build();
    const event_t *e = &events[id];
    struct tern_t_instance_s inst = {.event = (int)id, .timestamp = (MPI_Count)timestamp};
    for (int k = 0; k < e->n; k++) {
        unsigned char *at = inst.data + e->displs[k];
        if (e->types[k] == MPI_INT) {
            int v = (int)values[k];
            memcpy(at, &v, sizeof v);
        } else {
            unsigned long long v = (unsigned long long)values[k];
            memcpy(at, &v, sizeof v);
        }
    }
    int need = tern_progress_thread_is_self() ? MPI_T_CB_REQUIRE_THREAD_SAFE
                                              : MPI_T_CB_REQUIRE_MPI_RESTRICTED;
    struct tern_t_reg_s *next;
    for (struct tern_t_reg_s *r = regs; r; r = next) {
        next = r->next; /* a callback may free its registration */
        if (r->event != (int)id)
            continue;
        int s = need;
        while (s < N_SAFETY && !r->cb[s].fn)
            s++;
        if (s == N_SAFETY) {
            r->dropped++;
            continue;
        }
        if (r->dropped && r->dropped_fn) {
            MPI_Count n = r->dropped;
            r->dropped = 0;
            r->dropped_fn(n, r, 0, (MPI_T_cb_safety)s, r->cb[s].user_data);
        }
        r->cb[s].fn(&inst, r, (MPI_T_cb_safety)s, r->cb[s].user_data);
    }
}

void tern_t_event_install(void)
{
    tern_event_set_sink(sink);
}

static int check_instance(MPI_T_event_instance i)
{
    return i && i->event >= 0 && i->event < TERN_EVENT_N ? MPI_SUCCESS
                                                          : MPI_T_ERR_INVALID_HANDLE;
}

int tern_t_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    int err = check_instance(event_instance);
    if (err != MPI_SUCCESS)
        return err;
    const event_t *e = &events[event_instance->event];
    if (element_index < 0 || element_index >= e->n)
        return MPI_T_ERR_INVALID_INDEX;
    if (!buffer)
        return MPI_T_ERR_INVALID;
    size_t sz = e->types[element_index] == MPI_INT ? sizeof(int) : sizeof(unsigned long long);
    memcpy(buffer, event_instance->data + e->displs[element_index], sz);
    return MPI_SUCCESS;
}

int tern_t_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    int err = check_instance(event_instance);
    if (err != MPI_SUCCESS)
        return err;
    if (!buffer)
        return MPI_T_ERR_INVALID;
    memcpy(buffer, event_instance->data, events[event_instance->event].size);
    return MPI_SUCCESS;
}

int tern_t_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    int err = check_instance(event_instance);
    if (err != MPI_SUCCESS)
        return err;
    if (!event_timestamp)
        return MPI_T_ERR_INVALID;
    *event_timestamp = event_instance->timestamp;
    return MPI_SUCCESS;
}

int tern_t_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    int err = check_instance(event_instance);
    if (err != MPI_SUCCESS)
        return err;
    if (!source_index)
        return MPI_T_ERR_INVALID;
    *source_index = 0;
    return MPI_SUCCESS;
}
