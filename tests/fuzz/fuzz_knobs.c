/* libFuzzer target: the knob parser (src/base/config.c) on every knob of
 * knobs.def. The first byte picks the knob, the rest is the value's text.
 * An accepted value must obey its declaration: a number within [min, max]
 * (a power of two for POW2) equal to what an independent reading of
 * "digits[k|m|g|t]" gives, and written back in decimal it parses to the
 * same number; auto only where the knob takes auto; a bool 0 or 1 from one
 * of its eight words; an enum's index naming exactly the text; each item of
 * a list one of its words. A rejected number must be one the independent
 * reading rejects or finds outside the rules. tern_knob_allowed never
 * overflows a short buffer. */
#include "base/config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_knobs: invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);  \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* "digits[suffix]" with 128-bit arithmetic: -1 when not of that form, 0
 * with *v_p when it is (and *big_p when beyond int64_t). */
static int reference_number(const char *t, int64_t *v_p, int *big_p)
{
    size_t n = strlen(t);
    size_t digits = strspn(t, "0123456789");
    if (digits == 0)
        return -1;
    unsigned shift = 0;
    if (digits + 1 == n) {
        const char *s = strchr("kKmMgGtT", t[digits]);
        if (!s || !t[digits])
            return -1;
        shift = 10 * (unsigned)((s - "kKmMgGtT") / 2 + 1);
    } else if (digits != n) {
        return -1;
    }
    unsigned __int128 x = 0;
    int big = 0;
    for (size_t i = 0; i < digits; i++) {
        x = x * 10 + (unsigned)(t[i] - '0');
        if (x > INT64_MAX)
            big = 1, x = (unsigned __int128)INT64_MAX + 1;
    }
    x <<= shift;
    if (x > INT64_MAX)
        big = 1;
    *big_p = big;
    *v_p = big ? 0 : (int64_t)x;
    return 0;
}

/* Whether text[0, len) is one of the '|'-separated words; its index. */
static int word_index(const char *words, const char *text, size_t len)
{
    int i = 0;
    for (const char *w = words; *w; i++) {
        size_t wl = strcspn(w, "|");
        if (wl == len && strncmp(w, text, len) == 0)
            return i;
        w += wl + (w[wl] == '|');
    }
    return -1;
}

static void check_number(tern_knob_id_t id, const tern_knob_t *k, const char *text, int ok,
                         const tern_knob_value_t *v)
{
    int64_t ref;
    int big = 0;
    int form = reference_number(text, &ref, &big);
    int in_rules = form == 0 && !big && ref >= k->min && ref <= k->max &&
                   (k->type != TERN_KNOB_T_POW2 || (ref & (ref - 1)) == 0);
    REQUIRE(ok == in_rules);
    if (!ok)
        return;
    REQUIRE(v->number == ref);
    char dec[32];
    snprintf(dec, sizeof dec, "%" PRId64, v->number);
    tern_knob_value_t again;
    REQUIRE(tern_knob_parse(id, dec, &again) == 0 && again.number == v->number && !again.is_auto);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    tern_knob_id_t id = (tern_knob_id_t)(data[0] % TERN_KNOB_N);
    const tern_knob_t *k = &tern_knob_table()[id];
    char *text = malloc(size);
    REQUIRE(text);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';

    tern_knob_value_t v = {.number = -12345};
    int ok = tern_knob_parse(id, text, &v) == 0;
    int takes_auto = k->type <= TERN_KNOB_T_BOOL && strcmp(k->words, "auto") == 0;
    if (ok && v.is_auto) {
        REQUIRE(takes_auto && strcmp(text, "auto") == 0);
    } else if (takes_auto && strcmp(text, "auto") == 0) {
        REQUIRE(ok && v.is_auto);
    } else {
        switch (k->type) {
        case TERN_KNOB_T_SIZE:
        case TERN_KNOB_T_COUNT:
        case TERN_KNOB_T_POW2:
            check_number(id, k, text, ok, &v);
            break;
        case TERN_KNOB_T_BOOL: {
            static const char *const words[] = {"0", "off", "no", "false",
                                                "1", "on", "yes", "true"};
            int want = -1;
            for (int i = 0; i < 8; i++)
                if (strcasecmp(text, words[i]) == 0)
                    want = i / 4;
            REQUIRE(ok == (want >= 0));
            if (ok)
                REQUIRE(v.number == want);
            break;
        }
        case TERN_KNOB_T_ENUM: {
            int want = word_index(k->words, text, strlen(text));
            REQUIRE(ok == (want >= 0));
            if (ok)
                REQUIRE(v.number == want);
            break;
        }
        case TERN_KNOB_T_LIST: {
            int want = 1;
            for (const char *p = text;; p++) {
                size_t len = strcspn(p, ",");
                if (len == 0 || (*k->words && word_index(k->words, p, len) < 0))
                    want = 0;
                p += len;
                if (!*p)
                    break;
            }
            REQUIRE(ok == want);
            break;
        }
        default:
            REQUIRE(ok);
            break;
        }
    }
    if (ok)
        REQUIRE(v.text == text);
    else
        REQUIRE(v.number == -12345); /* nothing written on failure */

    char small[1 + 16], big[300];
    small[16] = 'Z';
    tern_knob_allowed(id, small, 16);
    REQUIRE(small[16] == 'Z' && memchr(small, '\0', 16));
    tern_knob_allowed(id, big, sizeof big);
    REQUIRE(strlen(big) > 0);
    free(text);
    return 0;
}
