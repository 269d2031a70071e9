/* Host lists: --hosts a,b:2,c and --hostfile (one "host[:slots]" per line,
 * '#' starts a comment), and block placement of the ranks over them. */
#include "mpiexec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A host file line longer than this is an error, not two hosts. */
#define HOSTS_LINE_MAX 1024
/* RFC 1035: a DNS name is at most 253 characters. */
#define HOST_NAME_MAX_LEN 253
#define HOST_SLOTS_MAX (1 << 20)

static int is_blank(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Host names: letters, digits, '-', '.', '_' (IPv4 addresses fit; IPv6 is
 * not accepted). Anything else would reach ssh's command line. */
static int is_host_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_';
}

/* Writes bytes for a message: printable ASCII as is, the rest as \xHH, so
 * junk from a file never reaches the terminal raw. */
static void put_escaped(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
            fputc(c, stderr);
        else
            fprintf(stderr, "\\x%02x", c);
    }
}

/* Adds "host[:slots]" (spec[0..len), may hold any byte) to o; "where" names
 * the place for messages ("hosts.txt:3", "--hosts entry 2"). */
static int add_host(mpiexec_opts_t *o, const char *where, const char *spec, size_t len)
{
    while (len && is_blank((unsigned char)spec[len - 1]))
        len--;
    while (len && is_blank((unsigned char)*spec))
        spec++, len--;
    const char *colon = memchr(spec, ':', len);
    size_t name_len = colon ? (size_t)(colon - spec) : len;
    if (name_len == 0) {
        fprintf(stderr, "mpiexec: %s: empty host name", where);
        if (colon) {
            fputs(" before '", stderr);
            put_escaped(colon, len - name_len);
            fputc('\'', stderr);
        }
        fputc('\n', stderr);
        return -1;
    }
    /* A leading '-' would be read by ssh as an option. */
    if (spec[0] == '-') {
        fprintf(stderr, "mpiexec: %s: host name starts with '-'\n", where);
        return -1;
    }
    for (size_t i = 0; i < name_len; i++) {
        if (!is_host_char((unsigned char)spec[i])) {
            fprintf(stderr, "mpiexec: %s: invalid byte '", where);
            put_escaped(spec + i, 1);
            fprintf(stderr, "' in host name (letters, digits, '-', '.', '_' only)\n");
            return -1;
        }
    }
    if (name_len > HOST_NAME_MAX_LEN) {
        fprintf(stderr, "mpiexec: %s: host name longer than %d characters\n", where,
                HOST_NAME_MAX_LEN);
        return -1;
    }
    int slots = 0;
    if (colon) {
        const char *d = colon + 1;
        size_t n = len - name_len - 1;
        long v = 0;
        int ok = n > 0 && n <= 8;
        for (size_t i = 0; ok && i < n; i++) {
            ok = d[i] >= '0' && d[i] <= '9';
            v = v * 10 + (d[i] - '0');
        }
        if (!ok || v < 1 || v > HOST_SLOTS_MAX) {
            fprintf(stderr, "mpiexec: %s: bad slot count '", where);
            put_escaped(d, n);
            fprintf(stderr, "' for host '%.*s' (1..%d)\n", (int)name_len, spec,
                    HOST_SLOTS_MAX);
            return -1;
        }
        slots = (int)v;
    }
    char *name = strndup(spec, name_len);
    if (!name)
        return -1;
    char **hosts = realloc(o->hosts, (size_t)(o->n_hosts + 1) * sizeof *hosts);
    if (hosts)
        o->hosts = hosts;
    int *sl = realloc(o->host_slots, (size_t)(o->n_hosts + 1) * sizeof *sl);
    if (sl)
        o->host_slots = sl;
    if (!hosts || !sl) {
        free(name);
        return -1;
    }
    o->hosts[o->n_hosts] = name;
    o->host_slots[o->n_hosts] = slots;
    o->n_hosts++;
    return 0;
}

int mpiexec_hosts_parse_list(mpiexec_opts_t *o, const char *list, const char *what)
{
    /* Every entry must name a host: "a,,b" and "a," are errors. */
    for (int entry = 1;; entry++) {
        const char *p = list;
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char where[64];
        snprintf(where, sizeof where, "%s entry %d", what, entry);
        if (add_host(o, where, p, len) != 0)
            return -1;
        if (!end)
            return 0;
        list = end + 1;
    }
}

int mpiexec_hosts_read_file(mpiexec_opts_t *o, const char *path)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    int err = !f ? errno : fstat(fileno(f), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (err) {
        fprintf(stderr, "mpiexec: cannot read hostfile %s: %s\n", path, strerror(err));
        if (f)
            fclose(f);
        return -1;
    }
    int rc = mpiexec_hosts_read_stream(o, path, f);
    fclose(f);
    return rc;
}

int mpiexec_hosts_read_stream(mpiexec_opts_t *o, const char *path, FILE *f)
{
    /* Messages name the file as given and the line, as compilers do. */
    size_t where_size = strlen(path) + 24;
    char *where = malloc(where_size);
    if (!where)
        return -1;
    char line[HOSTS_LINE_MAX];
    int rc = 0;
    for (long lineno = 1; rc == 0; lineno++) {
        /* Byte by byte, so a NUL in the line is seen and a long line is
         * reported instead of being cut into two hosts. */
        size_t len = 0;
        int c, too_long = 0;
        while ((c = getc(f)) != EOF && c != '\n') {
            if (len < sizeof line) {
                line[len++] = (char)c;
            } else {
                too_long = 1; /* said now: /dev/zero has no end of line */
                break;
            }
        }
        if (c == EOF && ferror(f)) {
            fprintf(stderr, "mpiexec: cannot read hostfile %s: %s\n", path, strerror(errno));
            rc = -1;
            break;
        }
        if (c == EOF && len == 0)
            break;
        snprintf(where, where_size, "%s:%ld", path, lineno);
        if (too_long) {
            fprintf(stderr, "mpiexec: %s: line longer than %d bytes\n", where, HOSTS_LINE_MAX);
            rc = -1;
            break;
        }
        const char *hash = memchr(line, '#', len);
        if (hash)
            len = (size_t)(hash - line);
        size_t i = 0;
        while (i < len && is_blank((unsigned char)line[i]))
            i++;
        if (i < len)
            rc = add_host(o, where, line, len);
        if (c == EOF)
            break;
    }
    free(where);
    if (rc == 0 && o->n_hosts == 0) {
        fprintf(stderr, "mpiexec: hostfile %s names no host\n", path);
        rc = -1;
    }
    return rc;
}

/* -ppn N: N per host in order; else hostfile slots in order (wrapping
 * over-subscribed as Hydra does); else as evenly as possible. */
int *mpiexec_hosts_place(const mpiexec_opts_t *o)
{
    int *count = calloc((size_t)o->n_hosts, sizeof *count);
    if (!count)
        return NULL;
    int left = o->np;
    int any_slots = 0;
    for (int h = 0; h < o->n_hosts; h++)
        any_slots |= o->host_slots[h] > 0;
    while (left > 0) {
        for (int h = 0; h < o->n_hosts && left > 0; h++) {
            int want;
            if (o->ppn > 0)
                want = o->ppn;
            else if (any_slots)
                want = o->host_slots[h] > 0 ? o->host_slots[h] : 1;
            else
                want = (o->np + o->n_hosts - 1) / o->n_hosts;
            if (want > left)
                want = left;
            count[h] += want;
            left -= want;
        }
        if (o->ppn > 0 && left > 0) {
            fprintf(stderr, "mpiexec: -n %d does not fit in %d hosts x -ppn %d\n", o->np,
                    o->n_hosts, o->ppn);
            free(count);
            return NULL;
        }
    }
    return count;
}
