#include "base/config.h"
#include "base/log.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const tern_knob_t knobs[TERN_KNOB_N] = {
#define TERN_KNOB(id, type, def, min, max, words, doc)                                             \
    [TERN_KNOB_##id] = {"TERN_" #id, TERN_KNOB_T_##type, def, min, max, words, doc},
#include "base/knobs.def"
#undef TERN_KNOB
};

static const char *const bool_words[2][4] = {{"0", "off", "no", "false"}, {"1", "on", "yes", "true"}};

/* The parsed table: filled once, on the first read. */
static tern_knob_value_t values[TERN_KNOB_N];
static char *rejected[TERN_KNOB_N]; /* the environment's text when invalid */
static bool from_env[TERN_KNOB_N];
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

const tern_knob_t *tern_knob_table(void)
{
    return knobs;
}

const char *tern_knob_type_name(tern_knob_type_t type)
{
    static const char *const names[] = {"size", "count", "pow2", "bool", "enum", "list", "string"};
    return names[type];
}

/* Whether word is one of the '|'-separated words (case matters, as it
 * always did for these knobs); its index in *index_p. */
static bool find_word(const char *words, const char *word, size_t word_len, int64_t *index_p)
{
    int64_t i = 0;
    for (const char *w = words; *w; i++) {
        size_t len = strcspn(w, "|");
        if (len == word_len && strncmp(w, word, len) == 0) {
            *index_p = i;
            return true;
        }
        w += len + (w[len] == '|');
    }
    return false;
}

static bool takes_auto(const tern_knob_t *k)
{
    return k->type <= TERN_KNOB_T_BOOL && strcmp(k->words, "auto") == 0;
}

/* Digits with an optional k/m/g/t suffix (powers of 1024); false on
 * anything else or beyond int64_t. */
static bool parse_number(const char *text, int64_t *number_p)
{
    uint64_t x = 0;
    const char *p = text;
    if (*p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (x > ((uint64_t)INT64_MAX - (uint64_t)(*p - '0')) / 10)
            return false;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    const char *suffix = strchr("kmgt", *p | 0x20);
    if (*p && suffix) {
        unsigned shift = 10 * (unsigned)(suffix - "kmgt" + 1);
        if (x > ((uint64_t)INT64_MAX >> shift))
            return false;
        x <<= shift;
        p++;
    }
    if (*p)
        return false;
    *number_p = (int64_t)x;
    return true;
}

static bool parse_list(const tern_knob_t *k, const char *text)
{
    int64_t index;
    for (const char *p = text;; p++) {
        size_t len = strcspn(p, ",");
        if (len == 0 || (*k->words && !find_word(k->words, p, len, &index)))
            return false;
        p += len;
        if (!*p)
            return true;
    }
}

int tern_knob_parse(tern_knob_id_t id, const char *text, tern_knob_value_t *value_p)
{
    const tern_knob_t *k = &knobs[id];
    tern_knob_value_t v = {.is_auto = false, .number = 0, .text = text};
    if (takes_auto(k) && strcmp(text, "auto") == 0) {
        v.is_auto = true;
        *value_p = v;
        return 0;
    }
    bool ok;
    switch (k->type) {
    case TERN_KNOB_T_SIZE:
    case TERN_KNOB_T_COUNT:
    case TERN_KNOB_T_POW2:
        ok = parse_number(text, &v.number) && v.number >= k->min && v.number <= k->max &&
             (k->type != TERN_KNOB_T_POW2 || (v.number & (v.number - 1)) == 0);
        break;
    case TERN_KNOB_T_BOOL:
        ok = false;
        for (int b = 0; b < 2 && !ok; b++)
            for (int i = 0; i < 4 && !ok; i++)
                if (strcasecmp(text, bool_words[b][i]) == 0) {
                    v.number = b;
                    ok = true;
                }
        break;
    case TERN_KNOB_T_ENUM:
        ok = find_word(k->words, text, strlen(text), &v.number);
        break;
    case TERN_KNOB_T_LIST:
        ok = parse_list(k, text);
        break;
    default:
        ok = true;
        break;
    }
    if (!ok)
        return -1;
    *value_p = v;
    return 0;
}

/* "a, b, c" from "a|b|c". */
static void words_phrase(const char *words, char *buf, size_t len)
{
    size_t n = 0;
    for (const char *w = words; *w && n + 3 < len; w++) {
        if (*w == '|') {
            buf[n++] = ',';
            buf[n++] = ' ';
        } else {
            buf[n++] = *w;
        }
    }
    buf[n] = 0;
}

void tern_knob_allowed(tern_knob_id_t id, char *buf, size_t len)
{
    const tern_knob_t *k = &knobs[id];
    const char *or_auto = takes_auto(k) ? ", or auto" : "";
    char words[256];
    words_phrase(k->words, words, sizeof words);
    switch (k->type) {
    case TERN_KNOB_T_SIZE:
        snprintf(buf, len, "a size from %" PRId64 " to %" PRId64 " bytes%s", k->min, k->max, or_auto);
        break;
    case TERN_KNOB_T_COUNT:
        snprintf(buf, len, "a number from %" PRId64 " to %" PRId64 "%s", k->min, k->max, or_auto);
        break;
    case TERN_KNOB_T_POW2:
        snprintf(buf, len, "a power of two from %" PRId64 " to %" PRId64, k->min, k->max);
        break;
    case TERN_KNOB_T_BOOL:
        snprintf(buf, len, "one of on, off, 1, 0, yes, no, true, false%s", or_auto);
        break;
    case TERN_KNOB_T_ENUM:
        snprintf(buf, len, "one of %s", words);
        break;
    case TERN_KNOB_T_LIST:
        snprintf(buf, len, "a comma list of %s", *words ? words : "names, none empty");
        break;
    default:
        snprintf(buf, len, "any text");
        break;
    }
}

/* Every default must parse: a bad one is a programming error. */
static void load(void)
{
    for (int id = 0; id < TERN_KNOB_N; id++) {
        const char *env = getenv(knobs[id].name);
        from_env[id] = env && *env;
        if (from_env[id] && tern_knob_parse((tern_knob_id_t)id, env, &values[id]) == 0) {
            values[id].text = strdup(env);
            if (!values[id].text)
                tern_fatal("out of memory reading %s", knobs[id].name);
            continue;
        }
        if (from_env[id] && !(rejected[id] = strdup(env)))
            tern_fatal("out of memory reading %s", knobs[id].name);
        if (tern_knob_parse((tern_knob_id_t)id, knobs[id].default_value, &values[id]) != 0)
            tern_fatal("knobs.def: %s has an invalid default '%s'", knobs[id].name,
                       knobs[id].default_value);
    }
}

const tern_knob_value_t *tern_knob_value(tern_knob_id_t id)
{
    pthread_once(&loaded, load);
    return &values[id];
}

/* The texts tern_knob_set gave knobs, newest first. */
typedef struct set_text {
    struct set_text *next;
    char text[];
} set_text_t;
static set_text_t *set_texts;

int tern_knob_set(tern_knob_id_t id, const char *text)
{
    pthread_once(&loaded, load);
    tern_knob_value_t v;
    if (tern_knob_parse(id, text, &v) != 0)
        return -1;
    /* The text the value had stays allocated: a reader may still hold it
     * (writes are rare, from MPI_T_cvar_write). Every text written is
     * kept on one list, so it stays reachable (and is no leak). */
    size_t n = strlen(text) + 1;
    set_text_t *t = malloc(sizeof *t + n);
    if (!t)
        return -1;
    memcpy(t->text, text, n);
    t->next = set_texts;
    set_texts = t;
    v.text = t->text;
    values[id] = v;
    return 0;
}

bool tern_knob_from_env(tern_knob_id_t id)
{
    pthread_once(&loaded, load);
    return from_env[id];
}

const char *tern_knob_rejected(tern_knob_id_t id)
{
    pthread_once(&loaded, load);
    return rejected[id];
}

int tern_knobs_invalid(void (*print)(const char *line))
{
    pthread_once(&loaded, load);
    int n = 0;
    for (int id = 0; id < TERN_KNOB_N; id++) {
        if (!rejected[id])
            continue;
        n++;
        if (!print)
            continue;
        char allowed[300], line[600];
        tern_knob_allowed((tern_knob_id_t)id, allowed, sizeof allowed);
        snprintf(line, sizeof line, "%s=%.200s: must be %s", knobs[id].name, rejected[id], allowed);
        print(line);
    }
    return n;
}

bool tern_knob_equals(tern_knob_id_t id, const char *word)
{
    int64_t index;
    if (!find_word(knobs[id].words, word, strlen(word), &index))
        tern_fatal("%s has no word '%s' (knobs.def)", knobs[id].name, word);
    return tern_knob_value(id)->number == index;
}

bool tern_knob_has_item(tern_knob_id_t id, const char *word)
{
    int64_t index;
    size_t n = strlen(word);
    if (!find_word(knobs[id].words, word, n, &index))
        tern_fatal("%s has no word '%s' (knobs.def)", knobs[id].name, word);
    for (const char *p = tern_knob_value(id)->text;; p++) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        p += len;
        if (!*p)
            return false;
    }
}
