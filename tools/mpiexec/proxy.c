/* Proxy side of a multi-host job: this mpiexec runs one host's ranks and
 * serves their PMI locally; it talks to the root (root.c) over one TCP
 * connection, in PMI-1 lines:
 *   proxy -> root: hello host=I | put key value | fence | failed code=N
 *   root -> proxy: put key value (other hosts' puts) | release | terminate code=N
 * A fence goes up once all of this host's ranks entered the barrier; the
 * root answers every host once all hosts fenced. */
#include "mpiexec.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void send_line(mpiexec_job_t *job, tern_pmi_line_t *line)
{
    if (tern_pmi_line_end(line) == TERN_OK && job->upstream_fd >= 0)
        (void)tern_pmi_wire_write_all(job->upstream_fd, line->buf, line->len);
    tern_pmi_line_free(line);
}

/* The root is where our ssh session came from (SSH_CONNECTION's first
 * field) unless it named an address itself. */
tern_status_t mpiexec_proxy_connect(mpiexec_job_t *job)
{
    char host[256], port[32];
    const char *spec = job->opts->proxy_root;
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof host) {
        fprintf(stderr, "mpiexec proxy: bad root address '%s'\n", spec);
        return TERN_ERR_ARG;
    }
    snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
    snprintf(port, sizeof port, "%s", colon + 1);
    const char *ssh = getenv("SSH_CONNECTION");
    if (strcmp(host, "ssh") == 0) {
        if (!ssh || sscanf(ssh, "%255s", host) != 1)
            snprintf(host, sizeof host, "localhost");
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int err = getaddrinfo(host, port, &hints, &ai);
    if (err) {
        fprintf(stderr, "mpiexec proxy: cannot resolve the launch host %s: %s\n", host,
                gai_strerror(err));
        return TERN_ERR_IO;
    }
    int fd = -1;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        fprintf(stderr, "mpiexec proxy: cannot connect to the launch host %s port %s: %s\n",
                host, port, strerror(errno));
        return TERN_ERR_IO;
    }
    job->upstream_fd = fd;
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "hello");
    tern_pmi_line_add_int(&line, "host", job->opts->proxy_index);
    send_line(job, &line);
    return TERN_OK;
}

void mpiexec_proxy_fence(mpiexec_job_t *job)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "fence");
    send_line(job, &line);
}

void mpiexec_proxy_report_failure(mpiexec_job_t *job, int code)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "failed");
    tern_pmi_line_add_int(&line, "code", code);
    send_line(job, &line);
}

static void handle(mpiexec_job_t *job, const tern_pmi_msg_t *msg)
{
    if (strcmp(msg->cmd, "put") == 0) {
        const char *key = tern_pmi_msg_get(msg, "key");
        const char *value = tern_pmi_msg_get(msg, "value");
        if (key && value && mpiexec_pmi_store(job, key, value) != TERN_OK)
            mpiexec_job_fail(job, 1, "out of memory storing the job's keys");
    } else if (strcmp(msg->cmd, "release") == 0) {
        mpiexec_pmi_barrier_release(job);
    } else if (strcmp(msg->cmd, "terminate") == 0) {
        int code = 1;
        tern_pmi_msg_get_int(msg, "code", &code);
        mpiexec_job_stop(job, code);
    } else {
        fprintf(stderr, "mpiexec proxy: unknown message '%s' from the launch host\n", msg->cmd);
    }
}

void mpiexec_proxy_read(mpiexec_job_t *job)
{
    ssize_t n = 0;
    tern_status_t st = tern_pmi_reader_fill(&job->upstream_in, job->upstream_fd, &n);
    if (st == TERN_ERR_AGAIN)
        return;
    char *text;
    while ((text = tern_pmi_reader_next(&job->upstream_in)) != NULL) {
        tern_pmi_msg_t msg;
        if (tern_pmi_wire_parse(text, &msg) == TERN_OK)
            handle(job, &msg);
    }
    if (st != TERN_OK || n == 0) {
        close(job->upstream_fd);
        job->upstream_fd = -1;
        if (!job->failed)
            mpiexec_job_fail(job, 1, "lost the connection to mpiexec on the launch host");
    }
}
