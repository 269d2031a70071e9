/* The pipelined collective access's second thread (io_pipe.h). */
#include "core/io/io_pipe.h"
#include "core/runtime/api_lock.h"

#include <signal.h>
#include <stdio.h>

static void *pipe_main(void *arg)
{
    tern_io_pipe_t *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->busy && !w->stop)
            pthread_cond_wait(&w->cond, &w->lock);
        if (!w->busy)
            break;
        pthread_mutex_unlock(&w->lock);
        tern_status_t st = w->fn(w->f, w->arg);
        const char *d = st != TERN_OK ? tern_status_take_detail(st) : NULL;
        pthread_mutex_lock(&w->lock);
        if (st != TERN_OK && w->st == TERN_OK) {
            w->st = st;
            snprintf(w->error, sizeof w->error, "%s", d ? d : tern_status_string(st));
        }
        w->busy = 0;
        pthread_cond_broadcast(&w->cond);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

tern_status_t tern_io_pipe_wait(tern_io_pipe_t *w)
{
    if (!w->started)
        return TERN_OK;
    unsigned held = tern_api_suspend(); /* other threads' calls go on meanwhile */
    pthread_mutex_lock(&w->lock);
    while (w->busy)
        pthread_cond_wait(&w->cond, &w->lock);
    tern_status_t st = w->st;
    w->st = TERN_OK;
    pthread_mutex_unlock(&w->lock);
    tern_api_resume(held);
    return st == TERN_OK ? st : tern_status_detail(st, "%s", w->error);
}

/* fn(f, arg) on the calling thread: it touches only its buffer and the
 * driver, so the entry points' lock (when held: the file's thread, or a
 * program of MPI_THREAD_MULTIPLE) is let go meanwhile. */
static tern_status_t run_here(tern_file_t *f, tern_io_pipe_fn_t fn, void *arg)
{
    unsigned held = tern_api_suspend();
    tern_status_t st = fn(f, arg);
    tern_api_resume(held);
    return st;
}

tern_status_t tern_io_pipe_submit(tern_io_pipe_t *w, int pipelined, tern_file_t *f,
                                  tern_io_pipe_fn_t fn, void *arg)
{
    if (!pipelined)
        return run_here(f, fn, arg);
    if (!w->started) {
        *w = (tern_io_pipe_t){.f = f};
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->cond, NULL);
        /* No signal of the program's is delivered to it. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&w->thread, NULL, pipe_main, w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0) {
            pthread_cond_destroy(&w->cond);
            pthread_mutex_destroy(&w->lock);
            return run_here(f, fn, arg);
        }
        w->started = 1;
    }
    pthread_mutex_lock(&w->lock);
    w->fn = fn;
    w->arg = arg;
    w->busy = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    return TERN_OK;
}

tern_status_t tern_io_pipe_end(tern_io_pipe_t *w)
{
    if (!w->started)
        return TERN_OK;
    tern_status_t st = tern_io_pipe_wait(w);
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    w->started = 0;
    return st;
}
