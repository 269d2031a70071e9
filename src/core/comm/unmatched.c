/* Messages nobody receives (unmatched.h). */
#include "core/comm/unmatched.h"
#include "base/pvars.h"
#include "base/config.h"
#include "base/log.h"
#include "core/pt2pt/bsend.h"
#include "core/pt2pt/match.h"
#include "core/pt2pt/send_cancel.h"
#include "core/runtime/runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Lines per communicator; the rest are summed up in one. */
enum { LINES_MAX = 16 };

typedef struct {
    const char *func;
    int error;       /* TERN_UNMATCHED=error */
    int quiet;       /* TERN_UNMATCHED=off */
    uint64_t found;  /* messages reported by this check */
} check_t;

static void say(int error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int error, const char *fmt, ...)
{
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (error)
        tern_error("%s", line);
    else
        tern_warn_always("%s", line);
}

static void check_start(check_t *k, const char *func)
{
    k->func = func;
    k->error = tern_knob_is(TERN_KNOB_UNMATCHED, "error");
    k->quiet = tern_knob_is(TERN_KNOB_UNMATCHED, "off");
    k->found = 0;
}

static tern_status_t report_error(uint64_t n)
{
    return tern_status_detail(TERN_ERR_UNMATCHED,
                              "%llu message%s arrived and %s never received (listed on stderr; "
                              "TERN_UNMATCHED=error)",
                              (unsigned long long)n, n == 1 ? "" : "s", n == 1 ? "was" : "were");
}

static tern_status_t check_end(const check_t *k)
{
    return k->found && k->error ? report_error(k->found) : TERN_OK;
}

tern_status_t tern_unmatched_since(uint64_t before)
{
    uint64_t n = tern_rt.n_unmatched - before;
    return n && tern_knob_is(TERN_KNOB_UNMATCHED, "error") ? report_error(n) : TERN_OK;
}

static int on_ctx(const tern_msg_t *msg, void *arg)
{
    return msg->context_id == *(const uint32_t *)arg;
}

/* Takes the messages on c's point-to-point context out of the unexpected
 * queue; reports, counts and drops them. */
static void check_comm(check_t *k, const tern_comm_t *c)
{
    uint32_t ctx = c->context_id;
    tern_unexp_t *head = NULL, **tail = &head, *u;
    uint64_t n = 0;
    while ((u = tern_match_take_unexpected_if(on_ctx, &ctx))) {
        *tail = u;
        tail = &u->next;
        n++;
    }
    if (!n)
        return;
    k->found += n;
    tern_rt.n_unmatched += n;
    tern_pvar_add(TERN_PVAR_P2P_UNMATCHED_DROPPED, n);
    if (!k->quiet) {
        char name[MPI_MAX_OBJECT_NAME + 32];
        if (c->name[0])
            snprintf(name, sizeof name, "%s (0x%x)", c->name, (unsigned)c->handle);
        else
            snprintf(name, sizeof name, "communicator 0x%x", (unsigned)c->handle);
        say(k->error,
            "%s: %llu message%s that arrived on %s %s never received, and %s dropped (%s):",
            k->func, (unsigned long long)n, n == 1 ? "" : "s", name, n == 1 ? "was" : "were",
            n == 1 ? "is" : "are",
            k->error ? "TERN_UNMATCHED=error: the call fails"
                     : "TERN_UNMATCHED=error makes this an error, =off silences it");
    }
    int lines = 0;
    while ((u = head)) {
        head = u->next;
        u->next = NULL;
        if (!k->quiet && lines < LINES_MAX)
            say(k->error, "  unmatched message on %s: source rank %d, tag %d, %zu bytes",
                c->name[0] ? c->name : "the communicator", u->msg.src, u->msg.tag,
                u->msg.size);
        lines++;
        tern_p2p_drop_unexpected(u);
    }
    if (!k->quiet && lines > LINES_MAX)
        say(k->error, "  ... and %d more", lines - LINES_MAX);
}

tern_status_t tern_unmatched_check(tern_comm_t *c, const char *func)
{
    check_t k;
    check_start(&k, func);
    check_comm(&k, c);
    return check_end(&k);
}

typedef struct {
    check_t *k;
    tern_bsend_pool_t *pool;
} session_walk_t;

static void check_if_session(tern_comm_t *c, void *arg)
{
    session_walk_t *w = arg;
    if (tern_bsend_ctx_fallback(c->context_id) == w->pool)
        check_comm(w->k, c);
}

tern_status_t tern_unmatched_check_session(uint32_t session, const char *func)
{
    check_t k;
    check_start(&k, func);
    session_walk_t w = {.k = &k, .pool = tern_bsend_session_pool(session, 0)};
    if (w.pool)
        tern_comm_each(check_if_session, &w);
    return check_end(&k);
}

static void check_each(tern_comm_t *c, void *arg)
{
    check_comm(arg, c);
}

static int any(const tern_msg_t *msg, void *arg)
{
    (void)msg;
    (void)arg;
    return 1;
}

tern_status_t tern_unmatched_check_all(const char *func)
{
    check_t k;
    check_start(&k, func);
    tern_comm_each(check_each, &k);
    /* What is left was internal, or sent on a communicator freed before it
     * arrived: nobody can name it to the user. */
    tern_unexp_t *u;
    while ((u = tern_match_take_unexpected_if(any, NULL))) {
        tern_debug("dropping an unexpected message on context %u from world rank %d at %s",
                   (unsigned)u->msg.context_id, u->msg.src_world, func);
        tern_p2p_drop_unexpected(u);
    }
    return check_end(&k);
}
