/* tern-bench: the threaded benchmarks' loop (mt_driver.h). */
#include "mt_driver.h"

#include <pthread.h>

#define MAX_THREADS 64
/* Thread t sends on TAG_BASE + t and acknowledges on TAG_ACK + t: on the
 * shared communicator neither may match another thread's message. */
#define TAG_BASE 200
#define TAG_ACK 300

typedef struct thread_arg {
    int id, kind, iters, warmup, window, peer;
    size_t size;
    MPI_Comm comm;
    char *sbuf, *rbuf;
    MPI_Request *req;
    pthread_barrier_t *start;
    double elapsed;
} thread_arg;

static void latency_loop(thread_arg *a)
{
    const int n = (int)a->size, tag = TAG_BASE + a->id;
    double t0 = 0;
    for (int i = 0; i < a->warmup + a->iters; i++) {
        if (i == a->warmup) {
            pthread_barrier_wait(a->start);
            t0 = MPI_Wtime();
        }
        if (bench_rank == 0) {
            BENCH_CHECK(MPI_Send(a->sbuf, n, MPI_BYTE, a->peer, tag, a->comm));
            BENCH_CHECK(MPI_Recv(a->rbuf, n, MPI_BYTE, a->peer, tag, a->comm, MPI_STATUS_IGNORE));
        } else {
            BENCH_CHECK(MPI_Recv(a->rbuf, n, MPI_BYTE, a->peer, tag, a->comm, MPI_STATUS_IGNORE));
            BENCH_CHECK(MPI_Send(a->sbuf, n, MPI_BYTE, a->peer, tag, a->comm));
        }
    }
    a->elapsed = MPI_Wtime() - t0;
}

static void rate_loop(thread_arg *a)
{
    const int n = (int)a->size, tag = TAG_BASE + a->id, ack_tag = TAG_ACK + a->id;
    int ack = 0;
    double t0 = 0;
    for (int i = 0; i < a->warmup + a->iters; i++) {
        if (i == a->warmup) {
            pthread_barrier_wait(a->start);
            t0 = MPI_Wtime();
        }
        if (bench_rank == 0) {
            for (int w = 0; w < a->window; w++)
                BENCH_CHECK(MPI_Isend(a->sbuf, n, MPI_BYTE, a->peer, tag, a->comm, &a->req[w]));
            BENCH_CHECK(MPI_Waitall(a->window, a->req, MPI_STATUSES_IGNORE));
            BENCH_CHECK(MPI_Recv(&ack, 1, MPI_INT, a->peer, ack_tag, a->comm, MPI_STATUS_IGNORE));
        } else {
            for (int w = 0; w < a->window; w++)
                BENCH_CHECK(MPI_Irecv(a->rbuf, n, MPI_BYTE, a->peer, tag, a->comm, &a->req[w]));
            BENCH_CHECK(MPI_Waitall(a->window, a->req, MPI_STATUSES_IGNORE));
            BENCH_CHECK(MPI_Send(&ack, 1, MPI_INT, a->peer, ack_tag, a->comm));
        }
    }
    a->elapsed = MPI_Wtime() - t0;
}

static void *thread_main(void *p)
{
    thread_arg *a = p;
    if (a->kind == BENCH_MT_LATENCY)
        latency_loop(a);
    else
        rate_loop(a);
    return NULL;
}

/* One size at one thread count; returns the column's figure (rank 0). */
static double run_threads(int kind, int nthreads, size_t size, thread_arg *args, const bench_opts *o)
{
    const int active = bench_rank < 2, peer = bench_rank == 0 ? 1 : 0;
    pthread_t tid[MAX_THREADS];
    pthread_barrier_t start;
    if (active && pthread_barrier_init(&start, NULL, (unsigned)nthreads)) {
        fprintf(stderr, "tern-bench: pthread_barrier_init failed\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (int t = 0; active && t < nthreads; t++) {
        thread_arg *a = &args[t];
        a->kind = kind, a->size = size, a->peer = peer, a->start = &start;
        a->iters = bench_iters(o, size), a->warmup = bench_warmup(o, size), a->window = o->window;
        bench_fill(a->sbuf, size, size, bench_rank, t, o);
        memset(a->rbuf, 0, size);
    }
    BENCH_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 0; active && t < nthreads; t++)
        if (pthread_create(&tid[t], NULL, thread_main, &args[t])) {
            fprintf(stderr, "tern-bench: pthread_create failed\n");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    double sum = 0, max = 0;
    for (int t = 0; active && t < nthreads; t++) {
        pthread_join(tid[t], NULL);
        sum += args[t].elapsed;
        max = args[t].elapsed > max ? args[t].elapsed : max;
    }
    if (!active) return 0;
    pthread_barrier_destroy(&start);
    /* Received data: each thread's own pattern (salt = thread number). */
    for (int t = 0; t < nthreads; t++)
        if (kind == BENCH_MT_LATENCY || bench_rank == 1)
            bench_check(args[t].rbuf, size, size, peer, t, "thread's data");
    const int iters = bench_iters(o, size);
    if (kind == BENCH_MT_LATENCY) return sum / nthreads * 1e6 / (2.0 * iters);
    return (double)nthreads * iters * o->window / max;
}

int bench_mt_main(int argc, char **argv, const bench_desc *desc, int kind)
{
    bench_opts o;
    bench_init(&argc, &argv, desc, &o);
    static char cols[4][32], keys[4][32];
    const char *unit = kind == BENCH_MT_LATENCY ? "latency_us" : "msg_rate";
    bench_table t = {.ncols = o.n_nthreads};
    int most = 0;
    for (int k = 0; k < o.n_nthreads; k++) {
        int n = o.nthreads[k];
        snprintf(cols[k], sizeof cols[k], kind == BENCH_MT_LATENCY ? "%d thr. (us)" : "%d thr. (msg/s)", n);
        snprintf(keys[k], sizeof keys[k], "%s_t%d", unit, n);
        t.cols[k] = cols[k], t.keys[k] = keys[k];
        most = n > most ? n : most;
    }
    thread_arg *args = bench_alloc(sizeof(thread_arg) * (size_t)most);
    MPI_Comm shared = MPI_COMM_NULL;
    if (o.shared_comm) BENCH_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &shared));
    for (int i = 0; i < most; i++) {
        args[i].id = i;
        if (o.shared_comm)
            args[i].comm = shared;
        else
            BENCH_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &args[i].comm));
        args[i].sbuf = bench_alloc(o.max_size);
        args[i].rbuf = bench_alloc(o.max_size);
        args[i].req = bench_alloc(sizeof(MPI_Request) * (size_t)(o.window ? o.window : 1));
    }
    bench_table_begin(&t, desc, &o);
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        double v[4];
        for (int k = 0; k < o.n_nthreads; k++) v[k] = run_threads(kind, o.nthreads[k], size, args, &o);
        bench_table_row(&t, size, v, bench_iters(&o, size));
    }
    for (int i = 0; i < most; i++) {
        if (!o.shared_comm) BENCH_CHECK(MPI_Comm_free(&args[i].comm));
        free(args[i].sbuf);
        free(args[i].rbuf);
        free(args[i].req);
    }
    if (o.shared_comm) BENCH_CHECK(MPI_Comm_free(&shared));
    free(args);
    return bench_finalize(&t);
}
