/* The tools interface (mpi_tools.h): its state and lock, categories,
 * enumerations, control variables and the event source. Performance
 * variables are mpi_tools_pvar.c's, events mpi_tools_event.c's.
 *
 * Control variables are the knobs (base/knobs.def), index = knob id, named
 * as their environment variables (TERN_SHM_CELL_SIZE). A knob's category
 * and verbosity follow from its module (the prefix table below); its
 * scope is MPI_T_SCOPE_READONLY (set from the environment, read once by
 * the code) unless the side table of writable knobs names it. */
#include "mpi/mpi_tools.h"
#include "core/coll/coll.h"
#include "core/info/info.h"
#include "core/runtime/api_lock.h"
#include "core/runtime/runtime.h"
#include "base/config.h"
#include "base/pvars.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* State and lock. */

static pthread_mutex_t t_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int t_inits; /* MPI_T_init_thread calls not yet finalized */

int tern_t_enter(void)
{
    pthread_mutex_lock(&t_lock);
    return 1;
}

void tern_t_leave(int *held)
{
    if (*held)
        pthread_mutex_unlock(&t_lock);
}

int tern_t_initialized(void)
{
    return t_inits > 0;
}

void tern_t_string(const char *text, char *str, int *len)
{
    if (!len)
        return;
    int full = (int)strlen(text) + 1;
    if (!str || *len <= 0) {
        *len = full;
        return;
    }
    int n = full < *len ? full : *len;
    memcpy(str, text, (size_t)n - 1);
    str[n - 1] = '\0';
    *len = n;
}

int tern_t_new_info(MPI_Info *info)
{
    /* Info objects belong to the engine: its lock, never under ours. */
    int held = tern_api_enter();
    tern_status_t st = tern_info_create(info);
    tern_api_leave(&held);
    return st == TERN_OK ? MPI_SUCCESS : MPI_T_ERR_MEMORY;
}

static int enums_build(void);

int tern_t_init_thread(int required, int *provided)
{
    TERN_T_GUARD();
    if (!provided)
        return MPI_T_ERR_INVALID;
    if (t_inits == 0 && enums_build() != MPI_SUCCESS)
        return MPI_T_ERR_MEMORY;
    if (t_inits == 0)
        tern_t_event_install();
    t_inits++;
    /* Every procedure takes the interface's lock: any level is served. */
    *provided = required >= MPI_THREAD_SINGLE && required <= MPI_THREAD_MULTIPLE
                    ? required : MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS;
}

static void cvar_release_all(void);

int tern_t_finalize(void)
{
    TERN_T_CHECK_INIT();
    if (--t_inits == 0) {
        /* MPI-5.0 15.3.4: the handles of the interface die with it. */
        cvar_release_all();
        tern_t_pvar_release_all();
        tern_t_event_release_all();
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Categories: one per module. */

static const struct {
    const char *name, *desc;
} categories[] = {
    {"runtime", "start-up, processes, progress, failures and logging"},
    {"p2p", "point-to-point protocols and matching"},
    {"shm", "the shared-memory transport (ranks of one node)"},
    {"ofi", "the network transport (libfabric) and connections"},
    {"coll", "collective operations and their algorithms"},
    {"rma", "one-sided communication"},
    {"io", "parallel I/O"},
    {"launcher", "mpiexec and the processes it starts"},
};
enum { N_CATEGORIES = sizeof categories / sizeof categories[0] };

int tern_t_category_of(const char *name)
{
    for (int i = 0; i < N_CATEGORIES; i++)
        if (strcmp(categories[i].name, name) == 0)
            return i;
    return -1;
}

/* A knob's module: its category and verbosity. The first prefix (or, with
 * a leading '*', suffix) that fits wins. */
static const struct {
    const char *affix, *category;
    int verbosity;
} knob_modules[] = {
    {"*_ALGORITHM", "coll", MPI_T_VERBOSITY_TUNER_BASIC},
    {"TERN_COLL_", "coll", MPI_T_VERBOSITY_TUNER_DETAIL},
    {"TERN_P2P_", "p2p", MPI_T_VERBOSITY_TUNER_BASIC},
    {"TERN_UNMATCHED", "p2p", MPI_T_VERBOSITY_USER_BASIC},
    {"TERN_SHM_", "shm", MPI_T_VERBOSITY_TUNER_DETAIL},
    {"TERN_OFI_", "ofi", MPI_T_VERBOSITY_TUNER_DETAIL},
    {"TERN_CONNECT", "ofi", MPI_T_VERBOSITY_TUNER_BASIC},
    {"TERN_PORT_", "ofi", MPI_T_VERBOSITY_USER_DETAIL},
    {"TERN_RMA_", "rma", MPI_T_VERBOSITY_TUNER_DETAIL},
    {"TERN_IO_", "io", MPI_T_VERBOSITY_TUNER_DETAIL},
    {"TERN_MPIEXEC_", "launcher", MPI_T_VERBOSITY_USER_DETAIL},
    {"TERN_", "runtime", MPI_T_VERBOSITY_USER_BASIC},
};

static int knob_module(int id)
{
    const char *name = tern_knob_table()[id].name;
    size_t len = strlen(name);
    int n = (int)(sizeof knob_modules / sizeof knob_modules[0]);
    for (int i = 0; i < n; i++) {
        const char *a = knob_modules[i].affix;
        size_t alen = strlen(a);
        if (a[0] == '*' ? len >= alen - 1 && strcmp(name + len - (alen - 1), a + 1) == 0
                        : strncmp(name, a, alen) == 0)
            return i;
    }
    return n - 1;
}

/* Members of category cat, in index order: into indices (up to len). */
static int category_members(int cat, int kind, int len, int *indices)
{
    int n = kind == 0 ? TERN_KNOB_N : kind == 1 ? tern_t_pvar_count() : tern_t_event_count();
    int found = 0;
    for (int i = 0; i < n; i++) {
        int c = kind == 0 ? tern_t_category_of(knob_modules[knob_module(i)].category)
                : kind == 1 ? tern_t_pvar_category(i) : tern_t_event_category(i);
        if (c != cat)
            continue;
        if (indices && found < len)
            indices[found] = i;
        found++;
    }
    return found;
}

int tern_t_category_get_num(int *num_cat)
{
    TERN_T_CHECK_INIT();
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = N_CATEGORIES;
    return MPI_SUCCESS;
}

int tern_t_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    TERN_T_CHECK_INIT();
    if (cat_index < 0 || cat_index >= N_CATEGORIES)
        return MPI_T_ERR_INVALID_INDEX;
    tern_t_string(categories[cat_index].name, name, name_len);
    tern_t_string(categories[cat_index].desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = category_members(cat_index, 0, 0, NULL);
    if (num_pvars)
        *num_pvars = category_members(cat_index, 1, 0, NULL);
    if (num_categories)
        *num_categories = 0; /* one level: the modules */
    return MPI_SUCCESS;
}

int tern_t_category_get_num_events(int cat_index, int *num_events)
{
    TERN_T_CHECK_INIT();
    if (cat_index < 0 || cat_index >= N_CATEGORIES)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = category_members(cat_index, 2, 0, NULL);
    return MPI_SUCCESS;
}

int tern_t_category_get_index(const char *name, int *cat_index)
{
    TERN_T_CHECK_INIT();
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    int i = tern_t_category_of(name);
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *cat_index = i;
    return MPI_SUCCESS;
}

static int category_list(int cat_index, int kind, int len, int *indices)
{
    TERN_T_CHECK_INIT();
    if (cat_index < 0 || cat_index >= N_CATEGORIES)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    if (kind >= 0)
        category_members(cat_index, kind, len, indices);
    return MPI_SUCCESS;
}

int tern_t_category_get_cvars(int cat_index, int len, int *indices)
{
    return category_list(cat_index, 0, len, indices);
}

int tern_t_category_get_pvars(int cat_index, int len, int *indices)
{
    return category_list(cat_index, 1, len, indices);
}

int tern_t_category_get_events(int cat_index, int len, int *indices)
{
    return category_list(cat_index, 2, len, indices);
}

int tern_t_category_get_categories(int cat_index, int len, int *indices)
{
    return category_list(cat_index, -1, len, indices); /* none below a module */
}

int tern_t_category_changed(int *update_number)
{
    TERN_T_CHECK_INIT();
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = 0; /* the tables never change while a process runs */
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Enumerations: one per ENUM knob (its words, values 0..n-1), and the
 * collective algorithms ("bcast:binomial"...). Built at the first
 * MPI_T_init_thread and kept for the life of the process. */

struct tern_t_enum_s {
    const char *name;
    int n;
    char **items;
};

static struct tern_t_enum_s *enums; /* n_enums entries */
static int n_enums;
static MPI_T_enum knob_enum[TERN_KNOB_N];
static MPI_T_enum coll_enum;

static char **split_words(const char *words, int *n_p)
{
    int n = 1;
    for (const char *p = words; *p; p++)
        n += *p == '|';
    char **items = calloc((size_t)n, sizeof *items);
    if (!items)
        return NULL;
    const char *p = words;
    for (int i = 0; i < n; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (!(items[i] = strndup(p, len)))
            return NULL; /* leaks what was made: the interface cannot start anyway */
        p += len + (bar != NULL);
    }
    *n_p = n;
    return items;
}

static int enums_build(void)
{
    if (enums)
        return MPI_SUCCESS;
    const tern_knob_t *knobs = tern_knob_table();
    int n = 1;
    for (int id = 0; id < TERN_KNOB_N; id++)
        n += knobs[id].type == TERN_KNOB_T_ENUM;
    struct tern_t_enum_s *e = calloc((size_t)n, sizeof *e);
    if (!e)
        return MPI_T_ERR_MEMORY;
    int k = 0;
    for (int id = 0; id < TERN_KNOB_N; id++) {
        if (knobs[id].type != TERN_KNOB_T_ENUM)
            continue;
        e[k].name = knobs[id].name;
        if (!(e[k].items = split_words(knobs[id].words, &e[k].n)))
            return MPI_T_ERR_MEMORY;
        knob_enum[id] = &e[k++];
    }
    size_t na;
    const tern_coll_algo_t *all = tern_coll_algorithms(&na);
    e[k].name = "tern_coll_algorithm";
    e[k].n = (int)na;
    if (!(e[k].items = calloc(na, sizeof *e[k].items)))
        return MPI_T_ERR_MEMORY;
    for (size_t i = 0; i < na; i++) {
        const char *kind = tern_coll_kind_name(all[i].kind);
        size_t len = strlen(kind) + strlen(all[i].name) + 2;
        if (!(e[k].items[i] = malloc(len)))
            return MPI_T_ERR_MEMORY;
        snprintf(e[k].items[i], len, "%s:%s", kind, all[i].name);
    }
    coll_enum = &e[k];
    n_enums = n;
    enums = e;
    return MPI_SUCCESS;
}

MPI_T_enum tern_t_coll_enum(void)
{
    return coll_enum;
}

static int enum_valid(MPI_T_enum e)
{
    return enums && e >= enums && e < enums + n_enums;
}

int tern_t_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    TERN_T_CHECK_INIT();
    if (!enum_valid(enumtype))
        return MPI_T_ERR_INVALID_HANDLE;
    if (num)
        *num = enumtype->n;
    tern_t_string(enumtype->name, name, name_len);
    return MPI_SUCCESS;
}

int tern_t_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    TERN_T_CHECK_INIT();
    if (!enum_valid(enumtype))
        return MPI_T_ERR_INVALID_HANDLE;
    if (index < 0 || index >= enumtype->n)
        return MPI_T_ERR_INVALID_ITEM;
    if (value)
        *value = index;
    tern_t_string(enumtype->items[index], name, name_len);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Control variables. */

/* Knobs a program may write while it runs, each taking effect at the next
 * use: the collectives' forced algorithms (coll_select.c re-chooses from
 * the next call; every process must hold the same value: ALL_EQ), and the
 * eager limit TERN_P2P_EAGER_MAX (each peer's limit is set again, so the
 * next message chooses its protocol by it; a process decides for its own
 * sends alone, receivers take either protocol: LOCAL). */
static int knob_writable(int id)
{
    return tern_coll_kind_of_knob(id) >= 0 || id == TERN_KNOB_P2P_EAGER_MAX;
}

static int knob_scope(int id)
{
    if (id == TERN_KNOB_P2P_EAGER_MAX)
        return MPI_T_SCOPE_LOCAL;
    return knob_writable(id) ? MPI_T_SCOPE_ALL_EQ : MPI_T_SCOPE_READONLY;
}

/* Bytes of an MPI_CHAR control variable's value. */
#define CVAR_TEXT_MAX 1024

static int knob_is_text(const tern_knob_t *k)
{
    return k->type >= TERN_KNOB_T_LIST || (k->type <= TERN_KNOB_T_BOOL && k->words[0] != '\0');
}

static MPI_Datatype knob_datatype(const tern_knob_t *k)
{
    if (knob_is_text(k))
        return MPI_CHAR;
    return k->type == TERN_KNOB_T_BOOL || k->type == TERN_KNOB_T_ENUM ? MPI_INT
                                                                       : MPI_UNSIGNED_LONG_LONG;
}

int tern_t_cvar_get_num(int *num_cvar)
{
    TERN_T_CHECK_INIT();
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = TERN_KNOB_N;
    return MPI_SUCCESS;
}

int tern_t_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    TERN_T_CHECK_INIT();
    if (cvar_index < 0 || cvar_index >= TERN_KNOB_N)
        return MPI_T_ERR_INVALID_INDEX;
    const tern_knob_t *k = &tern_knob_table()[cvar_index];
    tern_t_string(k->name, name, name_len);
    if (verbosity)
        *verbosity = knob_modules[knob_module(cvar_index)].verbosity;
    if (datatype)
        *datatype = knob_datatype(k);
    if (enumtype)
        *enumtype = knob_enum[cvar_index];
    tern_t_string(k->doc, desc, desc_len);
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = knob_scope(cvar_index);
    return MPI_SUCCESS;
}

int tern_t_cvar_get_index(const char *name, int *cvar_index)
{
    TERN_T_CHECK_INIT();
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    for (int id = 0; id < TERN_KNOB_N; id++)
        if (strcmp(tern_knob_table()[id].name, name) == 0) {
            *cvar_index = id;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

struct tern_t_cvar_s {
    struct tern_t_cvar_s *next;
    int id;
};

static struct tern_t_cvar_s *cvar_handles; /* live handles */

static int cvar_valid(MPI_T_cvar_handle h)
{
    for (struct tern_t_cvar_s *c = cvar_handles; c; c = c->next)
        if (c == h)
            return 1;
    return 0;
}

static void cvar_release_all(void)
{
    while (cvar_handles) {
        struct tern_t_cvar_s *c = cvar_handles;
        cvar_handles = c->next;
        free(c);
    }
}

int tern_t_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    TERN_T_CHECK_INIT();
    (void)obj_handle; /* every knob binds to no object */
    if (cvar_index < 0 || cvar_index >= TERN_KNOB_N)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct tern_t_cvar_s *c = malloc(sizeof *c);
    if (!c)
        return MPI_T_ERR_MEMORY;
    c->id = cvar_index;
    c->next = cvar_handles;
    cvar_handles = c;
    *handle = c;
    *count = knob_is_text(&tern_knob_table()[cvar_index]) ? CVAR_TEXT_MAX : 1;
    return MPI_SUCCESS;
}

int tern_t_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    TERN_T_CHECK_INIT();
    if (!handle)
        return MPI_T_ERR_INVALID;
    if (!cvar_valid(*handle))
        return MPI_T_ERR_INVALID_HANDLE;
    for (struct tern_t_cvar_s **p = &cvar_handles; *p; p = &(*p)->next)
        if (*p == *handle) {
            *p = (*handle)->next;
            break;
        }
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int tern_t_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    int id;
    {
        TERN_T_CHECK_INIT();
        if (!cvar_valid(handle))
            return MPI_T_ERR_INVALID_HANDLE;
        if (!buf)
            return MPI_T_ERR_INVALID;
        id = handle->id;
    }
    /* The value is the engine's: read under its lock (a write may be
     * replacing it). */
    int held = tern_api_enter();
    const tern_knob_t *k = &tern_knob_table()[id];
    const tern_knob_value_t *v = tern_knob_value((tern_knob_id_t)id);
    if (knob_is_text(k)) {
        int len = CVAR_TEXT_MAX;
        tern_t_string(v->text, buf, &len);
    } else if (knob_datatype(k) == MPI_INT) {
        *(int *)buf = (int)v->number;
    } else {
        *(unsigned long long *)buf = (unsigned long long)v->number;
    }
    tern_api_leave(&held);
    return MPI_SUCCESS;
}

int tern_t_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    int id;
    {
        TERN_T_CHECK_INIT();
        if (!cvar_valid(handle))
            return MPI_T_ERR_INVALID_HANDLE;
        if (!buf)
            return MPI_T_ERR_INVALID;
        id = handle->id;
    }
    if (!knob_writable(id))
        return MPI_T_ERR_CVAR_SET_NEVER;
    char text[CVAR_TEXT_MAX];
    size_t n = strnlen(buf, sizeof text);
    if (n == sizeof text)
        return MPI_T_ERR_INVALID;
    memcpy(text, buf, n + 1);
    int held = tern_api_enter();
    if (id == TERN_KNOB_P2P_EAGER_MAX) {
        /* Before MPI_Init the start-up reads the knob; after it, every
         * peer's limit follows now. */
        int bad = tern_knob_set((tern_knob_id_t)id, text) != 0;
        if (!bad)
            tern_peers_eager_reset();
        tern_api_leave(&held);
        return bad ? MPI_T_ERR_INVALID : MPI_SUCCESS;
    }
    tern_status_t st = tern_coll_set_forced((tern_coll_kind_t)tern_coll_kind_of_knob(id), text);
    if (st != TERN_OK)
        tern_status_take_detail(st);
    tern_api_leave(&held);
    return st == TERN_OK ? MPI_SUCCESS : st == TERN_ERR_NOMEM ? MPI_T_ERR_MEMORY
                                                              : MPI_T_ERR_INVALID;
}

/* ------------------------------------------------------------------------ */
/* The event source: the monotonic clock, in nanoseconds. */

int tern_t_source_get_num(int *num_sources)
{
    TERN_T_CHECK_INIT();
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 1;
    return MPI_SUCCESS;
}

int tern_t_source_get_info(int source_index, char *name, int *name_len, char *desc,
                           int *desc_len, MPI_T_source_order *ordering,
                           MPI_Count *ticks_per_second, MPI_Count *max_ticks, MPI_Info *info)
{
    {
        TERN_T_CHECK_INIT();
        if (source_index != 0)
            return MPI_T_ERR_INVALID_INDEX;
        tern_t_string("tern_clock", name, name_len);
        tern_t_string("the process's monotonic clock (CLOCK_MONOTONIC) in nanoseconds; every "
                      "event of the process, raised in order under the engine's lock",
                      desc, desc_len);
        if (ordering)
            *ordering = MPI_T_SOURCE_ORDERED;
        if (ticks_per_second)
            *ticks_per_second = 1000000000;
        if (max_ticks)
            *max_ticks = INT64_MAX;
    }
    return info ? tern_t_new_info(info) : MPI_SUCCESS;
}

int tern_t_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    TERN_T_CHECK_INIT();
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp)
        return MPI_T_ERR_INVALID;
    *timestamp = (MPI_Count)tern_event_clock_ns();
    return MPI_SUCCESS;
}
