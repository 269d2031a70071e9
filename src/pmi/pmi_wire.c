/* PMI-1 wire codec; see pmi_wire.h for the format. */
#include "pmi/pmi_wire.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '/';
}

/* Undoes backslash escapes in [v, end) in place and NUL-terminates. */
static void unescape(char *v, char *end)
{
    char *out = v;
    for (char *in = v; in < end; in++) {
        if (*in == '\\' && in + 1 < end)
            in++;
        *out++ = *in;
    }
    *out = '\0';
}

static tern_status_t msg_add(tern_pmi_msg_t *msg, const char *key, const char *value)
{
    if (strcmp(key, "cmd") == 0) {
        msg->cmd = value;
        return TERN_OK;
    }
    if (msg->n_fields == TERN_PMI_WIRE_MAX_FIELDS)
        return TERN_ERR_ARG;
    msg->fields[msg->n_fields].key = key;
    msg->fields[msg->n_fields].value = value;
    msg->n_fields++;
    return TERN_OK;
}

tern_status_t tern_pmi_wire_parse(char *line, tern_pmi_msg_t *msg_p)
{
    tern_pmi_msg_t msg = {0};
    char *p = line;

    if (strncmp(line, "cmd=", 4) != 0)
        return TERN_ERR_ARG;
    char *nl = strchr(line, '\n');
    if (nl) {
        if (nl[1] != '\0')
            return TERN_ERR_ARG; /* one message per line */
        *nl = '\0';
    }
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        char *key = p;
        while (is_key_char(*p))
            p++;
        if (p == key || (*p != '=' && *p != ' ' && *p != '\0'))
            return TERN_ERR_ARG;
        const char *value = "";
        if (*p == '=') {
            *p++ = '\0';
            char *v = p;
            /* A backslash protects the next character, except the end. */
            while (*p != ' ' && *p != '\0') {
                if (*p == '\\' && p[1] != '\0')
                    p++;
                p++;
            }
            /* "key=" is an empty value, as a bare key is: the formatter
             * writes an empty value so, and must be read back. */
            char *end = p;
            if (*p)
                p++;
            unescape(v, end);
            value = v;
        } else if (*p) {
            *p++ = '\0';
        }
        if (msg_add(&msg, key, value) != TERN_OK)
            return TERN_ERR_ARG;
    }
    if (!msg.cmd || !*msg.cmd)
        return TERN_ERR_ARG;
    *msg_p = msg;
    return TERN_OK;
}

const char *tern_pmi_msg_get(const tern_pmi_msg_t *msg, const char *key)
{
    for (int i = 0; i < msg->n_fields; i++)
        if (strcmp(msg->fields[i].key, key) == 0)
            return msg->fields[i].value;
    return NULL;
}

tern_status_t tern_pmi_msg_get_int(const tern_pmi_msg_t *msg, const char *key, int *value_p)
{
    const char *v = tern_pmi_msg_get(msg, key);
    if (!v)
        return TERN_ERR_NOT_FOUND;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno || x < INT_MIN || x > INT_MAX)
        return TERN_ERR_ARG;
    *value_p = (int)x;
    return TERN_OK;
}

int tern_pmi_msg_rc(const tern_pmi_msg_t *msg)
{
    int rc;
    tern_status_t st = tern_pmi_msg_get_int(msg, "rc", &rc);
    if (st == TERN_ERR_NOT_FOUND)
        return 0;
    if (st != TERN_OK)
        return -1;
    return rc;
}

static void line_reserve(tern_pmi_line_t *line, size_t extra)
{
    if (line->failed)
        return;
    if (line->len + extra + 1 <= line->cap)
        return;
    size_t cap = line->cap ? line->cap : 128;
    while (cap < line->len + extra + 1)
        cap *= 2;
    char *buf = realloc(line->buf, cap);
    if (!buf) {
        line->failed = 1;
        return;
    }
    line->buf = buf;
    line->cap = cap;
}

static void line_append(tern_pmi_line_t *line, const char *s, size_t n)
{
    line_reserve(line, n);
    if (line->failed)
        return;
    memcpy(line->buf + line->len, s, n);
    line->len += n;
    line->buf[line->len] = '\0';
}

/* Appends a value, escaped so that the parser reads it back. */
static void line_append_value(tern_pmi_line_t *line, const char *value)
{
    size_t vlen = strlen(value);
    line_reserve(line, 2 * vlen);
    if (line->failed)
        return;
    char *out = line->buf + line->len;
    for (size_t i = 0; i < vlen; i++) {
        char c = value[i];
        if ((unsigned char)c < 0x20 || c == 0x7f)
            c = ' '; /* a line cannot carry newlines */
        if (c == ' ' || c == '\\')
            *out++ = '\\';
        *out++ = c;
    }
    line->len = (size_t)(out - line->buf);
    line->buf[line->len] = '\0';
}

/* The command is a value too: escaped like one (fuzz_pmi_wire found a
 * command with a space written raw, read back as two fields). */
void tern_pmi_line_begin(tern_pmi_line_t *line, const char *cmd)
{
    *line = (tern_pmi_line_t){0};
    line_append(line, "cmd=", 4);
    line_append_value(line, cmd);
}

void tern_pmi_line_add(tern_pmi_line_t *line, const char *key, const char *value)
{
    line_append(line, " ", 1);
    line_append(line, key, strlen(key));
    line_append(line, "=", 1);
    line_append_value(line, value);
}

void tern_pmi_line_add_int(tern_pmi_line_t *line, const char *key, long value)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", value);
    tern_pmi_line_add(line, key, num);
}

tern_status_t tern_pmi_line_end(tern_pmi_line_t *line)
{
    line_append(line, "\n", 1);
    return line->failed ? TERN_ERR_NOMEM : TERN_OK;
}

void tern_pmi_line_free(tern_pmi_line_t *line)
{
    free(line->buf);
    *line = (tern_pmi_line_t){0};
}

void tern_pmi_reader_init(tern_pmi_reader_t *r) { *r = (tern_pmi_reader_t){0}; }

void tern_pmi_reader_free(tern_pmi_reader_t *r)
{
    free(r->buf);
    *r = (tern_pmi_reader_t){0};
}

/* Makes room for n more bytes, first dropping lines already returned. */
static tern_status_t reader_reserve(tern_pmi_reader_t *r, size_t n)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->len - r->start);
        r->len -= r->start;
        r->start = 0;
    }
    if (r->len + n + 1 <= r->cap)
        return TERN_OK;
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->len + n + 1)
        cap *= 2;
    char *buf = realloc(r->buf, cap);
    if (!buf)
        return TERN_ERR_NOMEM;
    r->buf = buf;
    r->cap = cap;
    return TERN_OK;
}

tern_status_t tern_pmi_reader_fill(tern_pmi_reader_t *r, int fd, ssize_t *n_p)
{
    tern_status_t st = reader_reserve(r, 4096);
    if (st != TERN_OK)
        return st;
    ssize_t n = read(fd, r->buf + r->len, r->cap - r->len - 1);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return TERN_ERR_AGAIN;
        return TERN_ERR_IO;
    }
    r->len += (size_t)n;
    *n_p = n;
    return TERN_OK;
}

tern_status_t tern_pmi_reader_push(tern_pmi_reader_t *r, const char *data, size_t n)
{
    tern_status_t st = reader_reserve(r, n);
    if (st != TERN_OK)
        return st;
    memcpy(r->buf + r->len, data, n);
    r->len += n;
    return TERN_OK;
}

char *tern_pmi_reader_next(tern_pmi_reader_t *r)
{
    if (r->start >= r->len)
        return NULL;
    char *line = r->buf + r->start;
    char *nl = memchr(line, '\n', r->len - r->start);
    if (!nl)
        return NULL;
    *nl = '\0';
    r->start = (size_t)(nl + 1 - r->buf);
    return line;
}

tern_status_t tern_pmi_wire_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EPIPE || errno == ECONNRESET ? TERN_ERR_PEER : TERN_ERR_IO;
        }
        buf += n;
        len -= (size_t)n;
    }
    return TERN_OK;
}

/* --- PMI-2 framing -------------------------------------------------------- */

tern_status_t tern_pmi2_wire_parse(char *body, size_t len, tern_pmi_msg_t *msg_p)
{
    tern_pmi_msg_t msg = {0};
    char *p = body, *end = body + len;

    if (len < 4 || strncmp(body, "cmd=", 4) != 0)
        return TERN_ERR_ARG;
    while (p < end) {
        char *key = p;
        while (p < end && *p != '=' && *p != ';')
            p++;
        if (p == key || p == end || *p != '=')
            return TERN_ERR_ARG;
        /* Every byte up to the '=', a NUL included: checked after the NUL
         * was written, "\0x=" passed as an empty key (fuzz_pmi_wire). */
        for (const char *k = key; k < p; k++)
            if (!is_key_char(*k))
                return TERN_ERR_ARG;
        *p++ = '\0';
        /* The value runs to the first single ';' (";;" is an escaped ';'),
         * or to the end of the body. Unescape as we go. */
        char *v = p, *out = p;
        while (p < end) {
            if (*p == ';') {
                if (p + 1 < end && p[1] == ';') {
                    *out++ = ';';
                    p += 2;
                    continue;
                }
                break;
            }
            *out++ = *p++;
        }
        if (p < end)
            p++; /* the ';' */
        *out = '\0'; /* at most body[len], which is already NUL */
        if (msg_add(&msg, key, v) != TERN_OK)
            return TERN_ERR_ARG;
    }
    if (!msg.cmd || !*msg.cmd)
        return TERN_ERR_ARG;
    *msg_p = msg;
    return TERN_OK;
}

/* A value with each ';' doubled, then the ';' that ends it. */
static void line_append_pmi2_value(tern_pmi_line_t *line, const char *value)
{
    for (const char *s = value; *s; s++) {
        if (*s == ';')
            line_append(line, ";", 1);
        line_append(line, s, 1);
    }
    line_append(line, ";", 1);
}

void tern_pmi2_line_begin(tern_pmi_line_t *line, const char *cmd)
{
    *line = (tern_pmi_line_t){0};
    line_append(line, "      cmd=", TERN_PMI2_HEADER_LEN + 4);
    line_append_pmi2_value(line, cmd);
}

void tern_pmi2_line_add(tern_pmi_line_t *line, const char *key, const char *value)
{
    line_append(line, key, strlen(key));
    line_append(line, "=", 1);
    line_append_pmi2_value(line, value);
}

void tern_pmi2_line_add_int(tern_pmi_line_t *line, const char *key, long value)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", value);
    tern_pmi2_line_add(line, key, num);
}

tern_status_t tern_pmi2_line_end(tern_pmi_line_t *line)
{
    if (line->failed)
        return TERN_ERR_NOMEM;
    size_t body = line->len - TERN_PMI2_HEADER_LEN;
    if (body > TERN_PMI2_MAX_LEN)
        return TERN_ERR_ARG;
    char head[TERN_PMI2_HEADER_LEN + 1];
    snprintf(head, sizeof head, "%-6zu", body);
    memcpy(line->buf, head, TERN_PMI2_HEADER_LEN);
    return TERN_OK;
}

char *tern_pmi2_reader_next(tern_pmi_reader_t *r, size_t *len_p, tern_status_t *st_p)
{
    *st_p = TERN_OK;
    size_t avail = r->len - r->start;
    if (avail < TERN_PMI2_HEADER_LEN)
        return NULL;
    char head[TERN_PMI2_HEADER_LEN + 1], *end;
    memcpy(head, r->buf + r->start, TERN_PMI2_HEADER_LEN);
    head[TERN_PMI2_HEADER_LEN] = '\0';
    long n = strtol(head, &end, 10);
    while (*end == ' ')
        end++;
    if (end == head || *end != '\0' || n < 0) {
        *st_p = TERN_ERR_ARG;
        return NULL;
    }
    if (avail < TERN_PMI2_HEADER_LEN + (size_t)n)
        return NULL;
    /* Slide the body one byte into the header so it can be NUL-terminated
     * without touching the next message. */
    char *body = r->buf + r->start + TERN_PMI2_HEADER_LEN - 1;
    memmove(body, body + 1, (size_t)n);
    body[n] = '\0';
    r->start += TERN_PMI2_HEADER_LEN + (size_t)n;
    *len_p = (size_t)n;
    return body;
}
