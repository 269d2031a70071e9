/* The I/O worker (io_async.h). */
#include "core/io/io_async.h"
#include "core/io/io_access.h"
#include "core/io/io_datarep.h"
#include "core/coll/shm_region.h"
#include "core/comm/comm_create.h"
#include "core/pt2pt/progress.h"
#include "core/runtime/api_lock.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
    struct job *next;         /* in the worker's queue */
    struct job *next_started; /* in the caller's list of jobs under way */
    tern_file_t *f;
    int write;
    MPI_Offset pos;
    char *mem;            /* the stream bytes: the user's memory or stage */
    char *stage;          /* packed copy of non-contiguous memory, the file form
                           * of a converting view's access, or NULL */
    const tern_io_datarep_t *rep; /* the view's representation, or NULL */
    size_t len;
    void *buf;            /* the user's buffer, count and type (reads unpack) */
    MPI_Count count;
    MPI_Datatype dt;
    tern_req_t *req;
    /* Written by the worker, read after done is seen. */
    tern_status_t st;
    size_t moved;
    char error[256];
    atomic_int done;
} job_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static job_t *queue_head, **queue_tail = &queue_head; /* waiting for the worker */
static job_t *started;                                /* queued or running, by the caller */
static int running, stopping;
static pthread_t worker;

static void *work(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!queue_head && !stopping)
            pthread_cond_wait(&wake, &lock);
        if (!queue_head)
            break;
        job_t *j = queue_head;
        queue_head = j->next;
        if (!queue_head)
            queue_tail = &queue_head;
        pthread_mutex_unlock(&lock);
        j->st = tern_io_move(j->f, j->write, j->pos, j->mem, j->len, &j->moved);
        if (j->st != TERN_OK) {
            const char *d = tern_status_take_detail(j->st);
            strncpy(j->error, d ? d : tern_status_string(j->st), sizeof j->error - 1);
        }
        atomic_store_explicit(&j->done, 1, memory_order_release);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void job_release(tern_req_t *req)
{
    job_t *j = req->ext;
    free(j->stage);
    free(j);
    req->ext = NULL;
}

/* The progress hook: completes the requests whose jobs the worker has done
 * (on the thread that runs progress, which owns requests). */
static int reap(void)
{
    int events = 0;
    for (job_t **p = &started; *p;) {
        job_t *j = *p;
        if (!atomic_load_explicit(&j->done, memory_order_acquire)) {
            p = &j->next_started;
            continue;
        }
        *p = j->next_started;
        tern_req_t *req = j->req;
        size_t bytes = j->moved;
        if (j->st == TERN_OK && j->rep)
            j->st = tern_io_datarep_unstage(j->f, j->rep, j->write, j->stage, j->moved, j->buf,
                                            j->count, j->dt, &bytes, &j->moved);
        else if (j->st == TERN_OK && !j->write && j->stage && j->moved)
            j->st = tern_datatype_unpack_range(j->stage, j->moved, j->buf, (size_t)j->count, j->dt, 0);
        req->status_bytes = bytes;
        if (j->st != TERN_OK) {
            req->error = j->st;
            req->error_text = j->error[0] ? j->error : NULL;
        }
        tern_datatype_release(j->dt);
        tern_req_complete(req);
        events++;
    }
    if (!started)
        tern_progress_unregister(reap);
    return events;
}

tern_status_t tern_io_async_start(tern_file_t *f, int write, MPI_Offset pos, void *buf,
                                  MPI_Count count, MPI_Datatype dt, char *staged,
                                  size_t staged_len, tern_req_t **req_p)
{
    size_t len = (size_t)count * (size_t)tern_datatype_size(dt);
    job_t *j = calloc(1, sizeof *j);
    tern_req_t *req = j ? tern_req_alloc(TERN_REQ_GENERIC) : NULL;
    if (!req) {
        free(j);
        free(staged);
        return tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of memory for a nonblocking "
                                  "access", f->name);
    }
    *j = (job_t){.f = f, .write = write, .pos = pos, .len = len, .buf = buf, .count = count,
                 .dt = dt, .req = req, .rep = f->view.rep};
    if (j->rep) {
        /* The file form of the whole access: a write converted now (or
         * by the caller already), a read converted when the request
         * completes. */
        tern_status_t st = TERN_OK;
        if (staged) {
            j->stage = staged;
            j->len = staged_len;
        } else {
            st = tern_io_datarep_stage(f, j->rep, write, buf, count, dt, &j->stage, &j->len);
        }
        if (st != TERN_OK) {
            free(j);
            tern_req_release(req);
            return st;
        }
        j->mem = j->stage;
    } else if (tern_datatype_is_contig(dt)) {
        j->mem = (char *)buf + tern_datatype_true_lb(dt);
    } else {
        /* The worker touches no datatype: a write is packed now, a read is
         * unpacked when the request completes. */
        j->stage = j->mem = malloc(len ? len : 1);
        tern_status_t st = j->stage ? TERN_OK
                                    : tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of "
                                                         "memory for %zu bytes of packing "
                                                         "buffer", f->name, len);
        if (st == TERN_OK && write)
            st = tern_datatype_pack(buf, (size_t)count, dt, j->stage);
        if (st != TERN_OK) {
            free(j->stage);
            free(j);
            tern_req_release(req);
            return st;
        }
    }
    tern_datatype_retain(dt);
    req->comm = (MPI_Comm)f->handle; /* its error goes to the file's handler */
    req->status_source = MPI_ANY_SOURCE;
    req->status_tag = MPI_ANY_TAG;
    req->ext = j;
    req->release_fn = job_release;
    tern_status_t st = TERN_OK;
    if (!started)
        st = tern_progress_register(reap);
    pthread_mutex_lock(&lock);
    if (st == TERN_OK && !running) {
        if (pthread_create(&worker, NULL, work, NULL) == 0)
            running = 1;
        else
            st = tern_status_detail(TERN_ERR_NOMEM, "file '%s': cannot start the I/O thread",
                                    f->name);
    }
    if (st == TERN_OK) {
        *queue_tail = j;
        queue_tail = &j->next;
        pthread_cond_signal(&wake);
    }
    pthread_mutex_unlock(&lock);
    if (st != TERN_OK) {
        if (!started)
            tern_progress_unregister(reap);
        tern_datatype_release(dt);
        tern_req_release(req);
        return st;
    }
    j->next_started = started;
    started = j;
    *req_p = req;
    return TERN_OK;
}

/* ---- buffered collectives: a thread per file ------------------------------ */

/* One buffered collective waiting for, or in, its rounds. */
typedef struct cjob {
    struct cjob *next;
    tern_io_coll_t *plan;
    MPI_Datatype dt;
    tern_io_async_conv_t conv; /* through a converting view, or zero */
    tern_req_t *req; /* NULL: this rank's call failed, it only takes part */
    char error[256]; /* the rounds' words for an error (the request's text) */
} cjob_t;

struct tern_io_cq {
    tern_file_t *f;
    tern_comm_t *comm; /* duplicate of f's communicator: the rounds' */
    pthread_t thread;
    int running, stopping;
    pthread_mutex_t lock; /* the queue, running and stopping */
    pthread_cond_t wake;
    cjob_t *head, **tail;
    int pending; /* queued or in their rounds: under the entry points' lock */
};

static void cjob_release(tern_req_t *req)
{
    free(req->ext);
    req->ext = NULL;
}

/* After the rounds of a collective through a converting view: a read's
 * file form converted into the program's buffer, *bytes from file bytes
 * to the items' native bytes; the stage freed. */
static tern_status_t conv_finish(tern_file_t *f, tern_io_async_conv_t *c, MPI_Datatype dt,
                                 tern_status_t st, size_t *bytes)
{
    if (!c->stage)
        return st; /* no conversion, or this rank had no data */
    size_t moved = 0;
    if (st == TERN_OK)
        st = tern_io_datarep_unstage(f, c->rep, c->write, c->stage, *bytes, c->buf, c->count,
                                     dt, bytes, &moved);
    free(c->stage);
    c->stage = NULL;
    return st;
}

/* Runs one job's rounds and completes its request. The caller holds the
 * entry points' lock: the engine is this thread's until a wait lets
 * another in (tern_progress_idle), as for any thread of MPI_THREAD_MULTIPLE. */
static void cjob_run(struct tern_io_cq *q, cjob_t *j)
{
    size_t bytes = 0;
    tern_status_t st = tern_io_coll_run(j->plan, q->comm, &bytes);
    tern_io_coll_free(j->plan);
    j->plan = NULL;
    st = conv_finish(q->f, &j->conv, j->dt, st, &bytes);
    const char *d = st != TERN_OK ? tern_status_take_detail(st) : NULL;
    tern_datatype_release(j->dt);
    tern_req_t *req = j->req;
    if (req) {
        req->status_bytes = bytes;
        if (st != TERN_OK) {
            strncpy(j->error, d ? d : tern_status_string(st), sizeof j->error - 1);
            req->error = st;
            req->error_text = j->error;
        }
        tern_req_complete(req);
    } else {
        free(j);
    }
    q->pending--;
}

static void *cq_main(void *arg)
{
    struct tern_io_cq *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->head && !q->stopping)
            pthread_cond_wait(&q->wake, &q->lock);
        if (!q->head)
            break;
        cjob_t *j = q->head;
        q->head = j->next;
        if (!q->head)
            q->tail = &q->head;
        pthread_mutex_unlock(&q->lock);
        tern_api_lock();
        cjob_run(q, j);
        tern_api_unlock();
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

int tern_io_async_coll_ok(const tern_file_t *f)
{
    return f->comm->size > 1 && atomic_load_explicit(&tern_api_locking, memory_order_relaxed);
}

void tern_io_async_coll_open(const tern_file_t *f)
{
    if (f->comm->size > 1 && !atomic_load_explicit(&tern_api_locking, memory_order_relaxed))
        tern_api_locking_on();
}

/* f's queue, made at its first buffered collective (every rank: the
 * duplicate is collective); its thread starts with the first job. */
static tern_status_t cq_get(tern_file_t *f, struct tern_io_cq **q_p)
{
    if (f->cq) {
        *q_p = f->cq;
        return TERN_OK;
    }
    struct tern_io_cq *q = calloc(1, sizeof *q);
    tern_status_t st = q ? TERN_OK
                         : tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of memory for "
                                              "its collectives' queue", f->name);
    /* Collective: every rank takes part, one out of memory too. */
    tern_comm_t *dup = NULL;
    tern_status_t dst = tern_comm_dup(f->comm, &dup);
    if (st == TERN_OK)
        st = dst;
    if (st != TERN_OK) {
        if (dup)
            tern_comm_destroy(dup);
        free(q);
        return st;
    }
    q->f = f;
    q->comm = dup;
    if (dup->size <= 2) /* as the file's own communicator (file.c) */
        tern_shm_coll_off(dup);
    q->tail = &q->head;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->wake, NULL);
    f->cq = *q_p = q;
    return TERN_OK;
}

tern_status_t tern_io_async_coll(tern_file_t *f, tern_io_coll_t *plan, MPI_Datatype dt,
                                 const tern_io_async_conv_t *conv, tern_req_t **req_p)
{
    tern_io_async_conv_t c = conv ? *conv : (tern_io_async_conv_t){0};
    struct tern_io_cq *q = NULL;
    tern_status_t st = cq_get(f, &q);
    if (st != TERN_OK) {
        /* No duplicate on any rank (it failed on every rank): the rounds
         * run here, on f's own communicator, as the others' do. */
        size_t bytes = 0;
        (void)tern_io_coll_run(plan, f->comm, &bytes);
        tern_io_coll_free(plan);
        (void)conv_finish(f, &c, dt, st, &bytes);
        return st;
    }
    cjob_t *j = calloc(1, sizeof *j);
    tern_req_t *req = j && req_p ? tern_req_alloc(TERN_REQ_GENERIC) : NULL;
    if (j && (req || !req_p)) {
        pthread_mutex_lock(&q->lock);
        if (!q->running) {
            /* Signals stay with the program's threads. */
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &old);
            q->running = pthread_create(&q->thread, NULL, cq_main, q) == 0;
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        pthread_mutex_unlock(&q->lock);
    }
    if (!j || (req_p && !req) || !q->running) {
        /* This rank cannot queue: its part runs here, on the same
         * communicator (the queue is empty when it has no thread, and
         * the others' threads meet it). */
        free(j);
        if (req)
            tern_req_release(req);
        size_t bytes = 0;
        tern_status_t rst = tern_io_coll_run(plan, q->comm, &bytes);
        tern_io_coll_free(plan);
        rst = conv_finish(f, &c, dt, rst, &bytes);
        if (!req_p)
            return TERN_OK;
        if (rst != TERN_OK)
            return rst;
        return tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of memory for a nonblocking "
                                  "collective access (its data has moved)", f->name);
    }
    j->plan = plan;
    j->dt = dt;
    j->conv = c;
    j->req = req;
    tern_datatype_retain(dt);
    if (req) {
        /* Its error goes to the file's handler when the wait raises it. */
        req->comm = (MPI_Comm)f->handle;
        req->status_source = MPI_ANY_SOURCE;
        req->status_tag = MPI_ANY_TAG;
        req->ext = j;
        req->release_fn = cjob_release;
        *req_p = req;
    }
    q->pending++;
    pthread_mutex_lock(&q->lock);
    *q->tail = j;
    q->tail = &j->next;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->lock);
    return TERN_OK;
}

void tern_io_async_coll_end(tern_file_t *f, int keep_comm)
{
    struct tern_io_cq *q = f->cq;
    if (!q)
        return;
    tern_io_async_drain(f);
    pthread_mutex_lock(&q->lock);
    q->stopping = 1;
    pthread_cond_broadcast(&q->wake);
    pthread_mutex_unlock(&q->lock);
    /* The thread holds the entry points' lock only for a job: with none
     * left it waits on its condition, so joining under the lock is safe. */
    if (q->running)
        pthread_join(q->thread, NULL);
    pthread_cond_destroy(&q->wake);
    pthread_mutex_destroy(&q->lock);
    if (!keep_comm)
        tern_comm_destroy(q->comm);
    free(q);
    f->cq = NULL;
}

tern_comm_t *tern_io_async_coll_comm(const tern_file_t *f)
{
    return f->cq ? f->cq->comm : NULL;
}

static int has_job(const tern_file_t *f)
{
    if (f && f->cq && f->cq->pending)
        return 1;
    for (const job_t *j = started; j; j = j->next_started)
        if (j->f == f)
            return 1;
    return 0;
}

void tern_io_async_drain(tern_file_t *f)
{
    unsigned polls = 0;
    while (f ? has_job(f) : started != NULL)
        if (tern_progress() == 0)
            tern_progress_idle(&polls);
}

void tern_io_async_finalize(void)
{
    tern_io_async_drain(NULL);
    pthread_mutex_lock(&lock);
    int was_running = running;
    stopping = 1;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
    if (was_running)
        pthread_join(worker, NULL);
    /* A later MPI_Session_init starts afresh. */
    running = stopping = 0;
}
