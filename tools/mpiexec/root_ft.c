/* The multi-host root's failure detection and --ft (fault-tolerant) part
 * (root.c has the rest; the protocol is in proxy.c).
 *
 * Heartbeat: the root pings every proxy that said hello each
 * TERN_MPIEXEC_HEARTBEAT_MS; a proxy answers each ping, and anything a
 * proxy says counts as heard (as does a large backlog to it draining:
 * root.c's host_flush). A host not heard for
 * TERN_MPIEXEC_HEARTBEAT_TIMEOUT_MS is lost (a network cut, a dead host, a
 * hung proxy): its launcher is killed and, without --ft, the job ends
 * naming it. A proxy that no longer hears the root for the same time ends
 * its ranks (proxy.c), so the far side of a cut does not go on.
 *
 * --ft: a proxy reports each death of its ranks (dead rank=R code=N
 * what=TEXT); the root says it, naming the host, keeps the first death's
 * status for its exit, and tells every host (dead rank=R), whose proxy
 * marks the rank in its host's failed map (base/failed_map.h) where the
 * ranks read it. A lost host's ranks are declared dead the same way.
 * MPI_Abort on a communicator smaller than the world (abort rank=R
 * ranks=LIST) ends that communicator's ranks only: the root says it and
 * tells every other host to kill those of its ranks (kill ranks=LIST); their
 * deaths then come back as dead lines like any other. The
 * PMI barrier no longer waits for a host whose ranks are all gone. */
#include "mpiexec.h"
#include "root.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static void send_line(root_t *rt, host_t *ho, const char *cmd, const char *key, const char *value)
{
    tern_pmi_line_t line;
    tern_pmi_line_begin(&line, cmd);
    if (key)
        tern_pmi_line_add(&line, key, value);
    mpiexec_root_send(rt, ho, &line);
}

/* A host whose ranks are all gone (or that is lost) fences no more. */
static int host_out(const host_t *ho)
{
    return ho->lost || (ho->count > 0 && ho->n_dead >= ho->count);
}

/* --ft: the hosts still fencing have all fenced. */
void mpiexec_root_maybe_release(root_t *rt)
{
    int any = 0;
    for (int h = 0; h < rt->n_ranked; h++) {
        if (!rt->hosts[h].fenced && !host_out(&rt->hosts[h]))
            return;
        any |= rt->hosts[h].fenced;
    }
    if (any)
        mpiexec_root_release_all(rt);
}

static host_t *host_of_rank(root_t *rt, int rank)
{
    for (int h = 0; h < rt->n_ranked; h++)
        if (rank >= rt->hosts[h].first && rank < rt->hosts[h].first + rt->hosts[h].count)
            return &rt->hosts[h];
    return NULL;
}

/* --ft: world rank `rank` is dead; every host hears it (once). */
static void rank_dead(root_t *rt, int rank, int code)
{
    host_t *ho = host_of_rank(rt, rank);
    if (!ho || !rt->dead || rt->dead[rank])
        return;
    rt->dead[rank] = 1;
    ho->n_dead++;
    if (!rt->exit_code)
        rt->exit_code = (code & 0xff) ? (code & 0xff) : 1;
    char r[16];
    snprintf(r, sizeof r, "%d", rank);
    for (int h = 0; h < rt->n; h++)
        if (!rt->hosts[h].lost)
            send_line(rt, &rt->hosts[h], "dead", "rank", r);
    mpiexec_root_maybe_release(rt);
}

/* A host is gone (its link silent, its launcher ended): under --ft its
 * ranks are failed and the others go on; else the job ends. */
void mpiexec_root_host_lost(root_t *rt, host_t *ho, const char *why)
{
    if (ho->lost)
        return;
    ho->lost = 1;
    if (ho->running)
        kill(ho->pid, SIGKILL);
    mpiexec_root_drop_link(ho);
    if (rt->dead && ho->count > 0) {
        fprintf(stderr, "mpiexec: lost host %s (ranks %d-%d): %s; its ranks are failed, the "
                        "others go on (--ft)\n",
                ho->name, ho->first, ho->first + ho->count - 1, why);
        for (int r = ho->first; r < ho->first + ho->count; r++)
            rank_dead(rt, r, 1);
        mpiexec_root_maybe_release(rt);
        return;
    }
    fprintf(stderr, "mpiexec: lost host %s (ranks %d-%d): %s; terminating the job\n", ho->name,
            ho->first, ho->first + ho->count - 1, why);
    mpiexec_root_fail(rt, 1);
}

/* Pings every proxy that said hello; a silent one past the timeout is lost. */
void mpiexec_root_heartbeat(root_t *rt)
{
    double now = mpiexec_now();
    if (now < rt->next_ping)
        return;
    rt->next_ping = now + rt->hb_period;
    for (int h = 0; h < rt->n; h++) {
        host_t *ho = &rt->hosts[h];
        if (!ho->said_hello || !ho->running || ho->lost || ho->said_done || rt->terminating)
            continue;
        /* What waits in its socket first: we may have been the busy one. */
        while (now - ho->last_heard > rt->hb_timeout && ho->ctl_fd >= 0 &&
               mpiexec_root_host_read(rt, ho))
            ;
        if (now - ho->last_heard > rt->hb_timeout) {
            char why[128];
            snprintf(why, sizeof why, "no word from its proxy for %.0f ms (the heartbeat timeout, "
                     "TERN_MPIEXEC_HEARTBEAT_TIMEOUT_MS)", (now - ho->last_heard) * 1e3);
            mpiexec_root_host_lost(rt, ho, why);
        } else if (ho->ctl_fd >= 0) {
            send_line(rt, ho, "ping", NULL, NULL);
        }
    }
}

/* --ft: MPI_Abort of a communicator smaller than the world, from a rank of
 * host ho (which killed its own members): every other host kills its. */
static void root_abort(root_t *rt, host_t *ho, const tern_pmi_msg_t *msg)
{
    int from = -1, code = 1;
    tern_pmi_msg_get_int(msg, "rank", &from);
    tern_pmi_msg_get_int(msg, "code", &code);
    const char *ranks = tern_pmi_msg_get(msg, "ranks");
    const char *text = tern_pmi_msg_get(msg, "message");
    if (!ranks || !rt->dead)
        return;
    fprintf(stderr, "mpiexec: rank %d on host %s called MPI_Abort with code %d%s%s; ending ranks "
                    "%s of its communicator only (--ft)\n",
            from, ho->name, code, text ? ": " : "", text ? text : "", ranks);
    if (!rt->exit_code)
        rt->exit_code = (code & 0xff) ? (code & 0xff) : 1;
    char f[16];
    snprintf(f, sizeof f, "%d", from);
    for (int h = 0; h < rt->n; h++) {
        host_t *o = &rt->hosts[h];
        if (o == ho || o->lost)
            continue;
        tern_pmi_line_t line;
        tern_pmi_line_begin(&line, "kill");
        tern_pmi_line_add(&line, "ranks", ranks);
        tern_pmi_line_add(&line, "from", f);
        mpiexec_root_send(rt, o, &line);
    }
}

int mpiexec_root_ft_message(root_t *rt, host_t *ho, const tern_pmi_msg_t *msg)
{
    if (strcmp(msg->cmd, "pong") == 0)
        return 1;
    if (strcmp(msg->cmd, "done") == 0) {
        ho->said_done = 1;
        return 1;
    }
    if (strcmp(msg->cmd, "abort") == 0) {
        root_abort(rt, ho, msg);
        return 1;
    }
    if (strcmp(msg->cmd, "dead") != 0)
        return 0;
    int rank = -1, code = 1;
    tern_pmi_msg_get_int(msg, "rank", &rank);
    tern_pmi_msg_get_int(msg, "code", &code);
    const char *what = tern_pmi_msg_get(msg, "what");
    if (rank < ho->first || rank >= ho->first + ho->count)
        return 1;
    fprintf(stderr, "mpiexec: rank %d on host %s %s; the others go on (--ft)\n", rank, ho->name,
            what ? what : "died");
    rank_dead(rt, rank, code);
    return 1;
}

void mpiexec_root_ft_host_ended(root_t *rt, host_t *ho)
{
    int st = ho->status;
    /* A proxy whose ranks all ended leaves with the first death's status;
     * any other end loses the host's ranks. */
    if (ho->said_done || ho->lost) {
        if (!rt->exit_code && WIFEXITED(st))
            rt->exit_code = WEXITSTATUS(st);
    } else {
        char why[128];
        if (WIFEXITED(st))
            snprintf(why, sizeof why, "its remote start exited with code %d", WEXITSTATUS(st));
        else
            snprintf(why, sizeof why, "its remote start was killed by signal %d", WTERMSIG(st));
        mpiexec_root_host_lost(rt, ho, why);
    }
    mpiexec_root_spawn_host_ended(rt, (int)(ho - rt->hosts), NULL);
}
