/* The I/O worker (io_async.h). */
#include "core/io/io_async.h"
#include "core/io/io_access.h"
#include "core/pt2pt/progress.h"

#include <pthread.h>
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
    char *stage;          /* packed copy of non-contiguous memory, or NULL */
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
        if (j->st == TERN_OK && !j->write && j->stage && j->moved)
            j->st = tern_datatype_unpack_range(j->stage, j->moved, j->buf, (size_t)j->count, j->dt, 0);
        req->status_bytes = j->moved;
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
                                  MPI_Count count, MPI_Datatype dt, tern_req_t **req_p)
{
    size_t len = (size_t)count * (size_t)tern_datatype_size(dt);
    job_t *j = calloc(1, sizeof *j);
    tern_req_t *req = j ? tern_req_alloc(TERN_REQ_GENERIC) : NULL;
    if (!req) {
        free(j);
        return tern_status_detail(TERN_ERR_NOMEM, "file '%s': out of memory for a nonblocking "
                                  "access", f->name);
    }
    *j = (job_t){.f = f, .write = write, .pos = pos, .len = len, .buf = buf, .count = count,
                 .dt = dt, .req = req};
    if (tern_datatype_is_contig(dt)) {
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
    req->comm = MPI_COMM_NULL;
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

static int has_job(const tern_file_t *f)
{
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
