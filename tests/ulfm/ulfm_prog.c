/* ULFM cases for ulfm_test.sh, run under mpiexec --ft: ulfm_prog <case>.
 * A victim ends itself with SIGKILL at a chosen point (or the script kills
 * it); every survivor checks the error classes ULFM promises and prints one
 * line "survivor <rank> <what every survivor must agree on>" that the
 * script compares across survivors. Any broken promise prints "FAIL ..."
 * and exits 1. */
#include <mpi.h>
#include <mpi-ext.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        printf("FAIL rank %d line %d: ", rank, __LINE__);                                          \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
        exit(1);                                                                                   \
    } while (0)

static int cls(int err)
{
    int c = err;
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &c);
    return c;
}

static void expect_class(int err, int want, const char *what)
{
    if (cls(err) != want) {
        char text[MPI_MAX_ERROR_STRING] = "";
        int len;
        if (err != MPI_SUCCESS)
            MPI_Error_string(err, text, &len);
        FAIL("%s: class %d, expected %d (%s)", what, cls(err), want, text);
    }
}

static void die(void)
{
    fflush(stdout);
    raise(SIGKILL);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The world ranks of comm's failed-and-acknowledged group, as text, in
 * ascending order. */
static void acked_text(MPI_Comm comm, char *out, size_t cap)
{
    MPI_Group fg, wg;
    int n;
    MPIX_Comm_failure_ack(comm);
    MPIX_Comm_failure_get_acked(comm, &fg);
    MPI_Group_size(fg, &n);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *in = malloc(sizeof(int) * (size_t)(n + 1)), *w = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        in[i] = i;
    MPI_Group_translate_ranks(fg, n, in, wg, w);
    /* The group lists the failures in the order this rank learned of them,
     * which differs between survivors (two ranks of a lost host); the set
     * is what must agree: print it sorted. */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && w[j - 1] > w[j]; j--) {
            int t = w[j];
            w[j] = w[j - 1];
            w[j - 1] = t;
        }
    size_t k = (size_t)snprintf(out, cap, "[");
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%d", i ? "," : "", w[i]);
    snprintf(out + k, cap - k, "]");
    free(in);
    free(w);
    MPI_Group_free(&fg);
    MPI_Group_free(&wg);
}

/* After the failures: shrink, check the survivors' order and that the new
 * communicator works (an allreduce of world ranks), print the line. */
static void recover_and_report(MPI_Comm comm, const char *extra)
{
    MPI_Comm sh;
    int err = MPIX_Comm_shrink(comm, &sh);
    expect_class(err, MPI_SUCCESS, "MPIX_Comm_shrink");
    /* What the shrink agreed failed is known failed here: acknowledged,
     * it is the same group on every survivor. */
    char failed[256];
    acked_text(comm, failed, sizeof failed);
    int n, r;
    MPI_Comm_size(sh, &n);
    MPI_Comm_rank(sh, &r);
    /* Old order kept: the world ranks rise along the new ranks. */
    int *all = malloc(sizeof(int) * (size_t)n);
    err = MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, sh);
    expect_class(err, MPI_SUCCESS, "MPI_Allgather on the shrunk communicator");
    for (int i = 1; i < n; i++)
        if (all[i] <= all[i - 1])
            FAIL("shrunk order: new rank %d is world %d after world %d", i, all[i], all[i - 1]);
    if (all[r] != rank)
        FAIL("shrunk communicator: my entry is %d", all[r]);
    long sum = 0, mine = rank;
    err = MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, sh);
    expect_class(err, MPI_SUCCESS, "MPI_Allreduce on the shrunk communicator");
    char members[256];
    size_t k = 0;
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(members + k, sizeof members - k, "%s%d", i ? "," : "", all[i]);
    printf("survivor %d failed=%s members=%s sum=%ld%s%s\n", rank, failed, members, sum,
           extra ? " " : "", extra ? extra : "");
    fflush(stdout);
    free(all);
    MPI_Comm_free(&sh);
}

/* The window's own handler: the class of each error it was called with. */
static int win_handler_calls, win_handler_class;
static void win_handler(MPI_Win *win, int *err, ...)
{
    (void)win;
    win_handler_calls++;
    win_handler_class = cls(*err);
}

/* The file's own handler, likewise. */
static int file_handler_calls, file_handler_class;
static void file_handler(MPI_File *fh, int *err, ...)
{
    (void)fh;
    file_handler_calls++;
    file_handler_class = cls(*err);
}

/* A collective's error on a survivor: PROC_FAILED (or REVOKED). */
static void expect_coll_failed(int err, const char *what)
{
    int c = cls(err);
    if (c != MPIX_ERR_PROC_FAILED && c != MPIX_ERR_REVOKED)
        FAIL("%s: class %d, expected MPIX_ERR_PROC_FAILED or MPIX_ERR_REVOKED", what, c);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    printf("pid %d %ld\n", rank, (long)getpid());
    fflush(stdout);
    /* coll_first: rank 1 dies before the job's first collective, while
     * the node's shm region is created (as MPICH's ft/barrier does). */
    int first = !strcmp(c, "coll_first");
    if (!first)
        MPI_Barrier(MPI_COMM_WORLD);
    int victim = first ? 1 : size - 1, err;

    if (!strcmp(c, "coll_before") || first || !strcmp(c, "coll_after") ||
        !strcmp(c, "two_killed")) {
        /* before: the victim dies before the collective; after: a
         * collective completes, then it dies; two: ranks 1 and 2 die. */
        if (!strcmp(c, "coll_after")) {
            long s = 0, one = 1;
            expect_class(MPI_Allreduce(&one, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
                         MPI_SUCCESS, "MPI_Allreduce before the failure");
            if (s != size)
                FAIL("sum %ld", s);
        }
        int two = !strcmp(c, "two_killed");
        if ((!two && rank == victim) || (two && (rank == 1 || rank == 2)))
            die();
        for (int i = 0; i < 3; i++) {
            expect_coll_failed(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            long s = 0, one = 1;
            expect_coll_failed(MPI_Allreduce(&one, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
                               "MPI_Allreduce");
            int v = rank;
            expect_coll_failed(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
        }
        recover_and_report(MPI_COMM_WORLD, NULL);
    } else if (!strcmp(c, "coll_during")) {
        /* The victim dies in the middle of a run of collectives: every
         * survivor's run stops with an error (none hangs). */
        int it;
        for (it = 0; it < 100000; it++) {
            if (rank == victim && it == 500)
                die();
            long s = 0, one = 1;
            err = (it & 1) ? MPI_Allreduce(&one, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD)
                           : MPI_Bcast(&one, 1, MPI_LONG, it % size, MPI_COMM_WORLD);
            if (err != MPI_SUCCESS)
                break;
        }
        if (it == 100000)
            FAIL("no collective failed");
        expect_coll_failed(err, "a collective during the failure");
        /* The survivors may stop at different iterations: agree first. */
        int flag = 1;
        err = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        if (cls(err) != MPI_SUCCESS && cls(err) != MPIX_ERR_PROC_FAILED)
            FAIL("agree: class %d", cls(err));
        recover_and_report(MPI_COMM_WORLD, NULL);
    } else if (!strcmp(c, "agree")) {
        /* Rank 0, the agreement's first coordinator, dies between two
         * agreements while the others are in the next one; flags AND. */
        victim = 0;
        int flag = 0, agreed_bits = 0;
        for (int i = 0; i < 50; i++) {
            if (rank == victim && i == 20)
                die();
            flag = ~(1 << (rank % 16)); /* the AND clears one bit per member */
            err = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
            if (cls(err) == MPIX_ERR_PROC_FAILED) {
                MPIX_Comm_failure_ack(MPI_COMM_WORLD);
                flag = ~(1 << (rank % 16));
                err = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
            }
            expect_class(err, MPI_SUCCESS, "MPIX_Comm_agree");
            agreed_bits = flag;
        }
        char extra[64];
        snprintf(extra, sizeof extra, "flag=%#x", (unsigned)agreed_bits);
        recover_and_report(MPI_COMM_WORLD, extra);
    } else if (!strcmp(c, "shrink")) {
        /* The victim dies between two shrinks, while the others shrink. */
        for (int i = 0; i < 30; i++) {
            if (rank == victim && i == 10)
                die();
            MPI_Comm sh;
            expect_class(MPIX_Comm_shrink(MPI_COMM_WORLD, &sh), MPI_SUCCESS, "MPIX_Comm_shrink");
            int n;
            MPI_Comm_size(sh, &n);
            if (n != size && n != size - 1)
                FAIL("shrunk size %d", n);
            MPI_Comm_free(&sh);
        }
        recover_and_report(MPI_COMM_WORLD, NULL);
    } else if (!strcmp(c, "revoke")) {
        /* No failure: rank 0 revokes while the others wait in receives. */
        if (rank == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            usleep(100000);
            expect_class(MPIX_Comm_revoke(MPI_COMM_WORLD), MPI_SUCCESS, "MPIX_Comm_revoke");
        } else {
            int v;
            MPI_Request rq;
            expect_class(MPI_Irecv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &rq), MPI_SUCCESS,
                         "MPI_Irecv");
            MPI_Barrier(MPI_COMM_WORLD);
            expect_class(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE),
                         MPIX_ERR_REVOKED, "MPI_Recv on a revoked communicator");
            expect_class(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPIX_ERR_REVOKED,
                         "MPI_Wait of a receive pending at the revocation");
        }
        int flag = 0;
        MPIX_Comm_is_revoked(MPI_COMM_WORLD, &flag);
        if (!flag)
            FAIL("MPIX_Comm_is_revoked: 0");
        expect_class(MPI_Send(&flag, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD),
                     MPIX_ERR_REVOKED, "MPI_Send on a revoked communicator");
        expect_class(MPI_Barrier(MPI_COMM_WORLD), MPIX_ERR_REVOKED, "MPI_Barrier (revoked)");
        recover_and_report(MPI_COMM_WORLD, NULL);
    } else if (!strcmp(c, "anysource")) {
        /* Rank 1 dies; rank 0's wildcard receives fail until it
         * acknowledges; then rank 2's message is received. */
        if (rank == 1)
            die();
        if (rank == 0) {
            int v = -1, w0 = 0;
            MPI_Request rq;
            MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &rq);
            expect_class(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED_PENDING,
                         "MPI_Wait of an ANY_SOURCE receive");
            if (rq == MPI_REQUEST_NULL)
                FAIL("the pending request was freed");
            int idx = -1;
            expect_class(MPI_Waitany(1, &rq, &idx, MPI_STATUS_IGNORE),
                         MPIX_ERR_PROC_FAILED_PENDING, "MPI_Waitany of an ANY_SOURCE receive");
            if (idx != 0 || rq == MPI_REQUEST_NULL)
                FAIL("MPI_Waitany: index %d, request %s", idx,
                     rq == MPI_REQUEST_NULL ? "freed" : "kept");
            MPI_Status sts[1];
            expect_class(MPI_Waitall(1, &rq, sts), MPI_ERR_IN_STATUS,
                         "MPI_Waitall of an ANY_SOURCE receive");
            if (cls(sts[0].MPI_ERROR) != MPIX_ERR_PROC_FAILED_PENDING || rq == MPI_REQUEST_NULL)
                FAIL("MPI_Waitall: status error class %d", cls(sts[0].MPI_ERROR));
            /* The test forms say the same without waiting; a request that
             * did complete beside it is finished, another stays pending. */
            int tf = 0;
            expect_class(MPI_Test(&rq, &tf, MPI_STATUS_IGNORE), MPIX_ERR_PROC_FAILED_PENDING,
                         "MPI_Test of an ANY_SOURCE receive");
            tf = 0;
            idx = -1;
            expect_class(MPI_Testany(1, &rq, &idx, &tf, MPI_STATUS_IGNORE),
                         MPIX_ERR_PROC_FAILED_PENDING, "MPI_Testany of an ANY_SOURCE receive");
            if (idx != 0 || !tf || rq == MPI_REQUEST_NULL)
                FAIL("MPI_Testany: index %d, flag %d, request %s", idx, tf,
                     rq == MPI_REQUEST_NULL ? "freed" : "kept");
            int outc = 0, ids[3];
            expect_class(MPI_Testsome(1, &rq, &outc, ids, sts), MPI_ERR_IN_STATUS,
                         "MPI_Testsome of an ANY_SOURCE receive");
            if (outc != 1 || ids[0] != 0 || cls(sts[0].MPI_ERROR) != MPIX_ERR_PROC_FAILED_PENDING)
                FAIL("MPI_Testsome: outcount %d, class %d", outc, cls(sts[0].MPI_ERROR));
            expect_class(MPI_Waitsome(1, &rq, &outc, ids, sts), MPI_ERR_IN_STATUS,
                         "MPI_Waitsome of an ANY_SOURCE receive");
            if (outc != 1 || cls(sts[0].MPI_ERROR) != MPIX_ERR_PROC_FAILED_PENDING)
                FAIL("MPI_Waitsome: outcount %d, class %d", outc, cls(sts[0].MPI_ERROR));
            int self_v = 0, self_in = 11;
            MPI_Request three[3];
            three[0] = rq;
            MPI_Irecv(&self_v, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &three[1]);
            MPI_Irecv(&w0, 1, MPI_INT, 0, 12, MPI_COMM_WORLD, &three[2]);
            MPI_Send(&self_in, 1, MPI_INT, 0, 11, MPI_COMM_WORLD);
            MPI_Status sts3[3];
            tf = 0;
            expect_class(MPI_Testall(3, three, &tf, sts3), MPI_ERR_IN_STATUS,
                         "MPI_Testall with an ANY_SOURCE receive");
            if (!tf || three[0] == MPI_REQUEST_NULL || three[1] != MPI_REQUEST_NULL ||
                three[2] == MPI_REQUEST_NULL || self_v != 11 ||
                cls(sts3[0].MPI_ERROR) != MPIX_ERR_PROC_FAILED_PENDING ||
                sts3[1].MPI_ERROR != MPI_SUCCESS || sts3[2].MPI_ERROR != MPI_ERR_PENDING)
                FAIL("MPI_Testall: flag %d, classes %d %d %d, value %d", tf,
                     cls(sts3[0].MPI_ERROR), cls(sts3[1].MPI_ERROR), cls(sts3[2].MPI_ERROR),
                     self_v);
            MPI_Cancel(&three[2]);
            MPI_Wait(&three[2], MPI_STATUS_IGNORE);
            int w;
            expect_class(MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE),
                         MPIX_ERR_PROC_FAILED, "MPI_Recv from ANY_SOURCE");
            expect_class(MPI_Recv(&w, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         MPIX_ERR_PROC_FAILED, "MPI_Recv from the dead rank");
            expect_class(MPIX_Comm_failure_ack(MPI_COMM_WORLD), MPI_SUCCESS, "failure_ack");
            int go = 1;
            expect_class(MPI_Send(&go, 1, MPI_INT, 2, 9, MPI_COMM_WORLD), MPI_SUCCESS,
                         "MPI_Send to rank 2");
            MPI_Status st;
            expect_class(MPI_Wait(&rq, &st), MPI_SUCCESS, "MPI_Wait after the acknowledgement");
            if (v != 42 || st.MPI_SOURCE != 2)
                FAIL("received %d from %d", v, st.MPI_SOURCE);
            /* A new wildcard receive works too, acknowledged. */
            expect_class(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st),
                         MPI_SUCCESS, "MPI_Recv from ANY_SOURCE after the acknowledgement");
        } else if (rank == 2) {
            int go, v = 42;
            expect_class(MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                         MPI_SUCCESS, "MPI_Recv of the go");
            MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
            MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        }
        recover_and_report(MPI_COMM_WORLD, NULL);
    } else if (!strcmp(c, "wait_kill")) {
        /* The script kills the victim while every rank waits in a
         * barrier; each survivor prints when its error came. */
        printf("ready %d\n", rank);
        fflush(stdout);
        if (rank == victim)
            pause();
        err = MPI_Barrier(MPI_COMM_WORLD);
        double t = now_ms();
        expect_coll_failed(err, "MPI_Barrier when the script kills a rank");
        printf("errortime %d %.0f\n", rank, t);
        fflush(stdout); /* the script may wait for it (netns_ulfm_test.sh mute) */
        recover_and_report(MPI_COMM_WORLD, NULL);
    } else if (!strcmp(c, "win")) {
        /* One-sided operations with a dead target fail through the
         * window's own handler: a put and a fence, a lock epoch's flush. */
        long *base;
        MPI_Win win;
        MPI_Errhandler eh;
        MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_create_errhandler(win_handler, &eh);
        MPI_Win_set_errhandler(win, eh);
        MPI_Errhandler_free(&eh);
        *base = 0;
        expect_class(MPI_Win_fence(0, win), MPI_SUCCESS, "MPI_Win_fence before the failure");
        if (rank == victim)
            die();
        long one = 1;
        /* The put may be refused at once or at the fence; either way the
         * window's handler reports PROC_FAILED. */
        int e1 = MPI_Put(&one, 1, MPI_LONG, victim, 0, 1, MPI_LONG, win);
        int e2 = MPI_Win_fence(0, win);
        if (e1 == MPI_SUCCESS && e2 == MPI_SUCCESS)
            FAIL("a put to a dead target and its fence both succeeded");
        if (win_handler_calls == 0 || win_handler_class != MPIX_ERR_PROC_FAILED)
            FAIL("the window's handler: %d calls, class %d, expected MPIX_ERR_PROC_FAILED",
                 win_handler_calls, win_handler_class);
        int calls = win_handler_calls;
        e1 = MPI_Win_lock(MPI_LOCK_SHARED, victim, 0, win);
        if (e1 == MPI_SUCCESS) {
            MPI_Put(&one, 1, MPI_LONG, victim, 0, 1, MPI_LONG, win);
            e1 = MPI_Win_flush(victim, win);
            if (e1 == MPI_SUCCESS)
                e1 = MPI_Win_unlock(victim, win);
        }
        if (e1 == MPI_SUCCESS || win_handler_calls == calls ||
            win_handler_class != MPIX_ERR_PROC_FAILED)
            FAIL("a lock epoch with a dead target: class %d, handler class %d", cls(e1),
                 win_handler_class);
        MPI_Win_free(&win);
        recover_and_report(MPI_COMM_WORLD, NULL);
    } else if (!strcmp(c, "file")) {
        /* A collective write on a file whose group lost a member fails
         * through the file's own handler. */
        char path[256];
        snprintf(path, sizeof path, "%s/ulfm-file-%d", argc > 2 ? argv[2] : "/tmp",
                 (int)getppid());
        MPI_File fh;
        MPI_Errhandler eh;
        expect_class(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                   MPI_INFO_NULL, &fh), MPI_SUCCESS, "MPI_File_open");
        MPI_File_create_errhandler(file_handler, &eh);
        MPI_File_set_errhandler(fh, eh);
        MPI_Errhandler_free(&eh);
        long v = rank;
        expect_class(MPI_File_write_at_all(fh, rank * (MPI_Offset)sizeof v, &v, 1, MPI_LONG,
                                           MPI_STATUS_IGNORE), MPI_SUCCESS,
                     "MPI_File_write_at_all before the failure");
        if (rank == victim)
            die();
        int e = MPI_File_write_at_all(fh, rank * (MPI_Offset)sizeof v, &v, 1, MPI_LONG,
                                      MPI_STATUS_IGNORE);
        expect_coll_failed(e, "MPI_File_write_at_all after the failure");
        if (file_handler_calls == 0 || (file_handler_class != MPIX_ERR_PROC_FAILED &&
                                        file_handler_class != MPIX_ERR_REVOKED))
            FAIL("the file's handler: %d calls, class %d", file_handler_calls,
                 file_handler_class);
        MPI_File_close(&fh);
        recover_and_report(MPI_COMM_WORLD, NULL);
        if (rank == 0)
            unlink(path);
    } else if (!strcmp(c, "file_read")) {
        /* After a member died, a collective read of a file open read-only
         * (which outside fault-tolerant mode reads without an exchange)
         * and a collective write each fail on every survivor, through
         * the file's own handler; the job leaves no file. */
        char path[256];
        snprintf(path, sizeof path, "%s/ulfm-file-read-%d", argc > 2 ? argv[2] : "/tmp",
                 (int)getppid());
        MPI_File fw, fr;
        MPI_Errhandler eh;
        expect_class(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                   MPI_INFO_NULL, &fw), MPI_SUCCESS, "MPI_File_open (write)");
        long v = 1000 + rank, got = -1;
        expect_class(MPI_File_write_at_all(fw, rank * (MPI_Offset)sizeof v, &v, 1, MPI_LONG,
                                           MPI_STATUS_IGNORE), MPI_SUCCESS,
                     "MPI_File_write_at_all before the failure");
        expect_class(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fr),
                     MPI_SUCCESS, "MPI_File_open (read-only)");
        MPI_File_create_errhandler(file_handler, &eh);
        MPI_File_set_errhandler(fw, eh);
        MPI_File_set_errhandler(fr, eh);
        MPI_Errhandler_free(&eh);
        int peer = (rank + 1) % size; /* another rank's value */
        expect_class(MPI_File_read_at_all(fr, peer * (MPI_Offset)sizeof got, &got, 1, MPI_LONG,
                                          MPI_STATUS_IGNORE), MPI_SUCCESS,
                     "MPI_File_read_at_all before the failure");
        if (got != 1000 + peer)
            FAIL("read %ld before the failure, expected %d", got, 1000 + peer);
        if (rank == victim)
            die();
        expect_coll_failed(MPI_File_read_at_all(fr, rank * (MPI_Offset)sizeof got, &got, 1,
                                                MPI_LONG, MPI_STATUS_IGNORE),
                           "MPI_File_read_at_all after the failure");
        int calls = file_handler_calls;
        if (calls == 0 || (file_handler_class != MPIX_ERR_PROC_FAILED &&
                           file_handler_class != MPIX_ERR_REVOKED))
            FAIL("the read-only file's handler: %d calls, class %d", calls, file_handler_class);
        expect_coll_failed(MPI_File_write_at_all(fw, rank * (MPI_Offset)sizeof v, &v, 1, MPI_LONG,
                                                 MPI_STATUS_IGNORE),
                           "MPI_File_write_at_all after the failure");
        if (file_handler_calls == calls)
            FAIL("the written file's handler was not called");
        MPI_File_close(&fr);
        MPI_File_close(&fw);
        recover_and_report(MPI_COMM_WORLD, NULL);
        if (rank == 0)
            unlink(path);
    } else if (!strcmp(c, "iagree")) {
        /* MPIX_Comm_iagree and _ishrink progress in the background: rank 0
         * enters only when rank 1, already in the operation, tells it to,
         * so rank 1's call must return and its tests say "not yet"
         * meanwhile (an agreement run to its end at the call would hang
         * here). Then rank 0, the coordinator, dies during an iagree that
         * rank 2 enters late: the others' requests still complete, with
         * the same result. */
        victim = 0;
        int all_bits = (1 << size) - 1, done = 0, flag;
        MPI_Request rq;
        for (int round = 0; round < 2; round++) {
            MPI_Comm sh = MPI_COMM_NULL;
            if (rank == 0)
                expect_class(MPI_Recv(&done, 1, MPI_INT, 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                             MPI_SUCCESS, "MPI_Recv of the go");
            flag = ~(1 << rank);
            err = round == 0 ? MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &rq)
                             : MPIX_Comm_ishrink(MPI_COMM_WORLD, &sh, &rq);
            expect_class(err, MPI_SUCCESS, round == 0 ? "MPIX_Comm_iagree" : "MPIX_Comm_ishrink");
            if (rank == 1) {
                for (int i = 0; i < 50; i++) {
                    expect_class(MPI_Test(&rq, &done, MPI_STATUS_IGNORE), MPI_SUCCESS, "MPI_Test");
                    if (done)
                        FAIL("round %d: complete before rank 0 entered (test %d)", round, i);
                    usleep(2000); /* the program computes */
                }
                int go = 1;
                expect_class(MPI_Send(&go, 1, MPI_INT, 0, 11, MPI_COMM_WORLD), MPI_SUCCESS,
                             "MPI_Send of the go");
            }
            for (done = 0; !done;)
                expect_class(MPI_Test(&rq, &done, MPI_STATUS_IGNORE), MPI_SUCCESS,
                             "MPI_Test until complete");
            if (round == 0 && flag != ~all_bits)
                FAIL("iagree: flag %#x, expected %#x", (unsigned)flag, (unsigned)~all_bits);
            if (round == 1) {
                int n = 0;
                MPI_Comm_size(sh, &n);
                if (n != size)
                    FAIL("ishrink without a failure: size %d", n);
                MPI_Comm_free(&sh);
            }
        }
        flag = ~(1 << rank);
        if (rank == 2)
            usleep(300000); /* enters after the coordinator died */
        expect_class(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &rq), MPI_SUCCESS, "MPIX_Comm_iagree");
        if (rank == victim) {
            usleep(20000);
            die();
        }
        double t0 = now_ms();
        for (done = 0; !done;) {
            err = MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
            if (now_ms() - t0 > 20000)
                FAIL("the iagree did not complete in 20 s");
            usleep(1000);
        }
        if (cls(err) != MPI_SUCCESS && cls(err) != MPIX_ERR_PROC_FAILED)
            FAIL("iagree during the failure: class %d", cls(err));
        char extra[96];
        int n = snprintf(extra, sizeof extra, "flag=%#x", (unsigned)flag);
        /* Until every survivor acknowledged rank 0's failure. */
        do {
            MPIX_Comm_failure_ack(MPI_COMM_WORLD);
            flag = ~(1 << rank);
            expect_class(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &rq), MPI_SUCCESS,
                         "MPIX_Comm_iagree");
            err = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } while (cls(err) == MPIX_ERR_PROC_FAILED);
        expect_class(err, MPI_SUCCESS, "MPIX_Comm_iagree after the acknowledgement");
        MPI_Comm sh;
        expect_class(MPIX_Comm_ishrink(MPI_COMM_WORLD, &sh, &rq), MPI_SUCCESS, "MPIX_Comm_ishrink");
        expect_class(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS, "MPI_Wait of the ishrink");
        int shn = 0;
        MPI_Comm_size(sh, &shn);
        MPI_Comm_free(&sh);
        snprintf(extra + n, sizeof extra - (size_t)n, " after=%#x shrunk=%d", (unsigned)flag, shn);
        recover_and_report(MPI_COMM_WORLD, extra);
    } else if (!strcmp(c, "inter")) {
        /* ULFM on an intercommunicator between {0,1} and {2,3}: agree
         * gives each group the AND of the other group's flags; after rank 3
         * dies an intercommunicator collective fails, the failure is
         * agreed and acknowledged on both sides, shrink gives an
         * intercommunicator of the survivors of both groups (2 and 1),
         * which works; a revoke by one group reaches the other's receive. */
        MPI_Comm half, inter, sh;
        int low = rank < size / 2, flag;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
        expect_class(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 5, &inter),
                     MPI_SUCCESS, "MPI_Intercomm_create");
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        int other_bits = low ? 0xc : 0x3;
        flag = ~(1 << rank);
        expect_class(MPIX_Comm_agree(inter, &flag), MPI_SUCCESS, "MPIX_Comm_agree (inter)");
        if (flag != ~other_bits)
            FAIL("inter agree: flag %#x, expected %#x (the other group's AND)", (unsigned)flag,
                 (unsigned)~other_bits);
        MPI_Request rq;
        flag = ~(1 << rank);
        expect_class(MPIX_Comm_iagree(inter, &flag, &rq), MPI_SUCCESS, "MPIX_Comm_iagree (inter)");
        expect_class(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS, "MPI_Wait (inter iagree)");
        if (flag != ~other_bits)
            FAIL("inter iagree: flag %#x", (unsigned)flag);
        if (rank == victim)
            die();
        /* Collectives on it fail (the dead rank is in the remote group of
         * the low side, the local group of rank 2). */
        expect_coll_failed(MPI_Barrier(inter), "MPI_Barrier on the intercommunicator");
        do {
            MPIX_Comm_failure_ack(inter);
            flag = 1;
            err = MPIX_Comm_agree(inter, &flag);
        } while (cls(err) == MPIX_ERR_PROC_FAILED);
        expect_class(err, MPI_SUCCESS, "MPIX_Comm_agree (inter) after the acknowledgement");
        MPI_Group fg, wg;
        int nf = 0, w = -1, zero = 0;
        expect_class(MPIX_Comm_get_failed(inter, &fg), MPI_SUCCESS, "MPIX_Comm_get_failed (inter)");
        MPI_Group_size(fg, &nf);
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        if (nf == 1)
            MPI_Group_translate_ranks(fg, 1, &zero, wg, &w);
        if (nf != 1 || w != victim)
            FAIL("inter get_failed: %d members, first world %d", nf, w);
        MPI_Group_free(&fg);
        expect_class(MPIX_Comm_failure_get_acked(inter, &fg), MPI_SUCCESS, "get_acked (inter)");
        MPI_Group_size(fg, &nf);
        if (nf != 1)
            FAIL("inter get_acked: %d members", nf);
        MPI_Group_free(&fg);
        MPI_Group_free(&wg);
        expect_class(MPIX_Comm_shrink(inter, &sh), MPI_SUCCESS, "MPIX_Comm_shrink (inter)");
        int is_inter = 0, ln = 0, rn = 0;
        MPI_Comm_test_inter(sh, &is_inter);
        MPI_Comm_size(sh, &ln);
        MPI_Comm_remote_size(sh, &rn);
        if (!is_inter || ln != (low ? 2 : 1) || rn != (low ? 1 : 2))
            FAIL("shrunk intercommunicator: inter %d, sizes %d and %d", is_inter, ln, rn);
        /* It works: the sum of the other group's world ranks. */
        long mine = rank, sum = -1;
        expect_class(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, sh), MPI_SUCCESS,
                     "MPI_Allreduce on the shrunk intercommunicator");
        if (sum != (low ? 2 : 1))
            FAIL("shrunk intercommunicator: the other group's sum %ld", sum);
        /* Rank 0 revokes it; rank 2 waits in a receive from the other side. */
        if (rank == 0) {
            expect_class(MPI_Recv(&flag, 1, MPI_INT, 0, 8, sh, MPI_STATUS_IGNORE), MPI_SUCCESS,
                         "MPI_Recv of rank 2's ready");
            expect_class(MPIX_Comm_revoke(sh), MPI_SUCCESS, "MPIX_Comm_revoke (inter)");
        } else if (rank == 2) {
            MPI_Request r2;
            expect_class(MPI_Irecv(&flag, 1, MPI_INT, 0, 9, sh, &r2), MPI_SUCCESS, "MPI_Irecv");
            expect_class(MPI_Send(&flag, 1, MPI_INT, 0, 8, sh), MPI_SUCCESS, "MPI_Send ready");
            expect_class(MPI_Wait(&r2, MPI_STATUS_IGNORE), MPIX_ERR_REVOKED,
                         "a receive on the intercommunicator the other group revoked");
        }
        do
            MPIX_Comm_is_revoked(sh, &flag);
        while (!flag);
        expect_class(MPI_Barrier(sh), MPIX_ERR_REVOKED, "MPI_Barrier on the revoked intercomm");
        MPI_Comm sh2;
        expect_class(MPIX_Comm_shrink(sh, &sh2), MPI_SUCCESS, "MPIX_Comm_shrink (revoked inter)");
        MPI_Comm_size(sh2, &ln);
        MPI_Comm_remote_size(sh2, &rn);
        if (ln != (low ? 2 : 1) || rn != (low ? 1 : 2))
            FAIL("second shrink: sizes %d and %d", ln, rn);
        MPI_Comm_free(&sh2);
        MPI_Comm_free(&sh);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
        recover_and_report(MPI_COMM_WORLD, "inter=ok");
    } else if (!strcmp(c, "win_revoke")) {
        /* No failure: rank 0 revokes a window while rank 1 waits in
         * MPI_Win_wait for an origin that never completes and ranks 2 and
         * 3 wait in a fence rank 0 never enters; each fails with REVOKED
         * through the window's own handler, as does every later operation
         * and epoch; MPIX_Win_get_failed is empty; the window is freed. */
        long *base;
        MPI_Win win;
        MPI_Errhandler eh;
        MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_create_errhandler(win_handler, &eh);
        MPI_Win_set_errhandler(win, eh);
        MPI_Errhandler_free(&eh);
        MPI_Group wg, g0;
        int zero = 0;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_incl(wg, 1, &zero, &g0);
        if (rank == 1)
            expect_class(MPI_Win_post(g0, 0, win), MPI_SUCCESS, "MPI_Win_post");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            usleep(100000); /* the others are waiting */
            expect_class(MPIX_Win_revoke(win), MPI_SUCCESS, "MPIX_Win_revoke");
        } else if (rank == 1) {
            expect_class(MPI_Win_wait(win), MPIX_ERR_REVOKED, "MPI_Win_wait (revoked)");
        } else {
            expect_class(MPI_Win_fence(0, win), MPIX_ERR_REVOKED, "MPI_Win_fence (revoked)");
        }
        if (rank != 0 && (win_handler_calls != 1 || win_handler_class != MPIX_ERR_REVOKED))
            FAIL("the window's handler: %d calls, class %d", win_handler_calls,
                 win_handler_class);
        long one = 1;
        int calls = win_handler_calls;
        expect_class(MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % size, 0, win), MPIX_ERR_REVOKED,
                     "MPI_Win_lock (revoked)");
        expect_class(MPI_Put(&one, 1, MPI_LONG, (rank + 1) % size, 0, 1, MPI_LONG, win),
                     MPIX_ERR_REVOKED, "MPI_Put (revoked)");
        expect_class(MPI_Win_fence(0, win), MPIX_ERR_REVOKED, "MPI_Win_fence (revoked)");
        if (win_handler_calls != calls + 3 || win_handler_class != MPIX_ERR_REVOKED)
            FAIL("the window's handler after the revoke: %d calls, class %d",
                 win_handler_calls - calls, win_handler_class);
        MPI_Group fg;
        int nf = -1;
        expect_class(MPIX_Win_get_failed(win, &fg), MPI_SUCCESS, "MPIX_Win_get_failed");
        MPI_Group_size(fg, &nf);
        if (nf != 0)
            FAIL("MPIX_Win_get_failed: %d members", nf);
        MPI_Group_free(&fg);
        MPI_Group_free(&g0);
        MPI_Group_free(&wg);
        expect_class(MPI_Win_free(&win), MPI_SUCCESS, "MPI_Win_free of a revoked window");
        /* A window revoked inside every rank's lock_all epoch: the direct
         * shared-memory paths (put, accumulate, fetch_and_op) that ran in
         * the epoch must fail with REVOKED too once a rank has seen it. */
        long *b2;
        MPI_Win w2;
        MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &b2, &w2);
        MPI_Win_set_errhandler(w2, MPI_ERRORS_RETURN);
        *b2 = 0;
        MPI_Win_lock_all(0, w2);
        int right = (rank + 1) % size;
        long got = -1;
        expect_class(MPI_Accumulate(&one, 1, MPI_LONG, right, 0, 1, MPI_LONG, MPI_SUM, w2),
                     MPI_SUCCESS, "MPI_Accumulate in the epoch");
        expect_class(MPI_Win_flush(right, w2), MPI_SUCCESS, "MPI_Win_flush in the epoch");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            expect_class(MPIX_Win_revoke(w2), MPI_SUCCESS, "MPIX_Win_revoke in an epoch");
        MPI_Barrier(MPI_COMM_WORLD);
        /* The revoke reaches the others in the background: each probes
         * (which progresses) until an accumulate fails, for up to 10 s. */
        double until = MPI_Wtime() + 10;
        int err = MPI_SUCCESS, probed;
        while ((err = MPI_Accumulate(&one, 1, MPI_LONG, right, 0, 1, MPI_LONG, MPI_SUM, w2)) ==
                   MPI_SUCCESS &&
               MPI_Wtime() < until)
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &probed, MPI_STATUS_IGNORE);
        expect_class(err, MPIX_ERR_REVOKED, "MPI_Accumulate in the revoked epoch");
        expect_class(MPI_Put(&one, 1, MPI_LONG, right, 0, 1, MPI_LONG, w2), MPIX_ERR_REVOKED,
                     "MPI_Put in the revoked epoch");
        expect_class(MPI_Fetch_and_op(&one, &got, MPI_LONG, right, 0, MPI_SUM, w2),
                     MPIX_ERR_REVOKED, "MPI_Fetch_and_op in the revoked epoch");
        expect_class(MPI_Win_free(&w2), MPI_SUCCESS,
                     "MPI_Win_free of a window revoked in an epoch");
        /* The world is not revoked: a put on a new window works. */
        int flag = 1;
        MPIX_Comm_is_revoked(MPI_COMM_WORLD, &flag);
        if (flag)
            FAIL("MPI_COMM_WORLD revoked with the window");
        recover_and_report(MPI_COMM_WORLD, "win_revoke=ok");
    } else if (!strcmp(c, "file_revoke")) {
        /* No failure: rank 0 revokes a file while the others wait in a
         * collective write it never enters; theirs fail with REVOKED
         * through the file's handler, and so do every rank's later
         * independent write and sync; the file closes. */
        char path[256];
        snprintf(path, sizeof path, "%s/ulfm-frev-%d", argc > 2 ? argv[2] : "/tmp",
                 (int)getppid());
        MPI_File fh;
        MPI_Errhandler eh;
        expect_class(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                   MPI_INFO_NULL, &fh), MPI_SUCCESS, "MPI_File_open");
        MPI_File_create_errhandler(file_handler, &eh);
        MPI_File_set_errhandler(fh, eh);
        MPI_Errhandler_free(&eh);
        long v = rank;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            usleep(100000);
            expect_class(MPIX_File_revoke(fh), MPI_SUCCESS, "MPIX_File_revoke");
        } else {
            expect_class(MPI_File_write_at_all(fh, rank * (MPI_Offset)sizeof v, &v, 1, MPI_LONG,
                                               MPI_STATUS_IGNORE),
                         MPIX_ERR_REVOKED, "MPI_File_write_at_all (revoked)");
        }
        /* Even an independent operation, which needs nobody else. */
        expect_class(MPI_File_write_at(fh, rank * (MPI_Offset)sizeof v, &v, 1, MPI_LONG,
                                       MPI_STATUS_IGNORE),
                     MPIX_ERR_REVOKED, "MPI_File_write_at (revoked)");
        expect_class(MPI_File_sync(fh), MPIX_ERR_REVOKED, "MPI_File_sync (revoked)");
        if (file_handler_class != MPIX_ERR_REVOKED || file_handler_calls < 2)
            FAIL("the file's handler: %d calls, class %d", file_handler_calls, file_handler_class);
        expect_class(MPI_File_close(&fh), MPI_SUCCESS, "MPI_File_close of a revoked file");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            unlink(path);
        recover_and_report(MPI_COMM_WORLD, "file_revoke=ok");
    } else if (!strcmp(c, "abort_sub")) {
        /* The lower half aborts its own communicator; the upper half
         * goes on. */
        MPI_Comm half;
        int lower = rank < size / 2;
        MPI_Comm_split(MPI_COMM_WORLD, lower, rank, &half);
        if (lower) {
            MPI_Barrier(half);
            if (rank == 0)
                MPI_Abort(half, 3);
            for (;;)
                pause();
        }
        expect_coll_failed(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier after the abort");
        recover_and_report(MPI_COMM_WORLD, NULL);
        MPI_Comm_free(&half);
    } else if (!strcmp(c, "recv_kill")) {
        /* Rank 0 waits only for the victim (the script kills it), under
         * the default MPI_ERRORS_ARE_FATAL: the job must end, naming the
         * victim and its host. The others wait to be ended. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        printf("ready %d\n", rank);
        fflush(stdout);
        if (rank == 0) {
            int v;
            MPI_Recv(&v, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            FAIL("the receive from the dead rank %d returned", victim);
        }
        for (;;)
            pause();
    } else if (!strcmp(c, "abort_even")) {
        /* The even ranks (on both hosts under netns_ulfm_test.sh) make a
         * communicator; its highest member aborts it; the odd ranks go on
         * and see the even ones failed. */
        MPI_Comm even;
        int is_even = rank % 2 == 0;
        MPI_Comm_split(MPI_COMM_WORLD, is_even, rank, &even);
        printf("ready %d\n", rank);
        fflush(stdout);
        if (is_even) {
            MPI_Barrier(even);
            if (rank == (size - 1) / 2 * 2) {
                printf("aborttime %.0f\n", now_ms());
                fflush(stdout);
                MPI_Abort(even, 3);
            }
            for (;;)
                pause();
        }
        err = MPI_Barrier(MPI_COMM_WORLD);
        double t = now_ms();
        expect_coll_failed(err, "MPI_Barrier after the abort");
        printf("errortime %d %.0f\n", rank, t);
        recover_and_report(MPI_COMM_WORLD, NULL);
        MPI_Comm_free(&even);
    } else if (strcmp(c, "none") != 0) {
        FAIL("unknown case '%s'", c);
    }
    MPI_Finalize();
    return 0;
}
