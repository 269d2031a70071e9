/* libFuzzer target: mpiexec's command line (tools/mpiexec/options.c). The
 * input is the arguments, separated by NUL bytes, after "mpiexec".
 * Arguments naming a hostfile are left out (the file parser has its own
 * target, and the fuzzer must not read /dev/zero). When the line is
 * accepted: 1..2^20 ranks, -ppn 0..2^20, the program is one of the
 * arguments, every --env/-x entry is VAR=VAL with a non-empty VAR, every
 * host follows the host rules, and a --proxy's block lies in its world.
 * Whatever the outcome, mpiexec_opts_free releases everything (leaks fail). */
#include "mpiexec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(c)                                                                                 \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_args: invariant failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

enum { MAX_ARGS = 64 };

static int names_a_file(const char *a)
{
    if (a[0] != '-')
        return 0;
    const char *name = a[1] == '-' ? a + 2 : a + 1;
    return !strcmp(name, "f") || !strcmp(name, "hostfile") || !strcmp(name, "machinefile");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    REQUIRE(text);
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "mpiexec";
    for (char *p = text; p < text + size + 1 && argc <= MAX_ARGS; p += strlen(p) + 1) {
        if (names_a_file(p)) {
            free(text);
            return 0;
        }
        argv[argc++] = p;
        if (p + strlen(p) == text + size)
            break;
    }
    argv[argc] = NULL;

    mpiexec_opts_t o = {0};
    int rc = mpiexec_parse_args(argc, argv, &o);
    REQUIRE(rc == 0 || rc == 1 || rc == -1 || rc == -2);
    if (rc == 0) {
        /* A proxy may have no ranks: it serves spawns (root_spawn.c). */
        REQUIRE(o.np >= (o.proxy ? 0 : 1) && o.np <= 1 << 20);
        REQUIRE(o.ppn >= 0 && o.ppn <= 1 << 20);
        REQUIRE(o.argv > argv && o.argv < argv + argc && *o.argv);
        REQUIRE(o.bind_core == 0 || o.bind_core == 1);
        for (int i = 0; i < o.n_env; i++) {
            const char *eq = strchr(o.env[i], '=');
            REQUIRE(eq && eq > o.env[i]);
        }
        for (int h = 0; h < o.n_hosts; h++) {
            const char *name = o.hosts[h];
            size_t len = strlen(name);
            REQUIRE(len >= 1 && len <= 253 && name[0] != '-');
            REQUIRE(strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "0123456789-._") == len);
            REQUIRE(o.host_slots[h] >= 0 && o.host_slots[h] <= 1 << 20);
        }
        if (o.proxy) {
            REQUIRE(o.proxy_index >= 0 && o.proxy_first >= 0);
            REQUIRE((long)o.proxy_first + o.np <= o.world_size);
            REQUIRE(o.proxy_root && o.proxy_kvs && o.proxy_map);
        }
    }
    mpiexec_opts_free(&o);
    free(text);
    return 0;
}
