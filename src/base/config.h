/* Runtime knobs. Each knob is an environment variable TERN_*, declared once in
 * knobs.def with its default and documentation; tern-info lists them. */
#ifndef TERN_BASE_CONFIG_H
#define TERN_BASE_CONFIG_H

#include <stddef.h>

typedef struct {
    const char *name;
    const char *default_value;
    const char *doc;
} tern_knob_t;

/* The table of all knobs; count in *n_p. */
const tern_knob_t *tern_config_knobs(size_t *n_p);
/* Current value: the environment's if set, else the default. Aborts with a
 * clear message if name is not a declared knob (a programming error). */
const char *tern_config_str(const char *name);
/* Numeric value; "auto" or an unparsable value yields -1 (callers decide).
 * Accepts suffixes k, m, g (powers of 1024). */
long tern_config_long(const char *name);
/* 1 for on/yes/true/1, 0 for off/no/false/0, -1 for auto or anything else. */
int tern_config_bool(const char *name);

#endif
