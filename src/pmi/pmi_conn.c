/* The socket to a wire process manager; see pmi_flavour.h. */
#include "pmi/pmi_flavour.h"
#include "base/log.h"

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct {
    int fd;
    int from_port; /* we opened it, so we close it */
    tern_pmi_reader_t in;
} conn = {.fd = -1};

tern_status_t tern_pmi_env_int(const char *name, int *value_p)
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
static tern_status_t connect_port(const char *hostport)
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
    conn.fd = fd;
    conn.from_port = 1;
    return TERN_OK;
}

tern_status_t tern_pmi_conn_open(void)
{
    if (conn.fd >= 0)
        return TERN_OK;
    const char *fd_env = getenv("PMI_FD");
    const char *port_env = getenv("PMI_PORT");
    tern_pmi_reader_init(&conn.in);
    if (fd_env && *fd_env) {
        int fd;
        tern_status_t st = tern_pmi_env_int("PMI_FD", &fd);
        if (st != TERN_OK)
            return TERN_ERR_PMI;
        conn.fd = fd;
        conn.from_port = 0;
        return TERN_OK;
    }
    if (port_env && *port_env)
        return connect_port(port_env);
    tern_error("PMI: neither PMI_FD nor PMI_PORT is set");
    return TERN_ERR_PMI;
}

int tern_pmi_conn_is_port(void) { return conn.from_port; }

void tern_pmi_conn_close(void)
{
    if (conn.fd >= 0) {
        /* Closing tells the server we are done; it reports a later exit
         * code, not a lost connection. */
        shutdown(conn.fd, SHUT_RDWR);
        close(conn.fd);
    }
    conn.fd = -1;
    conn.from_port = 0;
    tern_pmi_reader_free(&conn.in);
}

tern_status_t tern_pmi_conn_send(const char *buf, size_t len)
{
    tern_debug("pmi send: %.*s", (int)len, buf);
    if (tern_pmi_wire_write_all(conn.fd, buf, len) != TERN_OK) {
        tern_error("PMI: cannot write to the process manager: %s", strerror(errno));
        return TERN_ERR_PMI;
    }
    return TERN_OK;
}

/* Reads more bytes; TERN_ERR_PMI (logged) at EOF or error. */
static tern_status_t fill(void)
{
    for (;;) {
        ssize_t n = 0;
        tern_status_t st = tern_pmi_reader_fill(&conn.in, conn.fd, &n);
        if (st == TERN_ERR_AGAIN)
            continue;
        if (st != TERN_OK || n == 0) {
            tern_error("PMI: connection to the process manager lost (%s)",
                       n == 0 ? "end of file" : strerror(errno));
            return TERN_ERR_PMI;
        }
        return TERN_OK;
    }
}

tern_status_t tern_pmi_conn_recv1(tern_pmi_msg_t *msg_p)
{
    for (;;) {
        char *line = tern_pmi_reader_next(&conn.in);
        if (line) {
            tern_debug("pmi recv: %s", line);
            if (tern_pmi_wire_parse(line, msg_p) != TERN_OK) {
                tern_error("PMI: malformed reply from the process manager");
                return TERN_ERR_PMI;
            }
            return TERN_OK;
        }
        if (fill() != TERN_OK)
            return TERN_ERR_PMI;
    }
}

tern_status_t tern_pmi_conn_recv2(tern_pmi_msg_t *msg_p)
{
    for (;;) {
        size_t len;
        tern_status_t st;
        char *body = tern_pmi2_reader_next(&conn.in, &len, &st);
        if (st != TERN_OK) {
            tern_error("PMI: malformed PMI-2 header from the process manager");
            return TERN_ERR_PMI;
        }
        if (body) {
            tern_debug("pmi recv: %s", body);
            if (tern_pmi2_wire_parse(body, len, msg_p) != TERN_OK) {
                tern_error("PMI: malformed PMI-2 reply from the process manager");
                return TERN_ERR_PMI;
            }
            return TERN_OK;
        }
        if (fill() != TERN_OK)
            return TERN_ERR_PMI;
    }
}

tern_status_t tern_pmi_conn_send_line(tern_pmi_line_t *line, tern_pmi_wire_t wire)
{
    tern_status_t st = wire == TERN_PMI_WIRE2 ? tern_pmi2_line_end(line) : tern_pmi_line_end(line);
    if (st == TERN_OK)
        st = tern_pmi_conn_send(line->buf, line->len);
    tern_pmi_line_free(line);
    return st == TERN_OK ? TERN_OK : TERN_ERR_PMI;
}

tern_status_t tern_pmi_conn_call(tern_pmi_line_t *line, tern_pmi_wire_t wire,
                                 tern_pmi_msg_t *msg_p)
{
    tern_status_t st = tern_pmi_conn_send_line(line, wire);
    if (st != TERN_OK)
        return st;
    return wire == TERN_PMI_WIRE2 ? tern_pmi_conn_recv2(msg_p) : tern_pmi_conn_recv1(msg_p);
}
