/* One table of dynamic objects per handle kind (comm, group, info, keyval,
 * op, message...): allocation of a handle, lookup, release with slot reuse,
 * and the walk at MPI_Finalize, in one place, so that thread safety
 * (MPI_THREAD_MULTIPLE) has one place to go. A dynamic handle is
 * TERN_HANDLE_DYNAMIC | kind | slot (handle.h); predefined objects are
 * constants their module resolves before the table. */
#ifndef TERN_CORE_HANDLE_TABLE_H
#define TERN_CORE_HANDLE_TABLE_H

#include "base/status.h"
#include "core/runtime/handle.h"

#include <stdint.h>

typedef struct {
    void **slots;      /* slot -> object, NULL when free */
    uint32_t len, cap; /* slots in use or freed / allocated */
    uint32_t *free;    /* freed slots, reused last-in first-out */
    uint32_t n_free;
    uint32_t tag;      /* TERN_HANDLE_DYNAMIC | the kind's bits (top 6 bits) */
    uint32_t first_cap;
    uint32_t reserved; /* slots below it are never given (they are predefined handles) */
} tern_handle_table_t;

#define TERN_HANDLE_TABLE(kind_bits, initial_cap)                                                  \
    {.tag = TERN_HANDLE_DYNAMIC | (kind_bits), .first_cap = (initial_cap)}

/* A table whose first n_reserved slots stay empty: MPICH's ABI gives
 * predefined objects some handles of the dynamic form (MPI_FLOAT_INT is
 * 0x8c000000, datatype.c). initial_cap must exceed n_reserved. */
#define TERN_HANDLE_TABLE_RESERVED(kind_bits, initial_cap, n_reserved)                             \
    {.tag = TERN_HANDLE_DYNAMIC | (kind_bits), .first_cap = (initial_cap), .reserved = (n_reserved)}

/* Stores obj and gives its handle. */
tern_status_t tern_handle_new(tern_handle_table_t *t, void *obj, int *handle_p);

/* The object of handle h, or NULL when h is not a live handle of t. Inline:
 * communicator and request lookups are on every message's path. */
static inline void *tern_handle_get(const tern_handle_table_t *t, int h)
{
    uint32_t u = (uint32_t)h;
    if ((u & 0xfc000000u) != t->tag)
        return NULL;
    uint32_t slot = u & TERN_HANDLE_INDEX_MASK;
    return slot < t->len ? t->slots[slot] : NULL;
}

/* Forgets h (its slot is reused); the object is the caller's to free. */
void tern_handle_release(tern_handle_table_t *t, int h);

/* The first live object for which pred(obj, arg) is non-zero, or NULL. */
void *tern_handle_find(const tern_handle_table_t *t, int (*pred)(const void *obj, const void *arg),
                       const void *arg);

/* Calls fn on every object still in t, then empties it (MPI_Finalize). */
void tern_handle_table_clear(tern_handle_table_t *t, void (*fn)(void *obj));

#endif
