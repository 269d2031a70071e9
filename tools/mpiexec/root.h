/* The multi-host root's state (root.c), shared with its spawn handling
 * (root_spawn.c). */
#ifndef TERN_MPIEXEC_ROOT_H
#define TERN_MPIEXEC_ROOT_H

#include "auth.h"
#include "mpiexec.h"

#include <arpa/inet.h>

typedef struct {
    const char *name;
    int first, count;
    int slots;                  /* from the hostfile or host list; 0: not given */
    pid_t pid;
    int running, status;
    int ctl_fd;                 /* proxy connection, once it proved itself */
    tern_pmi_reader_t ctl_in;
    mpiexec_outq_t ctl_out;
    int stdin_fd;               /* the launcher's stdin, while the secret waits */
    char addr[INET_ADDRSTRLEN + 16]; /* where its proxy connects: "a.b.c.d:port" */
    int fenced;
    int reported_failure;
    int said_hello;
    int told_finish;            /* a host without ranks of the first job: may end */
    double last_heard;          /* when its proxy last said anything (heartbeat) */
    int n_dead;                 /* --ft: its ranks known dead */
    int lost;                   /* its link or launcher is gone: its ranks are failed */
    int said_done;              /* its proxy's ranks all ended; it is on its way out */
    mpiexec_stream_t out, err;
} host_t;

typedef struct {
    char *key, *value;
} kv_t;

/* An accepted connection that has not proved itself yet. */
typedef struct {
    int fd;
    tern_pmi_reader_t in;
    char nonce[2 * MPIEXEC_NONCE_LEN + 1];
    char peer[INET6_ADDRSTRLEN + 8];
    double deadline;
} pending_t;

typedef struct mpiexec_root_spawn mpiexec_root_spawn_t;

typedef struct {
    const mpiexec_opts_t *opts;
    host_t *hosts;
    int n;
    mpiexec_listen_t listen;
    int signal_fd;
    unsigned char secret[MPIEXEC_SECRET_LEN];
    pending_t *pending;
    int n_pending, max_pending;
    kv_t *fresh;                 /* puts since the last release */
    int n_fresh, cap_fresh;
    int n_fenced;
    int failed, exit_code, terminating, killed;
    double kill_at;
    double end_at;               /* MPIEXEC_TIMEOUT's deadline; 0: none */
    mpiexec_job_t fwd;           /* for the line forwarder (no tagging) */
    mpiexec_opts_t fwd_opts;
    mpiexec_root_spawn_t *spawn; /* spawns under way and spawned jobs' fences */
    int universe;                /* MPI_UNIVERSE_SIZE */
    int n_ranked;                /* hosts[0, n_ranked) run the first job's ranks; the
                                  * others start when a spawn places processes there */
    char map[4096];              /* the first job's PMI_process_mapping */
    unsigned char *dead;         /* --ft: [world rank] known dead, told to every host */
    double hb_period, hb_timeout; /* seconds (TERN_MPIEXEC_HEARTBEAT_MS, _TIMEOUT_MS) */
    double next_ping;
} root_t;

/* root.c */
int mpiexec_root_is_local(const char *host);
/* Ends and queues a control line to the host's proxy (freed); dropped when
 * its link is gone. */
void mpiexec_root_send(root_t *rt, host_t *ho, tern_pmi_line_t *line);
/* Ends the job on every host with this exit code (the first failure's). */
void mpiexec_root_fail(root_t *rt, int code);
/* Drops the host's control link (its launcher's exit tells the rest). */
void mpiexec_root_drop_link(host_t *ho);
/* Reads what the host's link holds now (without waiting); 1 when more may
 * follow. */
int mpiexec_root_host_read(root_t *rt, host_t *ho);
/* Sends every host the puts since the last release, and the release. */
void mpiexec_root_release_all(root_t *rt);

/* root_ft.c: failure detection (heartbeat) and --ft. */
/* Pings the proxies when it is time; loses a host silent past the timeout. */
void mpiexec_root_heartbeat(root_t *rt);
/* A host is gone: --ft declares its ranks dead, else the job ends. */
void mpiexec_root_host_lost(root_t *rt, host_t *ho, const char *why);
/* Releases the PMI barrier once every host still fencing has fenced. */
void mpiexec_root_maybe_release(root_t *rt);
/* --ft: a host's launcher ended other than with status 0. */
void mpiexec_root_ft_host_ended(root_t *rt, host_t *ho);
/* pong, done, dead: 1 when msg was one of those (handled). */
int mpiexec_root_ft_message(root_t *rt, host_t *ho, const tern_pmi_msg_t *msg);

/* Starts host h's proxy (a host without ranks of the first job, for a
 * spawn); lines sent to it wait until it connects. */
tern_status_t mpiexec_root_start_host(root_t *rt, int h);

/* root_spawn.c: a control message about spawns or a spawned job's keys
 * and fences; 0 when it is none of those. */
int mpiexec_root_spawn_message(root_t *rt, host_t *ho, const tern_pmi_msg_t *msg);
/* A host started for a spawn ended (why: NULL when it ended normally):
 * spawns waiting for it fail; once the first job's hosts are all done, the
 * hosts started for spawns are told to end when their processes have. */
void mpiexec_root_spawn_host_ended(root_t *rt, int h, const char *why);
void mpiexec_root_spawn_free(root_t *rt);

#endif
