/* MPI_Comm_spawn from several threads of a process at once
 * (MPI_THREAD_MULTIPLE; docs/design.md, "Threads" and "Dynamic
 * processes"). The program is its own child (argv[1] "echo" or "task").
 *   self   every rank: 4 threads, each 3 times MPI_Comm_spawn of 2 children
 *          over MPI_COMM_SELF, started together (a barrier of the threads),
 *          as MPICH's threads/spawn/multispawn does; each intercommunicator
 *          carries a token down (MPI_Bcast with MPI_ROOT) and the children's
 *          answers back, and the last one of each thread is checked again
 *          by the main thread after the join, then disconnected
 *   dup    4 threads, each 2 times a spawn of 1 child over its own dup of
 *          MPI_COMM_WORLD (all ranks: a collective spawn per thread)
 *   task   MPICH's threads/spawn/th_taskmanager: windows of 2 threads, each
 *          spawning 1 child over MPI_COMM_WORLD itself (the threads of
 *          each rank call the same collective at once), rank 0 and the
 *          child swap empty messages, disconnect; 6 windows
 * The context-id agreement of accept/connect used to reserve every free
 * slot while the root waited for the children, so a second spawn at the
 * same time found none ("too many communicators"). */
#include "../mpi/mtest.h"

#include <pthread.h>
#include <stdatomic.h>

#define MAX_THREADS 4
static atomic_int t_errors;
static const char *prog;

#define TCHECK(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            char m_[512];                                                                          \
            snprintf(m_, sizeof m_, __VA_ARGS__);                                                  \
            fprintf(stderr, "rank %d: [%s] %s:%d: check failed: %s: %s\n", mtest_rank,            \
                    mtest_subname, __FILE__, __LINE__, #cond, m_);                                 \
            atomic_fetch_add(&t_errors, 1);                                                        \
        }                                                                                          \
    } while (0)
#define TRC(call)                                                                                  \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        TCHECK(rc_ == MPI_SUCCESS, "%s: %s", #call, mtest_errstr(rc_));                            \
    } while (0)

/* ---- children ---- */

static void child(const char *role)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL)
        FATAL("child without a parent");
    int rank, size, psize;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_remote_size(parent, &psize);
    if (strcmp(role, "echo") == 0) {
        /* The token from parent 0, an answer to every parent, the token
         * again (from whichever thread checks), an ack to parent 0. */
        int tok = -1, again = -1;
        MPI_Bcast(&tok, 1, MPI_INT, 0, parent);
        for (int p = 0; p < psize; p++) {
            int back[3] = {tok + 1, rank, size};
            MPI_Send(back, 3, MPI_INT, p, 5, parent);
        }
        MPI_Bcast(&again, 1, MPI_INT, 0, parent);
        int ack[2] = {again, tok};
        MPI_Send(ack, 2, MPI_INT, 0, 6, parent);
    } else if (strcmp(role, "task") == 0) {
        /* th_taskmanager's child. */
        MPI_Send(NULL, 0, MPI_CHAR, 0, 1, parent);
        MPI_Recv(NULL, 0, MPI_CHAR, 0, 1, parent, MPI_STATUS_IGNORE);
    }
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    exit(0);
}

/* ---- parents ---- */

static pthread_barrier_t start;

/* One spawn of n "echo" children over comm (root 0), the token down and
 * the answers checked. */
static MPI_Comm spawn_echo(MPI_Comm comm, int n, int tok)
{
    char *args[] = {"echo", NULL};
    int codes[4] = {-1, -1, -1, -1}, crank, inter = 0, rsize = -1;
    MPI_Comm ic = MPI_COMM_NULL;
    MPI_Comm_rank(comm, &crank);
    TRC(MPI_Comm_spawn(prog, args, n, MPI_INFO_NULL, 0, comm, &ic, codes));
    if (ic == MPI_COMM_NULL)
        FATAL("no intercommunicator from a spawn (the others would hang)");
    for (int i = 0; i < n; i++)
        TCHECK(codes[i] == MPI_SUCCESS, "codes[%d] = %d", i, codes[i]);
    MPI_Comm_test_inter(ic, &inter);
    MPI_Comm_remote_size(ic, &rsize);
    TCHECK(inter && rsize == n, "inter %d, remote size %d (want %d)", inter, rsize, n);
    TRC(MPI_Bcast(&tok, 1, MPI_INT, crank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
    for (int c = 0; c < n; c++) {
        int back[3] = {-1, -1, -1};
        TRC(MPI_Recv(back, 3, MPI_INT, c, 5, ic, MPI_STATUS_IGNORE));
        TCHECK(back[0] == tok + 1 && back[1] == c && back[2] == n,
               "child %d answered (%d, %d, %d), want (%d, %d, %d)", c, back[0], back[1], back[2],
               tok + 1, c, n);
    }
    return ic;
}

/* The second token down, the acks back, then disconnect. */
static void finish_echo(MPI_Comm *ic, int n, int tok)
{
    int lrank;
    MPI_Comm_rank(*ic, &lrank);
    TRC(MPI_Bcast(&tok, 1, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, *ic));
    if (lrank == 0)
        for (int c = 0; c < n; c++) {
            int ack[2] = {-1, -1};
            TRC(MPI_Recv(ack, 2, MPI_INT, c, 6, *ic, MPI_STATUS_IGNORE));
            TCHECK(ack[0] == tok && ack[1] == tok, "child %d acked (%d, %d), want %d", c, ack[0],
                   ack[1], tok);
        }
    TRC(MPI_Comm_disconnect(ic));
    TCHECK(*ic == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle");
}

enum { SELF_THREADS = 4, SELF_ITERS = 3, SELF_CHILDREN = 2 };
static MPI_Comm last_ic[MAX_THREADS];

static void *self_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int it = 0; it < SELF_ITERS; it++) {
        int tok = 1000 * mtest_rank + 10 * t + it;
        pthread_barrier_wait(&start);
        MPI_Comm ic = spawn_echo(MPI_COMM_SELF, SELF_CHILDREN, tok);
        if (it < SELF_ITERS - 1)
            finish_echo(&ic, SELF_CHILDREN, tok);
        else
            last_ic[t] = ic;
    }
    return NULL;
}

static MPI_Comm dup_comm[MAX_THREADS];

static void *dup_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int it = 0; it < 2; it++) {
        int tok = 100 * t + it;
        pthread_barrier_wait(&start);
        MPI_Comm ic = spawn_echo(dup_comm[t], 1, tok);
        finish_echo(&ic, 1, tok);
    }
    return NULL;
}

static void *task_thread(void *arg)
{
    (void)arg;
    char *args[] = {"task", NULL};
    MPI_Comm ic = MPI_COMM_NULL;
    TRC(MPI_Comm_spawn(prog, args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, NULL));
    if (ic == MPI_COMM_NULL)
        FATAL("no intercommunicator from a spawn (the others would hang)");
    TRC(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    if (mtest_rank == 0) {
        TRC(MPI_Recv(NULL, 0, MPI_CHAR, 0, 1, ic, MPI_STATUS_IGNORE));
        TRC(MPI_Send(NULL, 0, MPI_CHAR, 0, 1, ic));
    }
    TRC(MPI_Comm_disconnect(&ic));
    return NULL;
}

static void run_threads(int n, void *(*fn)(void *))
{
    pthread_t th[MAX_THREADS];
    atomic_store(&t_errors, 0);
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (intptr_t i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, fn, (void *)i) != 0)
            FATAL("pthread_create");
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    int e = atomic_load(&t_errors);
    mtest_errors += e;
    mtest_sub_errors += e;
}

int main(int argc, char **argv)
{
    int provided = -1;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 1;
    prog = argv[0];
    if (argc > 1)
        child(argv[1]);
    mtest_init_common();
    if (provided != MPI_THREAD_MULTIPLE)
        FATAL("MPI_THREAD_MULTIPLE not granted (%d)", provided);

    mtest_begin("spawn_mt_self");
    run_threads(SELF_THREADS, self_thread);
    atomic_store(&t_errors, 0);
    /* The main thread checks each thread's last intercommunicator. */
    for (int t = 0; t < SELF_THREADS; t++)
        finish_echo(&last_ic[t], SELF_CHILDREN, 1000 * mtest_rank + 10 * t + SELF_ITERS - 1);
    mtest_errors += atomic_load(&t_errors);
    mtest_sub_errors += atomic_load(&t_errors);
    mtest_end();

    mtest_begin("spawn_mt_dup");
    for (int t = 0; t < 4; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &dup_comm[t]);
    run_threads(4, dup_thread);
    for (int t = 0; t < 4; t++)
        MPI_Comm_free(&dup_comm[t]);
    mtest_end();

    mtest_begin("spawn_mt_task");
    for (int w = 0; w < 6; w++)
        run_threads(2, task_thread);
    mtest_end();
    return mtest_finalize();
}
