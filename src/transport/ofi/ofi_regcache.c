/* Tern's registration cache for the ofi transport (TERN_OFI_REGCACHE).
 *
 * A rendezvous send exposes its buffer to the receiver's RDMA read
 * (ofi_rma.c, mem_reg). Registering costs system calls and, on RDMA NICs,
 * pinning pages, so registrations outlive the send: each covers the
 * page-aligned range around a buffer, a later send that lies inside a
 * cached range reuses it, and up to TERN_OFI_REGCACHE unused ones stay
 * cached, the least recently used evicted first.
 *
 * Reuse is safe only while the range still maps the same pages. A monitor
 * watches every cached range with userfaultfd (non-cooperative events):
 * munmap, madvise(DONTNEED/FREE/REMOVE) and mremap of a watched range
 * queue an event and block the caller in the kernel until the event is
 * read. The monitor thread reads events under the cache mutex and takes
 * every entry overlapping the range out of the cache before it unlocks;
 * lookups take the same mutex, so once munmap (or a free() that unmaps)
 * returns, no send can find the old registration. An entry still in use
 * when invalidated lives until its send's FIN and is never handed out
 * again. Watched ranges are populated first (MADV_POPULATE_READ), so
 * normal use never raises the MISSING faults they are registered for.
 *
 * Lock rule: under the mutex no thread touches user memory, calls
 * malloc/free or libfabric. Any of these could unmap or fault on a watched
 * range and wait for the monitor, which would be waiting for the mutex. So
 * the application thread makes and closes registrations outside it, and
 * entries the monitor drops wait on a dead list for its next call.
 *
 * Where userfaultfd is unavailable (kernel, seccomp, no permission) or
 * TERN_OFI_REGCACHE=0, every send registers its buffer and closes it at the
 * FIN, as before; so does a send from a range userfaultfd refuses to watch
 * (file-backed or hugetlb mappings, a range another monitor watches). The
 * monitor thread is started at the first rendezvous send. */
#include "transport/ofi/ofi_regcache.h"
#include "base/config.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1 /* Linux 5.11 */
#endif

#define UFFD_EVENTS (UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP)

struct ofi_regcache {
    pthread_mutex_t lock;
    int on;                         /* caching: the monitor watches */
    int uffd, stop_fd;              /* stop_fd: an eventfd that ends the monitor */
    int monitor_running;
    pthread_t monitor;
    uintptr_t page;
    long max_unused;
    ofi_mr_entry_t *head;           /* cached entries, each watched */
    ofi_mr_entry_t *lru_head, *lru_tail;
    long n_unused;
    ofi_mr_entry_t *dead;           /* dropped, to be closed outside the lock */
    int refused_logged;
    unsigned long long hits, misses, invalidated, evicted;
};

/* ---- lists (under the lock) ---------------------------------------------- */

static void lru_remove(ofi_regcache_t *rc, ofi_mr_entry_t *c)
{
    *(c->lru_prev ? &c->lru_prev->lru_next : &rc->lru_head) = c->lru_next;
    *(c->lru_next ? &c->lru_next->lru_prev : &rc->lru_tail) = c->lru_prev;
    c->lru_prev = c->lru_next = NULL;
    rc->n_unused--;
}

static void lru_push(ofi_regcache_t *rc, ofi_mr_entry_t *c)
{
    c->lru_next = NULL;
    c->lru_prev = rc->lru_tail;
    *(rc->lru_tail ? &rc->lru_tail->lru_next : &rc->lru_head) = c;
    rc->lru_tail = c;
    rc->n_unused++;
}

static ofi_mr_entry_t *lookup(ofi_regcache_t *rc, uintptr_t s, uintptr_t e)
{
    for (ofi_mr_entry_t *c = rc->head; c; c = c->next)
        if (c->base <= s && e <= c->end)
            return c;
    return NULL;
}

/* Takes c out of the cache (it is no longer found); unused, it goes to the
 * dead list. The caller unwatches its range. */
static void uncache(ofi_regcache_t *rc, ofi_mr_entry_t *c)
{
    *(c->prev ? &c->prev->next : &rc->head) = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    c->cached = 0;
    if (c->refs == 0) {
        lru_remove(rc, c);
        c->next = rc->dead;
        rc->dead = c;
    }
}

/* ---- userfaultfd (under the lock) ----------------------------------------- */

static int uffd_register(ofi_regcache_t *rc, uintptr_t s, uintptr_t e)
{
    struct uffdio_register reg = {.range = {.start = s, .len = e - s},
                                  .mode = UFFDIO_REGISTER_MODE_MISSING};
    return ioctl(rc->uffd, UFFDIO_REGISTER, &reg) == 0;
}

static void uffd_unregister(ofi_regcache_t *rc, uintptr_t s, uintptr_t e)
{
    struct uffdio_range r = {.start = s, .len = e - s};
    /* Fails harmlessly where the range is already unmapped. */
    (void)ioctl(rc->uffd, UFFDIO_UNREGISTER, &r);
}

/* Stops watching [s, e) except where a cached entry still needs it (the
 * ranges of two buffers may share pages). */
static void unwatch(ofi_regcache_t *rc, uintptr_t s, uintptr_t e)
{
    while (s < e) {
        uintptr_t covered_to = 0, next = e;
        for (ofi_mr_entry_t *c = rc->head; c; c = c->next) {
            if (c->base <= s && c->end > s && c->end > covered_to)
                covered_to = c->end;
            else if (c->base > s && c->base < next)
                next = c->base;
        }
        if (covered_to) {
            s = covered_to;
            continue;
        }
        uffd_unregister(rc, s, next);
        s = next;
    }
}

/* Every entry overlapping [s, e) leaves the cache for good. */
static void invalidate(ofi_regcache_t *rc, uintptr_t s, uintptr_t e)
{
    ofi_mr_entry_t *gone = NULL, *next;
    for (ofi_mr_entry_t *c = rc->head; c; c = next) {
        next = c->next;
        if (c->base >= e || c->end <= s)
            continue;
        uncache(rc, c);
        rc->invalidated++;
        c->inval_next = gone;
        gone = c;
    }
    /* After all are out, so they do not keep each other's pages watched. */
    for (ofi_mr_entry_t *c = gone; c; c = c->inval_next)
        unwatch(rc, c->base, c->end);
}

static void handle_event(ofi_regcache_t *rc, const struct uffd_msg *m)
{
    switch (m->event) {
    case UFFD_EVENT_UNMAP:
    case UFFD_EVENT_REMOVE:
        invalidate(rc, m->arg.remove.start, m->arg.remove.end);
        break;
    case UFFD_EVENT_REMAP:
        invalidate(rc, m->arg.remap.from, m->arg.remap.from + m->arg.remap.len);
        /* The moved pages took the watch with them to their new address. */
        unwatch(rc, m->arg.remap.to, m->arg.remap.to + m->arg.remap.len);
        break;
    case UFFD_EVENT_PAGEFAULT: {
        /* A watched page went missing without an event we asked for (a
         * mapping grown in place by mremap, memory punched out of a file).
         * Unregistering wakes the faulting thread, which then faults as
         * usual; the 2 MB around the page too, so a grown mapping does not
         * come back here page by page, and the page itself whatever
         * happens to the rest. */
        uintptr_t a = (uintptr_t)m->arg.pagefault.address & ~(rc->page - 1);
        uintptr_t lo = a & ~(uintptr_t)((2 << 20) - 1);
        invalidate(rc, a, a + rc->page);
        unwatch(rc, lo, lo + (2 << 20));
        uffd_unregister(rc, a, a + rc->page);
        break;
    }
    default:
        break;
    }
}

/* Reads every pending event (each read releases a thread blocked in
 * munmap & co.). 0 when the descriptor broke. */
static int read_events(ofi_regcache_t *rc)
{
    struct uffd_msg msg[16];
    for (;;) {
        ssize_t n = read(rc->uffd, msg, sizeof msg);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN;
        for (size_t i = 0; i < (size_t)n / sizeof *msg; i++)
            handle_event(rc, &msg[i]);
    }
}

static void *monitor_main(void *arg)
{
    ofi_regcache_t *rc = arg;
    struct pollfd fds[2] = {{.fd = rc->uffd, .events = POLLIN},
                            {.fd = rc->stop_fd, .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[1].revents)
            return NULL;   /* finalize */
        if (fds[0].revents & (POLLERR | POLLNVAL))
            break;
        pthread_mutex_lock(&rc->lock);
        int ok = read_events(rc);
        pthread_mutex_unlock(&rc->lock);
        if (!ok)
            break;
    }
    /* Cannot watch any more (never seen): nothing cached may be reused, and
     * closing the descriptor unwatches everything and releases whoever
     * waits on it. */
    pthread_mutex_lock(&rc->lock);
    while (rc->head)
        uncache(rc, rc->head);
    close(rc->uffd);
    rc->uffd = -1;
    rc->on = 0;
    pthread_mutex_unlock(&rc->lock);
    return NULL;
}

/* ---- set-up --------------------------------------------------------------- */

/* Opens the userfaultfd and starts the monitor; NULL or why not. */
static const char *monitor_start(ofi_regcache_t *rc, char *why, size_t why_len)
{
    /* User-mode faults only is all we need, and all an unprivileged process
     * may ask for when vm.unprivileged_userfaultfd is 0. */
    rc->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (rc->uffd < 0)
        rc->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (rc->uffd < 0) {
        snprintf(why, why_len, "userfaultfd: %s%s", strerror(errno),
                 errno == EPERM ? " (seccomp, or vm.unprivileged_userfaultfd=0 on a kernel "
                                  "without UFFD_USER_MODE_ONLY)"
                                : "");
        return why;
    }
    struct uffdio_api api = {.api = UFFD_API, .features = UFFD_EVENTS};
    if (ioctl(rc->uffd, UFFDIO_API, &api) != 0 || (api.features & UFFD_EVENTS) != UFFD_EVENTS) {
        snprintf(why, why_len, "userfaultfd lacks the unmap/remove/remap events: %s",
                 strerror(errno));
        return why;
    }
    rc->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (rc->stop_fd < 0) {
        snprintf(why, why_len, "eventfd: %s", strerror(errno));
        return why;
    }
    /* Signals stay with the application's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&rc->monitor, NULL, monitor_main, rc);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        snprintf(why, why_len, "cannot start the monitor thread: %s", strerror(err));
        return why;
    }
    pthread_setname_np(rc->monitor, "tern-regcache");
    rc->monitor_running = 1;
    return NULL;
}

static ofi_regcache_t *regcache_open(void)
{
    ofi_regcache_t *rc = calloc(1, sizeof *rc);
    if (!rc)
        return NULL;
    pthread_mutex_init(&rc->lock, NULL);
    rc->uffd = rc->stop_fd = -1;
    rc->page = (uintptr_t)sysconf(_SC_PAGESIZE);
    long max = tern_knob_count(TERN_KNOB_OFI_REGCACHE);
    if (max == 0) {
        tern_debug("ofi: registration cache off (TERN_OFI_REGCACHE=0)");
        return rc;
    }
    char why[256];
    if (monitor_start(rc, why, sizeof why)) {
        tern_debug("ofi: registration cache off: %s", why);
        return rc;
    }
    rc->max_unused = max;
    rc->on = 1;
    tern_debug("ofi: registration cache on: up to %ld unused registrations, invalidated "
               "through userfaultfd",
               max);
    return rc;
}

/* ---- registrations (application thread, outside the lock) ------------------ */

/* Maps every page of [s, e) readable before it is watched, so that normal
 * use raises no MISSING fault. 0 when some page cannot be read. */
__attribute__((no_sanitize_address)) static int populate(uintptr_t s, uintptr_t e, uintptr_t page)
{
    if (madvise((void *)s, e - s, MADV_POPULATE_READ) == 0)
        return 1;
    if (errno != EINVAL)
        return 0;
    /* Kernel before 5.14: a byte per page (the page around the buffer may
     * hold other objects, hence no ASan here). */
    for (uintptr_t p = s; p < e; p += page)
        (void)*(volatile const char *)p;
    return 1;
}

static void close_entry(tern_tl_t *tl, ofi_mr_entry_t *c)
{
    for (int rail = 0; rail < tl->n_rails; rail++)
        if (c->mr[rail])
            fi_close(&c->mr[rail]->fid);
    free(c);
}

static void close_dead(tern_tl_t *tl)
{
    ofi_regcache_t *rc = tl->regcache;
    pthread_mutex_lock(&rc->lock);
    ofi_mr_entry_t *d = rc->dead;
    rc->dead = NULL;
    pthread_mutex_unlock(&rc->lock);
    while (d) {
        ofi_mr_entry_t *next = d->next;
        close_entry(tl, d);
        d = next;
    }
}

static tern_status_t register_rails(tern_tl_t *tl, ofi_mr_entry_t *c)
{
    /* The same requested key on every rail: without FI_MR_PROV_KEY one
     * word of the remote key then serves them all. */
    uint64_t key = tl->next_key++;
    for (int rail = 0; rail < tl->n_rails; rail++) {
        int ret = tern_ofi_mr_reg(tl, rail, (void *)c->base, c->end - c->base,
                                  FI_REMOTE_READ | FI_REMOTE_WRITE, key, &c->mr[rail]);
        if (ret) {
            tern_error("ofi: registering %zu bytes at %p on rail %d failed: %s",
                       (size_t)(c->end - c->base), (void *)c->base, rail, fi_strerror(-ret));
            return TERN_ERR_NOMEM;
        }
    }
    return TERN_OK;
}

tern_status_t tern_ofi_regcache_get(tern_tl_t *tl, void *buf, size_t len, ofi_mr_entry_t **e_p)
{
    if (!tl->regcache && !(tl->regcache = regcache_open()))
        return TERN_ERR_NOMEM;
    ofi_regcache_t *rc = tl->regcache;
    /* A zero-length registration is not portable: expose one byte. */
    uintptr_t s = (uintptr_t)buf, e = s + (len ? len : 1);
    uintptr_t ps = s & ~(rc->page - 1), pe = (e + rc->page - 1) & ~(rc->page - 1);

    pthread_mutex_lock(&rc->lock);
    int cache = rc->on;
    ofi_mr_entry_t *c = cache ? lookup(rc, ps, pe) : NULL;
    if (c) {
        if (c->refs++ == 0)
            lru_remove(rc, c);
        rc->hits++;
    } else {
        rc->misses++;
    }
    pthread_mutex_unlock(&rc->lock);
    if (c) {
        *e_p = c;
        return TERN_OK;
    }
    close_dead(tl);

    if (cache && populate(ps, pe, rc->page)) {
        s = ps;
        e = pe;
    } else {
        cache = 0;   /* registered for this send only, exactly the buffer */
    }
    c = calloc(1, sizeof *c);
    if (!c)
        return TERN_ERR_NOMEM;
    c->base = s;
    c->end = e;
    c->refs = 1;
    tern_status_t st = register_rails(tl, c);
    if (st != TERN_OK) {
        close_entry(tl, c);
        return st;
    }
    if (cache) {
        int refused = 0;
        pthread_mutex_lock(&rc->lock);
        if (rc->on && uffd_register(rc, s, e)) {
            c->cached = 1;
            c->next = rc->head;
            if (rc->head)
                rc->head->prev = c;
            rc->head = c;
        } else if (rc->on && !rc->refused_logged) {
            rc->refused_logged = 1;   /* logged once, after unlocking */
            refused = errno;
        }
        pthread_mutex_unlock(&rc->lock);
        if (refused)
            tern_debug("ofi: registration cache: userfaultfd cannot watch %p (+%zu bytes): %s; "
                       "such buffers are registered per send",
                       buf, len, strerror(refused));
    }
    *e_p = c;
    return TERN_OK;
}

void tern_ofi_regcache_put(tern_tl_t *tl, ofi_mr_entry_t *c)
{
    ofi_regcache_t *rc = tl->regcache;
    int close_now = 0;
    pthread_mutex_lock(&rc->lock);
    if (--c->refs == 0) {
        if (c->cached) {
            lru_push(rc, c);
            while (rc->n_unused > rc->max_unused) {
                ofi_mr_entry_t *old = rc->lru_head;
                uncache(rc, old);
                unwatch(rc, old->base, old->end);
                rc->evicted++;
            }
        } else {
            close_now = 1;   /* never cached, or invalidated while in use */
        }
    }
    pthread_mutex_unlock(&rc->lock);
    if (close_now)
        close_entry(tl, c);
    close_dead(tl);
}

void tern_ofi_regcache_finalize(tern_tl_t *tl)
{
    ofi_regcache_t *rc = tl->regcache;
    if (!tl->idle && tern_knob_bool(TERN_KNOB_OFI_REGCACHE_STATS))
        fprintf(stderr, "tern[rank %d]: ofi regcache: hits %llu, misses %llu, invalidated %llu, "
                        "evicted %llu\n",
                tl->rank, rc ? rc->hits : 0, rc ? rc->misses : 0, rc ? rc->invalidated : 0,
                rc ? rc->evicted : 0);
    if (!rc)
        return;
    if (rc->monitor_running) {
        uint64_t one = 1;
        (void)!write(rc->stop_fd, &one, sizeof one);
        pthread_join(rc->monitor, NULL);
    }
    /* Closing the descriptor unwatches every range at once. */
    if (rc->uffd >= 0)
        close(rc->uffd);
    if (rc->stop_fd >= 0)
        close(rc->stop_fd);
    while (rc->head)
        uncache(rc, rc->head);
    close_dead(tl);
    pthread_mutex_destroy(&rc->lock);
    free(rc);
    tl->regcache = NULL;
}
