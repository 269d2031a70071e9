/* MPI_Comm_idup is nonblocking: a rank that waits in MPI_Recv for the
 * others before it calls idup does not hang them (MPICH comm/comm_idup),
 * on an intra- and an intercommunicator; idups overlapping on shared
 * ranks in a ring (comm_idup_overlap) and many on one communicator mixed
 * with nonblocking collectives and a blocking Comm_dup all complete with
 * distinct working communicators; idup_with_info gives its hints and
 * attributes are copied at completion. */
#include "../mpi/mtest.h"

static int rank, size;

static int copy_plus_one(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)kv, (void)extra;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

/* Allreduce of ranks on c, and a message to the next rank that must not
 * be received on `other` (distinct contexts). */
static void check_works(MPI_Comm c, MPI_Comm other, const char *what)
{
    int n, me, sum = -1;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    CHECK_RC(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "%s: allreduce gave %d", what, sum);
    if (other == MPI_COMM_NULL || n < 2)
        return;
    int x = me, y = -1, flag = 1;
    MPI_Request r;
    MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 5, c, &r);
    MPI_Send(&x, 1, MPI_INT, (me + 1) % n, 5, c);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK_INT(y, (me + n - 1) % n, what);
    MPI_Iprobe(MPI_ANY_SOURCE, 5, other, &flag, MPI_STATUS_IGNORE);
    CHECK_INT(flag, 0, "a message on the dup seen on its parent");
    MPI_Barrier(c);
}

/* Rank 0 (of c's local group) idups last, after a receive from each other
 * rank, which sends only after its own idup returned. */
static void late_rank0(MPI_Comm c, int remote)
{
    int lrank, n;
    MPI_Comm_rank(c, &lrank);
    if (remote)
        MPI_Comm_remote_size(c, &n);
    else
        MPI_Comm_size(c, &n);
    MPI_Comm nc = MPI_COMM_NULL;
    MPI_Request req;
    int buf = 0;
    if (lrank == 0) {
        for (int i = 1; i < n; i++)
            MPI_Recv(&buf, 1, MPI_INT, i, 0, c, MPI_STATUS_IGNORE);
        CHECK_RC(MPI_Comm_idup(c, &nc, &req));
    } else {
        CHECK_RC(MPI_Comm_idup(c, &nc, &req));
        MPI_Ssend(&buf, 1, MPI_INT, 0, 0, c);
    }
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(nc != MPI_COMM_NULL, "idup gave MPI_COMM_NULL");
    int result;
    MPI_Comm_compare(c, nc, &result);
    CHECK_INT(result, MPI_CONGRUENT, "idup is congruent to its parent");
    if (!remote)
        check_works(nc, c, "idup with a late rank 0");
    MPI_Comm_free(&nc);
}

static void test_late(void)
{
    mtest_begin("idup_late_rank0");
    late_rank0(MPI_COMM_WORLD, 0);
    if (size >= 2) {
        MPI_Comm local, ic;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank == 0 ? 1 : 0, 77, &ic);
        late_rank0(ic, 1);
        MPI_Comm_free(&ic);
        MPI_Comm_free(&local);
    }
    mtest_end();
}

/* Pairs (i, i+1) in a ring: each rank idups its pair with the next rank,
 * then the one with the previous rank, before waiting for either. */
static void test_overlap(void)
{
    mtest_begin("idup_overlap_ring");
    MPI_Comm pair[2] = {MPI_COMM_NULL, MPI_COMM_NULL}, dup[2], tmp;
    for (int i = 0; i < size; i++) {
        int in = rank == i || rank == (i + 1) % size;
        MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : 1, rank == i ? 0 : 1, &tmp);
        if (rank == i)
            pair[0] = tmp;
        else if (rank == (i + 1) % size && size > 1)
            pair[1] = tmp;
        else
            MPI_Comm_free(&tmp);
    }
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int k = 0; k < 2; k++)
        if (pair[k] != MPI_COMM_NULL)
            CHECK_RC(MPI_Comm_idup(pair[k], &dup[k], &req[k]));
    CHECK_RC(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    /* Check in the order the pairs were made, the same on every rank:
     * pair i is pair[0] on rank i, pair[1] on rank i + 1. */
    for (int i = 0; i < size; i++) {
        int k = rank == i ? 0 : rank == (i + 1) % size ? 1 : -1;
        if (k >= 0 && pair[k] != MPI_COMM_NULL) {
            check_works(dup[k], pair[k], "overlapping idup");
            MPI_Comm_free(&dup[k]);
            MPI_Comm_free(&pair[k]);
        }
    }
    mtest_end();
}

/* Many idups on one communicator, nonblocking allreduces between them and
 * a blocking dup of another communicator while they are pending. */
static void test_many(void)
{
    mtest_begin("idup_many_mixed");
    enum { K = 8 };
    MPI_Comm nc[K], other, d;
    MPI_Request req[2 * K];
    int one = 1, sums[K];
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    for (int i = 0; i < K; i++) {
        CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &nc[i], &req[i]));
        CHECK_RC(MPI_Iallreduce(&one, &sums[i], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[K + i]));
    }
    CHECK_RC(MPI_Comm_dup(other, &d));
    CHECK_RC(MPI_Waitall(2 * K, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < K; i++) {
        CHECK_INT(sums[i], size, "Iallreduce beside the idups");
        check_works(nc[i], i ? nc[i - 1] : MPI_COMM_WORLD, "one of many idups");
    }
    check_works(d, other, "blocking dup among idups");
    for (int i = 0; i < K; i++)
        MPI_Comm_free(&nc[i]);
    MPI_Comm_free(&d);
    MPI_Comm_free(&other);
    mtest_end();
}

static void test_info_attrs(void)
{
    mtest_begin("idup_info_attrs");
    int kv, flag = 0;
    void *val;
    MPI_Comm_create_keyval(copy_plus_one, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_attr(a, kv, (void *)(intptr_t)40);
    MPI_Info info, got;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tern_test_hint", "yes");
    MPI_Request req;
    CHECK_RC(MPI_Comm_idup_with_info(a, info, &b, &req));
    MPI_Info_free(&info);
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Comm_get_attr(b, kv, &val, &flag));
    CHECK(flag && (intptr_t)val == 41, "attribute copied by idup");
    char v[16] = "";
    CHECK_RC(MPI_Comm_get_info(b, &got));
    MPI_Info_get(got, "tern_test_hint", (int)sizeof v - 1, v, &flag);
    CHECK(flag && !strcmp(v, "yes"), "hint given to idup_with_info");
    MPI_Info_free(&got);
    check_works(b, a, "idup_with_info");
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    MPI_Comm_free_keyval(&kv);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    test_late();
    test_overlap();
    test_many();
    test_info_attrs();
    return mtest_finalize();
}
