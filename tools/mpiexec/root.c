/* Root of a multi-host job (--hosts / --hostfile): starts one proxy per host
 * through the remote-start command (ssh by default; TERN_MPIEXEC_LAUNCHER or
 * --launcher), each being this program in proxy mode for that host's block
 * of ranks (proxy.c). The root keeps only per-host state: it collects the
 * hosts' puts, and when every host has fenced it sends them all to every
 * host with a release. Rank output arrives through each launcher's stdout
 * and stderr (already tagged by the proxy) and is forwarded by whole lines.
 *
 * Failure: a proxy that reports a failure, or a launcher that exits non-zero
 * (ssh: connection lost or the host died) ends the job: the other proxies
 * are told to terminate, launchers still running after GRACE_S get SIGTERM,
 * then SIGKILL. The exit code is the first failure's. A heartbeat sees a
 * lost host whose launcher lingers (a network cut), and under --ft deaths
 * are told to every host instead: root_ft.c. */
#include "auth.h"
#include "mpiexec.h"
#include "root.h"
#include "base/config.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Longer than a proxy's own grace for its ranks (job.c): the proxies
 * get 0.5 s to report their ranks' ends. */
#define GRACE_S (mpiexec_grace_s() + 0.5)
/* How long a connection may take to prove itself. */
#define PENDING_S 10.0
/* A hello line: host index and proof. */
#define HELLO_LINE_MAX 512
/* Queued bytes to a proxy past which its link counts as busy (host_flush). */
#define BACKLOG_BYTES (64 * 1024)

void mpiexec_root_drop_link(host_t *ho)
{
    if (ho->ctl_fd >= 0)
        close(ho->ctl_fd);
    ho->ctl_fd = -1;
    mpiexec_outq_free(&ho->ctl_out);
}


/* Writes what the proxy's link takes now. A link busy carrying a large
 * backlog to the proxy (a release with every host's puts) delays its
 * answers to our pings behind it: while that backlog drains, the host is
 * heard (heartbeat), and once the proxy or the network stops taking it,
 * the time runs. */
static int host_flush(host_t *ho)
{
    size_t before = mpiexec_outq_pending(&ho->ctl_out);
    int rc = mpiexec_outq_flush(&ho->ctl_out, ho->ctl_fd);
    if (before >= BACKLOG_BYTES && mpiexec_outq_pending(&ho->ctl_out) < before)
        ho->last_heard = mpiexec_now();
    return rc;
}

/* Control lines are queued and written as the proxy takes them: a proxy
 * that stops reading can stall neither the root nor the other hosts. */
void mpiexec_root_send(root_t *rt, host_t *ho, tern_pmi_line_t *line)
{
    int over = 0, waiting = ho->ctl_fd < 0 && ho->running && !ho->said_hello;
    if ((ho->ctl_fd >= 0 || waiting) && tern_pmi_line_end(line) == TERN_OK)
        over = mpiexec_outq_push(&ho->ctl_out, line->buf, line->len, MPIEXEC_CTL_QUEUE_MAX) != 0;
    tern_pmi_line_free(line);
    if (ho->ctl_fd < 0)
        return; /* a proxy on its way gets the lines when it connects */
    if (over) {
        fprintf(stderr, "mpiexec: host %s left more than %d bytes of control messages unread "
                        "(the control queue limit); terminating the job\n",
                ho->name, MPIEXEC_CTL_QUEUE_MAX);
        mpiexec_root_drop_link(ho);
        mpiexec_root_fail(rt, 1);
    } else if (host_flush(ho) != 0) {
        mpiexec_root_drop_link(ho); /* the proxy is gone: its launcher's exit tells */
    }
}

static void send_to(root_t *rt, host_t *ho, const char *cmd, const char *k1, const char *v1,
                    const char *k2, const char *v2)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, cmd);
    if (k1)
        tern_pmi_line_add(&line, k1, v1);
    if (k2)
        tern_pmi_line_add(&line, k2, v2);
    mpiexec_root_send(rt, ho, &line);
}

void mpiexec_root_fail(root_t *rt, int code)
{
    if (!rt->failed) {
        rt->failed = 1;
        rt->exit_code = (code & 0xff) ? (code & 0xff) : 1;
    }
    if (rt->terminating)
        return;
    rt->terminating = 1;
    rt->kill_at = mpiexec_now() + GRACE_S;
    char c[16];
    snprintf(c, sizeof c, "%d", rt->exit_code);
    for (int h = 0; h < rt->n; h++)
        send_to(rt, &rt->hosts[h], "terminate", "code", c, NULL, NULL);
}

void mpiexec_root_release_all(root_t *rt)
{
    for (int h = 0; h < rt->n; h++) {
        for (int i = 0; i < rt->n_fresh; i++)
            send_to(rt, &rt->hosts[h], "put", "key", rt->fresh[i].key, "value", rt->fresh[i].value);
        send_to(rt, &rt->hosts[h], "release", NULL, NULL, NULL, NULL);
        rt->hosts[h].fenced = 0;
    }
    for (int i = 0; i < rt->n_fresh; i++) {
        free(rt->fresh[i].key);
        free(rt->fresh[i].value);
    }
    rt->n_fresh = 0;
    rt->n_fenced = 0;
}

static void host_message(root_t *rt, host_t *ho, const tern_pmi_msg_t *msg)
{
    ho->last_heard = mpiexec_now();
    if (mpiexec_root_ft_message(rt, ho, msg))
        return;
    /* Spawns, and the puts and fences of spawned jobs (space=K). */
    if (mpiexec_root_spawn_message(rt, ho, msg))
        return;
    if (strcmp(msg->cmd, "put") == 0) {
        const char *k = tern_pmi_msg_get(msg, "key"), *v = tern_pmi_msg_get(msg, "value");
        if (!k || !v)
            return;
        if (rt->n_fresh == rt->cap_fresh) {
            int cap = rt->cap_fresh ? 2 * rt->cap_fresh : 256;
            kv_t *f = realloc(rt->fresh, (size_t)cap * sizeof *f);
            if (!f) {
                fprintf(stderr, "mpiexec: out of memory\n");
                mpiexec_root_fail(rt, 1);
                return;
            }
            rt->fresh = f;
            rt->cap_fresh = cap;
        }
        rt->fresh[rt->n_fresh].key = strdup(k);
        rt->fresh[rt->n_fresh].value = strdup(v);
        rt->n_fresh++;
    } else if (strcmp(msg->cmd, "fence") == 0) {
        if (!ho->fenced) {
            ho->fenced = 1;
            ++rt->n_fenced;
            mpiexec_root_maybe_release(rt);
        }
    } else if (strcmp(msg->cmd, "failed") == 0) {
        int code = 1;
        tern_pmi_msg_get_int(msg, "code", &code);
        ho->reported_failure = 1;
        mpiexec_root_fail(rt, code);
    }
}

typedef struct {
    root_t *rt;
    host_t *ho;
} host_ctx_t;

static int host_line(void *ctx, char *text)
{
    host_ctx_t *c = ctx;
    tern_pmi_msg_t msg;
    if (tern_pmi_wire_parse(text, &msg) == TERN_OK)
        host_message(c->rt, c->ho, &msg);
    return c->ho->ctl_fd < 0;
}

/* Returns 1 when the link is still open (more may follow). */
int mpiexec_root_host_read(root_t *rt, host_t *ho)
{
    host_ctx_t c = {rt, ho};
    mpiexec_lines_t got = mpiexec_lines_read(&ho->ctl_in, ho->ctl_fd, MPIEXEC_CTL_LINE_MAX,
                                             host_line, &c);
    if (got == MPIEXEC_LINES_AGAIN)
        return 0;
    if (got == MPIEXEC_LINES_OPEN && ho->ctl_fd >= 0)
        return 1;
    if (got == MPIEXEC_LINES_TOO_LONG) {
        fprintf(stderr, "mpiexec: host %s sent a control line longer than %d bytes (the "
                        "control line limit); terminating the job\n",
                ho->name, MPIEXEC_CTL_LINE_MAX);
        mpiexec_root_fail(rt, 1);
    }
    mpiexec_root_drop_link(ho);
    return 0;
}

static void pending_drop(root_t *rt, int i)
{
    close(rt->pending[i].fd);
    tern_pmi_reader_free(&rt->pending[i].in);
    rt->pending[i] = rt->pending[--rt->n_pending];
}

/* A connection that is not one of our proxies is closed and logged, and
 * changes nothing else. */
static void refuse(root_t *rt, int i, const char *why)
{
    fprintf(stderr, "mpiexec: refused a control connection from %s: %s\n", rt->pending[i].peer,
            why);
    pending_drop(rt, i);
}

/* A new connection must answer the challenge for the host it claims before
 * anything else it says is read; then it becomes that host's link. */
static void pending_read(root_t *rt, int i)
{
    pending_t *pe = &rt->pending[i];
    ssize_t n = 0;
    tern_status_t st = tern_pmi_reader_fill(&pe->in, pe->fd, &n);
    if (st == TERN_ERR_AGAIN)
        return;
    char *text = tern_pmi_reader_next(&pe->in);
    if (!text) {
        if (st != TERN_OK || n == 0)
            refuse(rt, i, "closed before proving itself");
        else if (pe->in.len - pe->in.start > HELLO_LINE_MAX)
            refuse(rt, i, "overlong first line");
        return;
    }
    tern_pmi_msg_t msg;
    int h = -1;
    const char *proof = NULL, *their_nonce = NULL;
    if (strlen(text) <= HELLO_LINE_MAX && tern_pmi_wire_parse(text, &msg) == TERN_OK &&
        strcmp(msg.cmd, "hello") == 0) {
        tern_pmi_msg_get_int(&msg, "host", &h);
        proof = tern_pmi_msg_get(&msg, "proof");
        their_nonce = tern_pmi_msg_get(&msg, "nonce");
    }
    if (!proof || h < 0 || h >= rt->n) {
        refuse(rt, i, "no valid hello");
        return;
    }
    if (!mpiexec_auth_check(rt->secret, pe->nonce, h, proof)) {
        refuse(rt, i, "wrong proof of the job's secret");
        return;
    }
    if (!their_nonce || strlen(their_nonce) != 2 * MPIEXEC_NONCE_LEN) {
        refuse(rt, i, "no nonce for our own proof in its hello");
        return;
    }
    host_t *ho = &rt->hosts[h];
    if (ho->said_hello) {
        char why[320];
        snprintf(why, sizeof why, "host %s is already connected", ho->name);
        refuse(rt, i, why);
        return;
    }
    /* Our proof in turn (the proxy obeys no one else), then the name we
     * know its host by and the heartbeat it must hear; a fresh socket's
     * empty buffer takes these few bytes at once. */
    char welcome[2 * MPIEXEC_SHA256_LEN + 512], mine[2 * MPIEXEC_SHA256_LEN + 1];
    mpiexec_auth_root_proof(rt->secret, their_nonce, h, mine);
    int wl = snprintf(welcome, sizeof welcome,
                      "cmd=welcome proof=%s\ncmd=config name=%.200s heartbeat_timeout_ms=%.0f\n",
                      mine, ho->name, rt->hb_timeout * 1e3);
    if (send(pe->fd, welcome, (size_t)wl, MSG_NOSIGNAL) != wl) {
        refuse(rt, i, "could not be sent our proof");
        return;
    }
    ho->last_heard = mpiexec_now();
    ho->ctl_fd = pe->fd;
    ho->ctl_in = pe->in;
    ho->said_hello = 1;
    rt->pending[i] = rt->pending[--rt->n_pending];
    if (host_flush(ho) != 0) /* what waited for it */
        mpiexec_root_drop_link(ho);
    /* Lines that came with the hello. */
    host_ctx_t c = {rt, ho};
    while (ho->ctl_fd >= 0 && (text = tern_pmi_reader_next(&ho->ctl_in)) != NULL)
        if (host_line(&c, text))
            break;
    if (rt->terminating) {
        char code[16];
        snprintf(code, sizeof code, "%d", rt->exit_code);
        send_to(rt, ho, "terminate", "code", code, NULL, NULL);
    }
}

static void accept_pending(root_t *rt)
{
    for (int l = 0; l < rt->listen.n; l++) {
        struct sockaddr_storage sa;
        socklen_t sl = sizeof sa;
        int fd;
        while ((fd = accept4(rt->listen.fd[l], (struct sockaddr *)&sa, &sl,
                             SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
            /* Strangers holding every slot must not lock a proxy out: the
             * oldest unproven connection makes room. */
            if (rt->n_pending == rt->max_pending) {
                int oldest = 0;
                for (int i = 1; i < rt->n_pending; i++)
                    if (rt->pending[i].deadline < rt->pending[oldest].deadline)
                        oldest = i;
                refuse(rt, oldest, "too many connections waiting to prove themselves");
            }
            pending_t *pe = &rt->pending[rt->n_pending];
            *pe = (pending_t){.fd = fd, .deadline = mpiexec_now() + PENDING_S};
            char host[INET6_ADDRSTRLEN] = "?", port[8] = "?"; /* "65535" fits */
            getnameinfo((struct sockaddr *)&sa, sl, host, sizeof host, port, sizeof port,
                        NI_NUMERICHOST | NI_NUMERICSERV);
            snprintf(pe->peer, sizeof pe->peer, "%s:%s", host, port);
            sl = sizeof sa;
            tern_pmi_reader_init(&pe->in);
            unsigned char nonce[MPIEXEC_NONCE_LEN];
            char line[128];
            if (mpiexec_random(nonce, sizeof nonce) != 0) {
                close(fd);
                continue;
            }
            mpiexec_hex(nonce, sizeof nonce, pe->nonce);
            int len = snprintf(line, sizeof line, "cmd=challenge nonce=%s\n", pe->nonce);
            rt->n_pending++;
            /* A fresh socket's empty buffer takes these few bytes at once. */
            if (send(fd, line, (size_t)len, MSG_NOSIGNAL) != len)
                refuse(rt, rt->n_pending - 1, "could not be sent its challenge");
        }
    }
}

/* Unproven connections past their time are closed. */
static void expire_pending(root_t *rt)
{
    double now = mpiexec_now();
    for (int i = rt->n_pending - 1; i >= 0; i--)
        if (now >= rt->pending[i].deadline)
            refuse(rt, i, "did not prove itself in time");
}

static void host_exited(root_t *rt, host_t *ho)
{
    int st = ho->status;
    /* What it said before it went comes first (a hello, a failure), even
     * when its connection still waits in the listen queue. */
    accept_pending(rt);
    for (int i = rt->n_pending - 1; i >= 0; i--)
        pending_read(rt, i);
    while (ho->ctl_fd >= 0 && mpiexec_root_host_read(rt, ho))
        ;
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && ho->said_hello;
    if (rt->dead && ho->count > 0 && !rt->terminating && !ok) {
        mpiexec_root_ft_host_ended(rt, ho);
        return;
    }
    if (ho->count == 0 && !ho->reported_failure && !rt->terminating && (ok || !ho->said_hello)) {
        /* Started for a spawn: its end, or its failure to start, is the
         * spawn's business (one that connected and was lost is the job's);
         * a later spawn may start it again. */
        char why[320];
        snprintf(why, sizeof why, "cannot start mpiexec on host %s (its remote start %s %d)",
                 ho->name, WIFEXITED(st) ? "exited with code" : "was killed by signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        mpiexec_root_drop_link(ho);
        tern_pmi_reader_free(&ho->ctl_in);
        tern_pmi_reader_init(&ho->ctl_in);
        ho->said_hello = ho->told_finish = 0;
        mpiexec_root_spawn_host_ended(rt, (int)(ho - rt->hosts), ok ? NULL : why);
        return;
    }
    if (ok) {
        mpiexec_root_spawn_host_ended(rt, (int)(ho - rt->hosts), NULL);
        return;
    }
    if (ho->reported_failure || rt->terminating) {
        if (!rt->failed && WIFEXITED(st))
            rt->exit_code = WEXITSTATUS(st);
        return;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        fprintf(stderr, "mpiexec: host %s: the remote start ended before its proxy connected; "
                        "terminating the job\n", ho->name);
    else if (WIFEXITED(st))
        fprintf(stderr, "mpiexec: lost host %s (ranks %d-%d): its remote start exited with "
                        "code %d; terminating the job\n",
                ho->name, ho->first, ho->first + ho->count - 1, WEXITSTATUS(st));
    else
        fprintf(stderr, "mpiexec: lost host %s (ranks %d-%d): its remote start was killed by "
                        "signal %d; terminating the job\n",
                ho->name, ho->first, ho->first + ho->count - 1, WTERMSIG(st));
    mpiexec_root_fail(rt, WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : 1);
}

static void reap(root_t *rt)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
        for (int h = 0; h < rt->n; h++)
            if (rt->hosts[h].running && rt->hosts[h].pid == pid) {
                rt->hosts[h].running = 0;
                rt->hosts[h].status = st;
                host_exited(rt, &rt->hosts[h]);
            }
}

/* The secret, one listener per address the proxies reach us by, the
 * signals, and stdin for rank 0's host. */
static int setup(root_t *rt)
{
    if (mpiexec_random(rt->secret, sizeof rt->secret) != 0) {
        fprintf(stderr, "mpiexec: cannot draw the job's secret: %s\n", strerror(errno));
        return -1;
    }
    const char *launcher = rt->opts->launcher ? rt->opts->launcher
                                              : tern_knob_str(TERN_KNOB_MPIEXEC_LAUNCHER);
    int ssh = strncmp(launcher, "ssh", 3) == 0 && (launcher[3] == ' ' || !launcher[3]);
    for (int h = 0; h < rt->n_ranked; h++) {
        host_t *ho = &rt->hosts[h];
        int local = mpiexec_root_is_local(ho->name) && !rt->opts->launcher;
        if (mpiexec_listen_for(&rt->listen, ho->name, local, ssh, ho->addr, sizeof ho->addr) != 0)
            return -1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    rt->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);
    /* As a single-host job does (job.c): a background job reading its
     * terminal would be stopped. */
    rt->fwd.stdin_src = -1;
    rt->fwd.stdin_dst = -1;
    if (fcntl(0, F_GETFD) >= 0 && !(isatty(0) && tcgetpgrp(0) != getpgrp()))
        rt->fwd.stdin_src = 0;
    return rt->signal_fd < 0 ? -1 : 0;
}

/* "(vector,(node,nodes,ranks-per-node)...)" with runs of equal counts merged. */
static void build_map(root_t *rt, char *map, size_t cap)
{
    size_t len = (size_t)snprintf(map, cap, "(vector");
    for (int h = 0; h < rt->n_ranked;) {
        int run = 1;
        while (h + run < rt->n_ranked && rt->hosts[h + run].count == rt->hosts[h].count)
            run++;
        len += (size_t)snprintf(map + len, cap - len, ",(%d,%d,%d)", h, run, rt->hosts[h].count);
        h += run;
    }
    snprintf(map + len, cap - len, ")");
}

static void on_signals(root_t *rt)
{
    struct signalfd_siginfo si;
    while (read(rt->signal_fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD)
            continue;
        if (rt->terminating) {
            rt->kill_at = mpiexec_now(); /* a second signal: no more grace */
            continue;
        }
        fprintf(stderr, "mpiexec: received signal %d (%s); ending the job on every host\n",
                (int)si.ssi_signo, strsignal((int)si.ssi_signo));
        mpiexec_root_fail(rt, 128 + (int)si.ssi_signo);
    }
}

/* What the exited launchers left in their pipes, as far as it is there now. */
static void drain_hosts(root_t *rt)
{
    for (int h = 0; h < rt->n; h++) {
        mpiexec_stream_t *st[2] = {&rt->hosts[h].out, &rt->hosts[h].err};
        for (int i = 0; i < 2; i++)
            for (;;) {
                struct pollfd p = {.fd = st[i]->fd, .events = POLLIN};
                if (st[i]->fd < 0 || poll(&p, 1, 0) <= 0 ||
                    !mpiexec_stream_read(&rt->fwd, 0, st[i]))
                    break;
            }
    }
}

/* Which object a pollfd belongs to. */
enum { W_SIGNAL, W_LISTEN, W_PENDING, W_CTL, W_OUT, W_ERR, W_SINK, W_STDIN_SRC, W_STDIN_DST };
typedef struct {
    int kind, index;
} who_t;

static void root_loop(root_t *rt)
{
    size_t max = 6 + MPIEXEC_LISTEN_MAX + (size_t)rt->max_pending + 3 * (size_t)rt->n;
    struct pollfd *pfd = calloc(max, sizeof *pfd);
    who_t *who = calloc(max, sizeof *who);
    if (!pfd || !who) {
        free(pfd);
        free(who);
        return;
    }
    for (;;) {
        reap(rt);
        expire_pending(rt);
        mpiexec_root_heartbeat(rt);
        int running = 0, open = 0;
        for (int h = 0; h < rt->n; h++) {
            running |= rt->hosts[h].running;
            open |= rt->hosts[h].out.fd >= 0 || rt->hosts[h].err.fd >= 0;
        }
        /* An ended job does not wait for output its launchers left
         * behind (a stdout that is not read would hold it forever). */
        if (!running && open && rt->terminating)
            drain_hosts(rt);
        if (!running && (!open || rt->terminating))
            break;
        size_t n = 0;
#define WATCH(f, ev, k, i) (pfd[n] = (struct pollfd){.fd = (f), .events = (ev)}, \
                            who[n++] = (who_t){(k), (i)})
        WATCH(rt->signal_fd, POLLIN, W_SIGNAL, 0);
        for (int l = 0; l < rt->listen.n; l++)
            WATCH(rt->listen.fd[l], POLLIN, W_LISTEN, l);
        for (int i = 0; i < rt->n_pending; i++)
            WATCH(rt->pending[i].fd, POLLIN, W_PENDING, i);
        for (int h = 0; h < rt->n; h++) {
            host_t *ho = &rt->hosts[h];
            if (ho->ctl_fd >= 0)
                WATCH(ho->ctl_fd, POLLIN | (mpiexec_outq_pending(&ho->ctl_out) ? POLLOUT : 0),
                      W_CTL, h);
            /* Output waits in the launcher's pipe while our stdout is full. */
            if (ho->out.fd >= 0 && !mpiexec_output_full(1))
                WATCH(ho->out.fd, POLLIN, W_OUT, h);
            if (ho->err.fd >= 0 && !mpiexec_output_full(2))
                WATCH(ho->err.fd, POLLIN, W_ERR, h);
        }
        for (int o = 1; o <= 2; o++)
            if (mpiexec_output_poll_fd(o) >= 0)
                WATCH(mpiexec_output_poll_fd(o), POLLOUT, W_SINK, o);
        mpiexec_job_t *fwd = &rt->fwd;
        if (fwd->stdin_dst >= 0 && fwd->stdin_len == 0 && fwd->stdin_src >= 0)
            WATCH(fwd->stdin_src, POLLIN, W_STDIN_SRC, 0);
        if (fwd->stdin_dst >= 0 && fwd->stdin_len > 0)
            WATCH(fwd->stdin_dst, POLLOUT, W_STDIN_DST, 0);
#undef WATCH
        double now = mpiexec_now();
        double wake = rt->n_pending ? rt->pending[0].deadline : 0;
        for (int i = 1; i < rt->n_pending; i++)
            wake = rt->pending[i].deadline < wake ? rt->pending[i].deadline : wake;
        if (rt->terminating && !rt->killed && (!wake || rt->kill_at < wake))
            wake = rt->kill_at;
        if (rt->end_at && !rt->terminating && (!wake || rt->end_at < wake))
            wake = rt->end_at;
        if (!wake || rt->next_ping < wake)
            wake = rt->next_ping;
        int timeout = wake ? mpiexec_ms_until(wake, now) : -1;
        int k = poll(pfd, n, timeout);
        if (k < 0 && errno != EINTR)
            break;
        for (size_t j = 0; k > 0 && j < n; j++) {
            if (!pfd[j].revents)
                continue;
            int i = who[j].index;
            host_t *ho = &rt->hosts[i];
            int changed = 0; /* the fd lists changed under the indices */
            switch (who[j].kind) {
            case W_SIGNAL: on_signals(rt); break;
            case W_LISTEN: accept_pending(rt); changed = 1; break;
            case W_PENDING: pending_read(rt, i); changed = 1; break;
            case W_CTL:
                if ((pfd[j].revents & POLLOUT) &&
                    host_flush(ho) != 0)
                    mpiexec_root_drop_link(ho);
                if ((pfd[j].revents & ~POLLOUT) && ho->ctl_fd >= 0)
                    mpiexec_root_host_read(rt, ho);
                changed = 1; /* a release or failure may have changed fds */
                break;
            case W_OUT: mpiexec_stream_read(fwd, 0, &ho->out); break;
            case W_ERR: mpiexec_stream_read(fwd, 0, &ho->err); break;
            case W_SINK: mpiexec_output_flush(i); break;
            case W_STDIN_SRC: mpiexec_stdin_read(fwd); break;
            case W_STDIN_DST:
                if (pfd[j].revents & (POLLERR | POLLHUP))
                    mpiexec_stdin_close(fwd);
                else
                    mpiexec_stdin_write(fwd);
                break;
            }
            if (changed)
                break;
        }
        if (rt->end_at && !rt->terminating && mpiexec_now() >= rt->end_at) {
            fprintf(stderr, "mpiexec: the job ran past MPIEXEC_TIMEOUT (%d s); terminating the job\n",
                    rt->opts->timeout_s);
            mpiexec_root_fail(rt, MPIEXEC_TIMEOUT_EXIT);
        }
        if (rt->terminating && !rt->killed && mpiexec_now() >= rt->kill_at) {
            for (int h = 0; h < rt->n; h++)
                if (rt->hosts[h].running)
                    kill(rt->hosts[h].pid, SIGKILL);
            rt->killed = 1;
        }
    }
    free(pfd);
    free(who);
}

int mpiexec_root_run(const mpiexec_opts_t *opts)
{
    root_t rt = {.opts = opts, .signal_fd = -1, .end_at = mpiexec_timeout_deadline(opts)};
    int *count = mpiexec_hosts_place(opts);
    if (!count)
        return 2;
    rt.hosts = calloc((size_t)opts->n_hosts, sizeof *rt.hosts);
    if (!rt.hosts) {
        free(count);
        return 1;
    }
    /* Hosts left without ranks come last (placement fills hosts in order);
     * they get a proxy when a spawn places processes there. */
    int first = 0;
    for (int h = 0; h < opts->n_hosts; h++) {
        rt.n_ranked += count[h] > 0;
        host_t *ho = &rt.hosts[rt.n++];
        ho->name = opts->hosts[h];
        ho->first = first;
        ho->count = count[h];
        ho->slots = opts->host_slots ? opts->host_slots[h] : 0;
        ho->ctl_fd = -1;
        mpiexec_stream_init(&ho->out, -1, 1);
        mpiexec_stream_init(&ho->err, -1, 2);
        first += count[h];
    }
    /* MPI_UNIVERSE_SIZE: the slots given, a host without a count
     * counting the ranks placed there (so -n when no slots are given). */
    for (int h = 0; h < opts->n_hosts; h++) {
        int slots = opts->host_slots ? opts->host_slots[h] : 0;
        rt.universe += slots > count[h] ? slots : count[h];
    }
    free(count);
    /* Every host connects once; room for a few strangers besides. */
    rt.max_pending = rt.n + 8;
    rt.pending = calloc((size_t)rt.max_pending, sizeof *rt.pending);
    if (!rt.pending)
        return 1;
    rt.fwd.opts = &rt.fwd_opts;
    rt.hb_period = (double)tern_knob_count(TERN_KNOB_MPIEXEC_HEARTBEAT_MS) / 1000.0;
    rt.hb_timeout = (double)tern_knob_count(TERN_KNOB_MPIEXEC_HEARTBEAT_TIMEOUT_MS) / 1000.0;
    if (opts->ft && !(rt.dead = calloc((size_t)opts->np + 1, 1)))
        return 1;
    /* Random, so that another user cannot guess the job's /dev/shm names
     * and take them first. */
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)(mpiexec_now() * 1e6);
    (void)mpiexec_random(&seed, sizeof seed);
    snprintf(rt.fwd.kvsname, sizeof rt.fwd.kvsname, "tern-%ld-%08x", (long)getpid(), seed);
    build_map(&rt, rt.map, sizeof rt.map);
    if (setup(&rt) != 0)
        return 1;
    for (int h = 0; h < rt.n_ranked; h++)
        if (mpiexec_root_start_proxy(&rt, h, rt.map) != TERN_OK) {
            fprintf(stderr, "mpiexec: cannot start the proxy for host %s\n", rt.hosts[h].name);
            mpiexec_root_fail(&rt, 1);
            break;
        }
    root_loop(&rt);
    /* Proxies killed after the grace could not remove their ranks' files
     * here (the remote ones are their hosts' own business). */
    if (rt.killed)
        mpiexec_job_cleanup_shm(&rt.fwd);
    /* A job that was ended does not wait on a reader that stopped. */
    double linger = rt.terminating ? mpiexec_now() + MPIEXEC_OUTPUT_LINGER_S : 0;
    int sig = mpiexec_output_finish(rt.signal_fd, linger);
    if (sig && !rt.failed)
        rt.exit_code = 128 + sig;
    for (int h = 0; h < rt.n; h++) {
        mpiexec_root_drop_link(&rt.hosts[h]);
        tern_pmi_reader_free(&rt.hosts[h].ctl_in);
        mpiexec_stream_free(&rt.hosts[h].out);
        mpiexec_stream_free(&rt.hosts[h].err);
    }
    while (rt.n_pending > 0)
        pending_drop(&rt, 0);
    for (int i = 0; i < rt.n_fresh; i++) {
        free(rt.fresh[i].key);
        free(rt.fresh[i].value);
    }
    mpiexec_stdin_close(&rt.fwd);
    mpiexec_root_spawn_free(&rt);
    memset(rt.secret, 0, sizeof rt.secret);
    free(rt.fresh);
    free(rt.dead);
    free(rt.pending);
    free(rt.hosts);
    mpiexec_listen_close(&rt.listen);
    close(rt.signal_fd);
    return rt.exit_code;
}
