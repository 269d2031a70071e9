/* Host lists: --hosts a,b:2,c and --hostfile (one "host[:slots]" per line,
 * '#' starts a comment), and block placement of the ranks over them. */
#include "mpiexec.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_host(mpiexec_opts_t *o, const char *spec, size_t len)
{
    while (len && isspace((unsigned char)spec[len - 1]))
        len--;
    while (len && isspace((unsigned char)*spec))
        spec++, len--;
    if (len == 0)
        return 0;
    char *name = strndup(spec, len);
    if (!name)
        return -1;
    int slots = 0;
    char *colon = strchr(name, ':');
    if (colon) {
        char *end;
        long v = strtol(colon + 1, &end, 10);
        if (*end || v < 1 || v > 1 << 20) {
            fprintf(stderr, "mpiexec: bad slot count in host '%s'\n", name);
            free(name);
            return -1;
        }
        *colon = '\0';
        slots = (int)v;
    }
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

int mpiexec_hosts_parse_list(mpiexec_opts_t *o, const char *list)
{
    for (const char *p = list;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (add_host(o, p, len) != 0)
            return -1;
        if (!end)
            return 0;
        p = end + 1;
    }
}

int mpiexec_hosts_read_file(mpiexec_opts_t *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mpiexec: cannot read hostfile %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        rc = add_host(o, line, strlen(line));
    }
    fclose(f);
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
