/* Proxy side of a multi-host job: this mpiexec runs one host's ranks and
 * serves their PMI locally; it talks to the root (root.c) over one TCP
 * connection, in PMI-1 lines:
 *   proxy -> root: hello host=I proof=P | put key value | fence | failed code=N
 *   root -> proxy: put key value (other hosts' puts) | release | terminate code=N |
 *                  finish (to a proxy without ranks of the first job, started for
 *                  a spawn: end once its ranks have)
 * A spawned job's puts, fences and releases carry space=K (its number);
 * publish/unpublish/lookup_name go up as name op=CMD from=I service [port]
 * and come back as name_result from=I op=CMD rc [port|msg] (root_spawn.c);
 * the spawn messages themselves are described in root_spawn.c.
 * The connection starts with root -> proxy: challenge nonce=HEX, answered
 * by hello's proof=HEX (auth.c). Both directions are non-blocking with
 * bounded queues and line lengths (line_io.c).
 * A fence goes up once all of this host's ranks entered the barrier; the
 * root answers every host once all hosts fenced. */
#include "auth.h"
#include "mpiexec.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long a proxy waits for its secret, its connection and the root's
 * challenge. */
#define HANDSHAKE_S 60.0

void mpiexec_proxy_flush(mpiexec_job_t *job)
{
    if (job->upstream_fd >= 0 && mpiexec_outq_flush(&job->upstream_out, job->upstream_fd) != 0 &&
        !job->failed)
        mpiexec_job_fail(job, 1, "lost the connection to mpiexec on the launch host");
}

/* Queued, never written blocking: a root that stops reading cannot stop
 * this proxy from serving its ranks or obeying signals. */
void mpiexec_proxy_send(mpiexec_job_t *job, tern_pmi_line_t *line)
{
    if (tern_pmi_line_end(line) == TERN_OK && job->upstream_fd >= 0) {
        if (mpiexec_outq_push(&job->upstream_out, line->buf, line->len,
                              MPIEXEC_CTL_QUEUE_MAX) != 0) {
            close(job->upstream_fd);
            job->upstream_fd = -1;
            if (!job->failed)
                mpiexec_job_fail(job, 1, "mpiexec on the launch host left more than %d bytes "
                                         "unread (the control queue limit)",
                                 MPIEXEC_CTL_QUEUE_MAX);
        } else {
            mpiexec_proxy_flush(job);
        }
    }
    tern_pmi_line_free(line);
}

/* Connects without blocking past `until` or a signal. */
static int connect_by(const struct addrinfo *a, int signal_fd, double until, int *sig_p)
{
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0)
        return -1;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
        return fd;
    if (errno == EINPROGRESS) {
        int w = mpiexec_wait_fd(fd, POLLOUT, signal_fd, until);
        int err = 0;
        socklen_t len = sizeof err;
        if (w < -1)
            *sig_p = -w;
        if (w == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
            return fd;
        errno = w == 0 ? ETIMEDOUT : err ? err : errno;
    }
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* Reads the root's challenge: its nonce in hex, or NULL. */
static const char *read_challenge(mpiexec_job_t *job, double until, int *sig_p)
{
    for (;;) {
        char *text = tern_pmi_reader_next(&job->upstream_in);
        if (text) {
            tern_pmi_msg_t msg;
            if (strlen(text) > 256 || tern_pmi_wire_parse(text, &msg) != TERN_OK ||
                strcmp(msg.cmd, "challenge") != 0)
                return NULL;
            return tern_pmi_msg_get(&msg, "nonce");
        }
        if (job->upstream_in.len - job->upstream_in.start > 256)
            return NULL;
        int w = mpiexec_wait_fd(job->upstream_fd, POLLIN, job->signal_fd, until);
        if (w < -1)
            *sig_p = -w;
        if (w <= 0)
            return NULL;
        ssize_t n = 0;
        tern_status_t st = tern_pmi_reader_fill(&job->upstream_in, job->upstream_fd, &n);
        if (st != TERN_OK && st != TERN_ERR_AGAIN)
            return NULL;
        if (st == TERN_OK && n == 0)
            return NULL;
    }
}

/* A signal during the handshake ends this proxy at once: it has no
 * ranks yet. */
static tern_status_t signalled(int sig)
{
    fprintf(stderr, "mpiexec proxy: received signal %d (%s) while connecting\n", sig,
            strsignal(sig));
    return TERN_ERR_IO;
}

/* The root is where our ssh session came from (SSH_CONNECTION's first
 * field) unless it named an address itself. */
tern_status_t mpiexec_proxy_connect(mpiexec_job_t *job)
{
    char host[256], port[32];
    const char *spec = job->opts->proxy_root;
    /* The secret comes first, on our stdin, before anything may connect. */
    int got = mpiexec_auth_read_secret(0, job->secret, job->signal_fd,
                                       mpiexec_now() + HANDSHAKE_S);
    if (got < -1)
        return signalled(-got);
    if (got != 0) {
        fprintf(stderr, "mpiexec proxy: no job secret on stdin (the remote-start command must "
                        "pass stdin through)\n");
        return TERN_ERR_ARG;
    }
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
    int fd = -1, sig = 0;
    double until = mpiexec_now() + HANDSHAKE_S;
    for (struct addrinfo *a = ai; a && fd < 0 && !sig; a = a->ai_next)
        fd = connect_by(a, job->signal_fd, until, &sig);
    freeaddrinfo(ai);
    if (sig)
        return signalled(sig);
    if (fd < 0) {
        fprintf(stderr, "mpiexec proxy: cannot connect to the launch host %s port %s: %s\n",
                host, port, strerror(errno));
        return TERN_ERR_IO;
    }
    job->upstream_fd = fd;
    const char *nonce = read_challenge(job, until, &sig);
    if (sig)
        return signalled(sig);
    if (!nonce) {
        fprintf(stderr, "mpiexec proxy: the launch host %s port %s sent no valid challenge\n",
                host, port);
        return TERN_ERR_IO;
    }
    char proof[2 * MPIEXEC_SHA256_LEN + 1];
    mpiexec_auth_proof(job->secret, nonce, job->opts->proxy_index, proof);
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "hello");
    tern_pmi_line_add_int(&line, "host", job->opts->proxy_index);
    tern_pmi_line_add(&line, "proof", proof);
    mpiexec_proxy_send(job, &line);
    return TERN_OK;
}

void mpiexec_proxy_fence(mpiexec_job_t *job, int space)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "fence");
    if (space > 0)
        tern_pmi_line_add_int(&line, "space", space);
    mpiexec_proxy_send(job, &line);
}

void mpiexec_proxy_report_failure(mpiexec_job_t *job, int code)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "failed");
    tern_pmi_line_add_int(&line, "code", code);
    mpiexec_proxy_send(job, &line);
}

static void handle(mpiexec_job_t *job, const tern_pmi_msg_t *msg)
{
    int space = 0; /* a spawned job's puts and releases name it */
    tern_pmi_msg_get_int(msg, "space", &space);
    if (strcmp(msg->cmd, "put") == 0) {
        const char *key = tern_pmi_msg_get(msg, "key");
        const char *value = tern_pmi_msg_get(msg, "value");
        if (key && value && mpiexec_pmi_store(job, space, key, value) != TERN_OK)
            mpiexec_job_fail(job, 1, "cannot store a key of job %d (out of memory or no such "
                                     "job)", space);
    } else if (strcmp(msg->cmd, "release") == 0) {
        mpiexec_pmi_barrier_release(job, space);
    } else if (strcmp(msg->cmd, "name_result") == 0) {
        mpiexec_names_from_root(job, msg);
    } else if (strcmp(msg->cmd, "finish") == 0) {
        job->root_done = 1; /* a proxy started for a spawn ends with its ranks */
    } else if (strncmp(msg->cmd, "spawn_", 6) == 0) {
        mpiexec_spawn_from_root(job, msg);
    } else if (strcmp(msg->cmd, "terminate") == 0) {
        int code = 1;
        tern_pmi_msg_get_int(msg, "code", &code);
        mpiexec_job_stop(job, code);
    } else {
        fprintf(stderr, "mpiexec proxy: unknown message '%s' from the launch host\n", msg->cmd);
    }
}

static int root_line(void *ctx, char *text)
{
    mpiexec_job_t *job = ctx;
    tern_pmi_msg_t msg;
    if (tern_pmi_wire_parse(text, &msg) == TERN_OK)
        handle(job, &msg);
    return job->upstream_fd < 0;
}

void mpiexec_proxy_read(mpiexec_job_t *job)
{
    mpiexec_lines_t got = mpiexec_lines_read(&job->upstream_in, job->upstream_fd,
                                             MPIEXEC_CTL_LINE_MAX, root_line, job);
    if (got == MPIEXEC_LINES_OPEN || got == MPIEXEC_LINES_AGAIN || job->upstream_fd < 0)
        return;
    close(job->upstream_fd);
    job->upstream_fd = -1;
    if (got == MPIEXEC_LINES_TOO_LONG)
        mpiexec_job_fail(job, 1, "mpiexec on the launch host sent a control line longer than "
                                 "%d bytes (the control line limit)",
                         MPIEXEC_CTL_LINE_MAX);
    else if (!job->failed)
        mpiexec_job_fail(job, 1, "lost the connection to mpiexec on the launch host");
}
