/* The handle tables (handle_table.h). */
#include "core/runtime/handle_table.h"

#include <stdlib.h>

tern_status_t tern_handle_new(tern_handle_table_t *t, void *obj, int *handle_p)
{
    uint32_t slot;
    if (t->n_free) {
        slot = t->free[--t->n_free];
    } else {
        if (t->len == t->cap) {
            uint32_t cap = t->cap ? 2 * t->cap : (t->first_cap ? t->first_cap : 16);
            if (cap > TERN_HANDLE_INDEX_MASK + 1u)
                return tern_status_detail(TERN_ERR_NOMEM, "more than %u live handles of a kind",
                                          TERN_HANDLE_INDEX_MASK + 1u);
            void **s = realloc(t->slots, cap * sizeof *s);
            if (!s)
                return TERN_ERR_NOMEM;
            t->slots = s; /* what realloc kept is ours either way */
            uint32_t *f = realloc(t->free, cap * sizeof *f);
            if (!f)
                return TERN_ERR_NOMEM;
            t->free = f;
            if (!t->cap) /* the first block: the reserved slots stay NULL */
                for (; t->len < t->reserved; t->len++)
                    t->slots[t->len] = NULL;
            t->cap = cap;
        }
        slot = t->len++;
    }
    t->slots[slot] = obj;
    *handle_p = (int)(t->tag | slot);
    return TERN_OK;
}

void tern_handle_release(tern_handle_table_t *t, int h)
{
    uint32_t u = (uint32_t)h, slot = u & TERN_HANDLE_INDEX_MASK;
    if ((u & 0xfc000000u) != t->tag || slot >= t->len || !t->slots[slot])
        return;
    t->slots[slot] = NULL;
    t->free[t->n_free++] = slot;
}

void *tern_handle_find(const tern_handle_table_t *t, int (*pred)(const void *obj, const void *arg),
                       const void *arg)
{
    for (uint32_t i = 0; i < t->len; i++)
        if (t->slots[i] && pred(t->slots[i], arg))
            return t->slots[i];
    return NULL;
}

void tern_handle_table_clear(tern_handle_table_t *t, void (*fn)(void *obj))
{
    for (uint32_t i = 0; i < t->len; i++)
        if (t->slots[i] && fn)
            fn(t->slots[i]);
    free(t->slots);
    free(t->free);
    *t = (tern_handle_table_t){.tag = t->tag, .first_cap = t->first_cap, .reserved = t->reserved};
}
