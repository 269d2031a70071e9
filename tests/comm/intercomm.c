/* Intercommunicators: Intercomm_create from two layouts (even/odd ranks,
 * and rank 0 against the rest), queries, point-to-point in both
 * directions with MPI_ANY_SOURCE, dup, compare, Comm_split,
 * Comm_split_type and Comm_create of intercommunicators, Intercomm_merge
 * with both high/low orders, and errors. Needs at least 2 ranks. */
#include "../mpi/mtest.h"

#include <string.h>

static int rank, size;

static int world_of(MPI_Group g, int *out)
{
    MPI_Group w;
    int n, in[64];
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_size(g, &n);
    for (int i = 0; i < n; i++)
        in[i] = i;
    MPI_Group_translate_ranks(g, n, in, w, out);
    MPI_Group_free(&w);
    return n;
}

/* World ranks with the given color, in order. */
static int members(int (*color)(int), int c, int *out)
{
    int n = 0;
    for (int i = 0; i < size; i++)
        if (color(i) == c)
            out[n++] = i;
    return n;
}

static int parity(int r) { return r % 2; }
static int is_rest(int r) { return r != 0; }

/* Every local rank sends to every remote rank; each receives with
 * MPI_ANY_SOURCE and checks the source rank and the payload. First group
 * 0 sends, then group 1 (both directions). */
static void exchange(MPI_Comm inter, int mygroup, const int *local, int nl, const int *remote,
                     int nr, int tag)
{
    int lr;
    MPI_Comm_rank(inter, &lr);
    for (int dir = 0; dir < 2; dir++) {
        if (mygroup == dir) {
            for (int d = 0; d < nr; d++) {
                int v = rank * 1000 + remote[d];
                CHECK_RC(MPI_Send(&v, 1, MPI_INT, d, tag, inter));
            }
        } else {
            int seen[64] = {0};
            for (int k = 0; k < nr; k++) {
                int v = -1;
                MPI_Status st;
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, inter, &st));
                int s = st.MPI_SOURCE;
                if (s < 0 || s >= nr) {
                    CHECK(0, "source %d is not a remote rank (remote size %d)", s, nr);
                    continue;
                }
                seen[s]++;
                CHECK(v == remote[s] * 1000 + rank, "from remote rank %d: got %d, expected %d",
                      s, v, remote[s] * 1000 + rank);
            }
            for (int s = 0; s < nr; s++)
                CHECK_INT(seen[s], 1, "messages from one remote rank");
        }
    }
    (void)local, (void)nl, (void)lr;
}

/* Checks an intercommunicator against expected local and remote world
 * ranks, then runs the all-to-all exchange over it. */
static void check_inter(MPI_Comm ic, int mygroup, const int *local, int nl, const int *remote,
                        int nr, const char *what)
{
    int n = -1, r = -1, got[64], flag = 0, pos = -1;
    MPI_Comm_test_inter(ic, &flag);
    CHECK(flag, "%s: not an intercommunicator", what);
    MPI_Comm_size(ic, &n);
    CHECK(n == nl, "%s: local size %d, expected %d", what, n, nl);
    MPI_Comm_remote_size(ic, &n);
    CHECK(n == nr, "%s: remote size %d, expected %d", what, n, nr);
    MPI_Comm_rank(ic, &r);
    for (int i = 0; i < nl; i++)
        if (local[i] == rank)
            pos = i;
    CHECK(r == pos, "%s: rank %d, expected %d", what, r, pos);
    MPI_Group g;
    MPI_Comm_group(ic, &g);
    n = world_of(g, got);
    MPI_Group_free(&g);
    for (int i = 0; i < nl && i < n; i++)
        CHECK(got[i] == local[i], "%s: local member %d is %d, expected %d", what, i, got[i],
              local[i]);
    MPI_Comm_remote_group(ic, &g);
    n = world_of(g, got);
    MPI_Group_free(&g);
    for (int i = 0; i < nr && i < n; i++)
        CHECK(got[i] == remote[i], "%s: remote member %d is %d, expected %d", what, i, got[i],
              remote[i]);
    exchange(ic, mygroup, local, nl, remote, nr, 13);
}

/* Comm_split of an intercommunicator: color = index in the own group % 2,
 * key = -index (reversed order); a color missing on the other side gives
 * MPI_COMM_NULL. */
static void split_and_create(MPI_Comm inter, int mygroup, const int *local, int nl,
                             const int *remote, int nr)
{
    int myidx = 0;
    for (int i = 0; i < nl; i++)
        if (local[i] == rank)
            myidx = i;
    int color = myidx % 2, sl[64], sr[64], nsl = 0, nsr = 0;
    for (int i = nl - 1; i >= 0; i--)
        if (i % 2 == color)
            sl[nsl++] = local[i];
    for (int i = nr - 1; i >= 0; i--)
        if (i % 2 == color)
            sr[nsr++] = remote[i];
    MPI_Comm s;
    CHECK_RC(MPI_Comm_split(inter, color, -myidx, &s));
    if (nsr == 0) {
        CHECK(s == MPI_COMM_NULL, "split: no partner color gives MPI_COMM_NULL");
    } else if (s != MPI_COMM_NULL) {
        check_inter(s, mygroup, sl, nsl, sr, nsr, "split of an intercommunicator");
        MPI_Comm_free(&s);
    } else {
        CHECK(0, "split gave MPI_COMM_NULL");
    }
    /* Comm_create: each side drops its index 0 when it has more than one. */
    MPI_Group lg, sub;
    MPI_Comm_group(inter, &lg);
    int zero = 0;
    if (nl > 1)
        MPI_Group_excl(lg, 1, &zero, &sub);
    else
        MPI_Group_incl(lg, 1, &zero, &sub);
    MPI_Group_free(&lg);
    const int *cl = nl > 1 ? local + 1 : local, *cr = nr > 1 ? remote + 1 : remote;
    int ncl = nl > 1 ? nl - 1 : nl, ncr = nr > 1 ? nr - 1 : nr;
    CHECK_RC(MPI_Comm_create(inter, sub, &s));
    MPI_Group_free(&sub);
    if (nl > 1 && myidx == 0) {
        CHECK(s == MPI_COMM_NULL, "create: outside the group gives MPI_COMM_NULL");
    } else if (s != MPI_COMM_NULL) {
        check_inter(s, mygroup, cl, ncl, cr, ncr, "create on an intercommunicator");
        MPI_Comm_free(&s);
    } else {
        CHECK(0, "create gave MPI_COMM_NULL");
    }
}

/* Comm_split_type(MPI_COMM_TYPE_SHARED) of an intercommunicator is its
 * split by node (a node is a host name, as MPI_Get_processor_name says),
 * key = -index: an intercommunicator between the local and the remote
 * ranks on this node, in reversed order, or MPI_COMM_NULL where the other
 * side has none there; MPI_UNDEFINED gives MPI_COMM_NULL. */
static void split_type_inter(MPI_Comm inter, int mygroup, const int *local, int nl,
                             const int *remote, int nr)
{
    static char names[64][MPI_MAX_PROCESSOR_NAME];
    char mine[MPI_MAX_PROCESSOR_NAME];
    int len, myidx = 0;
    memset(mine, 0, sizeof mine);
    MPI_Get_processor_name(mine, &len);
    CHECK_RC(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                           MPI_CHAR, MPI_COMM_WORLD));
    for (int i = 0; i < nl; i++)
        if (local[i] == rank)
            myidx = i;
    int sl[64], sr[64], nsl = 0, nsr = 0;
    for (int i = nl - 1; i >= 0; i--)
        if (!strcmp(names[local[i]], mine))
            sl[nsl++] = local[i];
    for (int i = nr - 1; i >= 0; i--)
        if (!strcmp(names[remote[i]], mine))
            sr[nsr++] = remote[i];
    MPI_Comm s;
    CHECK_RC(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, -myidx, MPI_INFO_NULL, &s));
    if (nsr == 0) {
        CHECK(s == MPI_COMM_NULL, "split_type: no remote rank on this node gives MPI_COMM_NULL");
    } else if (s != MPI_COMM_NULL) {
        check_inter(s, mygroup, sl, nsl, sr, nsr, "split_type of an intercommunicator");
        MPI_Comm_free(&s);
    } else {
        CHECK(0, "split_type gave MPI_COMM_NULL");
    }
    CHECK_RC(MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &s));
    CHECK(s == MPI_COMM_NULL, "split_type MPI_UNDEFINED of an intercommunicator");
}

static void check_merge(MPI_Comm inter, int high, const int *local,
                        int nl, const int *remote, int nr, const char *what)
{
    MPI_Comm m;
    CHECK_RC(MPI_Intercomm_merge(inter, high, &m));
    int flag = 1, n, r, got[64];
    MPI_Comm_test_inter(m, &flag);
    CHECK_INT(flag, 0, "merged is intra");
    MPI_Comm_size(m, &n);
    MPI_Comm_rank(m, &r);
    CHECK_INT(n, nl + nr, what);
    MPI_Group g;
    MPI_Comm_group(m, &g);
    world_of(g, got);
    MPI_Group_free(&g);
    /* The low group first: ours is second when we passed high. */
    const int *first = high ? remote : local, *second = high ? local : remote;
    int nf = high ? nr : nl, ns = high ? nl : nr;
    for (int i = 0; i < nf; i++)
        CHECK(got[i] == first[i], "%s: member %d is %d, expected %d", what, i, got[i], first[i]);
    for (int i = 0; i < ns; i++)
        CHECK(got[nf + i] == second[i], "%s: member %d is %d, expected %d", what, nf + i,
              got[nf + i], second[i]);
    /* A ring on the merged communicator. */
    int v = -1, me = rank;
    MPI_Sendrecv(&me, 1, MPI_INT, (r + 1) % n, 2, &v, 1, MPI_INT, (r - 1 + n) % n, 2, m,
                 MPI_STATUS_IGNORE);
    CHECK_INT(v, got[(r - 1 + n) % n], what);
    MPI_Comm_free(&m);
}

/* last_leader: the leaders are the last ranks of each group, not the first. */
static void layout(const char *name, int (*color)(int), int last_leader)
{
    mtest_begin(name);
    int mygroup = color(rank);
    int local[64], remote[64];
    int nl = members(color, mygroup, local), nr = members(color, !mygroup, remote);
    MPI_Comm lc, inter;
    MPI_Comm_split(MPI_COMM_WORLD, mygroup, rank, &lc);
    /* Leaders: local rank 0 (or the last); the remote leader's world rank
     * is remote[0] (or the last). */
    CHECK_RC(MPI_Intercomm_create(lc, last_leader ? nl - 1 : 0, MPI_COMM_WORLD,
                                  remote[last_leader ? nr - 1 : 0], 42, &inter));
    int flag = 0, n = -1, r = -1;
    MPI_Comm_test_inter(inter, &flag);
    CHECK_INT(flag, 1, "test_inter");
    CHECK_RC(MPI_Topo_test(inter, &flag));
    CHECK_INT(flag, MPI_UNDEFINED, "an intercommunicator has no topology");
    MPI_Comm_size(inter, &n);
    CHECK_INT(n, nl, "local size");
    MPI_Comm_rank(inter, &r);
    int myidx = 0;
    for (int i = 0; i < nl; i++)
        if (local[i] == rank)
            myidx = i;
    CHECK_INT(r, myidx, "local rank");
    MPI_Comm_remote_size(inter, &n);
    CHECK_INT(n, nr, "remote size");
    MPI_Group rg, lg;
    int got[64];
    MPI_Comm_remote_group(inter, &rg);
    n = world_of(rg, got);
    for (int i = 0; i < nr && i < n; i++)
        CHECK_INT(got[i], remote[i], "remote group member");
    MPI_Comm_group(inter, &lg);
    n = world_of(lg, got);
    for (int i = 0; i < nl && i < n; i++)
        CHECK_INT(got[i], local[i], "local group member");
    MPI_Group_free(&rg);
    MPI_Group_free(&lg);

    exchange(inter, mygroup, local, nl, remote, nr, 11);

    /* A dup carries separate traffic: send on both with the same tag,
     * receive the dup's first. */
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(inter, &d));
    int res;
    MPI_Comm_compare(inter, d, &res);
    CHECK_INT(res, MPI_CONGRUENT, "inter vs its dup");
    MPI_Comm_compare(inter, MPI_COMM_WORLD, &res);
    CHECK_INT(res, MPI_UNEQUAL, "inter vs world");
    MPI_Comm_compare(inter, lc, &res);
    CHECK_INT(res, MPI_UNEQUAL, "inter vs its local comm");
    MPI_Comm_remote_size(d, &n);
    CHECK_INT(n, nr, "dup remote size");
    {
        int a = 1, b = 2, ga = -1, gb = -1;
        MPI_Request rq[4];
        int peer = myidx % nr; /* a remote rank; both sides pair up the same way */
        /* Each rank sends to remote rank (myidx % nr); receives one message
         * per remote rank that picked it. */
        int expect = 0;
        for (int i = 0; i < nr; i++)
            if (i % nl == myidx)
                expect++;
        MPI_Isend(&a, 1, MPI_INT, peer, 6, inter, &rq[0]);
        MPI_Isend(&b, 1, MPI_INT, peer, 6, d, &rq[1]);
        for (int k = 0; k < expect; k++) {
            MPI_Recv(&gb, 1, MPI_INT, MPI_ANY_SOURCE, 6, d, MPI_STATUS_IGNORE);
            CHECK_INT(gb, 2, "message on the dup");
            MPI_Recv(&ga, 1, MPI_INT, MPI_ANY_SOURCE, 6, inter, MPI_STATUS_IGNORE);
            CHECK_INT(ga, 1, "message on the original");
        }
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        (void)rq[2], (void)rq[3];
    }
    exchange(d, mygroup, local, nl, remote, nr, 12);

    /* Merge: group 0 low then group 1 low, then equal (order is the
     * library's choice there: only check the size). */
    check_merge(inter, mygroup, local, nl, remote, nr, "merge, group 0 low");
    check_merge(d, !mygroup, local, nl, remote, nr, "merge, group 1 low");
    MPI_Comm m;
    CHECK_RC(MPI_Intercomm_merge(inter, 1, &m));
    MPI_Comm_size(m, &n);
    CHECK_INT(n, size, "merge with equal high");
    MPI_Comm_free(&m);

    split_and_create(inter, mygroup, local, nl, remote, nr);
    split_type_inter(inter, mygroup, local, nl, remote, nr);

    /* Errors: remote ranks are the bound. */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int x = 0;
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, nr, 0, inter), MPI_ERR_RANK, "send past the remote size");
    CHECK_CLASS(MPI_Recv(&x, 1, MPI_INT, nr, 0, inter, MPI_STATUS_IGNORE), MPI_ERR_RANK,
                "recv past the remote size");
    MPI_Comm_set_errhandler(lc, MPI_ERRORS_RETURN);
#ifdef TERN_VERSION_STRING /* MPICH fails an internal assertion */
    CHECK_CLASS(MPI_Intercomm_merge(lc, 0, &m), MPI_ERR_COMM, "merge of an intracommunicator");
#endif
    CHECK_CLASS(MPI_Intercomm_create(lc, nl, MPI_COMM_WORLD, remote[0], 1, &m), MPI_ERR_RANK,
                "local_leader out of range");

    CHECK_RC(MPI_Comm_free(&d));
    CHECK_RC(MPI_Comm_free(&inter));
    MPI_Comm_free(&lc);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    if (size < 2 || size > 64)
        FATAL("needs 2..64 ranks");
    layout("intercomm_even_odd", parity, 0);
    layout("intercomm_one_vs_rest", is_rest, 1);
    return mtest_finalize();
}
