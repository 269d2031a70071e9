/* libFuzzer target: mpiexec's host lists (tools/mpiexec/hosts.c). The first
 * byte picks the form (even: a hostfile, read through fmemopen; odd: a
 * --hosts list), the second and third give -n and -ppn for the placement.
 * Every host accepted must satisfy the documented rules (letters, digits,
 * '-', '.', '_'; not starting with '-'; 1..253 characters; slots 0 or
 * 1..2^20); the accepted hosts written back as a --hosts list must parse to
 * the same hosts; the placement must put exactly -n ranks, ppn at most per
 * host when -ppn is given. */
#include "mpiexec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_hosts: invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);  \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void free_hosts(mpiexec_opts_t *o)
{
    for (int h = 0; h < o->n_hosts; h++)
        free(o->hosts[h]);
    free(o->hosts);
    free(o->host_slots);
    *o = (mpiexec_opts_t){0};
}

static void require_rules(const mpiexec_opts_t *o)
{
    for (int h = 0; h < o->n_hosts; h++) {
        const char *name = o->hosts[h];
        size_t len = strlen(name);
        REQUIRE(len >= 1 && len <= 253);
        REQUIRE(name[0] != '-');
        for (size_t i = 0; i < len; i++)
            REQUIRE(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._",
                           name[i]) != NULL);
        REQUIRE(o->host_slots[h] >= 0 && o->host_slots[h] <= (1 << 20));
    }
}

/* The hosts as "a:2,b": parsed again they must be the same hosts. */
static void require_list_round_trip(const mpiexec_opts_t *o)
{
    size_t cap = 1;
    for (int h = 0; h < o->n_hosts; h++)
        cap += strlen(o->hosts[h]) + 16;
    char *list = malloc(cap), *p = list;
    REQUIRE(list);
    *p = '\0';
    for (int h = 0; h < o->n_hosts; h++) {
        p += sprintf(p, "%s%s", h ? "," : "", o->hosts[h]);
        if (o->host_slots[h])
            p += sprintf(p, ":%d", o->host_slots[h]);
    }
    mpiexec_opts_t again = {0};
    REQUIRE(mpiexec_hosts_parse_list(&again, list, "fuzz") == 0);
    REQUIRE(again.n_hosts == o->n_hosts);
    for (int h = 0; h < o->n_hosts; h++) {
        REQUIRE(strcmp(again.hosts[h], o->hosts[h]) == 0);
        REQUIRE(again.host_slots[h] == o->host_slots[h]);
    }
    free_hosts(&again);
    free(list);
}

static void require_placement(mpiexec_opts_t *o, int np, int ppn)
{
    o->np = np;
    o->ppn = ppn;
    int *count = mpiexec_hosts_place(o);
    if (!count) {
        /* Only -ppn can make ranks not fit. */
        REQUIRE(ppn > 0 && (long)ppn * o->n_hosts < np);
        return;
    }
    long sum = 0;
    for (int h = 0; h < o->n_hosts; h++) {
        REQUIRE(count[h] >= 0);
        if (ppn > 0)
            REQUIRE(count[h] <= ppn);
        sum += count[h];
    }
    REQUIRE(sum == np);
    free(count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    int form = data[0] & 1;
    int np = 1 + data[1];        /* 1..256 */
    int ppn = data[2] % 9;       /* 0 (none) .. 8 */
    data += 3, size -= 3;
    mpiexec_opts_t o = {0};
    int rc;
    if (form == 0) {
        FILE *f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
        REQUIRE(f);
        rc = mpiexec_hosts_read_stream(&o, "fuzz-hostfile", f);
        fclose(f);
    } else {
        char *list = malloc(size + 1);
        REQUIRE(list);
        memcpy(list, data, size);
        list[size] = '\0';
        rc = mpiexec_hosts_parse_list(&o, list, "--hosts");
        free(list);
    }
    if (rc == 0) {
        REQUIRE(o.n_hosts >= 1);
        require_rules(&o);
        require_list_round_trip(&o);
        require_placement(&o, np, ppn);
    }
    free_hosts(&o);
    return 0;
}
