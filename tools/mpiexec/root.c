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
 * then SIGKILL. The exit code is the first failure's. */
#include "mpiexec.h"
#include "base/config.h"

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

#define GRACE_S 3.0

typedef struct {
    const char *name;
    int first, count;
    pid_t pid;
    int running, status;
    int ctl_fd;                 /* proxy connection, once it said hello */
    tern_pmi_reader_t ctl_in;
    int fenced;
    int reported_failure;
    int said_hello;
    mpiexec_stream_t out, err;
} host_t;

typedef struct {
    char *key, *value;
} kv_t;

typedef struct {
    const mpiexec_opts_t *opts;
    host_t *hosts;
    int n;
    int listen_fd, signal_fd;
    int *pending_fd;             /* accepted, no hello yet (at most one per host) */
    tern_pmi_reader_t *pending_in;
    int n_pending, max_pending;
    kv_t *fresh;                 /* puts since the last release */
    int n_fresh, cap_fresh;
    int n_fenced;
    int failed, exit_code, terminating, killed;
    double kill_at;
    mpiexec_job_t fwd;           /* for the line forwarder (no tagging) */
    mpiexec_opts_t fwd_opts;
} root_t;

static int is_local(const char *host)
{
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    return strcmp(host, "localhost") == 0 || strcmp(host, me) == 0;
}

/* 'text' -> '\''-quoted for a POSIX shell. */
static int quote(char *out, size_t cap, size_t *len, const char *s)
{
    if (*len + 2 >= cap)
        return -1;
    out[(*len)++] = '\'';
    for (; *s; s++) {
        if (*s == '\'') {
            if (*len + 5 >= cap)
                return -1;
            memcpy(out + *len, "'\\''", 4);
            *len += 4;
        } else {
            if (*len + 2 >= cap)
                return -1;
            out[(*len)++] = *s;
        }
    }
    out[(*len)++] = '\'';
    out[(*len)++] = ' ';
    out[*len] = '\0';
    return 0;
}

/* The proxy's argument vector (for a local start) and the same as one shell
 * command line (for a remote start). */
static char **proxy_argv(root_t *rt, int h, const char *root_addr, const char *map)
{
    const mpiexec_opts_t *o = rt->opts;
    host_t *ho = &rt->hosts[h];
    int argc_prog = 0;
    while (o->argv[argc_prog])
        argc_prog++;
    extern char **environ;
    int n_env = 0;
    for (char **e = environ; *e; e++)
        n_env++;
    size_t max = 32 + 2 * (size_t)(o->n_env + n_env) + (size_t)argc_prog;
    char **av = calloc(max, sizeof *av);
    static char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!av || sl <= 0)
        return NULL;
    self[sl] = '\0';
    char buf[64];
    int k = 0;
    av[k++] = self;
    av[k++] = "--proxy";
    av[k++] = strdup(root_addr);
    snprintf(buf, sizeof buf, "%d,%d,%d,%d", h, ho->first, ho->count, o->np);
    av[k++] = strdup(buf);
    av[k++] = (char *)rt->fwd.kvsname;
    av[k++] = (char *)map;
    if (o->tag_output)
        av[k++] = "--tag-output";
    if (o->bind_core)
        av[k++] = "--bind-to=core";
    /* ssh does not carry the environment: pass Tern's, libfabric's and the
     * sanitizers' (an ASan build's ranks need their options on every host). */
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "TERN_", 5) || !strncmp(*e, "FI_", 3) ||
            !strncmp(*e, "ASAN_OPTIONS=", 13) || !strncmp(*e, "LSAN_OPTIONS=", 13) ||
            !strncmp(*e, "UBSAN_OPTIONS=", 14)) {
            av[k++] = "--env";
            av[k++] = *e;
        }
    for (int i = 0; i < o->n_env; i++) {
        av[k++] = "--env";
        av[k++] = o->env[i];
    }
    av[k++] = "--";
    for (int i = 0; i < argc_prog; i++)
        av[k++] = o->argv[i];
    av[k] = NULL;
    return av;
}

static tern_status_t start_host(root_t *rt, int h, const char *map, int port)
{
    host_t *ho = &rt->hosts[h];
    int local = is_local(ho->name) && !rt->opts->launcher;
    const char *launcher = rt->opts->launcher ? rt->opts->launcher
                                              : tern_knob_str(TERN_KNOB_MPIEXEC_LAUNCHER);
    char addr[300];
    if (local)
        snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    else if (strncmp(launcher, "ssh", 3) == 0 && (launcher[3] == ' ' || !launcher[3]))
        snprintf(addr, sizeof addr, "ssh:%d", port);
    else {
        char me[256] = "localhost";
        gethostname(me, sizeof me - 1);
        snprintf(addr, sizeof addr, "%s:%d", me, port);
    }
    char **pav = proxy_argv(rt, h, addr, map);
    if (!pav)
        return TERN_ERR_NOMEM;
    char **av = pav;
    char *words = NULL, *cmd = NULL;
    if (!local) {
        /* launcher words + host + one shell command line */
        size_t cap = 1 << 16, len = 0;
        cmd = malloc(cap);
        char cwd[4096];
        if (!cmd || !getcwd(cwd, sizeof cwd))
            return TERN_ERR_NOMEM;
        len = (size_t)snprintf(cmd, cap, "cd ");
        quote(cmd, cap, &len, cwd);
        len += (size_t)snprintf(cmd + len, cap - len, "2>/dev/null; exec ");
        for (char **a = pav; *a; a++)
            if (quote(cmd, cap, &len, *a) != 0) {
                fprintf(stderr, "mpiexec: command line too long for the remote start\n");
                return TERN_ERR_ARG;
            }
        words = strdup(launcher);
        av = calloc(64, sizeof *av);
        if (!words || !av)
            return TERN_ERR_NOMEM;
        int k = 0;
        for (char *w = strtok(words, " "); w && k < 60; w = strtok(NULL, " "))
            av[k++] = w;
        av[k++] = (char *)ho->name;
        if (strcmp(av[0], "srun") == 0) { /* srun runs a program, not a line */
            av[k++] = "/bin/sh";
            av[k++] = "-c";
        }
        av[k++] = cmd;
        av[k] = NULL;
    }
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        return TERN_ERR_IO;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return TERN_ERR_IO;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        /* Only the host with rank 0 reads our stdin. */
        if (ho->first != 0) {
            int nul = open("/dev/null", O_RDONLY);
            if (nul >= 0)
                dup2(nul, 0);
        }
        dup2(out[1], 1);
        dup2(err[1], 2);
        execvp(av[0], av);
        fprintf(stderr, "mpiexec: cannot start host %s with '%s': %s\n", ho->name, av[0],
                strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    ho->pid = pid;
    ho->running = 1;
    mpiexec_stream_init(&ho->out, out[0], 1);
    mpiexec_stream_init(&ho->err, err[0], 2);
    free(words);
    free(cmd);
    if (av != pav)
        free(av);
    free(pav[2]);
    free(pav[3]);
    free(pav);
    return TERN_OK;
}

/* Control sockets are non-blocking (so reads never hang the loop); writes
 * wait for room. */
static void write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EAGAIN) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            poll(&p, 1, 1000);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the proxy is gone: its launcher's exit tells */
        buf += n;
        len -= (size_t)n;
    }
}

static void send_to(host_t *ho, const char *cmd, const char *k1, const char *v1, const char *k2,
                    const char *v2)
{
    if (ho->ctl_fd < 0)
        return;
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, cmd);
    if (k1)
        tern_pmi_line_add(&line, k1, v1);
    if (k2)
        tern_pmi_line_add(&line, k2, v2);
    if (tern_pmi_line_end(&line) == TERN_OK)
        write_all(ho->ctl_fd, line.buf, line.len);
    tern_pmi_line_free(&line);
}

static void root_fail(root_t *rt, int code)
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
        send_to(&rt->hosts[h], "terminate", "code", c, NULL, NULL);
}

static void release_all(root_t *rt)
{
    for (int h = 0; h < rt->n; h++) {
        for (int i = 0; i < rt->n_fresh; i++)
            send_to(&rt->hosts[h], "put", "key", rt->fresh[i].key, "value", rt->fresh[i].value);
        send_to(&rt->hosts[h], "release", NULL, NULL, NULL, NULL);
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
    if (strcmp(msg->cmd, "put") == 0) {
        const char *k = tern_pmi_msg_get(msg, "key"), *v = tern_pmi_msg_get(msg, "value");
        if (!k || !v)
            return;
        if (rt->n_fresh == rt->cap_fresh) {
            int cap = rt->cap_fresh ? 2 * rt->cap_fresh : 256;
            kv_t *f = realloc(rt->fresh, (size_t)cap * sizeof *f);
            if (!f) {
                fprintf(stderr, "mpiexec: out of memory\n");
                root_fail(rt, 1);
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
            if (++rt->n_fenced == rt->n)
                release_all(rt);
        }
    } else if (strcmp(msg->cmd, "failed") == 0) {
        int code = 1;
        tern_pmi_msg_get_int(msg, "code", &code);
        ho->reported_failure = 1;
        root_fail(rt, code);
    }
}

/* Returns 1 when something was read (more may follow). */
static int host_read(root_t *rt, host_t *ho)
{
    ssize_t n = 0;
    tern_status_t st = tern_pmi_reader_fill(&ho->ctl_in, ho->ctl_fd, &n);
    if (st == TERN_ERR_AGAIN)
        return 0;
    char *text;
    while ((text = tern_pmi_reader_next(&ho->ctl_in)) != NULL) {
        tern_pmi_msg_t msg;
        if (tern_pmi_wire_parse(text, &msg) == TERN_OK)
            host_message(rt, ho, &msg);
    }
    if (st != TERN_OK || n == 0) {
        close(ho->ctl_fd);
        ho->ctl_fd = -1;
        return 0;
    }
    return 1;
}

/* A new connection says which host it is, then becomes that host's link. */
static void pending_read(root_t *rt, int i)
{
    ssize_t n = 0;
    tern_status_t st = tern_pmi_reader_fill(&rt->pending_in[i], rt->pending_fd[i], &n);
    if (st == TERN_ERR_AGAIN)
        return;
    char *text = tern_pmi_reader_next(&rt->pending_in[i]);
    tern_pmi_msg_t msg;
    int h = -1;
    if (text && tern_pmi_wire_parse(text, &msg) == TERN_OK && strcmp(msg.cmd, "hello") == 0)
        tern_pmi_msg_get_int(&msg, "host", &h);
    if (!text && st == TERN_OK && n > 0)
        return; /* partial line */
    int fd = rt->pending_fd[i];
    tern_pmi_reader_t rd = rt->pending_in[i];
    rt->pending_fd[i] = rt->pending_fd[rt->n_pending - 1];
    rt->pending_in[i] = rt->pending_in[rt->n_pending - 1];
    rt->n_pending--;
    if (h < 0 || h >= rt->n || rt->hosts[h].said_hello) {
        close(fd);
        tern_pmi_reader_free(&rd);
        return;
    }
    host_t *ho = &rt->hosts[h];
    ho->ctl_fd = fd;
    ho->ctl_in = rd;
    ho->said_hello = 1;
    /* Lines that came with the hello. */
    while ((text = tern_pmi_reader_next(&ho->ctl_in)) != NULL)
        if (tern_pmi_wire_parse(text, &msg) == TERN_OK)
            host_message(rt, ho, &msg);
    if (rt->terminating) {
        char c[16];
        snprintf(c, sizeof c, "%d", rt->exit_code);
        send_to(ho, "terminate", "code", c, NULL, NULL);
    }
}

static void accept_pending(root_t *rt)
{
    int fd;
    while ((fd = accept4(rt->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
        if (rt->n_pending == rt->max_pending) {
            close(fd);
            continue;
        }
        tern_pmi_reader_init(&rt->pending_in[rt->n_pending]);
        rt->pending_fd[rt->n_pending++] = fd;
    }
}

static void host_exited(root_t *rt, host_t *ho)
{
    int st = ho->status;
    /* What it said before it went comes first (a hello, a failure), even
     * when its connection still waits in the listen queue. */
    accept_pending(rt);
    for (int i = rt->n_pending - 1; i >= 0; i--)
        pending_read(rt, i);
    while (ho->ctl_fd >= 0 && host_read(rt, ho))
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && ho->said_hello)
        return;
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
    root_fail(rt, WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : 1);
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

static int setup(root_t *rt, int *port_p)
{
    rt->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t sl = sizeof sa;
    if (rt->listen_fd < 0 || bind(rt->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(rt->listen_fd, 128) != 0 ||
        getsockname(rt->listen_fd, (struct sockaddr *)&sa, &sl) != 0) {
        fprintf(stderr, "mpiexec: cannot listen for host proxies: %s\n", strerror(errno));
        return -1;
    }
    *port_p = ntohs(sa.sin_port);
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
    return rt->signal_fd < 0 ? -1 : 0;
}

/* "(vector,(node,nodes,ranks-per-node)...)" with runs of equal counts merged. */
static void build_map(root_t *rt, char *map, size_t cap)
{
    size_t len = (size_t)snprintf(map, cap, "(vector");
    for (int h = 0; h < rt->n;) {
        int run = 1;
        while (h + run < rt->n && rt->hosts[h + run].count == rt->hosts[h].count)
            run++;
        len += (size_t)snprintf(map + len, cap - len, ",(%d,%d,%d)", h, run, rt->hosts[h].count);
        h += run;
    }
    snprintf(map + len, cap - len, ")");
}

int mpiexec_root_run(const mpiexec_opts_t *opts)
{
    root_t rt = {.opts = opts, .listen_fd = -1, .signal_fd = -1};
    int *count = mpiexec_hosts_place(opts);
    if (!count)
        return 2;
    rt.hosts = calloc((size_t)opts->n_hosts, sizeof *rt.hosts);
    if (!rt.hosts) {
        free(count);
        return 1;
    }
    int first = 0;
    for (int h = 0; h < opts->n_hosts; h++) {
        if (!count[h])
            continue;
        host_t *ho = &rt.hosts[rt.n++];
        ho->name = opts->hosts[h];
        ho->first = first;
        ho->count = count[h];
        ho->ctl_fd = -1;
        mpiexec_stream_init(&ho->out, -1, 1);
        mpiexec_stream_init(&ho->err, -1, 2);
        first += count[h];
    }
    free(count);
    /* Every host connects once; strangers beyond that are turned away. */
    rt.max_pending = rt.n + 8;
    rt.pending_fd = calloc((size_t)rt.max_pending, sizeof *rt.pending_fd);
    rt.pending_in = calloc((size_t)rt.max_pending, sizeof *rt.pending_in);
    if (!rt.pending_fd || !rt.pending_in)
        return 1;
    rt.fwd.opts = &rt.fwd_opts;
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)(mpiexec_now() * 1e6);
    snprintf(rt.fwd.kvsname, sizeof rt.fwd.kvsname, "tern-%ld-%08x", (long)getpid(), seed);
    char map[4096];
    build_map(&rt, map, sizeof map);
    int port;
    if (setup(&rt, &port) != 0)
        return 1;
    for (int h = 0; h < rt.n; h++)
        if (start_host(&rt, h, map, port) != TERN_OK) {
            fprintf(stderr, "mpiexec: cannot start the proxy for host %s\n", rt.hosts[h].name);
            root_fail(&rt, 1);
            break;
        }

    size_t max = 2 + (size_t)rt.max_pending + 3 * (size_t)rt.n;
    struct pollfd *pfd = calloc(max, sizeof *pfd);
    int *who = calloc(max, sizeof *who);
    for (;;) {
        reap(&rt);
        int running = 0, open = 0;
        for (int h = 0; h < rt.n; h++) {
            running |= rt.hosts[h].running;
            open |= rt.hosts[h].out.fd >= 0 || rt.hosts[h].err.fd >= 0;
        }
        if (!running && !open)
            break;
        size_t n = 0;
        pfd[n] = (struct pollfd){.fd = rt.signal_fd, .events = POLLIN};
        who[n++] = -1;
        pfd[n] = (struct pollfd){.fd = rt.listen_fd, .events = POLLIN};
        who[n++] = -2;
        for (int i = 0; i < rt.n_pending; i++) {
            pfd[n] = (struct pollfd){.fd = rt.pending_fd[i], .events = POLLIN};
            who[n++] = -100 - i;
        }
        for (int h = 0; h < rt.n; h++) {
            host_t *ho = &rt.hosts[h];
            if (ho->ctl_fd >= 0) {
                pfd[n] = (struct pollfd){.fd = ho->ctl_fd, .events = POLLIN};
                who[n++] = 3 * h;
            }
            if (ho->out.fd >= 0) {
                pfd[n] = (struct pollfd){.fd = ho->out.fd, .events = POLLIN};
                who[n++] = 3 * h + 1;
            }
            if (ho->err.fd >= 0) {
                pfd[n] = (struct pollfd){.fd = ho->err.fd, .events = POLLIN};
                who[n++] = 3 * h + 2;
            }
        }
        int timeout = -1;
        if (rt.terminating && !rt.killed) {
            double left = rt.kill_at - mpiexec_now();
            timeout = left > 0 ? (int)(left * 1000) + 1 : 0;
        }
        int k = poll(pfd, n, timeout);
        if (k < 0 && errno != EINTR)
            break;
        for (size_t j = 0; k > 0 && j < n; j++) {
            if (!pfd[j].revents)
                continue;
            int w = who[j];
            if (w == -1) {
                struct signalfd_siginfo si;
                while (read(rt.signal_fd, &si, sizeof si) == (ssize_t)sizeof si) {
                    if (si.ssi_signo == SIGCHLD)
                        continue;
                    if (rt.terminating) {
                        rt.kill_at = mpiexec_now();
                        continue;
                    }
                    fprintf(stderr, "mpiexec: received signal %d (%s); ending the job on every "
                                    "host\n", (int)si.ssi_signo, strsignal((int)si.ssi_signo));
                    root_fail(&rt, 128 + (int)si.ssi_signo);
                }
            } else if (w == -2) {
                accept_pending(&rt);
            } else if (w <= -100) {
                pending_read(&rt, -100 - w);
                break; /* the pending list changed under the indices */
            } else {
                host_t *ho = &rt.hosts[w / 3];
                if (w % 3 == 0)
                    host_read(&rt, ho);
                else
                    mpiexec_stream_read(&rt.fwd, 0, w % 3 == 1 ? &ho->out : &ho->err);
                if (w % 3 == 0)
                    break; /* a release or failure may have changed fds */
            }
        }
        if (rt.terminating && !rt.killed && mpiexec_now() >= rt.kill_at) {
            for (int h = 0; h < rt.n; h++)
                if (rt.hosts[h].running)
                    kill(rt.hosts[h].pid, SIGKILL);
            rt.killed = 1;
        }
    }
    for (int h = 0; h < rt.n; h++) {
        if (rt.hosts[h].ctl_fd >= 0)
            close(rt.hosts[h].ctl_fd);
        tern_pmi_reader_free(&rt.hosts[h].ctl_in);
        mpiexec_stream_free(&rt.hosts[h].out);
        mpiexec_stream_free(&rt.hosts[h].err);
    }
    for (int i = 0; i < rt.n_pending; i++) {
        close(rt.pending_fd[i]);
        tern_pmi_reader_free(&rt.pending_in[i]);
    }
    for (int i = 0; i < rt.n_fresh; i++) {
        free(rt.fresh[i].key);
        free(rt.fresh[i].value);
    }
    free(rt.fresh);
    free(rt.pending_fd);
    free(rt.pending_in);
    free(pfd);
    free(who);
    free(rt.hosts);
    close(rt.listen_fd);
    close(rt.signal_fd);
    return rt.exit_code;
}
