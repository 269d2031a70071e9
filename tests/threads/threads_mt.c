/* MPI_THREAD_MULTIPLE: several threads of each rank in MPI at once
 * (docs/design.md, "Threads"). Each sub-test checks the data moved, so a
 * lost or crossed message fails it, and a wait that kept the global lock
 * hangs it (the watchdog then names the sub-test).
 *   pairs        per-thread tags, blocking send/recv both ways, eager and
 *                rendezvous sizes
 *   any_source   one thread blocked in MPI_Recv(MPI_ANY_SOURCE) while
 *                another thread of the same rank sends (to itself at np 1)
 *   colls        concurrent collectives, one dup'ed communicator a thread
 *   dup_free     concurrent MPI_Comm_dup/MPI_Comm_free (context ids agreed
 *                by overlapping agreements)
 *   intercomm    concurrent MPI_Intercomm_create, MPI_Intercomm_merge and
 *                dup of the intercommunicator (agreements spanning two
 *                groups overlap; at np >= 2)
 *   cross_wait   MPI_Wait in one thread on a request another thread
 *                started, and MPI_Test polling from a third
 *   query        MPI_Query_thread, MPI_Is_thread_main in and off main
 * Threads count their own errors (mtest's counters are not shared). */
#include "../mpi/mtest.h"

#include <pthread.h>
#include <stdatomic.h>

#define MAX_THREADS 8
static int n_threads = 3;
static atomic_int t_errors;

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
#define TRC(call) TCHECK((call) == MPI_SUCCESS, "%s", #call)

/* Runs fn(i) on n_threads threads and folds their errors into mtest's. */
static void run_threads(void *(*fn)(void *))
{
    pthread_t th[MAX_THREADS];
    atomic_store(&t_errors, 0);
    for (intptr_t i = 0; i < n_threads; i++)
        if (pthread_create(&th[i], NULL, fn, (void *)i) != 0)
            FATAL("pthread_create");
    for (int i = 0; i < n_threads; i++)
        pthread_join(th[i], NULL);
    int e = atomic_load(&t_errors);
    mtest_errors += e;
    mtest_sub_errors += e;
}

/* ---- pairs ---- */
static void *pairs_thread(void *arg)
{
    int t = (int)(intptr_t)arg, peer = mtest_partner();
    /* Even threads send from the lower rank, odd ones from the upper. */
    int sender = (t % 2 == 0) == (mtest_rank <= peer);
    enum { ROUNDS = 40, BIG = 40000 };
    int *buf = malloc(sizeof(int) * BIG);
    for (int r = 0; r < ROUNDS; r++) {
        int n = r % 8 == 7 ? BIG : 1 + r; /* every 8th beyond the eager limit */
        if (sender || peer == mtest_rank) {
            for (int i = 0; i < n; i++)
                buf[i] = t * 1000003 + r * 1009 + i;
            if (peer == mtest_rank) {
                /* np 1: to itself, the receive posted first. */
                int *in = malloc(sizeof(int) * BIG);
                MPI_Request rq;
                TRC(MPI_Irecv(in, n, MPI_INT, peer, t, MPI_COMM_WORLD, &rq));
                TRC(MPI_Send(buf, n, MPI_INT, peer, t, MPI_COMM_WORLD));
                TRC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                TCHECK(in[n - 1] == buf[n - 1], "thread %d round %d", t, r);
                free(in);
            } else {
                TRC(MPI_Send(buf, n, MPI_INT, peer, t, MPI_COMM_WORLD));
            }
        } else {
            MPI_Status st;
            memset(buf, 0xff, sizeof(int) * (size_t)n);
            TRC(MPI_Recv(buf, n, MPI_INT, peer, t, MPI_COMM_WORLD, &st));
            int count = -1;
            MPI_Get_count(&st, MPI_INT, &count);
            TCHECK(count == n && st.MPI_TAG == t, "thread %d round %d: count %d tag %d", t, r,
                   count, st.MPI_TAG);
            for (int i = 0; i < n; i++)
                if (buf[i] != t * 1000003 + r * 1009 + i) {
                    TCHECK(0, "thread %d round %d: element %d is %d", t, r, i, buf[i]);
                    break;
                }
        }
    }
    free(buf);
    return NULL;
}

/* ---- any_source ---- */
enum { AS_TAG = 500, AS_MSGS = 50 };

static void *any_source_thread(void *arg)
{
    int t = (int)(intptr_t)arg, peer = mtest_partner();
    if (t == 0) { /* the receiver: the partner's sender thread feeds it */
        for (int i = 0; i < AS_MSGS; i++) {
            int v = -1;
            MPI_Status st;
            TRC(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, AS_TAG, MPI_COMM_WORLD, &st));
            TCHECK(st.MPI_SOURCE == peer && v == peer * 100000 + i,
                   "message %d: source %d value %d", i, st.MPI_SOURCE, v);
        }
    } else if (t == 1) {
        for (int i = 0; i < AS_MSGS; i++) {
            int v = mtest_rank * 100000 + i;
            TRC(MPI_Send(&v, 1, MPI_INT, peer, AS_TAG, MPI_COMM_WORLD));
        }
    } else { /* the rest keep the lock busy with calls of their own */
        for (int i = 0; i < 200; i++) {
            int flag;
            TRC(MPI_Iprobe(MPI_ANY_SOURCE, AS_TAG + 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            TCHECK(!flag, "nothing is sent on tag %d", AS_TAG + 1);
        }
    }
    return NULL;
}

/* ---- colls ---- */
static MPI_Comm tcomm[MAX_THREADS];

static void *colls_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Comm c = tcomm[t];
    for (int r = 0; r < 30; r++) {
        int v = mtest_rank + t * r, sum = -1;
        TRC(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
        int want = mtest_size * (mtest_size - 1) / 2 + mtest_size * t * r;
        TCHECK(sum == want, "thread %d round %d: allreduce %d, expected %d", t, r, sum, want);
        int b = mtest_rank == r % mtest_size ? t * 77 + r : -1;
        TRC(MPI_Bcast(&b, 1, MPI_INT, r % mtest_size, c));
        TCHECK(b == t * 77 + r, "thread %d round %d: bcast %d", t, r, b);
        TRC(MPI_Barrier(c));
    }
    return NULL;
}

/* ---- dup_free ---- */
static void *dup_free_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int r = 0; r < 20; r++) {
        MPI_Comm d = MPI_COMM_NULL;
        TRC(MPI_Comm_dup(tcomm[t], &d));
        if (d == MPI_COMM_NULL)
            return NULL;
        int size = -1, v = t + r, got = -1;
        MPI_Comm_size(d, &size);
        TCHECK(size == mtest_size, "dup size %d", size);
        /* The new communicator works and is its own: traffic on it meets
         * no other thread's. */
        TRC(MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_MAX, d));
        TCHECK(got == t + r, "thread %d round %d: allreduce on the dup %d", t, r, got);
        TRC(MPI_Comm_free(&d));
    }
    return NULL;
}

/* ---- intercomm ---- */
static void *intercomm_thread(void *arg)
{
    int t = (int)(intptr_t)arg;
    int half = mtest_rank % 2, other = 1 - half; /* ranks 0, 1 lead the halves */
    for (int r = 0; r < 10; r++) {
        MPI_Comm local = MPI_COMM_NULL, ic = MPI_COMM_NULL, merged = MPI_COMM_NULL,
                 icdup = MPI_COMM_NULL;
        TRC(MPI_Comm_split(tcomm[t], half, mtest_rank, &local));
        if (local == MPI_COMM_NULL)
            return NULL;
        TRC(MPI_Intercomm_create(local, 0, tcomm[t], other, 100 + t, &ic));
        if (ic == MPI_COMM_NULL) {
            MPI_Comm_free(&local);
            return NULL;
        }
        int lsize = -1, rsize = -1, rank = -1;
        MPI_Comm_size(local, &lsize);
        MPI_Comm_remote_size(ic, &rsize);
        TCHECK(lsize + rsize == mtest_size, "thread %d: sizes %d + %d", t, lsize, rsize);
        /* The odd half goes high: the merged order is even ranks first. */
        TRC(MPI_Intercomm_merge(ic, half, &merged));
        if (merged != MPI_COMM_NULL) {
            int lrank = -1;
            MPI_Comm_rank(local, &lrank);
            MPI_Comm_rank(merged, &rank);
            int expect = half ? (mtest_size + 1) / 2 + lrank : lrank;
            TCHECK(rank == expect, "thread %d: merged rank %d, expected %d", t, rank, expect);
            int v = t + r + mtest_rank, sum = -1;
            TRC(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, merged));
            int want = mtest_size * (t + r) + mtest_size * (mtest_size - 1) / 2;
            TCHECK(sum == want, "thread %d round %d: allreduce on merged %d, expected %d", t, r,
                   sum, want);
            TRC(MPI_Comm_free(&merged));
        }
        TRC(MPI_Comm_dup(ic, &icdup));
        if (icdup != MPI_COMM_NULL) {
            /* Leaders swap a value over the dup: traffic meets no other
             * thread's. */
            int lrank = -1;
            MPI_Comm_rank(icdup, &lrank);
            if (lrank == 0) {
                int mine = 1000 * t + 10 * r + half, got = -1;
                TRC(MPI_Sendrecv(&mine, 1, MPI_INT, 0, t, &got, 1, MPI_INT, 0, t, icdup,
                                 MPI_STATUS_IGNORE));
                TCHECK(got == 1000 * t + 10 * r + other, "thread %d round %d: got %d", t, r, got);
            }
            TRC(MPI_Comm_free(&icdup));
        }
        TRC(MPI_Comm_free(&ic));
        TRC(MPI_Comm_free(&local));
    }
    return NULL;
}

/* ---- cross_wait ---- */
static MPI_Request handed;
static int cross_in, cross_out;
static pthread_barrier_t cross_bar;

static void *cross_wait_thread(void *arg)
{
    int t = (int)(intptr_t)arg, peer = mtest_partner();
    if (t == 0) { /* starts the receive, hands it over */
        TRC(MPI_Irecv(&cross_in, 1, MPI_INT, peer, 600, MPI_COMM_WORLD, &handed));
        pthread_barrier_wait(&cross_bar);
    } else if (t == 1) { /* waits on the request thread 0 started */
        pthread_barrier_wait(&cross_bar);
        MPI_Status st;
        TRC(MPI_Wait(&handed, &st));
        TCHECK(handed == MPI_REQUEST_NULL, "Wait freed the request");
        TCHECK(cross_in == peer * 31 + 1 && st.MPI_SOURCE == peer && st.MPI_TAG == 600,
               "received %d from %d tag %d", cross_in, st.MPI_SOURCE, st.MPI_TAG);
    } else if (t == 2) { /* sends once the wait is (likely) under way */
        pthread_barrier_wait(&cross_bar);
        mtest_sleep(0.05);
        cross_out = mtest_rank * 31 + 1;
        MPI_Request s;
        int flag = 0;
        TRC(MPI_Isend(&cross_out, 1, MPI_INT, peer, 600, MPI_COMM_WORLD, &s));
        while (!flag)
            TRC(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
    } else {
        pthread_barrier_wait(&cross_bar);
    }
    return NULL;
}

/* ---- query ---- */
static void *query_thread(void *arg)
{
    (void)arg;
    int main_flag = -1, level = -1;
    TRC(MPI_Is_thread_main(&main_flag));
    TCHECK(main_flag == 0, "MPI_Is_thread_main off the main thread: %d", main_flag);
    TRC(MPI_Query_thread(&level));
    TCHECK(level == MPI_THREAD_MULTIPLE, "MPI_Query_thread in a thread: %d", level);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 1;
    mtest_init_common();
    const char *e = getenv("TERN_TEST_THREADS");
    if (e)
        n_threads = atoi(e);
    if (n_threads < 3 || n_threads > MAX_THREADS)
        n_threads = 3;

    mtest_begin("query");
    CHECK_INT(provided, MPI_THREAD_MULTIPLE, "provided");
    int flag = -1, level = -1;
    CHECK_RC(MPI_Is_thread_main(&flag));
    CHECK_INT(flag, 1, "MPI_Is_thread_main on the main thread");
    CHECK_RC(MPI_Query_thread(&level));
    CHECK_INT(level, MPI_THREAD_MULTIPLE, "MPI_Query_thread");
    run_threads(query_thread);
    mtest_end();

    mtest_begin("pairs");
    run_threads(pairs_thread);
    mtest_end();

    mtest_begin("any_source");
    run_threads(any_source_thread);
    mtest_end();

    for (int t = 0; t < n_threads; t++)
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
    mtest_begin("colls");
    run_threads(colls_thread);
    mtest_end();

    mtest_begin("dup_free");
    run_threads(dup_free_thread);
    mtest_end();

    if (mtest_size >= 2) {
        mtest_begin("intercomm");
        run_threads(intercomm_thread);
        mtest_end();
    }
    for (int t = 0; t < n_threads; t++)
        CHECK_RC(MPI_Comm_free(&tcomm[t]));

    mtest_begin("cross_wait");
    pthread_barrier_init(&cross_bar, NULL, (unsigned)n_threads);
    run_threads(cross_wait_thread);
    pthread_barrier_destroy(&cross_bar);
    mtest_end();

    return mtest_finalize();
}
