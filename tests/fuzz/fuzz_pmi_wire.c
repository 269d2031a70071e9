/* libFuzzer target: the PMI wire codec (src/pmi/pmi_wire.c), both
 * directions. The first byte picks a mode, the rest is the input:
 *   0  PMI-1 line: parse; if accepted, format the message again and parse
 *      that: the same command and fields must come back (the formatter
 *      turns control characters into spaces, so compare after that).
 *   1  PMI-2 body: the same round trip through the PMI-2 framing, the
 *      formatted message read back through a tern_pmi_reader_t.
 *   2  PMI-1 stream: the input pushed into a reader in pieces; the lines
 *      that come out, each with its '\n', must be the input's prefix.
 *   3  PMI-2 stream: the same for length-prefixed messages, checked against
 *      the framing as pmi_wire.h describes it. */
#include "pmi/pmi_wire.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_pmi_wire: invariant failed: %s (%s:%d)\n", #c, __FILE__,         \
                    __LINE__);                                                                     \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A parsed message, copied out of the line it points into. */
typedef struct {
    char *cmd;
    int n;
    char *key[TERN_PMI_WIRE_MAX_FIELDS];
    char *value[TERN_PMI_WIRE_MAX_FIELDS];
} owned_msg_t;

/* What the PMI-1 formatter makes of a value: control characters become
 * spaces (a line cannot carry them). */
static char *pmi1_normal(const char *s)
{
    char *c = strdup(s);
    REQUIRE(c);
    for (char *p = c; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return c;
}

static char *same(const char *s)
{
    char *c = strdup(s);
    REQUIRE(c);
    return c;
}

static void own(owned_msg_t *o, const tern_pmi_msg_t *m, char *(*norm)(const char *))
{
    o->cmd = norm(m->cmd);
    o->n = m->n_fields;
    for (int i = 0; i < m->n_fields; i++) {
        o->key[i] = same(m->fields[i].key);
        o->value[i] = norm(m->fields[i].value);
    }
}

static void disown(owned_msg_t *o)
{
    free(o->cmd);
    for (int i = 0; i < o->n; i++) {
        free(o->key[i]);
        free(o->value[i]);
    }
}

static void require_equal(const owned_msg_t *want, const tern_pmi_msg_t *got)
{
    REQUIRE(strcmp(want->cmd, got->cmd) == 0);
    REQUIRE(want->n == got->n_fields);
    for (int i = 0; i < want->n; i++) {
        REQUIRE(strcmp(want->key[i], got->fields[i].key) == 0);
        REQUIRE(strcmp(want->value[i], got->fields[i].value) == 0);
    }
}

static int is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '/';
}

static void require_keys(const tern_pmi_msg_t *m)
{
    REQUIRE(m->cmd && *m->cmd);
    REQUIRE(m->n_fields >= 0 && m->n_fields <= TERN_PMI_WIRE_MAX_FIELDS);
    for (int i = 0; i < m->n_fields; i++) {
        REQUIRE(*m->fields[i].key);
        REQUIRE(strcmp(m->fields[i].key, "cmd") != 0);
        for (const char *k = m->fields[i].key; *k; k++)
            REQUIRE(is_key_char(*k));
        REQUIRE(m->fields[i].value);
    }
}

static void pmi1_round_trip(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    REQUIRE(line);
    memcpy(line, data, size);
    line[size] = '\0';
    tern_pmi_msg_t m;
    if (tern_pmi_wire_parse(line, &m) == TERN_OK) {
        require_keys(&m);
        owned_msg_t want;
        own(&want, &m, pmi1_normal);
        tern_pmi_line_t out;
        tern_pmi_line_begin(&out, m.cmd);
        for (int i = 0; i < m.n_fields; i++)
            tern_pmi_line_add(&out, m.fields[i].key, m.fields[i].value);
        REQUIRE(tern_pmi_line_end(&out) == TERN_OK);
        REQUIRE(out.len == strlen(out.buf) && out.buf[out.len - 1] == '\n');
        REQUIRE(memchr(out.buf, '\n', out.len - 1) == NULL);
        tern_pmi_msg_t again;
        REQUIRE(tern_pmi_wire_parse(out.buf, &again) == TERN_OK);
        require_equal(&want, &again);
        tern_pmi_line_free(&out);
        disown(&want);
    }
    free(line);
}

static void pmi2_round_trip(const uint8_t *data, size_t size)
{
    char *body = malloc(size + 1);
    REQUIRE(body);
    memcpy(body, data, size);
    body[size] = '\0';
    tern_pmi_msg_t m;
    if (tern_pmi2_wire_parse(body, size, &m) == TERN_OK) {
        require_keys(&m);
        owned_msg_t want;
        own(&want, &m, same);
        tern_pmi_line_t out;
        tern_pmi2_line_begin(&out, m.cmd);
        for (int i = 0; i < m.n_fields; i++)
            tern_pmi2_line_add(&out, m.fields[i].key, m.fields[i].value);
        REQUIRE(tern_pmi2_line_end(&out) == TERN_OK);
        tern_pmi_reader_t r;
        tern_pmi_reader_init(&r);
        REQUIRE(tern_pmi_reader_push(&r, out.buf, out.len) == TERN_OK);
        size_t len;
        tern_status_t st;
        char *got = tern_pmi2_reader_next(&r, &len, &st);
        REQUIRE(got && st == TERN_OK && len == out.len - TERN_PMI2_HEADER_LEN);
        REQUIRE(tern_pmi2_reader_next(&r, &len, &st) == NULL && st == TERN_OK);
        tern_pmi_msg_t again;
        REQUIRE(tern_pmi2_wire_parse(got, len, &again) == TERN_OK);
        require_equal(&want, &again);
        tern_pmi_reader_free(&r);
        tern_pmi_line_free(&out);
        disown(&want);
    }
    free(body);
}

/* Piece sizes for the stream modes come from the input's first bytes. */
static size_t piece(const uint8_t **data, size_t *size)
{
    if (*size == 0)
        return 1;
    size_t n = 1 + (**data % 64);
    (*data)++, (*size)--;
    return n;
}

static void pmi1_stream(const uint8_t *data, size_t size)
{
    size_t split = size ? data[0] % 8 : 0;
    const uint8_t *sizes = data;
    size_t n_sizes = split;
    if (size)
        data++, size--;
    if (split > size)
        split = size;
    data += split, size -= split;
    tern_pmi_reader_t r;
    tern_pmi_reader_init(&r);
    size_t pushed = 0, taken = 0;
    while (pushed < size) {
        size_t n = piece(&sizes, &n_sizes);
        if (n > size - pushed)
            n = size - pushed;
        REQUIRE(tern_pmi_reader_push(&r, (const char *)data + pushed, n) == TERN_OK);
        pushed += n;
        char *line;
        while ((line = tern_pmi_reader_next(&r)) != NULL) {
            const char *nl = memchr(data + taken, '\n', pushed - taken);
            REQUIRE(nl);
            size_t len = (size_t)((const uint8_t *)nl - (data + taken));
            REQUIRE(memcmp(line, data + taken, len) == 0 && line[len] == '\0');
            taken += len + 1;
        }
        REQUIRE(memchr(data + taken, '\n', pushed - taken) == NULL);
    }
    tern_pmi_reader_free(&r);
}

/* The PMI-2 framing by its description: 6 characters, a decimal number
 * padded with spaces (strtol's leading blanks allowed), then the body. */
static int header_length(const uint8_t *h, long *n_p)
{
    char head[TERN_PMI2_HEADER_LEN + 1], *end;
    memcpy(head, h, TERN_PMI2_HEADER_LEN);
    head[TERN_PMI2_HEADER_LEN] = '\0';
    long n = strtol(head, &end, 10);
    while (*end == ' ')
        end++;
    if (end == head || *end != '\0' || n < 0)
        return -1;
    *n_p = n;
    return 0;
}

static void pmi2_stream(const uint8_t *data, size_t size)
{
    tern_pmi_reader_t r;
    tern_pmi_reader_init(&r);
    /* The first 4 bytes are piece sizes, the rest the stream. */
    const uint8_t *sizes = data;
    size_t n_sizes = size < 4 ? size : 4;
    data += n_sizes, size -= n_sizes;
    size_t pushed = 0, taken = 0;
    while (pushed < size) {
        size_t n = piece(&sizes, &n_sizes);
        if (n > size - pushed)
            n = size - pushed;
        REQUIRE(tern_pmi_reader_push(&r, (const char *)data + pushed, n) == TERN_OK);
        pushed += n;
        for (;;) {
            size_t len;
            tern_status_t st;
            char *body = tern_pmi2_reader_next(&r, &len, &st);
            long want;
            if (pushed - taken < TERN_PMI2_HEADER_LEN) {
                REQUIRE(!body && st == TERN_OK);
                break;
            }
            if (header_length(data + taken, &want) != 0) {
                REQUIRE(!body && st == TERN_ERR_ARG);
                goto out; /* the stream is broken: a server drops the rank */
            }
            REQUIRE(st == TERN_OK);
            if (pushed - taken - TERN_PMI2_HEADER_LEN < (size_t)want) {
                REQUIRE(!body);
                break;
            }
            REQUIRE(body && len == (size_t)want && body[len] == '\0');
            REQUIRE(memcmp(body, data + taken + TERN_PMI2_HEADER_LEN, len) == 0);
            taken += TERN_PMI2_HEADER_LEN + len;
        }
    }
out:
    tern_pmi_reader_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t mode = data[0] % 4;
    data++, size--;
    switch (mode) {
    case 0:
        pmi1_round_trip(data, size);
        break;
    case 1:
        pmi2_round_trip(data, size);
        break;
    case 2:
        pmi1_stream(data, size);
        break;
    default:
        pmi2_stream(data, size);
        break;
    }
    return 0;
}
