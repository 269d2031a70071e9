/* Runtime knobs: environment variables TERN_*, declared once in knobs.def with
 * a type, a range, a default and a one-line doc. The whole table is parsed
 * once, at the first read, into typed values; code reads a knob by its
 * identifier TERN_KNOB_<ID>, so a misspelled knob or a read of the wrong type
 * is a compile error:
 *
 *   size_t chunk = tern_knob_size(TERN_KNOB_SHM_BULK_CHUNK);
 *   size_t min = tern_knob_size_or(TERN_KNOB_SHM_CMA_MIN, 32 << 10); // auto
 *
 * A knob that takes auto is read with the _or form, which says what auto
 * means there. An invalid value leaves the knob at its default and is kept
 * to be reported: MPI_Init ends the job on it (tern_knobs_invalid). The table
 * is introspectable (tern-info lists it; MPI_T control variables can). */
#ifndef TERN_BASE_CONFIG_H
#define TERN_BASE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The numbers come first, then BOOL: "type <= TERN_KNOB_T_POW2" means a
 * number, "<= TERN_KNOB_T_BOOL" a type that may take auto. */
typedef enum {
    TERN_KNOB_T_SIZE,   /* bytes, with k/m/g/t suffixes */
    TERN_KNOB_T_COUNT,  /* a number, same suffixes */
    TERN_KNOB_T_POW2,   /* a count that is a power of two */
    TERN_KNOB_T_BOOL,   /* on/off */
    TERN_KNOB_T_ENUM,   /* one word of a fixed set */
    TERN_KNOB_T_LIST,   /* comma list, of fixed words when any are declared */
    TERN_KNOB_T_STRING, /* free text */
} tern_knob_type_t;

typedef enum {
#define TERN_KNOB(id, type, def, min, max, words, doc) TERN_KNOB_##id,
#include "base/knobs.def"
#undef TERN_KNOB
    TERN_KNOB_N
} tern_knob_id_t;

/* Per knob, for the compile-time checks of the accessors below: its type,
 * and whether it takes auto (words is "auto" rather than ""). */
enum {
#define TERN_KNOB(id, type, def, min, max, words, doc)                                             \
    TERN_KNOB_##id##_TYPE = TERN_KNOB_T_##type, TERN_KNOB_##id##_AUTO = sizeof(words) > 1,
#include "base/knobs.def"
#undef TERN_KNOB
};

/* A declared knob (the table row). */
typedef struct {
    const char *name; /* TERN_<ID> */
    tern_knob_type_t type;
    const char *default_value;
    int64_t min, max;  /* numbers only */
    const char *words; /* "a|b|c": enum and list words; "auto" or "" for the others */
    const char *doc;
} tern_knob_t;

/* A parsed value. */
typedef struct {
    bool is_auto;
    int64_t number;   /* SIZE, COUNT, POW2: the number; BOOL: 0 or 1; ENUM: word index */
    const char *text; /* the text it was parsed from (environment or default) */
} tern_knob_value_t;

/* The table of all knobs, indexed by tern_knob_id_t. */
const tern_knob_t *tern_knob_table(void);
const char *tern_knob_type_name(tern_knob_type_t type);

/* Parses text as a value of knob id. 0 on success; -1 if the knob does not
 * allow it (nothing is written then). */
int tern_knob_parse(tern_knob_id_t id, const char *text, tern_knob_value_t *value_p);
/* What knob id allows, as a phrase: "a size from 128 to 1048576 bytes",
 * "one of auto, all, lazy"... */
void tern_knob_allowed(tern_knob_id_t id, char *buf, size_t len);

/* The value in effect (the environment's when valid, else the default). */
const tern_knob_value_t *tern_knob_value(tern_knob_id_t id);
/* Sets knob id to text as the environment would (MPI_T_cvar_write, under
 * the entry points' lock, for the knobs the code reads at each use): 0, or
 * -1 when the knob does not allow it (nothing changes then). */
int tern_knob_set(tern_knob_id_t id, const char *text);
/* Whether the environment sets it (non-empty), valid or not. */
bool tern_knob_from_env(tern_knob_id_t id);
/* The environment's text when it was rejected, else NULL. */
const char *tern_knob_rejected(tern_knob_id_t id);
/* Number of knobs whose environment value was rejected; each is described in
 * one line "TERN_X=value: must be <allowed>" through print (if not NULL). */
int tern_knobs_invalid(void (*print)(const char *line));

/* Typed reads, checked at compile time (the type, and that a knob which
 * takes auto is read with an _or form). id must be a TERN_KNOB_<ID> name. */
#define TERN_KNOB_CHECK(id, types_ok, autos_ok, what)                                              \
    ((void)sizeof(struct {                                                                         \
        _Static_assert((types_ok) && (autos_ok), #id ": " what);                                   \
        int unused_;                                                                               \
    }))
#define TERN_KNOB_IS(id, t) ((int)id##_TYPE == (int)TERN_KNOB_T_##t)

#define tern_knob_size(id)                                                                         \
    (TERN_KNOB_CHECK(id, TERN_KNOB_IS(id, SIZE), !id##_AUTO, "not a size knob, or it takes auto"), \
     (size_t)tern_knob_value(id)->number)
#define tern_knob_size_or(id, auto_value)                                                          \
    (TERN_KNOB_CHECK(id, TERN_KNOB_IS(id, SIZE), id##_AUTO, "not a size knob that takes auto"),    \
     tern_knob_value(id)->is_auto ? (size_t)(auto_value) : (size_t)tern_knob_value(id)->number)
#define tern_knob_count(id)                                                                        \
    (TERN_KNOB_CHECK(id, TERN_KNOB_IS(id, COUNT) || TERN_KNOB_IS(id, POW2), !id##_AUTO,            \
                     "not a count knob, or it takes auto"),                                        \
     (long)tern_knob_value(id)->number)
#define tern_knob_count_or(id, auto_value)                                                         \
    (TERN_KNOB_CHECK(id, TERN_KNOB_IS(id, COUNT) || TERN_KNOB_IS(id, POW2), id##_AUTO,             \
                     "not a count knob that takes auto"),                                          \
     tern_knob_value(id)->is_auto ? (long)(auto_value) : (long)tern_knob_value(id)->number)
#define tern_knob_bool(id)                                                                         \
    (TERN_KNOB_CHECK(id, TERN_KNOB_IS(id, BOOL), !id##_AUTO, "not a bool knob, or it takes auto"), \
     tern_knob_value(id)->number != 0)
#define tern_knob_bool_or(id, auto_value)                                                          \
    (TERN_KNOB_CHECK(id, TERN_KNOB_IS(id, BOOL), id##_AUTO, "not a bool knob that takes auto"),    \
     tern_knob_value(id)->is_auto ? (bool)(auto_value) : tern_knob_value(id)->number != 0)
/* Whether a knob that takes auto is auto (for three-way knobs: auto, on, off). */
#define tern_knob_is_auto(id)                                                                      \
    (TERN_KNOB_CHECK(id, 1, id##_AUTO, "does not take auto"), tern_knob_value(id)->is_auto)
/* Whether an enum knob holds word (which must be one of its words). */
#define tern_knob_is(id, word)                                                                     \
    (TERN_KNOB_CHECK(id, TERN_KNOB_IS(id, ENUM), 1, "not an enum knob"), tern_knob_equals(id, word))
/* Whether a list knob names word (which must be one of its words). */
#define tern_knob_lists(id, word)                                                                  \
    (TERN_KNOB_CHECK(id, TERN_KNOB_IS(id, LIST), 1, "not a list knob"), tern_knob_has_item(id, word))
/* The text of a string or list knob (also of an enum: its word). */
#define tern_knob_str(id)                                                                          \
    (TERN_KNOB_CHECK(id, TERN_KNOB_IS(id, STRING) || TERN_KNOB_IS(id, LIST) || TERN_KNOB_IS(id, ENUM), \
                     1, "not a string, list or enum knob"),                                        \
     tern_knob_value(id)->text)

/* Behind the macros; they abort if word is not a declared word of the knob
 * (a programming error the first run finds). */
bool tern_knob_equals(tern_knob_id_t id, const char *word);
bool tern_knob_has_item(tern_knob_id_t id, const char *word);

#endif
