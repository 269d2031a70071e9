/* Forks the ranks. Each child gets: its own process group (so a signal to
 * -pid reaches anything it spawned), PR_SET_PDEATHSIG=SIGKILL (so `kill -9
 * mpiexec` leaves no orphans), stdin from mpiexec (rank 0) or /dev/null,
 * stdout/stderr into pipes, and a PMI socketpair end passed as PMI_FD.
 * Exec errors come back through a close-on-exec pipe: EOF means exec
 * succeeded, otherwise the child wrote errno. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    int pmi[2];
    int out[2];
    int err[2];
    int in[2];
    int exec_status[2];
} child_fds_t;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void child_fds_close(child_fds_t *f)
{
    int *all = &f->pmi[0];
    for (size_t i = 0; i < sizeof *f / sizeof(int); i++)
        close_fd(&all[i]);
}

static tern_status_t child_fds_open(child_fds_t *f, int want_stdin)
{
    memset(f, -1, sizeof *f);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->pmi) != 0 ||
        pipe2(f->out, O_CLOEXEC) != 0 || pipe2(f->err, O_CLOEXEC) != 0 ||
        pipe2(f->exec_status, O_CLOEXEC) != 0 || (want_stdin && pipe2(f->in, O_CLOEXEC) != 0)) {
        fprintf(stderr, "mpiexec: cannot create pipes: %s\n", strerror(errno));
        child_fds_close(f);
        return TERN_ERR_IO;
    }
    return TERN_OK;
}

/* In the child: never returns. Only async-signal-safe work where it matters;
 * mpiexec is single-threaded, so setenv is safe here too. */
static _Noreturn void child_exec(const mpiexec_job_t *job, const mpiexec_rank_t *r,
                                 child_fds_t *f, pid_t parent)
{
    int rank = r->rank;
    char num[32];
    int err_fd = f->exec_status[1];

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1); /* mpiexec died before prctl took effect */
    setpgid(0, 0);

    /* mpiexec blocks and ignores some signals; exec keeps both. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);

    int in_fd = f->in[0];
    if (in_fd < 0)
        in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in_fd < 0 || dup2(in_fd, 0) < 0 || dup2(f->out[1], 1) < 0 || dup2(f->err[1], 2) < 0)
        goto fail;
    /* The child end of the socketpair must survive exec. */
    int pmi_fd = f->pmi[1];
    if (fcntl(pmi_fd, F_SETFD, 0) != 0)
        goto fail;

    snprintf(num, sizeof num, "%d", pmi_fd);
    setenv("PMI_FD", num, 1);
    snprintf(num, sizeof num, "%d", rank);
    setenv("PMI_RANK", num, 1);
    snprintf(num, sizeof num, "%d", mpiexec_rank_world_size(job, r));
    setenv("PMI_SIZE", num, 1);
    setenv("TERN_JOBID", mpiexec_rank_kvsname(job, r), 1);
    if (job->opts->ft)
        setenv("TERN_FT", "1", 1);
    /* Not ours: an outer process manager's. */
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    unsetenv("PMI_SPAWNED");
    for (int i = 0; i < job->opts->n_env; i++)
        putenv(job->opts->env[i]);
    /* Spawned: MPI_Init connects to the parents (Hydra sets the same). */
    if (r->space > 0)
        setenv("PMI_SPAWNED", "1", 1);
    if (r->wdir && chdir(r->wdir) != 0)
        goto fail;

    int local = rank - job->rank_base;
    if (r->space == 0 && job->bind_sets &&
        sched_setaffinity(0, sizeof job->bind_sets[local], &job->bind_sets[local]) != 0)
        goto fail;

    char **argv = r->argv ? r->argv : job->opts->argv;
    execvp(argv[0], argv);
fail:;
    int e = errno;
    ssize_t ignored = write(err_fd, &e, sizeof e);
    (void)ignored;
    _exit(127);
}

/* Starts one rank; on exec failure returns TERN_ERR_NOT_FOUND and reaps it. */
tern_status_t mpiexec_launch_rank(mpiexec_job_t *job, mpiexec_rank_t *r)
{
    child_fds_t f;
    int want_stdin = r->rank == 0 && r->space == 0 && job->stdin_src >= 0;
    tern_status_t st = child_fds_open(&f, want_stdin);
    if (st != TERN_OK)
        return st;

    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "mpiexec: fork failed: %s\n", strerror(errno));
        child_fds_close(&f);
        return TERN_ERR_IO;
    }
    if (pid == 0)
        child_exec(job, r, &f, parent);

    /* Both sides set the group so signals sent right away reach it. */
    setpgid(pid, pid);
    r->pid = pid;
    r->running = 1;
    close_fd(&f.exec_status[1]);
    int e = 0;
    ssize_t n;
    do {
        n = read(f.exec_status[0], &e, sizeof e);
    } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof e) {
        fprintf(stderr, "mpiexec: cannot execute '%s' (rank %d%s): %s\n",
                r->argv ? r->argv[0] : job->opts->argv[0], r->rank,
                r->space > 0 ? " of a spawned job" : "", strerror(e));
        waitpid(pid, &r->status, 0);
        r->running = 0;
        child_fds_close(&f);
        return TERN_ERR_NOT_FOUND;
    }

    r->pmi_fd = f.pmi[0];
    f.pmi[0] = -1;
    /* A rank that stops reading must not block the event loop (replies are
     * queued, see pmi_server.c). */
    fcntl(r->pmi_fd, F_SETFL, fcntl(r->pmi_fd, F_GETFL) | O_NONBLOCK);
    mpiexec_stream_init(&r->out, f.out[0], 1);
    mpiexec_stream_init(&r->err, f.err[0], 2);
    f.out[0] = f.err[0] = -1;
    if (want_stdin) {
        job->stdin_dst = f.in[1];
        f.in[1] = -1;
        fcntl(job->stdin_dst, F_SETFL, fcntl(job->stdin_dst, F_GETFL) | O_NONBLOCK);
    }
    child_fds_close(&f);
    return TERN_OK;
}

tern_status_t mpiexec_launch(mpiexec_job_t *job)
{
    for (int i = 0; i < job->n; i++) {
        tern_status_t st = mpiexec_launch_rank(job, &job->ranks[i]);
        if (st != TERN_OK)
            return st;
    }
    return TERN_OK;
}
