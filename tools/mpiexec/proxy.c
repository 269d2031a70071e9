/* Proxy side of a multi-host job: this mpiexec runs one host's ranks and
 * serves their PMI locally; it talks to the root (root.c) over one TCP
 * connection, in PMI-1 lines:
 *   proxy -> root: hello host=I proof=P nonce=M | put key value | fence | failed code=N |
 *                  pong (to each ping, and unasked every quarter of the heartbeat
 *                  timeout) | dead rank=R code=N what=TEXT (--ft) | done (its ranks ended) |
 *                  abort rank=R code=N ranks=LIST [message=TEXT] (--ft: MPI_Abort on a
 *                  communicator of those world ranks; the proxy killed its own)
 *   root -> proxy: welcome proof=Q | config name=HOST heartbeat_timeout_ms=T |
 *                  put key value (other hosts' puts) | release | terminate code=N |
 *                  ping | dead rank=R (--ft: on any host) |
 *                  kill ranks=LIST from=R (--ft: end those of them that are here, but R) |
 *                  finish (to a proxy without ranks of the first job, started for
 *                  a spawn: end once its ranks have)
 * A spawned job's puts, fences and releases carry space=K (its number);
 * publish/unpublish/lookup_name go up as name op=CMD from=I service [port]
 * and come back as name_result from=I op=CMD rc [port|msg] (root_spawn.c);
 * the spawn messages themselves are described in root_spawn.c.
 * The connection starts with root -> proxy: challenge nonce=HEX, answered
 * by hello's proof=HEX, and the hello's own nonce=HEX is answered by the
 * root's welcome proof=HEX (auth.c): each side proves it holds the job's
 * secret, and the proxy starts no rank for a root that cannot. The root
 * pings; a proxy that hears nothing from it for heartbeat_timeout_ms ends
 * its ranks (the network or the launch host is gone). Both directions are non-blocking with
 * bounded queues and line lengths (line_io.c).
 * A fence goes up once all of this host's ranks entered the barrier; the
 * root answers every host once all hosts fenced. */
#include "auth.h"
#include "mpiexec.h"
#include "base/failed_map.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* Reads the root's next handshake line, which must be `cmd`: its field
 * `key`, or NULL. */
static const char *read_handshake(mpiexec_job_t *job, const char *cmd, const char *key,
                                  double until, int *sig_p)
{
    for (;;) {
        char *text = tern_pmi_reader_next(&job->upstream_in);
        if (text) {
            tern_pmi_msg_t msg;
            if (strlen(text) > 256 || tern_pmi_wire_parse(text, &msg) != TERN_OK ||
                strcmp(msg.cmd, cmd) != 0)
                return NULL;
            return tern_pmi_msg_get(&msg, key);
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

static int open_failed_map(mpiexec_job_t *job);
static int root_line(void *ctx, char *text);

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
    const char *nonce = read_handshake(job, "challenge", "nonce", until, &sig);
    if (sig)
        return signalled(sig);
    if (!nonce) {
        fprintf(stderr, "mpiexec proxy: the launch host %s port %s sent no valid challenge\n",
                host, port);
        return TERN_ERR_IO;
    }
    char proof[2 * MPIEXEC_SHA256_LEN + 1];
    mpiexec_auth_proof(job->secret, nonce, job->opts->proxy_index, proof);
    unsigned char mine[MPIEXEC_NONCE_LEN];
    char mine_hex[2 * MPIEXEC_NONCE_LEN + 1];
    if (mpiexec_random(mine, sizeof mine) != 0) {
        fprintf(stderr, "mpiexec proxy: cannot draw a nonce: %s\n", strerror(errno));
        return TERN_ERR_IO;
    }
    mpiexec_hex(mine, sizeof mine, mine_hex);
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "hello");
    tern_pmi_line_add_int(&line, "host", job->opts->proxy_index);
    tern_pmi_line_add(&line, "proof", proof);
    tern_pmi_line_add(&line, "nonce", mine_hex);
    mpiexec_proxy_send(job, &line);
    /* The root proves itself in turn before we obey it. */
    const char *theirs = read_handshake(job, "welcome", "proof", until, &sig);
    if (sig)
        return signalled(sig);
    if (!theirs || !mpiexec_auth_check_root(job->secret, mine_hex, job->opts->proxy_index,
                                            theirs)) {
        fprintf(stderr, "mpiexec proxy: the launch host %s port %s did not prove it holds the "
                        "job's secret; refusing it\n", host, port);
        return TERN_ERR_IO;
    }
    job->last_heard = mpiexec_now();
    if (job->opts->ft && open_failed_map(job) != 0)
        return TERN_ERR_IO;
    /* What came with the welcome (the config). */
    char *text;
    while (job->upstream_fd >= 0 && (text = tern_pmi_reader_next(&job->upstream_in)) != NULL)
        if (root_line(job, text))
            break;
    return TERN_OK;
}

/* --ft: the file through which this host's ranks hear of deaths elsewhere
 * (base/failed_map.h), made before they start. */
static int open_failed_map(mpiexec_job_t *job)
{
    char path[320];
    size_t bytes = tern_failed_map_bytes(job->world_size);
    if (tern_failed_map_path(path, sizeof path, job->kvsname) != 0)
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 ||
        ((size_t)sb.st_size < bytes && ftruncate(fd, (off_t)bytes) != 0)) {
        fprintf(stderr, "mpiexec proxy: cannot make the failed-rank map %s: %s\n", path,
                strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fprintf(stderr, "mpiexec proxy: cannot map %s: %s\n", path, strerror(errno));
        return -1;
    }
    job->failed_map = p;
    job->failed_map->size = (uint32_t)job->world_size;
    __atomic_store_n(&job->failed_map->magic, TERN_FAILED_MAP_MAGIC, __ATOMIC_RELEASE);
    return 0;
}

void mpiexec_proxy_mark_dead(mpiexec_job_t *job, int rank)
{
    tern_failed_map_t *m = job->failed_map;
    if (!m || rank < 0 || rank >= job->world_size || m->dead[rank])
        return;
    m->dead[rank] = 1;
    __atomic_fetch_add(&m->gen, 1, __ATOMIC_RELEASE);
}

void mpiexec_proxy_report_dead(mpiexec_job_t *job, int rank, int code, const char *what)
{
    mpiexec_proxy_mark_dead(job, rank);
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "dead");
    tern_pmi_line_add_int(&line, "rank", rank);
    tern_pmi_line_add_int(&line, "code", code);
    tern_pmi_line_add(&line, "what", what);
    mpiexec_proxy_send(job, &line);
}

void mpiexec_proxy_report_abort(mpiexec_job_t *job, int from, int code, const char *ranks,
                                const char *text)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "abort");
    tern_pmi_line_add_int(&line, "rank", from);
    tern_pmi_line_add_int(&line, "code", code);
    tern_pmi_line_add(&line, "ranks", ranks);
    if (text)
        tern_pmi_line_add(&line, "message", text);
    mpiexec_proxy_send(job, &line);
}

void mpiexec_proxy_report_done(mpiexec_job_t *job)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, "done");
    mpiexec_proxy_send(job, &line);
}

int mpiexec_proxy_heartbeat(mpiexec_job_t *job)
{
    if (job->upstream_fd < 0 || job->hb_timeout <= 0 || job->terminating)
        return -1;
    double now = mpiexec_now(), until = job->last_heard + job->hb_timeout;
    if (now >= job->next_alive) {
        tern_pmi_line_t line;
        tern_pmi_line_begin(&line, "pong");
        mpiexec_proxy_send(job, &line);
        job->next_alive = now + job->hb_timeout / 4;
    }
    if (now >= until) { /* what waits in the socket first: we may have been the busy one */
        double before = job->last_heard;
        mpiexec_proxy_read(job);
        if (job->last_heard > before)
            until = job->last_heard + job->hb_timeout;
    }
    if (now < until)
        return mpiexec_ms_until(until < job->next_alive ? until : job->next_alive, now);
    mpiexec_job_fail(job, 1, "no word from mpiexec on the launch host for %.0f ms (the "
                             "heartbeat timeout, TERN_MPIEXEC_HEARTBEAT_TIMEOUT_MS): the network "
                             "or that host is down",
                     (now - job->last_heard) * 1e3);
    return -1;
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
    job->last_heard = mpiexec_now();
    if (strcmp(msg->cmd, "ping") == 0) {
        tern_pmi_line_t line;
        tern_pmi_line_begin(&line, "pong");
        mpiexec_proxy_send(job, &line);
    } else if (strcmp(msg->cmd, "dead") == 0) {
        int rank = -1;
        tern_pmi_msg_get_int(msg, "rank", &rank);
        mpiexec_proxy_mark_dead(job, rank);
    } else if (strcmp(msg->cmd, "kill") == 0) {
        int from = -1;
        const char *ranks = tern_pmi_msg_get(msg, "ranks");
        tern_pmi_msg_get_int(msg, "from", &from);
        if (ranks)
            mpiexec_job_kill_ranks(job, ranks, from);
    } else if (strcmp(msg->cmd, "config") == 0) {
        const char *name = tern_pmi_msg_get(msg, "name");
        int ms = 0;
        if (name)
            snprintf(job->host_name, sizeof job->host_name, "%s", name);
        if (tern_pmi_msg_get_int(msg, "heartbeat_timeout_ms", &ms) == TERN_OK && ms > 0)
            job->hb_timeout = ms / 1000.0;
    } else if (strcmp(msg->cmd, "put") == 0) {
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
