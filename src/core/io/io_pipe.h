/* The pipeline's second thread (io_coll.c): during one collective access
 * it runs the aggregator's file system calls (write_runs of round k,
 * read_span of round k + 1) while the calling thread exchanges a round
 * into the other buffer. One job at a time; a job touches only its buffer
 * and the driver, never MPI. Started at the first job (the tern_io_pipe_t
 * zeroed before it), joined before the call returns. */
#ifndef TERN_CORE_IO_PIPE_H
#define TERN_CORE_IO_PIPE_H

#include "core/io/file.h"

#include <pthread.h>

/* A job: fn(f, arg). */
typedef tern_status_t (*tern_io_pipe_fn_t)(tern_file_t *f, void *arg);

typedef struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int started, busy, stop;
    tern_file_t *f;
    tern_io_pipe_fn_t fn;
    void *arg;
    tern_status_t st; /* of the jobs since the last wait: the first error */
    char error[256];
} tern_io_pipe_t;

/* Waits for the job under way; its status (the text recorded again on
 * this thread). */
tern_status_t tern_io_pipe_wait(tern_io_pipe_t *w);

/* Hands fn(f, arg) to the thread (its buffer untouched until the next
 * wait); runs it here when the thread cannot start or with no pipeline. */
tern_status_t tern_io_pipe_submit(tern_io_pipe_t *w, int pipelined, tern_file_t *f,
                                  tern_io_pipe_fn_t fn, void *arg);

/* Waits for the last job and joins the thread; its status. */
tern_status_t tern_io_pipe_end(tern_io_pipe_t *w);

#endif
