/* The job: one poll() loop over a signalfd, every rank's PMI socket and
 * output pipes, and stdin. It decides when the job failed and ends it.
 * Nothing in the loop waits on a rank: PMI sockets are non-blocking with
 * bounded reply queues (pmi_server.c), so signals are always read.
 *
 * Failure: a rank killed by a signal, exiting non-zero before finalize,
 * exiting (even 0) after PMI init but without finalize while others still
 * run, or calling abort. Then every other rank's process group gets SIGTERM
 * and, mpiexec_grace_s() later, SIGKILL; the exit code is the first failure's (exit
 * code, 128+signal, or the abort code). A rank exiting non-zero after
 * finalize sets the exit code but lets the others finish.
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT to mpiexec are forwarded to every rank and
 * escalate to SIGKILL after the same grace (at once on a second signal). */
#include "mpiexec.h"
#include "base/config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* After the last rank is reaped, output still held by its descendants is
 * awaited this long. */
#define DRAIN_MS 500
/* How long the verdict on a rank that ended without MPI_Finalize waits for
 * a peer's death (exit_verdict_defer). */
#define VERDICT_WAIT_S 0.5

/* TERN_MPIEXEC_KILL_GRACE_MS, checked at start-up (options.c). */
double mpiexec_grace_s(void)
{
    return (double)tern_knob_count(TERN_KNOB_MPIEXEC_KILL_GRACE_MS) / 1000.0;
}

double mpiexec_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int mpiexec_ms_until(double deadline, double now)
{
    return deadline > now ? (int)((deadline - now) * 1000) + 1 : 0;
}

double mpiexec_timeout_deadline(const mpiexec_opts_t *opts)
{
    return opts->timeout_s > 0 ? mpiexec_now() + opts->timeout_s : 0;
}

tern_status_t mpiexec_job_init(mpiexec_job_t *job, const mpiexec_opts_t *opts)
{
    memset(job, 0, sizeof *job);
    job->opts = opts;
    job->n = opts->np;
    job->n_main = opts->np;
    job->stdin_src = -1;
    job->stdin_dst = -1;
    job->signal_fd = -1;
    job->upstream_fd = -1;
    job->world_size = opts->proxy ? opts->world_size : opts->np;
    job->rank_base = opts->proxy ? opts->proxy_first : 0;
    job->end_at = mpiexec_timeout_deadline(opts);
    tern_pmi_reader_init(&job->upstream_in);
    /* Room for spawned ranks too, so pointers to ranks stay valid. */
    job->ranks = calloc((size_t)job->n + MPIEXEC_SPAWN_MAX, sizeof *job->ranks);
    job->spaces = calloc(MPIEXEC_SPAWN_MAX, sizeof *job->spaces);
    if (!job->ranks || !job->spaces)
        return TERN_ERR_NOMEM;
    for (int i = 0; i < job->n; i++) {
        mpiexec_rank_t *r = &job->ranks[i];
        r->rank = job->rank_base + i;
        r->pmi_fd = -1;
        tern_pmi_reader_init(&r->pmi_in);
        mpiexec_stream_init(&r->out, -1, 1);
        mpiexec_stream_init(&r->err, -1, 2);
    }
    /* Unique per run: names the KVS and the job's /dev/shm files. */
    unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL) ^ (unsigned)(mpiexec_now() * 1e6);
    FILE *u = fopen("/dev/urandom", "rb");
    if (u) {
        if (fread(&seed, sizeof seed, 1, u) != 1)
            seed ^= 0x5bd1e995u;
        fclose(u);
    }
    snprintf(job->kvsname, sizeof job->kvsname, "tern-%ld-%08x", (long)getpid(), seed);
    if (opts->proxy)
        snprintf(job->kvsname, sizeof job->kvsname, "%s", opts->proxy_kvs);
    /* stdin goes to rank 0 if mpiexec has one. */
    /* A background job reading its terminal would be stopped (SIGTTIN). */
    if (fcntl(0, F_GETFD) >= 0 && !(isatty(0) && tcgetpgrp(0) != getpgrp()))
        job->stdin_src = 0;

    /* Signals arrive through the poll loop; children unblock them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGQUIT);
    /* A shell ignores SIGINT for `mpiexec &`; we still want it. SIGHUP
     * stays ignored under nohup. */
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    struct sigaction hup;
    if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
        sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    job->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (job->signal_fd < 0)
        return TERN_ERR_IO;
    /* Writing to a rank that is gone must not kill mpiexec. */
    signal(SIGPIPE, SIG_IGN);
    return mpiexec_pmi_init(job);
}

void mpiexec_job_free(mpiexec_job_t *job)
{
    for (int i = 0; i < job->n; i++) {
        mpiexec_rank_t *r = &job->ranks[i];
        mpiexec_pmi_close(r);
        mpiexec_stream_free(&r->out);
        mpiexec_stream_free(&r->err);
    }
    mpiexec_stdin_close(job);
    mpiexec_spawn_free(job);
    mpiexec_pmi_free(job);
    if (job->upstream_fd >= 0)
        close(job->upstream_fd);
    job->upstream_fd = -1;
    tern_pmi_reader_free(&job->upstream_in);
    mpiexec_outq_free(&job->upstream_out);
    free(job->ranks);
    free(job->bind_sets);
    if (job->signal_fd >= 0)
        close(job->signal_fd);
    job->ranks = NULL;
}

void mpiexec_job_cleanup_shm(const mpiexec_job_t *job)
{
    char pattern[128];
    glob_t g;
    snprintf(pattern, sizeof pattern, "/dev/shm/tern-%s-*", job->kvsname);
    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++)
        unlink(g.gl_pathv[i]);
    globfree(&g);
}

static void signal_ranks(mpiexec_job_t *job, int sig)
{
    for (int i = 0; i < job->n; i++) {
        mpiexec_rank_t *r = &job->ranks[i];
        if (r->running && kill(-r->pid, sig) != 0)
            kill(r->pid, sig); /* not yet in its own group */
    }
}

/* Starts the SIGTERM -> SIGKILL sequence (once). */
static void job_terminate(mpiexec_job_t *job, int first_sig)
{
    if (job->terminating)
        return;
    job->terminating = 1;
    job->kill_at = mpiexec_now() + mpiexec_grace_s();
    signal_ranks(job, first_sig);
}

static void exit_verdict_give(mpiexec_job_t *job, int at_once);

void mpiexec_job_fail(mpiexec_job_t *job, int code, const char *fmt, ...)
{
    /* A verdict still waiting for a peer's death came first: this failure
     * (a survivor's MPI_Abort, say) followed from it. */
    exit_verdict_give(job, 1);
    if (!job->failed) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (job->host_name[0]) /* a proxy: say where */
            fprintf(stderr, "mpiexec: on host %s: %s; terminating the job\n", job->host_name,
                    msg);
        else
            fprintf(stderr, "mpiexec: %s; terminating the job\n", msg);
        fflush(stderr);
        job->failed = 1;
        /* An exit status is 8 bits; a failure must not read as success. */
        job->exit_code = (code & 0xff) ? (code & 0xff) : 1;
        if (job->upstream_fd >= 0)
            mpiexec_proxy_report_failure(job, job->exit_code);
    }
    job_terminate(job, SIGTERM);
}

void mpiexec_job_stop(mpiexec_job_t *job, int code)
{
    if (!job->failed) {
        job->failed = 1;
        job->exit_code = (code & 0xff) ? (code & 0xff) : 1;
    }
    job_terminate(job, SIGTERM);
}

static int others_running(const mpiexec_job_t *job, const mpiexec_rank_t *self)
{
    for (int i = 0; i < job->n; i++)
        if (&job->ranks[i] != self && job->ranks[i].running)
            return 1;
    return 0;
}

/* --ft (the first job): a rank died and the others go on. The job's exit
 * status remembers it; the barrier no longer counts it. A proxy tells the
 * root, which tells every host (and says it, naming the host). */
static int ft_death(mpiexec_job_t *job, mpiexec_rank_t *r, int code, const char *what)
{
    if (!job->opts->ft || r->space != 0 || (job->opts->proxy && job->upstream_fd < 0))
        return 0;
    if (job->upstream_fd >= 0) {
        char how[160];
        snprintf(how, sizeof how, "(pid %ld) %s", (long)r->pid, what);
        mpiexec_proxy_report_dead(job, r->rank, code, how);
    } else {
        fprintf(stderr, "mpiexec: rank %d (pid %ld) %s; the others go on (--ft)\n", r->rank,
                (long)r->pid, what);
        fflush(stderr);
    }
    if (!job->exit_code)
        job->exit_code = (code & 0xff) ? (code & 0xff) : 1;
    job->n_dead++;
    if (r->in_barrier) {
        r->in_barrier = 0;
        job->barrier_count--;
    }
    if (job->barrier_count > 0 && job->barrier_count >= job->n_main - job->n_dead) {
        if (job->upstream_fd >= 0)
            mpiexec_proxy_fence(job, 0);
        else
            mpiexec_pmi_barrier_release(job, 0);
    }
    return 1;
}

void mpiexec_job_kill_ranks(mpiexec_job_t *job, const char *ranks, int except)
{
    for (const char *p = ranks; *p;) {
        char *end;
        long w = strtol(p, &end, 10);
        if (end == p)
            break;
        long i = w - job->rank_base; /* ours: this host's block of the world */
        if (w != except && i >= 0 && i < job->n_main && job->ranks[i].running &&
            kill(-job->ranks[i].pid, SIGKILL) != 0)
            kill(job->ranks[i].pid, SIGKILL);
        p = *end == ',' ? end + 1 : end;
    }
}

void mpiexec_job_abort_ranks(mpiexec_job_t *job, mpiexec_rank_t *from, int code,
                             const char *ranks, const char *text)
{
    if (!job->exit_code)
        job->exit_code = (code & 0xff) ? (code & 0xff) : 1;
    if (job->upstream_fd >= 0) {
        /* A proxy: ours at once, the other hosts' through the root (which
         * says it). */
        mpiexec_job_kill_ranks(job, ranks, from->rank);
        mpiexec_proxy_report_abort(job, from->rank, code, ranks, text);
        return;
    }
    fprintf(stderr, "mpiexec: rank %d called MPI_Abort with code %d%s%s; ending ranks %s of its "
            "communicator only (--ft)\n", from->rank, code, text ? ": " : "", text ? text : "",
            ranks);
    fflush(stderr);
    mpiexec_job_kill_ranks(job, ranks, from->rank);
}

/* A rank ended without MPI_Finalize: often because a peer died first
 * (its MPI call failed and it gave up), and that peer's death is the news.
 * A peer killed with much memory becomes reapable tens of milliseconds
 * after its sockets reset, time enough for the survivor to see the reset,
 * return its error and exit (tests/rma/rma_dead_target_test.sh on a loaded
 * machine). So the verdict waits VERDICT_WAIT_S for another rank's death
 * by a signal, which then decides the job's status and message; any other
 * failure in the meantime (a survivor's MPI_Abort on seeing this rank gone)
 * comes after it. */
static void exit_verdict_defer(mpiexec_job_t *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void exit_verdict_defer(mpiexec_job_t *job, int code, const char *fmt, ...)
{
    if (job->failed || job->verdict_at)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(job->verdict, sizeof job->verdict, fmt, ap);
    va_end(ap);
    job->verdict_code = code;
    job->verdict_at = mpiexec_now() + VERDICT_WAIT_S;
}

/* The pending verdict, once its time has come or nothing else can die. */
static void exit_verdict_give(mpiexec_job_t *job, int at_once)
{
    if (!job->verdict_at || (!at_once && mpiexec_now() < job->verdict_at))
        return;
    job->verdict_at = 0;
    if (!job->failed)
        mpiexec_job_fail(job, job->verdict_code, "%s", job->verdict);
}

/* Classifies the exit of a rank just reaped. */
static void rank_exited(mpiexec_job_t *job, mpiexec_rank_t *r)
{
    int st = r->status;
    /* Read what it sent before dying (an abort is written just before
     * _exit, maybe after SIGCHLD was queued). */
    while (r->pmi_fd >= 0) {
        struct pollfd p = {.fd = r->pmi_fd, .events = POLLIN};
        if (poll(&p, 1, 0) <= 0 || !mpiexec_pmi_read(job, r))
            break;
    }
    mpiexec_pmi_close(r);
    if (job->terminating || r->quiet_exit)
        return; /* we are killing it; not news */
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        job->verdict_at = 0; /* the death the pending verdict waited for */
        char what[96];
        snprintf(what, sizeof what, "killed by signal %d (%s)", sig, strsignal(sig));
        if (ft_death(job, r, 128 + sig, what))
            return;
        mpiexec_job_fail(job, 128 + sig, "rank %d (pid %ld) killed by signal %d (%s)", r->rank,
                         (long)r->pid, sig, strsignal(sig));
    } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
        int code = WEXITSTATUS(st);
        if (r->pmi_finalized) {
            if (!job->exit_code)
                job->exit_code = code;
        } else {
            char what[64];
            snprintf(what, sizeof what, "exited with code %d", code);
            if (ft_death(job, r, code, what))
                return;
            exit_verdict_defer(job, code, "rank %d (pid %ld) exited with code %d", r->rank,
                               (long)r->pid, code);
        }
    } else if (r->pmi_inited && !r->pmi_finalized && others_running(job, r)) {
        if (ft_death(job, r, 1, "exited without calling MPI_Finalize"))
            return;
        exit_verdict_defer(job, 1,
                           "rank %d (pid %ld) exited with code 0 without calling MPI_Finalize "
                           "while other ranks still run",
                           r->rank, (long)r->pid);
    }
}

/* Every child that has exited, then their news, deaths by a signal
 * first: a rank that saw a peer die often finishes cleanly a moment
 * later, and when both are reaped together the job's status and message
 * must be the death's, not "exited without MPI_Finalize while others
 * run" (tests/rma/rma_dead_target_test.sh, on a loaded machine). */
static void reap(mpiexec_job_t *job)
{
    int any = 0;
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            break;
        for (int i = 0; i < job->n; i++) {
            mpiexec_rank_t *r = &job->ranks[i];
            if (r->running && r->pid == pid) {
                r->running = 0;
                r->status = st;
                r->reaped_news = any = 1;
                break;
            }
        }
    }
    for (int signalled = 1; any && signalled >= 0; signalled--)
        for (int i = 0; i < job->n; i++) {
            mpiexec_rank_t *r = &job->ranks[i];
            if (r->reaped_news && (!signalled || WIFSIGNALED(r->status))) {
                r->reaped_news = 0;
                rank_exited(job, r);
            }
        }
}

static void on_signal(mpiexec_job_t *job, int sig)
{
    if (sig == SIGCHLD)
        return; /* reaped below */
    if (job->terminating) {
        /* A second interrupt: no more grace. */
        job->kill_at = mpiexec_now();
        return;
    }
    fprintf(stderr, "mpiexec: received signal %d (%s); forwarding it to all ranks\n", sig,
            strsignal(sig));
    if (!job->failed) {
        job->failed = 1;
        job->exit_code = 128 + sig;
    }
    job_terminate(job, sig);
}

static void read_signals(mpiexec_job_t *job)
{
    struct signalfd_siginfo si;
    while (read(job->signal_fd, &si, sizeof si) == (ssize_t)sizeof si)
        on_signal(job, (int)si.ssi_signo);
}

static int any_running(const mpiexec_job_t *job) { return others_running(job, NULL); }

static int any_output_open(const mpiexec_job_t *job)
{
    for (int i = 0; i < job->n; i++)
        if (job->ranks[i].out.fd >= 0 || job->ranks[i].err.fd >= 0)
            return 1;
    return 0;
}

/* Closes what the ranks' descendants still hold, after the drain period. */
static void close_outputs(mpiexec_job_t *job)
{
    for (int i = 0; i < job->n; i++) {
        mpiexec_rank_t *r = &job->ranks[i];
        while (r->out.fd >= 0 && mpiexec_stream_read(job, i, &r->out)) {
            struct pollfd p = {.fd = r->out.fd, .events = POLLIN};
            if (poll(&p, 1, 0) <= 0) {
                close(r->out.fd);
                r->out.fd = -1;
            }
        }
        while (r->err.fd >= 0 && mpiexec_stream_read(job, i, &r->err)) {
            struct pollfd p = {.fd = r->err.fd, .events = POLLIN};
            if (poll(&p, 1, 0) <= 0) {
                close(r->err.fd);
                r->err.fd = -1;
            }
        }
    }
}

/* The ranks are gone: what is still queued for the root and for our
 * stdout goes out, unless a signal says to stop waiting for readers. */
static void finish(mpiexec_job_t *job)
{
    double until = mpiexec_now() + mpiexec_grace_s();
    while (job->upstream_fd >= 0 && mpiexec_outq_pending(&job->upstream_out) &&
           mpiexec_now() < until) {
        struct pollfd p = {.fd = job->upstream_fd, .events = POLLOUT};
        if (poll(&p, 1, 100) > 0)
            mpiexec_proxy_flush(job);
    }
    /* A job that was ended does not wait on a reader that stopped. */
    double linger = job->terminating ? mpiexec_now() + MPIEXEC_OUTPUT_LINGER_S : 0;
    int sig = mpiexec_output_finish(job->signal_fd, linger);
    if (sig && !job->failed) {
        job->failed = 1;
        job->exit_code = 128 + sig;
    }
}

/* Which object a pollfd belongs to. */
typedef struct {
    int kind; /* 0 signal, 1 pmi, 2 out, 3 err, 4 stdin src, 5 stdin dst, 6 root,
                 7 mpiexec's stdout (rank 1) or stderr (rank 2) */
    int rank;
} slot_t;

int mpiexec_job_run(mpiexec_job_t *job)
{
    size_t max = 6 + 3 * ((size_t)job->n + (job->spaces ? MPIEXEC_SPAWN_MAX : 0));
    struct pollfd *pfd = calloc(max, sizeof *pfd);
    slot_t *slot = calloc(max, sizeof *slot);
    double drain_until = 0;
    if (!pfd || !slot) {
        free(pfd);
        free(slot);
        mpiexec_job_fail(job, 1, "out of memory");
        mpiexec_job_kill_all(job);
        return job->exit_code;
    }

    for (;;) {
        reap(job);
        exit_verdict_give(job, !any_running(job));
        /* A proxy started for a spawn (no ranks of the first job) waits for
         * them and then for the root's word that the first job is done. */
        int running = any_running(job) ||
                      (job->upstream_fd >= 0 && job->n_main == 0 && !job->root_done &&
                       !job->terminating);
        if (!running && !any_output_open(job))
            break;
        if (!running && drain_until == 0)
            drain_until = mpiexec_now() + DRAIN_MS / 1000.0;
        if (!running && mpiexec_now() >= drain_until) {
            close_outputs(job);
            break;
        }

        size_t n = 0;
        pfd[n] = (struct pollfd){.fd = job->signal_fd, .events = POLLIN};
        slot[n++] = (slot_t){0, -1};
        if (job->upstream_fd >= 0) {
            short ev = POLLIN | (mpiexec_outq_pending(&job->upstream_out) ? POLLOUT : 0);
            pfd[n] = (struct pollfd){.fd = job->upstream_fd, .events = ev};
            slot[n++] = (slot_t){6, -1};
        }
        for (int o = 1; o <= 2; o++)
            if (mpiexec_output_poll_fd(o) >= 0) {
                pfd[n] = (struct pollfd){.fd = mpiexec_output_poll_fd(o), .events = POLLOUT};
                slot[n++] = (slot_t){7, o};
            }
        for (int i = 0; i < job->n; i++) {
            mpiexec_rank_t *r = &job->ranks[i];
            if (r->pmi_fd >= 0) {
                short events = POLLIN | (mpiexec_pmi_pending(r) ? POLLOUT : 0);
                pfd[n] = (struct pollfd){.fd = r->pmi_fd, .events = events};
                slot[n++] = (slot_t){1, i};
            }
            /* Output waits in the rank's pipe while mpiexec's own is full. */
            if (r->out.fd >= 0 && !mpiexec_output_full(r->out.out_fd)) {
                pfd[n] = (struct pollfd){.fd = r->out.fd, .events = POLLIN};
                slot[n++] = (slot_t){2, i};
            }
            if (r->err.fd >= 0 && !mpiexec_output_full(r->err.out_fd)) {
                pfd[n] = (struct pollfd){.fd = r->err.fd, .events = POLLIN};
                slot[n++] = (slot_t){3, i};
            }
        }
        if (job->stdin_dst >= 0 && job->stdin_len == 0 && job->stdin_src >= 0) {
            pfd[n] = (struct pollfd){.fd = job->stdin_src, .events = POLLIN};
            slot[n++] = (slot_t){4, -1};
        }
        if (job->stdin_dst >= 0 && job->stdin_len > 0) {
            pfd[n] = (struct pollfd){.fd = job->stdin_dst, .events = POLLOUT};
            slot[n++] = (slot_t){5, -1};
        }

        int timeout = -1;
        double now = mpiexec_now();
        if (job->terminating && !job->killed)
            timeout = mpiexec_ms_until(job->kill_at, now);
        if (!running) {
            int t = mpiexec_ms_until(drain_until, now);
            timeout = timeout < 0 || t < timeout ? t : timeout;
        }
        if (job->end_at && !job->terminating) {
            int t = mpiexec_ms_until(job->end_at, now);
            timeout = timeout < 0 || t < timeout ? t : timeout;
        }
        if (job->verdict_at) {
            int t = mpiexec_ms_until(job->verdict_at, now);
            timeout = timeout < 0 || t < timeout ? t : timeout;
        }
        if (running) {
            int t = mpiexec_proxy_heartbeat(job);
            if (t >= 0)
                timeout = timeout < 0 || t < timeout ? t : timeout;
        }
        int k = poll(pfd, n, timeout);
        if (k < 0 && errno != EINTR)
            break;

        for (size_t j = 0; k > 0 && j < n; j++) {
            if (!pfd[j].revents)
                continue;
            if (slot[j].kind == 7) {
                mpiexec_output_flush(slot[j].rank);
                continue;
            }
            mpiexec_rank_t *r = slot[j].rank >= 0 ? &job->ranks[slot[j].rank] : NULL;
            switch (slot[j].kind) {
            case 0: read_signals(job); break;
            case 1:
                if (pfd[j].revents & POLLOUT)
                    mpiexec_pmi_flush(r);
                if (pfd[j].revents & ~POLLOUT)
                    mpiexec_pmi_read(job, r);
                break;
            case 2: mpiexec_stream_read(job, r->rank, &r->out); break;
            case 3: mpiexec_stream_read(job, r->rank, &r->err); break;
            case 4: mpiexec_stdin_read(job); break;
            case 6:
                if (pfd[j].revents & POLLOUT)
                    mpiexec_proxy_flush(job);
                if (pfd[j].revents & ~POLLOUT && job->upstream_fd >= 0)
                    mpiexec_proxy_read(job);
                break;
            case 5:
                if (pfd[j].revents & (POLLERR | POLLHUP))
                    mpiexec_stdin_close(job);
                else
                    mpiexec_stdin_write(job);
                break;
            }
        }

        if (job->end_at && !job->terminating && mpiexec_now() >= job->end_at)
            mpiexec_job_fail(job, MPIEXEC_TIMEOUT_EXIT, "the job ran past MPIEXEC_TIMEOUT (%d s)",
                             job->opts->timeout_s);
        if (job->terminating && !job->killed && mpiexec_now() >= job->kill_at) {
            signal_ranks(job, SIGKILL);
            job->killed = 1;
        }
    }
    free(pfd);
    free(slot);
    if (job->upstream_fd >= 0)
        mpiexec_proxy_report_done(job);
    /* Nothing a failed job spawned may outlive it. */
    if (job->terminating)
        for (int i = 0; i < job->n; i++)
            if (job->ranks[i].pid > 0)
                kill(-job->ranks[i].pid, SIGKILL);
    mpiexec_job_cleanup_shm(job);
    finish(job);
    return job->exit_code;
}

void mpiexec_job_kill_all(mpiexec_job_t *job)
{
    job->terminating = 1;
    signal_ranks(job, SIGKILL);
    for (int i = 0; i < job->n; i++) {
        mpiexec_rank_t *r = &job->ranks[i];
        if (r->running) {
            while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
                ;
            r->running = 0;
        }
    }
    mpiexec_job_cleanup_shm(job);
}
