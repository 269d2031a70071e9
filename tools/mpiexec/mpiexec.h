/* mpiexec: runs N ranks of one program on this node, serves them PMI-1 over
 * socketpairs, forwards stdio, and ends the whole job when one rank fails.
 * With --hosts/--hostfile it starts one proxy per host (ssh by default),
 * each of which is this program in proxy mode running that host's ranks;
 * proxies meet the root only at PMI fences (their puts go up, everyone's
 * come back down), so launcher traffic grows with hosts, not ranks.
 *
 * Files: mpiexec_main.c (main), options.c (the command line), launch.c
 * (fork/exec), job.c (event loop, failure policy, signals, cleanup),
 * pmi_server.c (key-value space and
 * barrier), stdio_forward.c (line-wise output, stdin to rank 0), bind.c
 * (hwloc core binding), hosts.c (host lists), root.c (the multi-host root),
 * proxy.c (a proxy's link to the root), spawn.c (MPI_Comm_spawn: new
 * jobs started by a rank, each with its own key-value space), root_spawn.c
 * (the root's part of a spawn over several hosts). */
#ifndef TERN_MPIEXEC_H
#define TERN_MPIEXEC_H

#include "base/status.h"
#include "pmi/pmi_wire.h"

#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct {
    int np;
    char **argv;      /* program and its arguments, NULL-terminated */
    int tag_output;   /* prefix each output line with "[rank] " */
    int ft;           /* --ft: a rank's death leaves the others running (ULFM) */
    char *profile;    /* --profile DIR (absolute): TERN_PROFILE, then tern-profile DIR */
    int bind_core;    /* rank i bound to core i mod ncores */
    int timeout_s;    /* MPIEXEC_TIMEOUT: end the job after this many seconds; 0: never */
    char **env;       /* "VAR=VAL" set in every rank */
    int n_env;
    /* Multi-host (root): hosts from --hosts or --hostfile, ranks per host. */
    char **hosts;
    int *host_slots;      /* slots from the hostfile, 0 when not given */
    int n_hosts;
    int ppn;              /* -ppn: ranks per host; 0: fill slots or spread evenly */
    const char *launcher; /* remote-start command; NULL: TERN_MPIEXEC_LAUNCHER */
    /* Proxy mode (started by a root). */
    int proxy;
    const char *proxy_root;  /* root's address:port */
    int proxy_index;         /* which host */
    int proxy_first;         /* world rank of our first rank */
    int world_size;
    const char *proxy_kvs;
    const char *proxy_map;   /* PMI_process_mapping of the job */
    int universe_size;       /* MPI_UNIVERSE_SIZE; 0: the job's size */
} mpiexec_opts_t;

/* Bounds that keep one rank from stalling or exhausting mpiexec; a rank
 * that passes one is reported and its job ended. */
enum {
    /* Longest PMI line a rank may send. The largest real one is a put of a
     * value of vallen_max (65536) bytes, each byte escaped to at most two,
     * plus a key and kvsname of 256: about 129 KB. */
    MPIEXEC_PMI_LINE_MAX = 256 * 1024,
    /* Replies a rank may leave unread. A real client reads each reply
     * before its next request, so a few KB at most are ever pending. */
    MPIEXEC_PMI_REPLY_QUEUE_MAX = 1024 * 1024,
    /* Longest control line between root and proxy: a relayed put, as
     * long as the longest PMI line. */
    MPIEXEC_CTL_LINE_MAX = MPIEXEC_PMI_LINE_MAX,
    /* Control bytes a peer may leave unread: every put of a fence goes to
     * every host (1000 ranks' 64 KB values are 64 MB). */
    MPIEXEC_CTL_QUEUE_MAX = 256 * 1024 * 1024,
    /* Forwarded output held for a stdout/stderr that is not being read;
     * past it, rank output is left in the ranks' pipes (they wait). */
    MPIEXEC_OUTPUT_HELD_MAX = 1024 * 1024,
    /* Processes all spawns of one run may start together (their rank
     * slots are reserved up front, so rank pointers stay valid). */
    MPIEXEC_SPAWN_MAX = 1024,
};

/* The per-job secret that proves a control connection comes from a proxy
 * this root started (auth.c). */
enum { MPIEXEC_SECRET_LEN = 32 };

/* Bytes waiting for a non-blocking socket to become writable. */
typedef struct {
    char *buf;
    size_t len;  /* bytes held */
    size_t off;  /* first byte not yet written */
    size_t cap;
    int use_send;  /* a socket not ours: send(MSG_DONTWAIT), flags untouched */
} mpiexec_outq_t;

/* line_io.c. Appends; -1 when the queue would hold more than max bytes
 * (or memory ran out). */
int mpiexec_outq_push(mpiexec_outq_t *q, const char *data, size_t n, size_t max);
/* Writes what fd takes now; -1 when the peer is gone (queue dropped). */
int mpiexec_outq_flush(mpiexec_outq_t *q, int fd);
size_t mpiexec_outq_pending(const mpiexec_outq_t *q);
void mpiexec_outq_free(mpiexec_outq_t *q);

typedef enum {
    MPIEXEC_LINES_AGAIN,    /* nothing to read now */
    MPIEXEC_LINES_OPEN,     /* read something; more may come */
    MPIEXEC_LINES_CLOSED,   /* EOF or a read error */
    MPIEXEC_LINES_TOO_LONG, /* a line passed the bound */
    MPIEXEC_LINES_STOPPED,  /* the callback asked to stop */
} mpiexec_lines_t;
/* Reads once from fd, then hands each complete line to fn (which returns
 * non-zero to stop). */
mpiexec_lines_t mpiexec_lines_read(tern_pmi_reader_t *rd, int fd, size_t max,
                                   int (*fn)(void *ctx, char *line), void *ctx);

/* One output stream of a rank, split into whole lines. */
typedef struct {
    int fd;           /* read end of the rank's pipe; -1 after EOF */
    int out_fd;       /* where lines go: 1 or 2 */
    char *buf;        /* partial line */
    size_t len;
    size_t cap;
} mpiexec_stream_t;

typedef struct {
    int rank;
    pid_t pid;
    int running;         /* forked and not yet reaped */
    int reaped_news;     /* reaped, its exit not yet classified (job.c: reap) */
    int status;          /* wait status, once reaped */
    int pmi_fd;          /* server end of the PMI socketpair (non-blocking); -1 when closed */
    tern_pmi_reader_t pmi_in;
    mpiexec_outq_t pmi_out; /* replies not yet written */
    int pmi_inited;      /* sent init: it is a PMI client */
    int pmi_finalized;   /* sent finalize: exiting is expected */
    int in_barrier;
    mpiexec_stream_t out;
    mpiexec_stream_t err;
    /* Spawned processes (spawn.c): the job they belong to (0: the first
     * one, k: job->spaces[k - 1]), their program and working directory. */
    int space;
    char **argv;         /* NULL: opts->argv */
    char *wdir;          /* NULL: mpiexec's */
    int quiet_exit;      /* a spawn that failed ended it: its exit is no news */
    struct mpiexec_spawn_req *spawn_req; /* a "mcmd=spawn" request being read */
} mpiexec_rank_t;

typedef struct mpiexec_kvs mpiexec_kvs_t;

/* A job started by MPI_Comm_spawn: n ranks in all; those on this host are
 * job->ranks[first, first + n_local) (all of them on a single host; a
 * proxy holds its host's part of a job that spans hosts). */
typedef struct {
    char kvsname[96];
    mpiexec_kvs_t *kvs;
    int first, n, n_local;
    int barrier_count;
} mpiexec_space_t;

typedef struct {
    const mpiexec_opts_t *opts;
    int n;                /* ranks started: the job's n_main, then spawned ones */
    int n_main;
    mpiexec_rank_t *ranks;
    char kvsname[64];
    cpu_set_t *bind_sets; /* one per rank, or NULL */

    /* stdin of mpiexec -> rank 0 */
    int stdin_src;        /* 0, or -1 once at EOF / not forwarded */
    int stdin_dst;        /* write end of rank 0's stdin pipe, or -1 */
    char stdin_buf[65536];
    size_t stdin_len;
    size_t stdin_off;

    mpiexec_kvs_t *kvs;
    int barrier_count;
    int n_dead;           /* --ft: ranks of the job that died (not counted in its barrier) */
    mpiexec_space_t *spaces; /* spawned jobs (MPIEXEC_SPAWN_MAX slots) */
    mpiexec_kvs_t *names;    /* published service names (NULL: none yet) */
    int n_spaces;
    struct mpiexec_spawn_req *from_root; /* proxy: a spawn's commands arriving from the root */
    int rank_base;        /* world rank of ranks[0] (proxy mode) */
    int world_size;       /* PMI size: n, or the whole job's in proxy mode */
    int upstream_fd;      /* proxy: link to the root (non-blocking); -1 otherwise */
    tern_pmi_reader_t upstream_in;
    mpiexec_outq_t upstream_out;
    unsigned char secret[MPIEXEC_SECRET_LEN]; /* proxy: the job's, from stdin */
    int root_done;        /* proxy: the root said we may end once our ranks have */
    char host_name[256];  /* proxy: this host as the root names it ("" until told) */
    double hb_timeout;    /* proxy: seconds the root may be silent (0: not told yet) */
    double last_heard;    /* proxy: when the root last said anything */
    double next_alive;    /* proxy: when to tell the root we are here unasked */
    struct tern_failed_map *failed_map; /* proxy --ft: the ranks' failed map, or NULL */

    /* Failure policy. */
    int exit_code;        /* first failure's code; 0 while none */
    int failed;           /* a failure decided exit_code */
    int terminating;      /* ranks were told to stop */
    double kill_at;       /* when survivors get SIGKILL */
    int killed;           /* SIGKILL sent */
    int signal_fd;
    double end_at;        /* MPIEXEC_TIMEOUT's deadline; 0: none */
    /* A rank that ended without MPI_Finalize while others ran: its verdict
     * waits a moment for a peer's death that may have caused it (job.c,
     * exit_verdict_defer). */
    double verdict_at;    /* when it is given; 0: none pending */
    int verdict_code;
    char verdict[160];
} mpiexec_job_t;

/* launch.c: forks every rank. On failure (program cannot be executed) prints
 * why and returns non-OK; the ranks already started are in job->ranks. */
tern_status_t mpiexec_launch(mpiexec_job_t *job);
/* Starts one rank (job->ranks[i] set up); TERN_ERR_NOT_FOUND when its
 * program cannot be executed (reaped, message printed). */
tern_status_t mpiexec_launch_rank(mpiexec_job_t *job, mpiexec_rank_t *r);
/* The rank's job: its size and key-value space name. */
int mpiexec_rank_world_size(const mpiexec_job_t *job, const mpiexec_rank_t *r);
const char *mpiexec_rank_kvsname(const mpiexec_job_t *job, const mpiexec_rank_t *r);

/* job.c */
tern_status_t mpiexec_job_init(mpiexec_job_t *job, const mpiexec_opts_t *opts);
/* Runs the event loop until every rank is gone; returns the exit code. */
int mpiexec_job_run(mpiexec_job_t *job);
/* Marks the job failed with `code` (if nothing failed before), prints the
 * message line and starts terminating the ranks. */
void mpiexec_job_fail(mpiexec_job_t *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Ends the job with `code` quietly (the reason was reported elsewhere). */
void mpiexec_job_stop(mpiexec_job_t *job, int code);
/* Kills every started rank at once, waits for them, removes /dev/shm files. */
void mpiexec_job_kill_all(mpiexec_job_t *job);
void mpiexec_job_cleanup_shm(const mpiexec_job_t *job);
void mpiexec_job_free(mpiexec_job_t *job);
double mpiexec_now(void);
/* Seconds between SIGTERM and SIGKILL when the job ends early
 * (TERN_MPIEXEC_KILL_GRACE_MS). */
double mpiexec_grace_s(void);
/* poll()'s timeout for a deadline on mpiexec_now()'s clock: milliseconds,
 * rounded up so the deadline has passed on waking; 0 once it has. */
int mpiexec_ms_until(double deadline, double now);
/* MPIEXEC_TIMEOUT's exit status (as timeout(1)'s) and its deadline for a job
 * started now: 0 when there is no limit. */
enum { MPIEXEC_TIMEOUT_EXIT = 124, MPIEXEC_TIMEOUT_MAX_S = 366 * 24 * 3600 };
double mpiexec_timeout_deadline(const mpiexec_opts_t *opts);

/* proxy.c: a proxy's link to the root (see root.c for the protocol). */
tern_status_t mpiexec_proxy_connect(mpiexec_job_t *job);
/* Every local rank of job `space` (0: the first) entered the barrier: tell
 * the root (our puts went up as they came). */
void mpiexec_proxy_fence(mpiexec_job_t *job, int space);
/* Reads from the root; applies puts, releases barriers, obeys terminate. */
void mpiexec_proxy_read(mpiexec_job_t *job);
/* Ends and queues a line to the root (freed). */
void mpiexec_proxy_send(mpiexec_job_t *job, tern_pmi_line_t *line);
/* Writes what the link to the root takes now. */
void mpiexec_proxy_flush(mpiexec_job_t *job);
/* Our part of the job failed: tell the root so it stops the other hosts. */
void mpiexec_proxy_report_failure(mpiexec_job_t *job, int code);
/* --ft: world rank `rank` of this host died (what: how); the root tells
 * every host. */
void mpiexec_proxy_report_dead(mpiexec_job_t *job, int rank, int code, const char *what);
/* --ft: rank `from` called MPI_Abort on a communicator of the world ranks
 * `ranks` (text: its message, or NULL); the root has every other host end
 * those ranks. */
void mpiexec_proxy_report_abort(mpiexec_job_t *job, int from, int code, const char *ranks,
                                const char *text);
/* --ft: marks world rank `rank` dead in this host's failed map. */
void mpiexec_proxy_mark_dead(mpiexec_job_t *job, int rank);
/* The proxy's ranks have all ended: the root stops watching its link. */
void mpiexec_proxy_report_done(mpiexec_job_t *job);
/* Ends the job when the root was silent past the heartbeat timeout, and
 * tells the root we are here every quarter of it (so a proxy busy with a
 * long backlog from the root, where the root's pings wait, is still heard);
 * the time until the next of those, in ms, for poll (-1: none). */
int mpiexec_proxy_heartbeat(mpiexec_job_t *job);

/* control_listen.c: the root's listening sockets, one per local address
 * its proxies connect to. */
enum { MPIEXEC_LISTEN_MAX = 16 };
typedef struct {
    int fd[MPIEXEC_LISTEN_MAX];
    struct in_addr addr[MPIEXEC_LISTEN_MAX];
    int port[MPIEXEC_LISTEN_MAX];
    int n;
} mpiexec_listen_t;
/* Opens (or reuses) the listener for `host`'s proxy (local: started here
 * directly; ssh: the launcher is ssh) and writes the address its proxy is
 * given into out. -1 after a message. */
int mpiexec_listen_for(mpiexec_listen_t *l, const char *host, int local, int ssh, char *out,
                       size_t cap);
void mpiexec_listen_close(mpiexec_listen_t *l);
/* options.c: fills opts from the command line. 0: run; 1: exit 0 (--help,
 * --version); -1: a usage error (exit 2); -2: a bad host list (exit 1);
 * the message is out. */
int mpiexec_parse_args(int argc, char **argv, mpiexec_opts_t *opts);
/* Frees what parsing allocated (host list, environment). */
void mpiexec_opts_free(mpiexec_opts_t *opts);

/* root.c: runs a job over several hosts; returns mpiexec's exit code. */
int mpiexec_root_run(const mpiexec_opts_t *opts);

/* hosts.c */
/* Reads a hostfile (lines "host[:slots]", # comments) into opts; -1 after
 * a message naming the file and line. */
int mpiexec_hosts_read_file(mpiexec_opts_t *opts, const char *path);
/* The same for an open stream (the fuzzer gives it fmemopen's); path only
 * names it in messages. */
int mpiexec_hosts_read_stream(mpiexec_opts_t *opts, const char *path, FILE *f);
/* Splits "a,b,c" (each may be host:slots) into opts; messages name "what"
 * (e.g. "--hosts") and the entry. */
int mpiexec_hosts_parse_list(mpiexec_opts_t *opts, const char *list, const char *what);
/* slurm_alloc.c: inside a Slurm allocation with no host list, the
 * allocation's nodes and slots, proxies started with srun. -1 on error. */
int mpiexec_slurm_hosts(mpiexec_opts_t *opts);
/* Ranks per host for np ranks (block placement); returns a malloc'd array of
 * n_hosts counts, or NULL with a message if they do not fit. */
int *mpiexec_hosts_place(const mpiexec_opts_t *opts);

/* spawn.c: one line of a rank's "mcmd=spawn" blocks (the first starts
 * one); at the last block's endcmd the processes start and the rank gets
 * its spawn_result. */
void mpiexec_spawn_line(mpiexec_job_t *job, mpiexec_rank_t *r, const char *line);
void mpiexec_spawn_free(mpiexec_job_t *job);
/* Proxy: a spawn message from the root (spawn_kv, spawn_start, spawn_kill,
 * spawn_result; see root_spawn.c for the protocol). */
void mpiexec_spawn_from_root(mpiexec_job_t *job, const tern_pmi_msg_t *msg);

/* pmi_server.c */
mpiexec_kvs_t *mpiexec_kvs_new(void);
void mpiexec_kvs_free(mpiexec_kvs_t *kvs);
tern_status_t mpiexec_kvs_put(mpiexec_kvs_t *kvs, const char *key, const char *value);
/* Queues a finished reply line to the rank (freed). */
void mpiexec_pmi_reply(mpiexec_job_t *job, mpiexec_rank_t *r, tern_pmi_line_t *line);
tern_status_t mpiexec_pmi_init(mpiexec_job_t *job);
/* Stores a key-value pair of job `space` (0: the first job, k: spaces[k - 1];
 * from the root, in proxy mode). */
tern_status_t mpiexec_pmi_store(mpiexec_job_t *job, int space, const char *key,
                                const char *value);
/* Releases every local rank of job `space` waiting in the barrier. */
void mpiexec_pmi_barrier_release(mpiexec_job_t *job, int space);
/* --ft: MPI_Abort from rank `from` on a communicator of the world ranks
 * listed in `ranks` ("0,3,5"): those are killed, the others go on (a
 * proxy kills its own and sends the abort to the root, which has the
 * other hosts kill theirs). */
void mpiexec_job_abort_ranks(mpiexec_job_t *job, mpiexec_rank_t *from, int code,
                             const char *ranks, const char *text);
/* SIGKILLs the ranks of this host (or job) listed in `ranks` (world
 * ranks, "0,3,5"), all but world rank `except`. */
void mpiexec_job_kill_ranks(mpiexec_job_t *job, const char *ranks, int except);
/* Reads what the rank sent and answers it. Returns 0 when the connection
 * closed, 1 otherwise. */
int mpiexec_pmi_read(mpiexec_job_t *job, mpiexec_rank_t *r);
/* Writes queued replies as far as the socket takes them. */
void mpiexec_pmi_flush(mpiexec_rank_t *r);
/* Replies are waiting: poll for POLLOUT. */
int mpiexec_pmi_pending(const mpiexec_rank_t *r);
void mpiexec_pmi_close(mpiexec_rank_t *r);
/* The name service: answers a publish/unpublish/lookup_name msg into reply
 * (rc, port or msg) from *names (made on first use). */
void mpiexec_names_apply(mpiexec_kvs_t **names, const tern_pmi_msg_t *msg, tern_pmi_line_t *reply);
/* Proxy: the root's answer (name_result from=I op=...) for rank I. */
void mpiexec_names_from_root(mpiexec_job_t *job, const tern_pmi_msg_t *msg);
void mpiexec_pmi_free(mpiexec_job_t *job);

/* stdio_forward.c. mpiexec's own stdout and stderr are written without
 * blocking (a reader that stops reading stalls the ranks' output, never
 * mpiexec); call mpiexec_output_open first, mpiexec_output_close last. */
void mpiexec_output_open(void);
void mpiexec_output_close(void);
/* More than MPIEXEC_OUTPUT_HELD_MAX waits for out_fd (1 or 2): stop reading
 * streams that go there. */
int mpiexec_output_full(int out_fd);
/* The fd to poll for POLLOUT for out_fd (1 or 2), or -1 if nothing waits. */
int mpiexec_output_poll_fd(int out_fd);
void mpiexec_output_flush(int out_fd);
/* Drops what could not be written (the job is over). */
void mpiexec_output_drop(void);
int mpiexec_output_pending(void);
/* Waits until everything queued is written, or until `until` (mpiexec_now()
 * time; 0: no limit) when the rest is dropped; a signal other than SIGCHLD
 * on signal_fd drops the rest and is returned (0 otherwise). */
int mpiexec_output_finish(int signal_fd, double until);
/* How long an ended (failed or signalled) job still waits for a reader. */
#define MPIEXEC_OUTPUT_LINGER_S 0.3
void mpiexec_stream_init(mpiexec_stream_t *s, int fd, int out_fd);
/* Reads once; forwards complete lines. Returns 0 at EOF (remainder flushed,
 * fd closed), 1 otherwise. */
int mpiexec_stream_read(const mpiexec_job_t *job, int rank, mpiexec_stream_t *s);
void mpiexec_stream_free(mpiexec_stream_t *s);
void mpiexec_stdin_read(mpiexec_job_t *job);
void mpiexec_stdin_write(mpiexec_job_t *job);
void mpiexec_stdin_close(mpiexec_job_t *job);

/* bind.c: the CPU set for each of n ranks, one core each, round robin. */
tern_status_t mpiexec_bind_cores(int n, cpu_set_t **sets_p);

#endif
