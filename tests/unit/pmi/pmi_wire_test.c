/* Unit tests of the PMI-1 wire codec: round trips, escapes, malformed lines,
 * long values, line framing; of PMI-2's length-prefixed framing; and of the
 * PMI_process_mapping parser and formatter. */
#include "pmi/pmi_mapping.h"
#include "pmi/pmi_wire.h"
#include "base/test_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Formats cmd with n key/value pairs, parses it back, compares. */
static void check_round_trip(const char *cmd, int n, const char *const *kv)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, cmd);
    for (int i = 0; i < n; i++)
        tern_pmi_line_add(&line, kv[2 * i], kv[2 * i + 1]);
    CHECK(tern_pmi_line_end(&line) == TERN_OK);
    CHECK(line.len == strlen(line.buf));
    CHECK(line.buf[line.len - 1] == '\n');
    CHECK(memchr(line.buf, '\n', line.len - 1) == NULL);

    tern_pmi_msg_t msg;
    CHECK(tern_pmi_wire_parse(line.buf, &msg) == TERN_OK);
    CHECK(strcmp(msg.cmd, cmd) == 0);
    CHECK(msg.n_fields == n);
    for (int i = 0; i < n; i++) {
        const char *v = tern_pmi_msg_get(&msg, kv[2 * i]);
        CHECK(v && strcmp(v, kv[2 * i + 1]) == 0);
    }
    tern_pmi_line_free(&line);
}

static void test_round_trips(void)
{
    const char *init[] = {"pmi_version", "1", "pmi_subversion", "1"};
    check_round_trip("init", 2, init);
    check_round_trip("barrier_in", 0, NULL);
    const char *put[] = {"kvsname", "tern-12-ab", "key", "addr-0", "value", "0a1b2c3d"};
    check_round_trip("put", 3, put);
    const char *abrt[] = {"exitcode", "3", "message", "rank 1 gave up: \\ back slash"};
    check_round_trip("abort", 2, abrt);
    const char *odd[] = {"key", "a/b-c_d", "value", "x=y"};
    check_round_trip("put", 2, odd);
}

static void test_exact_format(void)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "put");
    tern_pmi_line_add(&line, "kvsname", "k");
    tern_pmi_line_add(&line, "key", "a");
    tern_pmi_line_add_int(&line, "value", -42);
    CHECK(tern_pmi_line_end(&line) == TERN_OK);
    CHECK(strcmp(line.buf, "cmd=put kvsname=k key=a value=-42\n") == 0);
    tern_pmi_line_free(&line);

    /* Spaces and backslashes are escaped, control characters become spaces. */
    tern_pmi_line_begin(&line, "abort");
    tern_pmi_line_add(&line, "message", "a b\\c\nd");
    CHECK(tern_pmi_line_end(&line) == TERN_OK);
    CHECK(strcmp(line.buf, "cmd=abort message=a\\ b\\\\c\\ d\n") == 0);
    tern_pmi_line_free(&line);
}

static void test_parse_server_lines(void)
{
    char l1[] = "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n";
    tern_pmi_msg_t msg;
    int v = -1;
    CHECK(tern_pmi_wire_parse(l1, &msg) == TERN_OK);
    CHECK(strcmp(msg.cmd, "response_to_init") == 0);
    CHECK(tern_pmi_msg_rc(&msg) == 0);
    CHECK(tern_pmi_msg_get_int(&msg, "pmi_version", &v) == TERN_OK && v == 1);
    CHECK(tern_pmi_msg_get_int(&msg, "nothere", &v) == TERN_ERR_NOT_FOUND);

    char l2[] = "cmd=get_result rc=-1 msg=key_x_not_found";
    CHECK(tern_pmi_wire_parse(l2, &msg) == TERN_OK);
    CHECK(tern_pmi_msg_rc(&msg) == -1);
    CHECK(strcmp(tern_pmi_msg_get(&msg, "msg"), "key_x_not_found") == 0);

    /* Extra spaces and bare keys are accepted. */
    char l3[] = "cmd=barrier_out   flag  x=1 \n";
    CHECK(tern_pmi_wire_parse(l3, &msg) == TERN_OK);
    CHECK(strcmp(msg.cmd, "barrier_out") == 0);
    CHECK(msg.n_fields == 2);
    CHECK(tern_pmi_msg_get(&msg, "flag") && *tern_pmi_msg_get(&msg, "flag") == '\0');

    /* An empty value reads back (found by fuzz_pmi_wire: the formatter
     * wrote "key=" for one, which the parser refused). */
    tern_pmi_line_t empty;
    tern_pmi_line_begin(&empty, "put");
    tern_pmi_line_add(&empty, "key", "");
    tern_pmi_line_add(&empty, "value", "v");
    CHECK(tern_pmi_line_end(&empty) == TERN_OK);
    CHECK(strcmp(empty.buf, "cmd=put key= value=v\n") == 0);
    CHECK(tern_pmi_wire_parse(empty.buf, &msg) == TERN_OK);
    CHECK(msg.n_fields == 2 && strcmp(tern_pmi_msg_get(&msg, "key"), "") == 0);
    CHECK(strcmp(tern_pmi_msg_get(&msg, "value"), "v") == 0);
    tern_pmi_line_free(&empty);

    /* A command is escaped like a value (found by fuzz_pmi_wire: "a b"
     * was written raw and read back as command "a" and a bare key "b"). */
    tern_pmi_line_t spaced;
    tern_pmi_line_begin(&spaced, "a b");
    CHECK(tern_pmi_line_end(&spaced) == TERN_OK);
    CHECK(tern_pmi_wire_parse(spaced.buf, &msg) == TERN_OK);
    CHECK(strcmp(msg.cmd, "a b") == 0 && msg.n_fields == 0);
    tern_pmi_line_free(&spaced);

    char l4[] = "cmd=x n=12z";
    CHECK(tern_pmi_wire_parse(l4, &msg) == TERN_OK);
    CHECK(tern_pmi_msg_get_int(&msg, "n", &v) == TERN_ERR_ARG);
    CHECK(tern_pmi_msg_rc(&msg) == 0);
}

static void test_malformed(void)
{
    const char *bad[] = {
        "",                      /* empty */
        "put key=a",             /* no cmd= first */
        "cmd=",                  /* empty command */
        "cmd=put ke!y=a",        /* bad key character */
        "cmd=put =a",            /* empty key */
        "cmd=put key=a\ncmd=x",  /* two lines */
        "key=a cmd=put",         /* cmd not first */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *copy = strdup(bad[i]);
        tern_pmi_msg_t msg;
        tern_status_t st = tern_pmi_wire_parse(copy, &msg);
        if (st != TERN_ERR_ARG)
            fprintf(stderr, "accepted malformed line %zu: \"%s\"\n", i, bad[i]);
        CHECK(st == TERN_ERR_ARG);
        free(copy);
    }
    /* Too many fields. */
    char many[4096] = "cmd=x";
    for (int i = 0; i < TERN_PMI_WIRE_MAX_FIELDS + 1; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), " k%d=v", i);
    tern_pmi_msg_t msg;
    CHECK(tern_pmi_wire_parse(many, &msg) == TERN_ERR_ARG);
}

static void test_long_values(void)
{
    for (size_t len = 1000; len <= 1000000; len *= 10) {
        char *value = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
            value[i] = "0123456789abcdef"[(i * 7) % 16];
        value[len] = '\0';
        const char *kv[] = {"key", "big", "value", value};
        check_round_trip("put", 2, kv);
        free(value);
    }
}

static void test_reader(void)
{
    tern_pmi_reader_t r;
    tern_pmi_reader_init(&r);
    CHECK(tern_pmi_reader_next(&r) == NULL);
    CHECK(tern_pmi_reader_push(&r, "cmd=a x=1\ncmd=b", 15) == TERN_OK);
    char *l = tern_pmi_reader_next(&r);
    CHECK(l && strcmp(l, "cmd=a x=1") == 0);
    CHECK(tern_pmi_reader_next(&r) == NULL); /* partial line stays */
    CHECK(tern_pmi_reader_push(&r, " y=2\n", 5) == TERN_OK);
    l = tern_pmi_reader_next(&r);
    CHECK(l && strcmp(l, "cmd=b y=2") == 0);
    CHECK(tern_pmi_reader_next(&r) == NULL);

    /* A long line arriving in small pieces. */
    size_t len = 200000;
    char *big = malloc(len + 2);
    memset(big, 'z', len);
    big[len] = '\n';
    for (size_t off = 0; off <= len; off += 777) {
        size_t m = len + 1 - off < 777 ? len + 1 - off : 777;
        CHECK(tern_pmi_reader_push(&r, big + off, m) == TERN_OK);
        if (off + m <= len)
            CHECK(tern_pmi_reader_next(&r) == NULL);
    }
    l = tern_pmi_reader_next(&r);
    CHECK(l && strlen(l) == len);
    free(big);
    tern_pmi_reader_free(&r);
}

/* PMI-2: exact bytes, ";;" escapes, split arrival, malformed input. */
static void test_pmi2(void)
{
    tern_pmi_line_t line;
    tern_pmi2_line_begin(&line, "kvs-put");
    tern_pmi2_line_add(&line, "key", "a;b");
    tern_pmi2_line_add_int(&line, "n", -7);
    CHECK(tern_pmi2_line_end(&line) == TERN_OK);
    const char *want = "26    cmd=kvs-put;key=a;;b;n=-7;";
    CHECK(line.len == strlen(want) && memcmp(line.buf, want, line.len) == 0);

    /* A ';' in the command is doubled like one in a value (before, "a;b"
     * was written raw and read back as command "a" and a malformed key). */
    tern_pmi_line_t semi;
    tern_pmi2_line_begin(&semi, "a;b");
    CHECK(tern_pmi2_line_end(&semi) == TERN_OK);
    tern_pmi_msg_t semi_msg;
    CHECK(tern_pmi2_wire_parse(semi.buf + TERN_PMI2_HEADER_LEN, semi.len - TERN_PMI2_HEADER_LEN,
                               &semi_msg) == TERN_OK);
    CHECK(strcmp(semi_msg.cmd, "a;b") == 0 && semi_msg.n_fields == 0);
    tern_pmi_line_free(&semi);

    /* A NUL in a key is malformed (it was read as an empty key). */
    char nul_key[] = "cmd=put;\0x=1;";
    CHECK(tern_pmi2_wire_parse(nul_key, sizeof nul_key - 1, &semi_msg) == TERN_ERR_ARG);
    char nul_key2[] = "cmd=put;a\0b=1;";
    CHECK(tern_pmi2_wire_parse(nul_key2, sizeof nul_key2 - 1, &semi_msg) == TERN_ERR_ARG);

    /* Two messages, the second split in three pieces. */
    tern_pmi_reader_t r;
    tern_pmi_reader_init(&r);
    size_t len;
    tern_status_t st;
    CHECK(tern_pmi_reader_push(&r, line.buf, line.len) == TERN_OK);
    CHECK(tern_pmi_reader_push(&r, "30    cmd=x-response;rc=0;v=1;;2", 32) == TERN_OK);
    char *body = tern_pmi2_reader_next(&r, &len, &st);
    CHECK(st == TERN_OK && body && len == 26);
    tern_pmi_msg_t msg;
    CHECK(body && tern_pmi2_wire_parse(body, len, &msg) == TERN_OK);
    CHECK(strcmp(msg.cmd, "kvs-put") == 0 && msg.n_fields == 2);
    CHECK(tern_pmi_msg_get(&msg, "key") && strcmp(tern_pmi_msg_get(&msg, "key"), "a;b") == 0);
    int n = 0;
    CHECK(tern_pmi_msg_get_int(&msg, "n", &n) == TERN_OK && n == -7);
    CHECK(tern_pmi2_reader_next(&r, &len, &st) == NULL && st == TERN_OK);
    CHECK(tern_pmi_reader_push(&r, ";x", 2) == TERN_OK);
    CHECK(tern_pmi2_reader_next(&r, &len, &st) == NULL && st == TERN_OK);
    CHECK(tern_pmi_reader_push(&r, "=;", 2) == TERN_OK);
    body = tern_pmi2_reader_next(&r, &len, &st);
    CHECK(body && len == 30 && tern_pmi2_wire_parse(body, len, &msg) == TERN_OK);
    CHECK(strcmp(msg.cmd, "x-response") == 0 && tern_pmi_msg_rc(&msg) == 0);
    CHECK(tern_pmi_msg_get(&msg, "v") && strcmp(tern_pmi_msg_get(&msg, "v"), "1;2") == 0);
    CHECK(tern_pmi_msg_get(&msg, "x") && strcmp(tern_pmi_msg_get(&msg, "x"), "") == 0);
    /* A last field without its ';' is accepted. */
    CHECK(tern_pmi_reader_push(&r, "11    cmd=abc;k=v", 17) == TERN_OK);
    body = tern_pmi2_reader_next(&r, &len, &st);
    CHECK(body && tern_pmi2_wire_parse(body, len, &msg) == TERN_OK &&
          strcmp(tern_pmi_msg_get(&msg, "k"), "v") == 0);
    /* A header that is not a number. */
    CHECK(tern_pmi_reader_push(&r, "abc   cmd=x;", 12) == TERN_OK);
    CHECK(tern_pmi2_reader_next(&r, &len, &st) == NULL && st == TERN_ERR_ARG);
    tern_pmi_reader_free(&r);
    tern_pmi_line_free(&line);

    const char *bad[] = {"cm=x;", "cmd=x;novalue;", "cmd=x;=v;", "cmd=;", "cmd=x;k y=1;"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char buf[64];
        strcpy(buf, bad[i]);
        CHECK(tern_pmi2_wire_parse(buf, strlen(buf), &msg) == TERN_ERR_ARG);
    }
}

static void check_mapping(const char *text, int size, const int *want)
{
    int got[64];
    CHECK(tern_pmi_mapping_parse(text, size, got) == TERN_OK);
    CHECK(memcmp(got, want, (size_t)size * sizeof *got) == 0);
    /* Formatting gives back the same placement. */
    char buf[256];
    int again[64];
    CHECK(tern_pmi_mapping_format(want, size, buf, sizeof buf) == TERN_OK);
    CHECK(tern_pmi_mapping_parse(buf, size, again) == TERN_OK);
    CHECK(memcmp(again, want, (size_t)size * sizeof *again) == 0);
}

static void test_mapping(void)
{
    check_mapping("(vector,(0,1,4))", 4, (const int[]){0, 0, 0, 0});
    check_mapping("(vector,(0,2,2))", 4, (const int[]){0, 0, 1, 1});
    /* Round robin: the vector repeats. */
    check_mapping("(vector,(0,2,1))", 5, (const int[]){0, 1, 0, 1, 0});
    check_mapping("(vector, (0,1,3), (1,2,1))", 5, (const int[]){0, 0, 0, 1, 2});
    char buf[64];
    CHECK(tern_pmi_mapping_format((const int[]){0, 0, 1, 1, 2, 2}, 6, buf, sizeof buf) == TERN_OK);
    CHECK(strcmp(buf, "(vector,(0,3,2))") == 0);
    CHECK(tern_pmi_mapping_format((const int[]){0, 0, 1, 1}, 4, buf, 10) == TERN_ERR_TRUNCATE);
    int got[8];
    const char *bad[] = {"", "(vector)", "(vector,(0,1,0))", "(vector,(0,1))", "(vec,(0,1,1))",
                         "(vector,(0,1,1)) x", "(vector,(0,-1,1))"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(tern_pmi_mapping_parse(bad[i], 4, got) == TERN_ERR_ARG);
}

int main(void)
{
    test_pmi2();
    test_mapping();
    test_round_trips();
    test_exact_format();
    test_parse_server_lines();
    test_malformed();
    test_long_values();
    test_reader();
    return tern_check_result("pmi_wire_test");
}
