/* Groups: every constructor and query on MPI_COMM_WORLD's group, checked
 * against ranks computed here by hand; translate_ranks with MPI_PROC_NULL
 * and MPI_UNDEFINED; error classes for bad groups, ranks and arguments. */
#include "../mpi/mtest.h"

static int rank, size;

/* The world ranks of a group, through translate_ranks to world. */
static void members(MPI_Group g, int *out, int *n)
{
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(g, n);
    int in[64];
    for (int i = 0; i < *n; i++)
        in[i] = i;
    CHECK_RC(MPI_Group_translate_ranks(g, *n, in, world, out));
    MPI_Group_free(&world);
}

static void expect(MPI_Group g, const int *want, int nwant, const char *what)
{
    int got[64], n;
    members(g, got, &n);
    CHECK_INT(n, nwant, what);
    for (int i = 0; i < n && i < nwant; i++)
        CHECK(got[i] == want[i], "%s: member %d is world %d, expected %d", what, i, got[i], want[i]);
    int r, wr = MPI_UNDEFINED;
    MPI_Group_rank(g, &r);
    for (int i = 0; i < nwant; i++)
        if (want[i] == rank)
            wr = i;
    CHECK_INT(r, wr, "Group_rank");
}

static void test_basic(void)
{
    mtest_begin("group_basic");
    MPI_Group w, w2;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &w));
    int n, r, res;
    MPI_Group_size(w, &n);
    MPI_Group_rank(w, &r);
    CHECK_INT(n, size, "world group size");
    CHECK_INT(r, rank, "world group rank");
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &w2));
    MPI_Group_compare(w, w2, &res);
    CHECK_INT(res, MPI_IDENT, "two world groups");
    MPI_Group self;
    MPI_Comm_group(MPI_COMM_SELF, &self);
    MPI_Group_size(self, &n);
    MPI_Group_rank(self, &r);
    CHECK_INT(n, 1, "self size");
    CHECK_INT(r, 0, "self rank");
    MPI_Group_compare(w, self, &res);
    CHECK_INT(res, size == 1 ? MPI_IDENT : MPI_UNEQUAL, "world vs self");
    MPI_Group_size(MPI_GROUP_EMPTY, &n);
    MPI_Group_rank(MPI_GROUP_EMPTY, &r);
    CHECK_INT(n, 0, "empty size");
    CHECK_INT(r, MPI_UNDEFINED, "empty rank");
    MPI_Group_free(&w);
    CHECK(w == MPI_GROUP_NULL, "Group_free sets MPI_GROUP_NULL");
    MPI_Group_free(&w2);
    MPI_Group_free(&self);
    mtest_end();
}

static void test_incl_excl(void)
{
    mtest_begin("group_incl_excl");
    MPI_Group w, g, h;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    /* Reversed world. */
    int rev[64] = {0}, want[64] = {0}, nw = 0;
    for (int i = 0; i < size; i++)
        rev[i] = size - 1 - i;
    CHECK_RC(MPI_Group_incl(w, size, rev, &g));
    expect(g, rev, size, "incl reversed");
    int res;
    MPI_Group_compare(w, g, &res);
    CHECK_INT(res, size == 1 ? MPI_IDENT : MPI_SIMILAR, "reversed vs world");
    MPI_Group_free(&g);
    /* Excl the even ranks: the odd ones remain, in order. */
    int evens[64], ne = 0;
    for (int i = 0; i < size; i += 2)
        evens[ne++] = i;
    for (int i = 1; i < size; i += 2)
        want[nw++] = i;
    CHECK_RC(MPI_Group_excl(w, ne, evens, &g));
    expect(g, want, nw, "excl evens");
    /* Incl of zero ranks is empty. */
    CHECK_RC(MPI_Group_incl(w, 0, NULL, &h));
    MPI_Group_compare(h, MPI_GROUP_EMPTY, &res);
    CHECK_INT(res, MPI_IDENT, "incl nothing is empty");
    MPI_Group_free(&h);
    /* Excl everything is empty. */
    for (int i = 0; i < size; i++)
        rev[i] = i;
    CHECK_RC(MPI_Group_excl(w, size, rev, &h));
    int n;
    MPI_Group_size(h, &n);
    CHECK_INT(n, 0, "excl all");
    MPI_Group_free(&h);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    mtest_end();
}

static void test_ranges(void)
{
    mtest_begin("group_ranges");
    MPI_Group w, g;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int ranges[1][3] = {{0, size - 1, 2}};
    int want[64] = {0}, nw = 0;
    for (int i = 0; i < size; i += 2)
        want[nw++] = i;
    CHECK_RC(MPI_Group_range_incl(w, 1, ranges, &g));
    expect(g, want, nw, "range_incl evens");
    MPI_Group_free(&g);
    if (size >= 4) {
        /* Odd ranks descending, then rank 0. */
        int top = size % 2 ? size - 2 : size - 1;
        int r2[2][3] = {{top, 1, -2}, {0, 0, 1}};
        nw = 0;
        for (int i = top; i >= 1; i -= 2)
            want[nw++] = i;
        want[nw++] = 0;
        CHECK_RC(MPI_Group_range_incl(w, 2, r2, &g));
        expect(g, want, nw, "range_incl odds descending + 0");
        MPI_Group_free(&g);
        /* range_excl of the same: the even ranks but 0. */
        CHECK_RC(MPI_Group_range_excl(w, 2, r2, &g));
        nw = 0;
        for (int i = 2; i < size; i += 2)
            want[nw++] = i;
        expect(g, want, nw, "range_excl");
        MPI_Group_free(&g);
    }
    MPI_Group_free(&w);
    mtest_end();
}

static void test_set_ops(void)
{
    mtest_begin("group_set_ops");
    MPI_Group w, a, b, g;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    /* a = multiples of 3 descending, b = even ranks ascending. */
    int la[64] = {0}, na = 0, lb[64] = {0}, nb = 0, want[64] = {0}, nw;
    for (int i = size - 1; i >= 0; i--)
        if (i % 3 == 0)
            la[na++] = i;
    for (int i = 0; i < size; i += 2)
        lb[nb++] = i;
    MPI_Group_incl(w, na, la, &a);
    MPI_Group_incl(w, nb, lb, &b);
    /* union: a's order, then b's members not in a. */
    nw = 0;
    for (int i = 0; i < na; i++)
        want[nw++] = la[i];
    for (int i = 0; i < nb; i++)
        if (lb[i] % 3 != 0)
            want[nw++] = lb[i];
    CHECK_RC(MPI_Group_union(a, b, &g));
    expect(g, want, nw, "union");
    MPI_Group_free(&g);
    /* intersection: a's members in b, a's order (multiples of 6). */
    nw = 0;
    for (int i = 0; i < na; i++)
        if (la[i] % 2 == 0)
            want[nw++] = la[i];
    CHECK_RC(MPI_Group_intersection(a, b, &g));
    expect(g, want, nw, "intersection");
    MPI_Group_free(&g);
    /* difference: a's members not in b. */
    nw = 0;
    for (int i = 0; i < na; i++)
        if (la[i] % 2 != 0)
            want[nw++] = la[i];
    CHECK_RC(MPI_Group_difference(a, b, &g));
    expect(g, want, nw, "difference");
    MPI_Group_free(&g);
    /* With the empty group. */
    int res;
    CHECK_RC(MPI_Group_union(MPI_GROUP_EMPTY, w, &g));
    MPI_Group_compare(g, w, &res);
    CHECK_INT(res, MPI_IDENT, "empty U world");
    MPI_Group_free(&g);
    CHECK_RC(MPI_Group_intersection(w, MPI_GROUP_EMPTY, &g));
    MPI_Group_compare(g, MPI_GROUP_EMPTY, &res);
    CHECK_INT(res, MPI_IDENT, "world ^ empty");
    MPI_Group_free(&g);
    CHECK_RC(MPI_Group_difference(w, w, &g));
    MPI_Group_compare(g, MPI_GROUP_EMPTY, &res);
    CHECK_INT(res, MPI_IDENT, "world - world");
    MPI_Group_free(&g);
    MPI_Group_free(&a);
    MPI_Group_free(&b);
    MPI_Group_free(&w);
    mtest_end();
}

static void test_translate(void)
{
    mtest_begin("group_translate");
    MPI_Group w, rev, odd;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int l[64], n = 0;
    for (int i = 0; i < size; i++)
        l[i] = size - 1 - i;
    MPI_Group_incl(w, size, l, &rev);
    for (int i = 1; i < size; i += 2)
        l[n++] = i;
    MPI_Group_excl(w, 0, NULL, &odd); /* a copy of world, freed below */
    MPI_Group_free(&odd);
    MPI_Group_incl(w, n, l, &odd);
    int in[66], out[66];
    for (int i = 0; i < size; i++)
        in[i] = i;
    in[size] = MPI_PROC_NULL;
    CHECK_RC(MPI_Group_translate_ranks(w, size + 1, in, rev, out));
    for (int i = 0; i < size; i++)
        CHECK_INT(out[i], size - 1 - i, "world -> reversed");
    CHECK_INT(out[size], MPI_PROC_NULL, "PROC_NULL translates to itself");
    CHECK_RC(MPI_Group_translate_ranks(w, size, in, odd, out));
    for (int i = 0; i < size; i++)
        CHECK_INT(out[i], i % 2 ? i / 2 : MPI_UNDEFINED, "world -> odd");
    CHECK_RC(MPI_Group_translate_ranks(w, 0, NULL, odd, NULL));
    MPI_Group_free(&rev);
    MPI_Group_free(&odd);
    MPI_Group_free(&w);
    mtest_end();
}

static void test_errors(void)
{
    mtest_begin("group_errors");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group w, g = MPI_GROUP_NULL;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int n, res, r[2] = {0, 0};
    CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP, "size of GROUP_NULL");
#ifdef TERN_VERSION_STRING /* Tern checks this; MPICH does not (crashes or succeeds) */
    CHECK_CLASS(MPI_Group_size((MPI_Group)0x88abcdef, &n), MPI_ERR_GROUP, "size of garbage");
#endif
    CHECK_CLASS(MPI_Group_compare(w, MPI_GROUP_NULL, &res), MPI_ERR_GROUP, "compare NULL");
#ifdef TERN_VERSION_STRING /* MPICH accepts duplicates */
    if (size > 1)
        CHECK_CLASS(MPI_Group_incl(w, 2, r, &g), MPI_ERR_RANK, "incl duplicate");
#endif
    r[0] = size;
    CHECK_CLASS(MPI_Group_incl(w, 1, r, &g), MPI_ERR_RANK, "incl out of range");
    r[0] = -1;
    CHECK_CLASS(MPI_Group_excl(w, 1, r, &g), MPI_ERR_RANK, "excl negative");
    CHECK_CLASS(MPI_Group_incl(w, -1, r, &g), MPI_ERR_ARG, "incl n < 0");
#ifdef TERN_VERSION_STRING /* MPICH checks the ranks first (MPI_ERR_RANK) */
    CHECK_CLASS(MPI_Group_incl(w, size + 1, r, &g), MPI_ERR_ARG, "incl n > size");
#endif
    int bad[1][3] = {{0, size - 1, 0}};
    CHECK_CLASS(MPI_Group_range_incl(w, 1, bad, &g), MPI_ERR_ARG, "range stride 0");
    int out_of[1][3] = {{0, size, 1}};
#ifdef TERN_VERSION_STRING /* MPICH says MPI_ERR_ARG */
    CHECK_CLASS(MPI_Group_range_incl(w, 1, out_of, &g), MPI_ERR_RANK, "range past the end");
#else
    (void)out_of;
#endif
    int in = size, out;
    CHECK_CLASS(MPI_Group_translate_ranks(w, 1, &in, w, &out), MPI_ERR_RANK,
                "translate out of range");
#ifdef TERN_VERSION_STRING /* Tern's messages name the function and the argument */
    char expect[160];
    snprintf(expect, sizeof expect,
             "MPI_Group_translate_ranks: ranks1[0]=%d is out of range (group1 has %d ranks)", size,
             size);
    CHECK_ERROR_TEXT(MPI_Group_translate_ranks(w, 1, &in, w, &out), MPI_ERR_RANK, expect,
                     "translate text");
    CHECK_ERROR_TEXT(MPI_Group_incl(w, -1, r, &g), MPI_ERR_ARG, "MPI_Group_incl: n=-1 is negative",
                     "incl n < 0 text");
    CHECK_ERROR_TEXT(MPI_Group_size(w, NULL), MPI_ERR_ARG, "MPI_Group_size: size is NULL",
                     "NULL size text");
    CHECK_ERROR_TEXT(MPI_Group_union(w, w, NULL), MPI_ERR_ARG,
                     "MPI_Group_union: newgroup is NULL", "NULL newgroup text");
    CHECK_ERROR_TEXT(MPI_Group_translate_ranks(w, 1, NULL, w, &out), MPI_ERR_ARG,
                     "MPI_Group_translate_ranks: ranks1 is NULL (1 elements)", "NULL ranks1 text");
#endif
#ifdef TERN_VERSION_STRING /* MPICH does not catch a double free */
    CHECK(g == MPI_GROUP_NULL, "failed calls leave newgroup alone");
    MPI_Group f = w;
    MPI_Group_free(&f);
    CHECK_CLASS(MPI_Group_free(&w), MPI_ERR_GROUP, "double free");
#else
    MPI_Group_free(&w);
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    if (size > 64)
        FATAL("at most 64 ranks");
    test_basic();
    test_incl_excl();
    test_ranges();
    test_set_ops();
    test_translate();
    test_errors();
    return mtest_finalize();
}
