/* Starting a host's proxy (root.c has the design): this program in proxy
 * mode for the host's block of ranks, run directly for this host or through
 * the remote-start command (ssh by default) as one quoted shell line. Its
 * stdin carries the job's secret first, never its command line (`ps`
 * shows those); its stdout and stderr come back as the host's streams. */
#include "mpiexec.h"
#include "root.h"
#include "base/config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int mpiexec_root_is_local(const char *host)
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
    snprintf(buf, sizeof buf, "%d,%d,%d,%d,%d", h, ho->first, ho->count, o->np, rt->universe);
    av[k++] = strdup(buf);
    av[k++] = (char *)rt->fwd.kvsname;
    av[k++] = (char *)map;
    if (o->tag_output)
        av[k++] = "--tag-output";
    if (o->bind_core)
        av[k++] = "--bind-to=core";
    if (o->ft)
        av[k++] = "--ft";
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

tern_status_t mpiexec_root_start_proxy(root_t *rt, int h, const char *map)
{
    host_t *ho = &rt->hosts[h];
    int local = mpiexec_root_is_local(ho->name) && !rt->opts->launcher;
    const char *launcher = rt->opts->launcher ? rt->opts->launcher
                                              : tern_knob_str(TERN_KNOB_MPIEXEC_LAUNCHER);
    char **pav = proxy_argv(rt, h, ho->addr, map);
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
    /* stdin carries the secret first (never a command line: `ps` shows
     * those), then, for rank 0's host, mpiexec's own stdin. */
    int out[2], err[2], in[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0)
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
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        execvp(av[0], av);
        /* fd 2, not stdio's stderr: that is the parent's queue (stdio_forward.c). */
        dprintf(2, "mpiexec: cannot start host %s with '%s': %s\n", ho->name, av[0],
                strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    close(in[0]);
    char line[2 * MPIEXEC_SECRET_LEN + 2];
    mpiexec_hex(rt->secret, MPIEXEC_SECRET_LEN, line);
    strcat(line, "\n");
    /* An empty pipe takes these bytes at once. */
    if (write(in[1], line, strlen(line)) != (ssize_t)strlen(line))
        fprintf(stderr, "mpiexec: cannot hand host %s its secret: %s\n", ho->name,
                strerror(errno));
    memset(line, 0, sizeof line);
    if (ho->first == 0 && rt->fwd.stdin_src >= 0) {
        fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
        rt->fwd.stdin_dst = in[1];
    } else {
        close(in[1]);
    }
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

tern_status_t mpiexec_root_start_host(root_t *rt, int h)
{
    host_t *ho = &rt->hosts[h];
    const char *launcher = rt->opts->launcher ? rt->opts->launcher
                                              : tern_knob_str(TERN_KNOB_MPIEXEC_LAUNCHER);
    int ssh = strncmp(launcher, "ssh", 3) == 0 && (launcher[3] == ' ' || !launcher[3]);
    int local = mpiexec_root_is_local(ho->name) && !rt->opts->launcher;
    mpiexec_stream_free(&ho->out);
    mpiexec_stream_free(&ho->err);
    if (mpiexec_listen_for(&rt->listen, ho->name, local, ssh, ho->addr, sizeof ho->addr) != 0)
        return TERN_ERR_IO;
    return mpiexec_root_start_proxy(rt, h, rt->map);
}
