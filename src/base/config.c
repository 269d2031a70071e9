#include "base/config.h"
#include "base/log.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const tern_knob_t knobs[] = {
#define TERN_KNOB(name, def, doc) {name, def, doc},
#include "base/knobs.def"
#undef TERN_KNOB
};

const tern_knob_t *tern_config_knobs(size_t *n_p)
{
    *n_p = sizeof knobs / sizeof knobs[0];
    return knobs;
}

const char *tern_config_str(const char *name)
{
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        if (strcmp(knobs[i].name, name) == 0) {
            const char *v = getenv(name);
            return (v && *v) ? v : knobs[i].default_value;
        }
    }
    tern_fatal("knob %s is not declared in knobs.def", name);
}

long tern_config_long(const char *name)
{
    const char *v = tern_config_str(name);
    char *end;
    long x = strtol(v, &end, 0);
    if (end == v)
        return -1;
    switch (tolower((unsigned char)*end)) {
    case 'k': x *= 1024L; end++; break;
    case 'm': x *= 1024L * 1024; end++; break;
    case 'g': x *= 1024L * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end != 0) {
        tern_warn("%s=%s is not a number; using its default", name, v);
        return -1;
    }
    return x;
}

int tern_config_bool(const char *name)
{
    const char *v = tern_config_str(name);
    if (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true"))
        return 1;
    if (!strcasecmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no") || !strcasecmp(v, "false"))
        return 0;
    return -1;
}
