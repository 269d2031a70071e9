/* Unit tests of the knob table: the parser (sizes with suffixes, overflow,
 * negative and non-numeric text, bounds, powers of two, auto, bools, enum
 * and list words), the phrases that say what a knob allows, every default,
 * and reading the environment once with one bad and some good values. */
#include "base/config.h"
#include "base/test_check.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    tern_knob_id_t id;
    const char *text;
    int is_auto;
    int64_t number;
} accept_t;

static const accept_t accepted[] = {
    {TERN_KNOB_SHM_CELL_SIZE, "8320", 0, 8320},
    {TERN_KNOB_SHM_CELL_SIZE, "128", 0, 128},
    {TERN_KNOB_SHM_CELL_SIZE, "1m", 0, 1 << 20},
    {TERN_KNOB_SHM_CELL_SIZE, "1M", 0, 1 << 20},
    {TERN_KNOB_SHM_CELL_SIZE, "1024k", 0, 1 << 20},
    {TERN_KNOB_SHM_CELL_SIZE, "0128", 0, 128}, /* decimal, not octal */
    {TERN_KNOB_SHM_CMA_MIN, "1g", 0, 1L << 30},
    {TERN_KNOB_SHM_CMA_MIN, "1t", 0, 1LL << 40},
    {TERN_KNOB_SHM_CMA_MIN, "auto", 1, 0},
    {TERN_KNOB_P2P_EAGER_MAX, "0", 0, 0},
    {TERN_KNOB_P2P_EAGER_MAX, "auto", 1, 0},
    {TERN_KNOB_SHM_BULK_CHUNK, "0", 0, 0},
    {TERN_KNOB_SHM_RING_CELLS, "2", 0, 2},
    {TERN_KNOB_SHM_RING_CELLS, "1m", 0, 1 << 20},
    {TERN_KNOB_SHM_RING_CELLS, "1048576", 0, 1 << 20},
    {TERN_KNOB_LOG_LEVEL, "0", 0, 0},
    {TERN_KNOB_LOG_LEVEL, "3", 0, 3},
    {TERN_KNOB_PROGRESS_SPIN, "auto", 1, 0},
    {TERN_KNOB_PROGRESS_SPIN, "0", 0, 0},
    {TERN_KNOB_SHM_CMA, "on", 0, 1},
    {TERN_KNOB_SHM_CMA, "OFF", 0, 0},
    {TERN_KNOB_SHM_CMA, "yes", 0, 1},
    {TERN_KNOB_SHM_CMA, "False", 0, 0},
    {TERN_KNOB_SHM_CMA, "1", 0, 1},
    {TERN_KNOB_SHM_CMA, "auto", 1, 0},
    {TERN_KNOB_OFI_REGCACHE_STATS, "0", 0, 0},
    {TERN_KNOB_CONNECT, "auto", 0, 0},
    {TERN_KNOB_CONNECT, "all", 0, 1},
    {TERN_KNOB_CONNECT, "lazy", 0, 2},
    {TERN_KNOB_PMI, "singleton", 0, 4},
    {TERN_KNOB_TRANSPORTS, "shm", 0, 0},
    {TERN_KNOB_TRANSPORTS, "self,ofi", 0, 0},
    {TERN_KNOB_OFI_RAILS, "2", 0, 0},
    {TERN_KNOB_OFI_RAILS, "mlx5_0,eth1", 0, 0},
    {TERN_KNOB_MPIEXEC_LAUNCHER, "srun --overlap", 0, 0},
};

typedef struct {
    tern_knob_id_t id;
    const char *text;
} reject_t;

static const reject_t rejected[] = {
    /* sizes: bounds, sign, junk, overflow, auto where not declared */
    {TERN_KNOB_SHM_CELL_SIZE, "64"},
    {TERN_KNOB_SHM_CELL_SIZE, "127"},
    {TERN_KNOB_SHM_CELL_SIZE, "1048577"},
    {TERN_KNOB_SHM_CELL_SIZE, "2m"},
    {TERN_KNOB_SHM_CELL_SIZE, "0"},
    {TERN_KNOB_SHM_CELL_SIZE, "-128"},
    {TERN_KNOB_SHM_CELL_SIZE, "+128"},
    {TERN_KNOB_SHM_CELL_SIZE, "abc"},
    {TERN_KNOB_SHM_CELL_SIZE, ""},
    {TERN_KNOB_SHM_CELL_SIZE, "12x"},
    {TERN_KNOB_SHM_CELL_SIZE, "8k8"},
    {TERN_KNOB_SHM_CELL_SIZE, "1kk"},
    {TERN_KNOB_SHM_CELL_SIZE, " 128"},
    {TERN_KNOB_SHM_CELL_SIZE, "128 "},
    {TERN_KNOB_SHM_CELL_SIZE, "0x100"},
    {TERN_KNOB_SHM_CELL_SIZE, "1.5k"},
    {TERN_KNOB_SHM_BULK_CHUNK, "auto"}, /* a size without auto */
    {TERN_KNOB_SHM_CMA_MIN, "9223372036854775808"}, /* INT64_MAX + 1 */
    {TERN_KNOB_SHM_CMA_MIN, "99999999999999999999999"},
    {TERN_KNOB_SHM_CMA_MIN, "8589934592g"}, /* 2^63 after the suffix */
    {TERN_KNOB_SHM_CMA_MIN, "18446744073709551616"}, /* 2^64: would wrap to 0 */
    {TERN_KNOB_SHM_CMA_MIN, "17179869184g"},         /* 2^64 after the suffix */
    {TERN_KNOB_SHM_CMA_MIN, "2t"},
    {TERN_KNOB_SHM_CMA_MIN, "AUTO"},
    {TERN_KNOB_P2P_EAGER_MAX, "-1"},
    {TERN_KNOB_P2P_UNEXPECTED_MAX, "4095"},
    /* counts and powers of two */
    {TERN_KNOB_SHM_RING_CELLS, "3"},
    {TERN_KNOB_SHM_RING_CELLS, "48"},
    {TERN_KNOB_SHM_RING_CELLS, "0"},
    {TERN_KNOB_SHM_RING_CELLS, "1"},
    {TERN_KNOB_SHM_RING_CELLS, "2m"},
    {TERN_KNOB_SHM_RING_CELLS, "-2"},
    {TERN_KNOB_SHM_BULK_CHUNKS, "1"},
    {TERN_KNOB_LOG_LEVEL, "-1"},
    {TERN_KNOB_LOG_LEVEL, "4"},
    {TERN_KNOB_LOG_LEVEL, "debug"},
    {TERN_KNOB_OFI_CREDITS, "1"},
    /* bools, enums, lists */
    {TERN_KNOB_SHM_CMA, "maybe"},
    {TERN_KNOB_SHM_CMA, "2"},
    {TERN_KNOB_OFI_REGCACHE_STATS, "auto"},
    {TERN_KNOB_CONNECT, "xyz"},
    {TERN_KNOB_CONNECT, "ALL"},
    {TERN_KNOB_CONNECT, "al"},
    {TERN_KNOB_CONNECT, "all,lazy"},
    {TERN_KNOB_CONNECT, ""},
    {TERN_KNOB_PMI, "pmi3"},
    {TERN_KNOB_TRANSPORTS, "tcp"},
    {TERN_KNOB_TRANSPORTS, "shm,,ofi"},
    {TERN_KNOB_TRANSPORTS, ",shm"},
    {TERN_KNOB_TRANSPORTS, "shm,"},
    {TERN_KNOB_TRANSPORTS, ""},
    {TERN_KNOB_OFI_RAILS, "a,,b"},
};

static void check_parser(void)
{
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        const accept_t *a = &accepted[i];
        tern_knob_value_t v;
        int rc = tern_knob_parse(a->id, a->text, &v);
        if (rc != 0) {
            tern_check_fail("rejected %s=%s", tern_knob_table()[a->id].name, a->text);
            continue;
        }
        CHECK(v.is_auto == a->is_auto);
        CHECK(strcmp(v.text, a->text) == 0);
        if (tern_knob_table()[a->id].type <= TERN_KNOB_T_ENUM && !a->is_auto && v.number != a->number)
            tern_check_fail("%s=%s parsed as %lld, expected %lld", tern_knob_table()[a->id].name, a->text,
                            (long long)v.number, (long long)a->number);
    }
    for (size_t i = 0; i < sizeof rejected / sizeof rejected[0]; i++) {
        const reject_t *r = &rejected[i];
        tern_knob_value_t v = {.is_auto = true, .number = 12345, .text = "untouched"};
        if (tern_knob_parse(r->id, r->text, &v) == 0)
            tern_check_fail("accepted %s='%s'", tern_knob_table()[r->id].name, r->text);
        CHECK(v.is_auto && v.number == 12345 && strcmp(v.text, "untouched") == 0);
    }
}

static void check_allowed(tern_knob_id_t id, const char *want)
{
    char buf[300];
    tern_knob_allowed(id, buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        tern_check_fail("%s allows '%s', expected '%s'", tern_knob_table()[id].name, buf, want);
}

/* Every row is usable: its default parses, its name is TERN_*, its range is
 * not empty and, for powers of two, starts on one. */
static void check_table(void)
{
    const tern_knob_t *knobs = tern_knob_table();
    for (int id = 0; id < TERN_KNOB_N; id++) {
        const tern_knob_t *k = &knobs[id];
        tern_knob_value_t v;
        if (tern_knob_parse((tern_knob_id_t)id, k->default_value, &v) != 0)
            tern_check_fail("%s: default '%s' does not parse", k->name, k->default_value);
        CHECK(strncmp(k->name, "TERN_", 5) == 0);
        CHECK(k->doc && *k->doc);
        if (k->type <= TERN_KNOB_T_POW2)
            CHECK(0 <= k->min && k->min <= k->max);
        if (k->type == TERN_KNOB_T_POW2)
            CHECK(k->min >= 2 && (k->min & (k->min - 1)) == 0);
        if (k->type == TERN_KNOB_T_ENUM)
            CHECK(*k->words);
    }
}

static const char *reported;
static int n_reported;

static void remember(const char *line)
{
    n_reported++;
    reported = strdup(line);
}

/* The environment is read once, at the first read: a bad value is kept to
 * be reported and its default applies; good values are honoured. */
static void check_environment(void)
{
    setenv("TERN_SHM_CELL_SIZE", "64", 1);
    setenv("TERN_SHM_RING_CELLS", "4", 1);
    setenv("TERN_CONNECT", "lazy", 1);
    setenv("TERN_TRANSPORTS", "self,shm", 1);
    setenv("TERN_PROGRESS_SPIN", "auto", 1);
    setenv("TERN_SHM_CMA", "off", 1);
    setenv("TERN_OFI_EAGER_SIZE", "", 1); /* empty: unset */

    CHECK(tern_knob_is_auto(TERN_KNOB_SHM_CELL_SIZE)); /* the default */
    CHECK(tern_knob_count_or(TERN_KNOB_SHM_RING_CELLS, 0) == 4);
    CHECK(tern_knob_is(TERN_KNOB_CONNECT, "lazy"));
    CHECK(!tern_knob_is(TERN_KNOB_CONNECT, "auto"));
    CHECK(tern_knob_lists(TERN_KNOB_TRANSPORTS, "shm"));
    CHECK(!tern_knob_lists(TERN_KNOB_TRANSPORTS, "ofi"));
    CHECK(tern_knob_count_or(TERN_KNOB_PROGRESS_SPIN, 77) == 77);
    CHECK(tern_knob_bool_or(TERN_KNOB_SHM_CMA, true) == false);
    CHECK(!tern_knob_is_auto(TERN_KNOB_SHM_CMA));
    CHECK(tern_knob_size_or(TERN_KNOB_OFI_EAGER_SIZE, 8192) == 8192);
    CHECK(!tern_knob_from_env(TERN_KNOB_OFI_EAGER_SIZE));
    CHECK(tern_knob_from_env(TERN_KNOB_SHM_CELL_SIZE));
    CHECK(strcmp(tern_knob_str(TERN_KNOB_PMI), "auto") == 0);

    /* Read once: later changes to the environment are not seen. */
    setenv("TERN_SHM_RING_CELLS", "8", 1);
    CHECK(tern_knob_count_or(TERN_KNOB_SHM_RING_CELLS, 0) == 4);

    CHECK(tern_knob_rejected(TERN_KNOB_SHM_CELL_SIZE) &&
          strcmp(tern_knob_rejected(TERN_KNOB_SHM_CELL_SIZE), "64") == 0);
    CHECK(tern_knob_rejected(TERN_KNOB_SHM_RING_CELLS) == NULL);
    CHECK(tern_knobs_invalid(NULL) == 1);
    CHECK(tern_knobs_invalid(remember) == 1 && n_reported == 1);
    CHECK(reported && strcmp(reported, "TERN_SHM_CELL_SIZE=64: must be a size from 128 to 1048576 bytes, or auto") == 0);
    free((void *)reported);
}

int main(void)
{
    check_parser();
    check_allowed(TERN_KNOB_SHM_CELL_SIZE, "a size from 128 to 1048576 bytes, or auto");
    check_allowed(TERN_KNOB_P2P_EAGER_MAX, "a size from 0 to 1073741824 bytes, or auto");
    check_allowed(TERN_KNOB_SHM_RING_CELLS, "a power of two from 2 to 1048576");
    check_allowed(TERN_KNOB_LOG_LEVEL, "a number from 0 to 3");
    check_allowed(TERN_KNOB_CONNECT, "one of auto, all, lazy");
    check_allowed(TERN_KNOB_SHM_CMA, "one of on, off, 1, 0, yes, no, true, false, or auto");
    check_allowed(TERN_KNOB_TRANSPORTS, "a comma list of self, shm, ofi");
    check_table();
    check_environment();
    return tern_check_result("config_test");
}
