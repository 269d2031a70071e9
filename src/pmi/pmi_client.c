/* PMI client (pmi.h): PMI-1 wire protocol over PMI_FD or PMI_PORT, or a
 * singleton with a local key-value table.
 *
 * Long values: a process manager accepts values up to value_max bytes
 * (Hydra: 1024). A longer value is stored as a header "^chunks:<n>" under
 * the key plus n pieces under "<key>-<i>"; tern_pmi_get reassembles them, so
 * callers need not care. Hence values must not start with '^', and keys
 * must leave room for the "-<i>" suffix within key_max. */
#include "pmi/pmi.h"
#include "pmi/pmi_wire.h"
#include "base/config.h"
#include "base/log.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK_HEADER "^chunks:"

typedef enum { MODE_NONE, MODE_SINGLETON, MODE_WIRE } client_mode_t;

typedef struct {
    char *key;
    char *value;
} local_kv_t;

static struct {
    client_mode_t mode;
    int fd;
    tern_pmi_reader_t in;
    tern_pmi_info_t info;
    /* Singleton key-value table. */
    local_kv_t *kv;
    size_t n_kv;
} pmi = {.mode = MODE_NONE, .fd = -1};

/* --- wire transport ------------------------------------------------------ */

/* Reads the next line; msg_p points into the reader's buffer. */
static tern_status_t client_recv(tern_pmi_msg_t *msg_p)
{
    for (;;) {
        char *line = tern_pmi_reader_next(&pmi.in);
        if (line) {
            tern_debug("pmi recv: %s", line);
            if (tern_pmi_wire_parse(line, msg_p) != TERN_OK) {
                tern_error("PMI: malformed reply from the process manager");
                return TERN_ERR_PMI;
            }
            return TERN_OK;
        }
        ssize_t n = 0;
        tern_status_t st = tern_pmi_reader_fill(&pmi.in, pmi.fd, &n);
        if (st == TERN_ERR_AGAIN)
            continue;
        if (st != TERN_OK || n == 0) {
            tern_error("PMI: connection to the process manager lost (%s)",
                       n == 0 ? "end of file" : strerror(errno));
            return TERN_ERR_PMI;
        }
    }
}

static tern_status_t client_send(tern_pmi_line_t *line)
{
    tern_status_t st = tern_pmi_line_end(line);
    if (st == TERN_OK) {
        tern_debug("pmi send: %.*s", (int)line->len - 1, line->buf);
        st = tern_pmi_wire_write_all(pmi.fd, line->buf, line->len);
        if (st != TERN_OK)
            tern_error("PMI: cannot write to the process manager: %s", strerror(errno));
    }
    tern_pmi_line_free(line);
    return st == TERN_OK ? TERN_OK : TERN_ERR_PMI;
}

/* Sends a query and waits for the reply named `expect`; fails on rc != 0. */
static tern_status_t client_call(tern_pmi_line_t *line, const char *expect, tern_pmi_msg_t *msg_p)
{
    tern_status_t st = client_send(line);
    if (st != TERN_OK)
        return st;
    st = client_recv(msg_p);
    if (st != TERN_OK)
        return st;
    if (strcmp(msg_p->cmd, expect) != 0) {
        tern_error("PMI: expected %s from the process manager, got %s", expect, msg_p->cmd);
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

static tern_status_t simple_call(const char *cmd, const char *expect, tern_pmi_msg_t *msg_p)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, cmd);
    return client_call(&line, expect, msg_p);
}

static tern_status_t env_int(const char *name, int *value_p)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return TERN_ERR_NOT_FOUND;
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > 1 << 30) {
        tern_error("PMI: %s=%s is not a valid number", name, v);
        return TERN_ERR_PMI;
    }
    *value_p = (int)x;
    return TERN_OK;
}

/* PMI_PORT=host:port: connect over TCP. */
static tern_status_t client_connect_port(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host) {
        tern_error("PMI: PMI_PORT=%s is not host:port", hostport);
        return TERN_ERR_PMI;
    }
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    int rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        tern_error("PMI: cannot resolve PMI_PORT=%s: %s", hostport, gai_strerror(rc));
        return TERN_ERR_PMI;
    }
    int fd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        tern_error("PMI: cannot connect to PMI_PORT=%s", hostport);
        return TERN_ERR_PMI;
    }
    pmi.fd = fd;
    return TERN_OK;
}

/* With PMI_PORT the rank comes from the server: "initack pmiid=<PMI_ID>".
 * Newer servers answer with rank and size in the initack; older ones send
 * "set size=", "set rank=", "set debug=" lines after it. */
static tern_status_t client_initack(void)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    int have_rank = 0, have_size = 0;

    tern_pmi_line_begin(&line, "initack");
    tern_pmi_line_add(&line, "pmiid", getenv("PMI_ID"));
    tern_status_t st = client_call(&line, "initack", &msg);
    if (st != TERN_OK)
        return st;
    have_rank = tern_pmi_msg_get_int(&msg, "rank", &pmi.info.rank) == TERN_OK;
    have_size = tern_pmi_msg_get_int(&msg, "size", &pmi.info.size) == TERN_OK;
    while (!(have_rank && have_size)) {
        if ((st = client_recv(&msg)) != TERN_OK)
            return st;
        if (strcmp(msg.cmd, "set") != 0)
            return TERN_ERR_PMI;
        if (tern_pmi_msg_get_int(&msg, "rank", &pmi.info.rank) == TERN_OK)
            have_rank = 1;
        if (tern_pmi_msg_get_int(&msg, "size", &pmi.info.size) == TERN_OK)
            have_size = 1;
    }
    /* Old servers end the sequence with "set debug=". */
    if (tern_pmi_msg_get(&msg, "debug") == NULL && strcmp(msg.cmd, "set") == 0) {
        if ((st = client_recv(&msg)) != TERN_OK)
            return st;
    }
    return TERN_OK;
}

static tern_status_t client_init_wire(void)
{
    tern_pmi_msg_t msg;
    tern_status_t st;
    const char *fd_env = getenv("PMI_FD");
    const char *port_env = getenv("PMI_PORT");

    tern_pmi_reader_init(&pmi.in);
    if (fd_env && *fd_env) {
        int fd;
        if ((st = env_int("PMI_FD", &fd)) != TERN_OK)
            return st;
        pmi.fd = fd;
        if ((st = env_int("PMI_RANK", &pmi.info.rank)) != TERN_OK ||
            (st = env_int("PMI_SIZE", &pmi.info.size)) != TERN_OK) {
            tern_error("PMI: PMI_FD is set but PMI_RANK or PMI_SIZE is not");
            return TERN_ERR_PMI;
        }
    } else if (port_env && *port_env) {
        if ((st = client_connect_port(port_env)) != TERN_OK)
            return st;
        if (getenv("PMI_ID") && (st = client_initack()) != TERN_OK)
            return st;
        if (!getenv("PMI_ID") && ((st = env_int("PMI_RANK", &pmi.info.rank)) != TERN_OK ||
                                  (st = env_int("PMI_SIZE", &pmi.info.size)) != TERN_OK)) {
            tern_error("PMI: PMI_PORT is set but neither PMI_ID nor PMI_RANK/PMI_SIZE");
            return TERN_ERR_PMI;
        }
    } else {
        tern_error("PMI: TERN_PMI=pmi1 but neither PMI_FD nor PMI_PORT is set");
        return TERN_ERR_PMI;
    }

    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "init");
    tern_pmi_line_add_int(&line, "pmi_version", 1);
    tern_pmi_line_add_int(&line, "pmi_subversion", 1);
    if ((st = client_call(&line, "response_to_init", &msg)) != TERN_OK)
        return st;
    if (tern_pmi_msg_rc(&msg) != 0) {
        tern_error("PMI: the process manager refused PMI version 1.1");
        return TERN_ERR_PMI;
    }

    int kvsname_max = 256, key_max = 64, value_max = 1024;
    if ((st = simple_call("get_maxes", "maxes", &msg)) != TERN_OK)
        return st;
    tern_pmi_msg_get_int(&msg, "kvsname_max", &kvsname_max);
    tern_pmi_msg_get_int(&msg, "keylen_max", &key_max);
    tern_pmi_msg_get_int(&msg, "vallen_max", &value_max);
    pmi.info.key_max = key_max > 0 ? (size_t)key_max : 64;
    pmi.info.value_max = value_max > 16 ? (size_t)value_max : 1024;
    (void)kvsname_max;

    if ((st = simple_call("get_appnum", "appnum", &msg)) != TERN_OK)
        return st;
    pmi.info.appnum = 0;
    tern_pmi_msg_get_int(&msg, "appnum", &pmi.info.appnum);

    if ((st = simple_call("get_universe_size", "universe_size", &msg)) != TERN_OK)
        return st;
    pmi.info.universe_size = pmi.info.size;
    tern_pmi_msg_get_int(&msg, "size", &pmi.info.universe_size);

    if ((st = simple_call("get_my_kvsname", "my_kvsname", &msg)) != TERN_OK)
        return st;
    const char *kvsname = tern_pmi_msg_get(&msg, "kvsname");
    if (!kvsname || strlen(kvsname) >= sizeof pmi.info.kvsname) {
        tern_error("PMI: the process manager gave no usable kvsname");
        return TERN_ERR_PMI;
    }
    strcpy(pmi.info.kvsname, kvsname);
    if (pmi.info.rank < 0 || pmi.info.rank >= pmi.info.size) {
        tern_error("PMI: rank %d is outside a job of size %d", pmi.info.rank, pmi.info.size);
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

static tern_status_t wire_put(const char *key, const char *value)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "put");
    tern_pmi_line_add(&line, "kvsname", pmi.info.kvsname);
    tern_pmi_line_add(&line, "key", key);
    tern_pmi_line_add(&line, "value", value);
    tern_status_t st = client_call(&line, "put_result", &msg);
    if (st != TERN_OK)
        return st;
    if (tern_pmi_msg_rc(&msg) != 0) {
        const char *why = tern_pmi_msg_get(&msg, "msg");
        tern_error("PMI: put of key %s failed: %s", key, why ? why : "no reason given");
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

/* Copies the value into value[value_len]; TERN_ERR_NOT_FOUND if absent. */
static tern_status_t wire_get(const char *key, char *value, size_t value_len)
{
    tern_pmi_msg_t msg;
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "get");
    tern_pmi_line_add(&line, "kvsname", pmi.info.kvsname);
    tern_pmi_line_add(&line, "key", key);
    tern_status_t st = client_call(&line, "get_result", &msg);
    if (st != TERN_OK)
        return st;
    const char *found = tern_pmi_msg_get(&msg, "found");
    const char *v = tern_pmi_msg_get(&msg, "value");
    if (tern_pmi_msg_rc(&msg) != 0 || !v || (found && strcasecmp(found, "true") != 0))
        return TERN_ERR_NOT_FOUND;
    if (strlen(v) >= value_len)
        return TERN_ERR_TRUNCATE;
    strcpy(value, v);
    return TERN_OK;
}

/* --- singleton table ------------------------------------------------------ */

static tern_status_t local_put(const char *key, const char *value)
{
    for (size_t i = 0; i < pmi.n_kv; i++) {
        if (strcmp(pmi.kv[i].key, key) == 0) {
            char *v = strdup(value);
            if (!v)
                return TERN_ERR_NOMEM;
            free(pmi.kv[i].value);
            pmi.kv[i].value = v;
            return TERN_OK;
        }
    }
    local_kv_t *kv = realloc(pmi.kv, (pmi.n_kv + 1) * sizeof *kv);
    if (!kv)
        return TERN_ERR_NOMEM;
    pmi.kv = kv;
    kv[pmi.n_kv].key = strdup(key);
    kv[pmi.n_kv].value = strdup(value);
    if (!kv[pmi.n_kv].key || !kv[pmi.n_kv].value) {
        free(kv[pmi.n_kv].key);
        free(kv[pmi.n_kv].value);
        return TERN_ERR_NOMEM;
    }
    pmi.n_kv++;
    return TERN_OK;
}

static tern_status_t local_get(const char *key, char *value, size_t value_len)
{
    for (size_t i = 0; i < pmi.n_kv; i++) {
        if (strcmp(pmi.kv[i].key, key) == 0) {
            if (strlen(pmi.kv[i].value) >= value_len)
                return TERN_ERR_TRUNCATE;
            strcpy(value, pmi.kv[i].value);
            return TERN_OK;
        }
    }
    return TERN_ERR_NOT_FOUND;
}

static tern_status_t client_init_singleton(void)
{
    pmi.info.rank = 0;
    pmi.info.size = 1;
    pmi.info.appnum = 0;
    pmi.info.universe_size = 1;
    pmi.info.singleton = 1;
    pmi.info.key_max = 256;
    pmi.info.value_max = 1 << 20;
    /* Unique per process, so shared resources named after it never clash. */
    snprintf(pmi.info.kvsname, sizeof pmi.info.kvsname, "tern-single-%ld", (long)getpid());
    return TERN_OK;
}

/* --- pmi.h ----------------------------------------------------------------- */

tern_status_t tern_pmi_init(tern_pmi_info_t *info_p)
{
    if (pmi.mode != MODE_NONE) {
        *info_p = pmi.info;
        return TERN_OK;
    }
    const char *knob = tern_config_str("TERN_PMI");
    int have_env = (getenv("PMI_FD") && *getenv("PMI_FD")) ||
                   (getenv("PMI_PORT") && *getenv("PMI_PORT"));
    client_mode_t mode;
    if (strcmp(knob, "singleton") == 0) {
        mode = MODE_SINGLETON;
    } else if (strcmp(knob, "pmi1") == 0) {
        mode = MODE_WIRE;
    } else if (strcmp(knob, "auto") == 0) {
        mode = have_env ? MODE_WIRE : MODE_SINGLETON;
    } else {
        tern_error("TERN_PMI=%s: expected auto, pmi1 or singleton", knob);
        return TERN_ERR_ARG;
    }
    memset(&pmi.info, 0, sizeof pmi.info);
    tern_status_t st = mode == MODE_WIRE ? client_init_wire() : client_init_singleton();
    if (st != TERN_OK) {
        if (pmi.fd >= 0 && !getenv("PMI_FD"))
            close(pmi.fd);
        pmi.fd = -1;
        tern_pmi_reader_free(&pmi.in);
        return st;
    }
    pmi.mode = mode;
    *info_p = pmi.info;
    return TERN_OK;
}

static tern_status_t raw_put(const char *key, const char *value)
{
    return pmi.mode == MODE_WIRE ? wire_put(key, value) : local_put(key, value);
}

static tern_status_t raw_get(const char *key, char *value, size_t value_len)
{
    return pmi.mode == MODE_WIRE ? wire_get(key, value, value_len) : local_get(key, value, value_len);
}

tern_status_t tern_pmi_put(const char *key, const char *value)
{
    if (pmi.mode == MODE_NONE)
        return TERN_ERR_PMI;
    size_t len = strlen(value);
    size_t piece = pmi.info.value_max - 1;
    if (value[0] == '^' || strchr(value, ' ') || strchr(value, '=')) {
        tern_error("PMI: value for key %s must be printable without '^' at the start, "
                   "spaces or '='", key);
        return TERN_ERR_ARG;
    }
    if (strlen(key) + 12 > pmi.info.key_max) {
        tern_error("PMI: key %s is longer than the process manager allows (%zu)", key,
                   pmi.info.key_max - 12);
        return TERN_ERR_ARG;
    }
    if (len <= piece)
        return raw_put(key, value);

    /* Too long for one value: store pieces, then a header naming them. */
    size_t n = (len + piece - 1) / piece;
    char sub[512], *chunk = malloc(piece + 1);
    if (!chunk)
        return TERN_ERR_NOMEM;
    tern_status_t st = TERN_OK;
    for (size_t i = 0; i < n && st == TERN_OK; i++) {
        size_t off = i * piece, m = len - off < piece ? len - off : piece;
        memcpy(chunk, value + off, m);
        chunk[m] = '\0';
        snprintf(sub, sizeof sub, "%s-%zu", key, i);
        st = raw_put(sub, chunk);
    }
    free(chunk);
    if (st != TERN_OK)
        return st;
    char header[64];
    snprintf(header, sizeof header, CHUNK_HEADER "%zu:%zu", n, len);
    return raw_put(key, header);
}

tern_status_t tern_pmi_get(const char *key, char *value, size_t value_len)
{
    if (pmi.mode == MODE_NONE)
        return TERN_ERR_PMI;
    size_t buf_len = pmi.info.value_max + 1;
    char *buf = malloc(buf_len);
    if (!buf)
        return TERN_ERR_NOMEM;
    tern_status_t st = raw_get(key, buf, buf_len);
    if (st != TERN_OK)
        goto out;
    size_t n, len;
    if (strncmp(buf, CHUNK_HEADER, strlen(CHUNK_HEADER)) != 0 ||
        sscanf(buf + strlen(CHUNK_HEADER), "%zu:%zu", &n, &len) != 2) {
        if (strlen(buf) >= value_len)
            st = TERN_ERR_TRUNCATE;
        else
            strcpy(value, buf);
        goto out;
    }
    if (len >= value_len) {
        st = TERN_ERR_TRUNCATE;
        goto out;
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s-%zu", key, i);
        if ((st = raw_get(sub, value + off, value_len - off)) != TERN_OK)
            goto out;
        off += strlen(value + off);
    }
    if (off != len) {
        tern_error("PMI: value of key %s came back with %zu bytes, expected %zu", key, off, len);
        st = TERN_ERR_PMI;
    }
out:
    free(buf);
    return st;
}

tern_status_t tern_pmi_fence(void)
{
    if (pmi.mode == MODE_NONE)
        return TERN_ERR_PMI;
    if (pmi.mode == MODE_SINGLETON)
        return TERN_OK;
    tern_pmi_msg_t msg;
    return simple_call("barrier_in", "barrier_out", &msg);
}

tern_status_t tern_pmi_finalize(void)
{
    if (pmi.mode == MODE_NONE)
        return TERN_OK;
    tern_status_t st = TERN_OK;
    if (pmi.mode == MODE_WIRE) {
        tern_pmi_msg_t msg;
        st = simple_call("finalize", "finalize_ack", &msg);
        /* Closing tells the server we are done; it reports a later exit
         * code, not a lost connection. */
        shutdown(pmi.fd, SHUT_RDWR);
        close(pmi.fd);
        pmi.fd = -1;
        tern_pmi_reader_free(&pmi.in);
    }
    for (size_t i = 0; i < pmi.n_kv; i++) {
        free(pmi.kv[i].key);
        free(pmi.kv[i].value);
    }
    free(pmi.kv);
    pmi.kv = NULL;
    pmi.n_kv = 0;
    pmi.mode = MODE_NONE;
    return st;
}

void tern_pmi_abort(int code, const char *msg)
{
    if (!msg)
        msg = "";
    if (pmi.mode == MODE_WIRE) {
        /* Tern's mpiexec (it sets TERN_JOBID) prints the message and ends
         * the job; other process managers may not print it. */
        if (!getenv("TERN_JOBID")) {
            fprintf(stderr, "tern[rank %d]: MPI_Abort with code %d%s%s\n", pmi.info.rank, code,
                    *msg ? ": " : "", msg);
            fflush(stderr);
        }
        tern_pmi_line_t line;
        tern_pmi_line_begin(&line, "abort");
        tern_pmi_line_add_int(&line, "exitcode", code);
        if (*msg)
            tern_pmi_line_add(&line, "message", msg);
        if (tern_pmi_line_end(&line) == TERN_OK)
            (void)tern_pmi_wire_write_all(pmi.fd, line.buf, line.len);
        tern_pmi_line_free(&line);
    } else {
        fprintf(stderr, "tern: MPI_Abort with code %d%s%s\n", code, *msg ? ": " : "", msg);
        fflush(stderr);
    }
    fflush(stdout);
    _exit(code);
}
