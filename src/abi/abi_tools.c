/* libmpi_abi: the tools interface's procedures that take callbacks, written
 * by hand (tools/bindgen/abi_std.py: MANUAL). The handles pass as they are
 * (pointers on both sides); the safety level a callback is given differs
 * (libtern's enum counts 0..3, the ABI's are 0x00, 0x03, 0x0f, 0x3f), so
 * libtern calls a wrapper that converts it and calls the program's function.
 *
 * A registration that has ABI callbacks gets a record, found by the
 * registration on a short list: per safety level the program's function and
 * user data (libtern's user data is the level's slot), and the dropped
 * handler. It goes when the registration is freed. */
#include "abi/abi_conv.h"

#include <pthread.h>
#include <stdlib.h>

#define TERN_ABI_T_LEVELS 4

typedef struct treg treg_t;
typedef struct {
    MPI_T_event_cb_function *fn;
    void *user_data;
    treg_t *rec;
} tslot_t;
struct treg {
    MPI_T_event_registration reg;
    tslot_t slot[TERN_ABI_T_LEVELS];
    MPI_T_event_dropped_cb_function *dropped;
    treg_t *next;
};

static treg_t *tregs;
/* Guards the list and the records' fields. Callbacks run under libtern's
 * event lock and take this one; the procedures here never hold it while
 * they call libtern, so the two are never taken the other way round. */
static pthread_mutex_t treg_lock = PTHREAD_MUTEX_INITIALIZER;

/* The record of reg, made when create is set; NULL when there is none (or no
 * memory). Called with treg_lock held. */
static treg_t *treg_find(MPI_T_event_registration reg, int create)
{
    for (treg_t *r = tregs; r; r = r->next)
        if (r->reg == reg)
            return r;
    if (!create)
        return NULL;
    treg_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->reg = reg;
    for (int i = 0; i < TERN_ABI_T_LEVELS; i++)
        r->slot[i].rec = r;
    r->next = tregs;
    tregs = r;
    return r;
}

static void event_tramp(TN_T_event_instance inst, TN_T_event_registration reg, TN_T_cb_safety s,
                        void *user_data)
{
    tslot_t *slot = user_data;
    pthread_mutex_lock(&treg_lock);
    MPI_T_event_cb_function *fn = slot->fn;
    void *ud = slot->user_data;
    pthread_mutex_unlock(&treg_lock);
    if (fn)
        fn((MPI_T_event_instance)inst, (MPI_T_event_registration)reg, tern_abi_tsafety_out((int)s),
           ud);
}

static void dropped_tramp(TN_Count count, TN_T_event_registration reg, int source_index,
                          TN_T_cb_safety s, void *user_data)
{
    tslot_t *slot = user_data;
    pthread_mutex_lock(&treg_lock);
    MPI_T_event_dropped_cb_function *fn = slot ? slot->rec->dropped : NULL;
    void *ud = slot ? slot->user_data : NULL;
    pthread_mutex_unlock(&treg_lock);
    if (fn)
        fn(count, (MPI_T_event_registration)reg, source_index, tern_abi_tsafety_out((int)s), ud);
}

TERN_ABI_ALIAS(T_event_register_callback)
int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function *event_cb_function)
{
    int s = tern_abi_tsafety_in(cb_safety);
    TN_Info n_info = tern_abi_Info_in(info);
    if (s < 0 || s >= TERN_ABI_T_LEVELS || !event_registration)
        /* libtern says what is wrong. */
        return tern_abi_err_out(tern_native_PMPI_T_event_register_callback(
            (TN_T_event_registration)event_registration, s, n_info, user_data, NULL));
    pthread_mutex_lock(&treg_lock);
    treg_t *r = treg_find(event_registration, 1);
    tslot_t old = {0};
    if (r) {
        old = r->slot[s];
        r->slot[s].fn = event_cb_function;
        r->slot[s].user_data = user_data;
    }
    pthread_mutex_unlock(&treg_lock);
    if (!r)
        return MPI_T_ERR_MEMORY;
    int rc = tern_native_PMPI_T_event_register_callback(
        (TN_T_event_registration)event_registration, s, n_info, &r->slot[s],
        event_cb_function ? event_tramp : NULL);
    if (rc != 0) {
        pthread_mutex_lock(&treg_lock);
        r->slot[s] = old;
        pthread_mutex_unlock(&treg_lock);
    }
    return tern_abi_err_out(rc);
}

TERN_ABI_ALIAS(T_event_set_dropped_handler)
int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function *dropped_cb_function)
{
    treg_t *r = NULL;
    if (event_registration) {
        pthread_mutex_lock(&treg_lock);
        r = treg_find(event_registration, 1);
        MPI_T_event_dropped_cb_function *old = NULL;
        if (r) {
            old = r->dropped;
            r->dropped = dropped_cb_function;
        }
        pthread_mutex_unlock(&treg_lock);
        if (!r)
            return MPI_T_ERR_MEMORY;
        int rc = tern_native_PMPI_T_event_set_dropped_handler(
            (TN_T_event_registration)event_registration, dropped_cb_function ? dropped_tramp : NULL);
        if (rc != 0) {
            pthread_mutex_lock(&treg_lock);
            r->dropped = old;
            pthread_mutex_unlock(&treg_lock);
        }
        return tern_abi_err_out(rc);
    }
    return tern_abi_err_out(tern_native_PMPI_T_event_set_dropped_handler(NULL, NULL));
}

/* libtern calls the free callback before its MPI_T_event_handle_free
 * returns: the wrapper lives on the caller's stack. */
typedef struct {
    MPI_T_event_free_cb_function *fn;
    void *user_data;
} tfree_t;

static void free_tramp(TN_T_event_registration reg, TN_T_cb_safety s, void *user_data)
{
    tfree_t *w = user_data;
    w->fn((MPI_T_event_registration)reg, tern_abi_tsafety_out((int)s), w->user_data);
}

TERN_ABI_ALIAS(T_event_handle_free)
int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function *free_cb_function)
{
    tfree_t w = {free_cb_function, user_data};
    int rc = tern_native_PMPI_T_event_handle_free((TN_T_event_registration)event_registration, &w,
                                                  free_cb_function ? free_tramp : NULL);
    if (rc == 0) {
        pthread_mutex_lock(&treg_lock);
        for (treg_t **p = &tregs; *p; p = &(*p)->next)
            if ((*p)->reg == event_registration) {
                treg_t *r = *p;
                *p = r->next;
                free(r);
                break;
            }
        pthread_mutex_unlock(&treg_lock);
    }
    return tern_abi_err_out(rc);
}
