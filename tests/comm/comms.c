/* Intracommunicator constructors on world, split, dup and odd-sized
 * communicators: dup/idup/dup_with_info, split (keys, MPI_UNDEFINED),
 * split_type(SHARED), create, create_group, compare, names, info, free
 * with pending operations, unique context ids under many concurrent
 * constructors, error classes, and running out of context ids. Expected groups are computed here. */
#include "../mpi/mtest.h"

static int rank, size;

/* World ranks of comm's members, in comm rank order. */
static int world_members(MPI_Comm comm, int *out)
{
    MPI_Group g, w;
    int n, in[64];
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_size(g, &n);
    for (int i = 0; i < n; i++)
        in[i] = i;
    MPI_Group_translate_ranks(g, n, in, w, out);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    return n;
}

/* Every member sends its world rank to the next and checks what comes
 * from the previous (a ring), so the communicator really works. */
static void ring_check(MPI_Comm comm, const char *what)
{
    int r, n, wm[64];
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    world_members(comm, wm);
    int got = -1;
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, (r + 1) % n, 3, &got, 1, MPI_INT, MPI_ANY_SOURCE, 3,
                          comm, &st));
    CHECK(got == wm[(r - 1 + n) % n], "%s: ring got %d, expected %d", what, got,
          wm[(r - 1 + n) % n]);
    CHECK_INT(st.MPI_SOURCE, (r - 1 + n) % n, what);
}

static void test_dup(void)
{
    mtest_begin("comm_dup");
    MPI_Comm d, d2;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int r, n, res;
    MPI_Comm_rank(d, &r);
    MPI_Comm_size(d, &n);
    CHECK_INT(r, rank, "dup rank");
    CHECK_INT(n, size, "dup size");
    MPI_Comm_compare(MPI_COMM_WORLD, d, &res);
    CHECK_INT(res, MPI_CONGRUENT, "world vs dup");
    MPI_Comm_compare(d, d, &res);
    CHECK_INT(res, MPI_IDENT, "dup vs itself");
    /* The same tag on both: each message stays on its communicator. */
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int a = 1000 + rank, b = 2000 + rank, ga = -1, gb = -1;
    MPI_Request rq[4];
    MPI_Isend(&a, 1, MPI_INT, to, 5, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(&b, 1, MPI_INT, to, 5, d, &rq[1]);
    MPI_Irecv(&gb, 1, MPI_INT, from, 5, d, &rq[2]);
    MPI_Irecv(&ga, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &rq[3]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    CHECK_INT(ga, 1000 + from, "world message");
    CHECK_INT(gb, 2000 + from, "dup message");
    /* Names: a dup has none; WORLD's is predefined. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Comm_get_name(d, name, &len);
    CHECK_INT(len, 0, "dup has an empty name");
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name '%s'", name);
    CHECK_RC(MPI_Comm_set_name(d, "my dup"));
    MPI_Comm_get_name(d, name, &len);
    CHECK(strcmp(name, "my dup") == 0 && len == 6, "set name '%s'", name);
    /* MPI-4.1: the null handles have names (mpi4py relies on it). */
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == 13, "null comm name '%s'", name);
    CHECK_RC(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == 17, "null type name '%s'", name);
    CHECK_RC(MPI_Win_get_name(MPI_WIN_NULL, name, &len));
    CHECK(strcmp(name, "MPI_WIN_NULL") == 0 && len == 12, "null window name '%s'", name);
    /* Dup of a dup, of SELF. */
    CHECK_RC(MPI_Comm_dup(d, &d2));
    MPI_Comm_compare(d, d2, &res);
    CHECK_INT(res, MPI_CONGRUENT, "dup vs dup of dup");
    ring_check(d2, "dup of dup");
    MPI_Comm_free(&d2);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &d2));
    MPI_Comm_compare(MPI_COMM_SELF, d2, &res);
    CHECK_INT(res, MPI_CONGRUENT, "self vs dup of self");
    MPI_Comm_compare(MPI_COMM_WORLD, d2, &res);
    CHECK_INT(res, size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "world vs dup of self");
    int x = rank, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, 0, 1, &y, 1, MPI_INT, 0, 1, d2, MPI_STATUS_IGNORE);
    CHECK_INT(y, rank, "self dup message");
    MPI_Comm_free(&d2);
    CHECK_RC(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL, "Comm_free sets MPI_COMM_NULL");
    mtest_end();
}

static void test_idup_info(void)
{
    mtest_begin("comm_idup_info");
    MPI_Comm d, e;
    MPI_Request req;
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "idup request released");
    int res;
    MPI_Comm_compare(MPI_COMM_WORLD, d, &res);
    CHECK_INT(res, MPI_CONGRUENT, "world vs idup");
    ring_check(d, "idup");

    MPI_Info info, got;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tern_test_hint", "yes");
    CHECK_RC(MPI_Comm_dup_with_info(d, info, &e));
    MPI_Info_free(&info);
    MPI_Comm_compare(d, e, &res);
    CHECK_INT(res, MPI_CONGRUENT, "dup_with_info");
    CHECK_RC(MPI_Comm_get_info(e, &got));
    char v[32];
    int flag = 0;
    MPI_Info_get(got, "tern_test_hint", sizeof v - 1, v, &flag);
#ifdef TERN_VERSION_STRING /* MPICH drops hints it does not know */
    CHECK(flag && strcmp(v, "yes") == 0, "hint kept by dup_with_info (flag %d)", flag);
#endif
    MPI_Info_free(&got);
    /* set_info then get_info. */
    MPI_Info_create(&info);
    MPI_Info_set(info, "tern_other_hint", "42");
    CHECK_RC(MPI_Comm_set_info(d, info));
    MPI_Info_free(&info);
    CHECK_RC(MPI_Comm_get_info(d, &got));
    flag = 0;
    MPI_Info_get(got, "tern_other_hint", sizeof v - 1, v, &flag);
#ifdef TERN_VERSION_STRING
    CHECK(flag && strcmp(v, "42") == 0, "hint from set_info (flag %d)", flag);
#endif
    MPI_Info_free(&got);
    ring_check(e, "dup_with_info");
    MPI_Comm_free(&e);
    MPI_Comm_free(&d);
    mtest_end();
}

static void test_split(void)
{
    mtest_begin("comm_split");
    /* color = rank % 3, key = -rank: members in descending world order. */
    MPI_Comm s;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 3, -rank, &s));
    int want[64], nw = 0, got[64];
    for (int i = size - 1; i >= 0; i--)
        if (i % 3 == rank % 3)
            want[nw++] = i;
    int n = world_members(s, got), r;
    MPI_Comm_rank(s, &r);
    CHECK_INT(n, nw, "split size");
    for (int i = 0; i < n && i < nw; i++)
        CHECK_INT(got[i], want[i], "split member");
    for (int i = 0; i < nw; i++)
        if (want[i] == rank)
            CHECK_INT(r, i, "split rank");
    ring_check(s, "split");
    int res;
    MPI_Comm_compare(MPI_COMM_WORLD, s, &res);
    CHECK_INT(res, size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "world vs split");
    /* Equal keys keep the parent's order; split of a split. */
    MPI_Comm s2;
    CHECK_RC(MPI_Comm_split(s, 0, 7, &s2));
    MPI_Comm_compare(s, s2, &res);
    CHECK_INT(res, MPI_CONGRUENT, "split with one color and equal keys");
    MPI_Comm_free(&s2);
    MPI_Comm_free(&s);
    /* One color, reversed keys: SIMILAR to world. */
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 5, size - rank, &s));
    MPI_Comm_rank(s, &r);
    CHECK_INT(r, size - 1 - rank, "reversed rank");
    MPI_Comm_compare(MPI_COMM_WORLD, s, &res);
    CHECK_INT(res, size == 1 ? MPI_CONGRUENT : MPI_SIMILAR, "world vs reversed");
    ring_check(s, "reversed");
    MPI_Comm_free(&s);
    /* MPI_UNDEFINED: no communicator. Ranks 1, 3, ... stay out. */
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : 1, 0, &s));
    if (rank % 2) {
        CHECK(s == MPI_COMM_NULL, "UNDEFINED gives MPI_COMM_NULL");
    } else {
        MPI_Comm_size(s, &n);
        CHECK_INT(n, (size + 1) / 2, "evens");
        ring_check(s, "evens");
        MPI_Comm_free(&s);
    }
    mtest_end();
}

static void test_split_type(void)
{
    mtest_begin("comm_split_type");
    /* Expected: the ranks whose processor name is ours (Tern and MPICH
     * both define a node by its host name), in world order. */
    char names[64][MPI_MAX_PROCESSOR_NAME], mine[MPI_MAX_PROCESSOR_NAME];
    int len;
    memset(mine, 0, sizeof mine);
    MPI_Get_processor_name(mine, &len);
    MPI_Request rq[128];
    for (int i = 0; i < size; i++) {
        MPI_Irecv(names[i], MPI_MAX_PROCESSOR_NAME, MPI_CHAR, i, 9, MPI_COMM_WORLD, &rq[i]);
        MPI_Isend(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, i, 9, MPI_COMM_WORLD, &rq[size + i]);
    }
    MPI_Waitall(2 * size, rq, MPI_STATUSES_IGNORE);
    int want[64], nw = 0, got[64];
    for (int i = 0; i < size; i++)
        if (strcmp(names[i], mine) == 0)
            want[nw++] = i;
    MPI_Comm s;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &s));
    int n = world_members(s, got);
    CHECK_INT(n, nw, "shared size");
    for (int i = 0; i < n && i < nw; i++)
        CHECK_INT(got[i], want[i], "shared member");
    ring_check(s, "shared");
    MPI_Comm_free(&s);
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &s));
    CHECK(s == MPI_COMM_NULL, "split_type UNDEFINED");
    mtest_end();
}

static void test_create(void)
{
    mtest_begin("comm_create");
    MPI_Group w, evens, odds;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int ranges[1][3] = {{0, size - 1, 2}};
    MPI_Group_range_incl(w, 1, ranges, &evens);
    MPI_Group_difference(w, evens, &odds);
    MPI_Comm c;
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "odd rank outside Comm_create's group");
    } else {
        int r, n;
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &n);
        CHECK_INT(r, rank / 2, "create rank");
        CHECK_INT(n, (size + 1) / 2, "create size");
        ring_check(c, "create");
        MPI_Comm_free(&c);
    }
    /* create_group: only the odd ranks call. */
    if (rank % 2) {
        CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, odds, 77, &c));
        int r, n, res;
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &n);
        CHECK_INT(r, rank / 2, "create_group rank");
        CHECK_INT(n, size / 2, "create_group size");
        ring_check(c, "create_group");
        MPI_Group g;
        MPI_Comm_group(c, &g);
        MPI_Group_compare(g, odds, &res);
        CHECK_INT(res, MPI_IDENT, "create_group's group");
        MPI_Group_free(&g);
        MPI_Comm_free(&c);
    }
    /* Comm_create with the empty group: everyone gets MPI_COMM_NULL. */
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "create with the empty group");
    MPI_Group_free(&w);
    MPI_Group_free(&evens);
    MPI_Group_free(&odds);
    mtest_end();
}

/* Many communicators over the same processes at once (dups, splits, idups
 * started back to back): one message on each, all with the same tag and
 * MPI_ANY_SOURCE, received in reverse order; a context id shared by two
 * of them would deliver a message to the wrong one. */
#define NCOMM 24
static void test_unique_contexts(void)
{
    mtest_begin("comm_unique_contexts");
    MPI_Comm c[NCOMM];
    MPI_Request rq[NCOMM];
    int i = 0;
    while (i < NCOMM) {
        switch (i % 4) {
        case 0:
            CHECK_RC(MPI_Comm_dup(i ? c[i - 1] : MPI_COMM_WORLD, &c[i]));
            i++;
            break;
        case 1:
            CHECK_RC(MPI_Comm_split(c[i - 1], 0, rank, &c[i]));
            i++;
            break;
        default: /* two idups in flight */
            CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &c[i], &rq[0]));
            CHECK_RC(MPI_Comm_idup(c[i - 1], &c[i + 1], &rq[1]));
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            i += 2;
        }
    }
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int out[NCOMM], in[NCOMM];
    MPI_Request sr[NCOMM];
    for (i = 0; i < NCOMM; i++) {
        out[i] = i * 1000 + rank;
        MPI_Isend(&out[i], 1, MPI_INT, to, 0, c[i], &sr[i]);
    }
    for (i = NCOMM - 1; i >= 0; i--) {
        MPI_Status st;
        in[i] = -1;
        MPI_Recv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c[i], &st);
        CHECK(in[i] == i * 1000 + from, "communicator %d got %d, expected %d", i, in[i],
              i * 1000 + from);
    }
    MPI_Waitall(NCOMM, sr, MPI_STATUSES_IGNORE);
    int flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a message leaked onto MPI_COMM_WORLD");
    for (i = 0; i < NCOMM; i++)
        MPI_Comm_free(&c[i]);
    /* Disjoint splits, each dup'ed: same ids may be reused across groups,
     * never within one. */
    MPI_Comm half, hd[3];
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    for (i = 0; i < 3; i++)
        MPI_Comm_dup(i ? hd[i - 1] : half, &hd[i]);
    for (i = 0; i < 3; i++)
        ring_check(hd[i], "dup of half");
    for (i = 0; i < 3; i++)
        MPI_Comm_free(&hd[i]);
    MPI_Comm_free(&half);
    /* Overlapping groups (parity halves and lower/upper halves), dup'ed in
     * turn: every process sits in communicators of both families. */
    {
        MPI_Comm par, low, oc[8];
        int to_r[8], from_r[8], outv[8], inv[8];
        MPI_Request orq[8];
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &par);
        MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &low);
        for (i = 0; i < 8; i++)
            CHECK_RC(MPI_Comm_dup(i % 2 ? low : par, &oc[i]));
        for (i = 0; i < 8; i++) {
            int r, n;
            MPI_Comm_rank(oc[i], &r);
            MPI_Comm_size(oc[i], &n);
            to_r[i] = (r + 1) % n;
            from_r[i] = (r - 1 + n) % n;
            outv[i] = i * 1000 + r;
            MPI_Isend(&outv[i], 1, MPI_INT, to_r[i], 0, oc[i], &orq[i]);
        }
        for (i = 7; i >= 0; i--) {
            inv[i] = -1;
            MPI_Recv(&inv[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, oc[i], MPI_STATUS_IGNORE);
            CHECK(inv[i] == i * 1000 + from_r[i], "overlapping communicator %d got %d, expected %d",
                  i, inv[i], i * 1000 + from_r[i]);
        }
        MPI_Waitall(8, orq, MPI_STATUSES_IGNORE);
        for (i = 0; i < 8; i++)
            MPI_Comm_free(&oc[i]);
        MPI_Comm_free(&par);
        MPI_Comm_free(&low);
    }
    /* Create and free many times: ids are recycled without running out. */
    for (i = 0; i < 300; i++) {
        MPI_Comm d;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &d) != MPI_SUCCESS)
            FATAL("dup %d failed", i);
        MPI_Comm_free(&d);
    }
    mtest_end();
}

/* Freeing a communicator with a receive still pending lets it finish. */
static void test_free_pending(void)
{
    mtest_begin("comm_free_pending");
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int x = 77 + rank, y = -1;
    MPI_Request rr, sr;
    MPI_Irecv(&y, 1, MPI_INT, from, 4, d, &rr);
    MPI_Isend(&x, 1, MPI_INT, to, 4, d, &sr);
    CHECK_RC(MPI_Comm_free(&d));
    CHECK_RC(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    CHECK_INT(y, 77 + from, "receive finished after Comm_free");
    mtest_end();
}

static void test_errors(void)
{
    mtest_begin("comm_errors");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm c = MPI_COMM_WORLD, d, s;
    int n;
    CHECK_CLASS(MPI_Comm_free(&c), MPI_ERR_COMM, "free WORLD");
    c = MPI_COMM_SELF;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Comm_free(&c), MPI_ERR_COMM, "free SELF");
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm stale = d;
    MPI_Comm_free(&d);
    CHECK_CLASS(MPI_Comm_size(stale, &n), MPI_ERR_COMM, "freed communicator");
    CHECK_CLASS(MPI_Comm_dup(MPI_COMM_NULL, &d), MPI_ERR_COMM, "dup of COMM_NULL");
    CHECK_CLASS(MPI_Comm_split(MPI_COMM_NULL, 0, 0, &d), MPI_ERR_COMM, "split of COMM_NULL");
#ifdef TERN_VERSION_STRING /* MPICH answers 0 */
    CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM,
                "remote_size of an intracommunicator");
#endif
    int flag = -1;
    MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    CHECK_INT(flag, 0, "world is not inter");
    /* The split communicator inherits ERRORS_RETURN; its ranks are its own. */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &s);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(s, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "split inherits the error handler");
    MPI_Comm_size(s, &n);
    int x = 0;
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, n, 0, s), MPI_ERR_RANK, "send past the split's size");
    if (size > 1) {
        MPI_Group w;
        MPI_Comm_group(MPI_COMM_WORLD, &w);
        CHECK_CLASS(MPI_Comm_create(s, w, &d), MPI_ERR_GROUP, "create with a larger group");
        MPI_Group_free(&w);
    }
    CHECK_CLASS(MPI_Comm_create(s, MPI_GROUP_NULL, &d), MPI_ERR_GROUP, "create with GROUP_NULL");
#ifdef TERN_VERSION_STRING /* MPICH accepts it */
    CHECK_CLASS(MPI_Comm_split(s, -5, 0, &d), MPI_ERR_ARG, "split with a negative color");
#endif
    CHECK_CLASS(MPI_Comm_split_type(s, 12345, 0, MPI_INFO_NULL, &d), MPI_ERR_ARG,
                "split_type with an unknown type");
    CHECK_CLASS(MPI_Comm_dup(s, NULL), MPI_ERR_ARG, "dup into NULL");
    MPI_Comm_free(&s);
    mtest_end();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_Topo_test: no communicator Tern makes has a topology yet, so every
 * one answers MPI_UNDEFINED (mpi4py asks whenever it wraps a
 * communicator); a null or freed handle is MPI_ERR_COMM, named. */
static void test_topo_test(void)
{
    mtest_begin("topo_test");
    int status = 0;
    MPI_Comm s, d, f;
    CHECK_RC(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK_INT(status, MPI_UNDEFINED, "topology of MPI_COMM_WORLD");
    status = 0;
    CHECK_RC(MPI_Topo_test(MPI_COMM_SELF, &status));
    CHECK_INT(status, MPI_UNDEFINED, "topology of MPI_COMM_SELF");
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &s));
    CHECK_RC(MPI_Comm_dup(s, &d));
    status = 0;
    CHECK_RC(MPI_Topo_test(s, &status));
    CHECK_INT(status, MPI_UNDEFINED, "topology of a split");
    status = 0;
    CHECK_RC(MPI_Topo_test(d, &status));
    CHECK_INT(status, MPI_UNDEFINED, "topology of a dup");
    CHECK_RC(MPI_Comm_dup(d, &f));
    MPI_Comm stale = f;
    CHECK_RC(MPI_Comm_free(&f));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Topo_test(stale, &status), MPI_ERR_COMM, "Topo_test of a freed handle");
    int rc = MPI_Topo_test(MPI_COMM_NULL, &status);
    CHECK_CLASS(rc, MPI_ERR_COMM, "Topo_test of MPI_COMM_NULL");
    CHECK(strstr(mtest_errstr(rc), "MPI_Topo_test") != NULL, "message names the function: %s",
          mtest_errstr(rc));
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Topo_test(d, NULL), MPI_ERR_ARG, "Topo_test into NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK_RC(MPI_Comm_free(&d));
    CHECK_RC(MPI_Comm_free(&s));
    mtest_end();
}

/* Context ids are a fixed table: running out is MPI_ERR_OTHER ("too many
 * communicators", as MPICH), not out of memory, and the text says how
 * many are live. Dups of SELF need no other rank, so this is quick. */
static void test_context_exhaustion(void)
{
    mtest_begin("comm_context_exhaustion");
    enum { MAX = 5000 };
    static MPI_Comm dups[MAX];
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int made = 0, rc = MPI_SUCCESS;
    while (made < MAX && (rc = MPI_Comm_dup(MPI_COMM_SELF, &dups[made])) == MPI_SUCCESS)
        made++;
    CHECK_CLASS(rc, MPI_ERR_OTHER, "dup past the last context id");
    CHECK(made > 4000 && made < MAX, "%d communicators before running out", made);
    if (rc != MPI_SUCCESS) {
        char live[64];
        snprintf(live, sizeof live, "%d are live", made + 2); /* with WORLD and SELF */
        const char *msg = mtest_errstr(rc);
        CHECK(strstr(msg, "MPI_Comm_dup") && strstr(msg, "too many communicators") &&
                  strstr(msg, live),
              "message names the function and the count (%s): %s", live, msg);
    }
    for (int i = 0; i < made; i++)
        CHECK_RC(MPI_Comm_free(&dups[i]));
    /* Everything works again once they are freed. */
    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    ring_check(d, "dup after exhaustion");
    CHECK_RC(MPI_Comm_free(&d));
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    if (size > 64)
        FATAL("at most 64 ranks");
    test_dup();
    test_idup_info();
    test_split();
    test_split_type();
    test_create();
    test_unique_contexts();
    test_free_pending();
    test_errors();
    test_topo_test();
    test_context_exhaustion();
    return mtest_finalize();
}
