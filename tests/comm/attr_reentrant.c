/* Attribute callbacks that call back into MPI on their own object: a
 * delete callback that gets, deletes (its own key too) and sets other
 * attributes of the communicator, datatype or window it is called for,
 * on MPI_*_delete_attr, on replacing a value, on MPI_*_free and (for
 * MPI_COMM_SELF and MPI_COMM_WORLD) on MPI_Finalize; and a copy callback
 * that deletes and sets attributes of the object being duplicated. Every
 * value's delete callback must run exactly once (issue 31, item 1: this
 * ended in glibc's "double free detected"). */
#include "../mpi/mtest.h"

enum { A, B, C, D, E, F, NKEYS };
static const char *const key_name[NKEYS] = {"A", "B", "C", "D", "E", "F"};

typedef struct kind {
    const char *name;
    int (*get)(struct kind *k, int idx, void **v, int *flag);
    int (*set)(struct kind *k, int idx, void *v);
    int (*del)(struct kind *k, int idx);
    int key[NKEYS];
    int deletes[NKEYS], copies[NKEYS];
    int depth; /* callbacks of this kind running now */
    MPI_Comm comm;
    MPI_Datatype type;
    MPI_Win win;
} kind_t;

typedef struct {
    kind_t *k;
    int idx;
} slot_t;

#define VAL(idx) ((void *)(intptr_t)(1000 + (idx)))

/* A's delete callback: reads C, deletes B (when there), tries its own key
 * (being deleted: MPI_ERR_KEYVAL) and sets D. Others only count. */
static int on_delete(kind_t *k, int idx, void *val)
{
    k->deletes[idx]++;
    CHECK(val == VAL(idx), "%s: value of %s in its delete callback", k->name, key_name[idx]);
    if (idx != A || k->depth)
        return MPI_SUCCESS;
    k->depth++;
    void *v = NULL;
    int flag = 0;
    CHECK_RC(k->get(k, C, &v, &flag));
    CHECK(!flag || v == VAL(C), "%s: C read in A's delete callback", k->name);
    flag = 0;
    CHECK_RC(k->get(k, B, &v, &flag));
    if (flag)
        CHECK_RC(k->del(k, B));
    CHECK_CLASS(k->del(k, A), MPI_ERR_KEYVAL, "deleting the key being deleted");
    CHECK_RC(k->set(k, D, VAL(D)));
    k->depth--;
    return MPI_SUCCESS;
}

/* E's copy callback: deletes B and C of the object being copied (newer
 * attributes, not copied yet) and sets F on it. Others count. */
static int on_copy(kind_t *k, int idx, void *in, void *out, int *flag)
{
    k->copies[idx]++;
    if (idx == E) {
        void *v;
        int f = 0;
        for (int j = B; j <= C; j++) {
            CHECK_RC(k->get(k, j, &v, &f));
            if (f)
                CHECK_RC(k->del(k, j));
        }
        CHECK_RC(k->set(k, F, VAL(F)));
    }
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* The callbacks of each kind, over the shared logic. */
static int comm_copy(MPI_Comm o, int kv, void *x, void *in, void *out, int *flag)
{
    slot_t *s = x;
    (void)kv;
    CHECK(o == s->k->comm, "copy callback on the communicator copied");
    return on_copy(s->k, s->idx, in, out, flag);
}
static int comm_delete(MPI_Comm o, int kv, void *val, void *x)
{
    (void)o, (void)kv;
    slot_t *s = x;
    return on_delete(s->k, s->idx, val);
}
static int type_copy(MPI_Datatype o, int kv, void *x, void *in, void *out, int *flag)
{
    slot_t *s = x;
    (void)kv;
    CHECK(o == s->k->type, "copy callback on the datatype copied");
    return on_copy(s->k, s->idx, in, out, flag);
}
static int type_delete(MPI_Datatype o, int kv, void *val, void *x)
{
    (void)o, (void)kv;
    slot_t *s = x;
    return on_delete(s->k, s->idx, val);
}
static int win_delete(MPI_Win o, int kv, void *val, void *x)
{
    (void)o, (void)kv;
    slot_t *s = x;
    return on_delete(s->k, s->idx, val);
}

static int comm_get(kind_t *k, int i, void **v, int *flag)
{
    return MPI_Comm_get_attr(k->comm, k->key[i], v, flag);
}
static int comm_set(kind_t *k, int i, void *v)
{
    return MPI_Comm_set_attr(k->comm, k->key[i], v);
}
static int comm_del(kind_t *k, int i)
{
    return MPI_Comm_delete_attr(k->comm, k->key[i]);
}
static int type_get(kind_t *k, int i, void **v, int *flag)
{
    return MPI_Type_get_attr(k->type, k->key[i], v, flag);
}
static int type_set(kind_t *k, int i, void *v)
{
    return MPI_Type_set_attr(k->type, k->key[i], v);
}
static int type_del(kind_t *k, int i)
{
    return MPI_Type_delete_attr(k->type, k->key[i]);
}
static int win_get(kind_t *k, int i, void **v, int *flag)
{
    return MPI_Win_get_attr(k->win, k->key[i], v, flag);
}
static int win_set(kind_t *k, int i, void *v)
{
    return MPI_Win_set_attr(k->win, k->key[i], v);
}
static int win_del(kind_t *k, int i)
{
    return MPI_Win_delete_attr(k->win, k->key[i]);
}

static slot_t slots[5][NKEYS];
static kind_t comm_kind = {.name = "communicator", .get = comm_get, .set = comm_set, .del = comm_del};
static kind_t type_kind = {.name = "datatype", .get = type_get, .set = type_set, .del = type_del};
static kind_t win_kind = {.name = "window", .get = win_get, .set = win_set, .del = win_del};
static kind_t self_kind = {.name = "MPI_COMM_SELF", .get = comm_get, .set = comm_set, .del = comm_del};
static kind_t world_kind = {.name = "MPI_COMM_WORLD", .get = comm_get, .set = comm_set,
                            .del = comm_del};

static void make_keys(kind_t *k, int n)
{
    for (int i = 0; i < NKEYS; i++) {
        slots[n][i] = (slot_t){k, i};
        if (k->get == comm_get)
            CHECK_RC(MPI_Comm_create_keyval(comm_copy, comm_delete, &k->key[i], &slots[n][i]));
        else if (k->get == type_get)
            CHECK_RC(MPI_Type_create_keyval(type_copy, type_delete, &k->key[i], &slots[n][i]));
        else
            CHECK_RC(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete, &k->key[i],
                                           &slots[n][i]));
    }
}

static void reset(kind_t *k)
{
    memset(k->deletes, 0, sizeof k->deletes);
    memset(k->copies, 0, sizeof k->copies);
}

static void expect_deletes(kind_t *k, const int *want, const char *when)
{
    for (int i = 0; i < NKEYS; i++)
        if (k->deletes[i] != want[i])
            mtest_fail(__FILE__, __LINE__, "%s, %s: %d delete callbacks of %s, expected %d",
                       k->name, when, k->deletes[i], key_name[i], want[i]);
}

static void expect_present(kind_t *k, int idx, int present, const char *when)
{
    void *v = NULL;
    int flag = -1;
    CHECK_RC(k->get(k, idx, &v, &flag));
    CHECK(flag == present && (!flag || v == VAL(idx)), "%s, %s: attribute %s present %d", k->name,
          when, key_name[idx], flag);
}

static void set_keys(kind_t *k, const int *order, int n)
{
    for (int i = 0; i < n; i++)
        CHECK_RC(k->set(k, order[i], VAL(order[i])));
}

/* MPI_*_delete_attr and replacing a value, on a live object. */
static void delete_and_replace(kind_t *k)
{
    /* B and C are newer than A: A's callback deletes the attribute in
     * front of its own in the list. */
    reset(k);
    set_keys(k, (const int[]){A, B, C}, 3);
    CHECK_RC(k->del(k, A));
    expect_deletes(k, (const int[]){1, 1, 0, 0, 0, 0}, "delete_attr(A)");
    expect_present(k, A, 0, "after delete_attr(A)");
    expect_present(k, B, 0, "after delete_attr(A)");
    expect_present(k, C, 1, "after delete_attr(A)");
    expect_present(k, D, 1, "after delete_attr(A)");
    CHECK_RC(k->del(k, C));
    CHECK_RC(k->del(k, D));
    expect_deletes(k, (const int[]){1, 1, 1, 1, 0, 0}, "deleting the rest");

    /* Replacing A's value runs its callback: B goes, D is set. */
    reset(k);
    set_keys(k, (const int[]){B, A}, 2);
    CHECK_RC(k->set(k, A, VAL(A)));
    expect_deletes(k, (const int[]){1, 1, 0, 0, 0, 0}, "set_attr(A) again");
    expect_present(k, A, 1, "after replacing A");
    expect_present(k, B, 0, "after replacing A");
    expect_present(k, D, 1, "after replacing A");
    /* Deleting A now replaces D (its old value's callback runs). */
    CHECK_RC(k->del(k, A));
    expect_deletes(k, (const int[]){2, 1, 0, 1, 0, 0}, "delete_attr(A) setting D again");
    CHECK_RC(k->del(k, D));
    expect_deletes(k, (const int[]){2, 1, 0, 2, 0, 0}, "deleting D");
}

/* The free procedure: every attribute's callback once, D (set by A's
 * callback during the free) too. */
static void expect_free(kind_t *k)
{
    expect_deletes(k, (const int[]){1, 1, 1, 1, 0, 0}, "free");
}

static void test_comm(void)
{
    mtest_begin("attr_reentrant_comm");
    kind_t *k = &comm_kind;
    make_keys(k, 0);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &k->comm));
    MPI_Comm_set_errhandler(k->comm, MPI_ERRORS_RETURN);
    delete_and_replace(k);

    /* Dup: E is the oldest; its copy callback deletes B and C before
     * their turn (they are not copied) and sets F on the old object. */
    reset(k);
    set_keys(k, (const int[]){E, B, C}, 3);
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(k->comm, &dup));
    CHECK(k->copies[E] == 1 && k->copies[B] == 0 && k->copies[C] == 0,
          "copy callbacks E %d B %d C %d", k->copies[E], k->copies[B], k->copies[C]);
    expect_deletes(k, (const int[]){0, 1, 1, 0, 0, 0}, "dup");
    expect_present(k, F, 1, "old communicator after dup");
    void *v = NULL;
    int flag = 0;
    CHECK_RC(MPI_Comm_get_attr(dup, k->key[E], &v, &flag));
    CHECK(flag && v == VAL(E), "E copied to the new communicator");
    CHECK_RC(MPI_Comm_get_attr(dup, k->key[B], &v, &flag));
    CHECK(!flag, "B not copied");
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK_RC(k->del(k, E));
    CHECK_RC(k->del(k, F));
    expect_deletes(k, (const int[]){0, 1, 1, 0, 2, 1}, "freeing the dup");

    /* Free: C first, then A's callback deletes B (older) and sets D. */
    reset(k);
    set_keys(k, (const int[]){B, A, C}, 3);
    CHECK_RC(MPI_Comm_free(&k->comm));
    expect_free(k);
    mtest_end();
}

static void test_type(void)
{
    mtest_begin("attr_reentrant_type");
    kind_t *k = &type_kind;
    make_keys(k, 1);
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &k->type));
    CHECK_RC(MPI_Type_commit(&k->type));
    delete_and_replace(k);

    reset(k);
    set_keys(k, (const int[]){E, B, C}, 3);
    MPI_Datatype dup;
    CHECK_RC(MPI_Type_dup(k->type, &dup));
    CHECK(k->copies[E] == 1 && k->copies[B] == 0 && k->copies[C] == 0,
          "copy callbacks E %d B %d C %d", k->copies[E], k->copies[B], k->copies[C]);
    expect_present(k, F, 1, "old datatype after dup");
    CHECK_RC(MPI_Type_free(&dup));
    CHECK_RC(k->del(k, E));
    CHECK_RC(k->del(k, F));
    expect_deletes(k, (const int[]){0, 1, 1, 0, 2, 1}, "dup and its free");

    reset(k);
    set_keys(k, (const int[]){B, A, C}, 3);
    CHECK_RC(MPI_Type_free(&k->type));
    expect_free(k);
    mtest_end();
}

static void test_win(void)
{
    mtest_begin("attr_reentrant_win");
    kind_t *k = &win_kind;
    make_keys(k, 2);
    static int buf[4];
    CHECK_RC(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &k->win));
    MPI_Win_set_errhandler(k->win, MPI_ERRORS_RETURN);
    delete_and_replace(k);

    reset(k);
    set_keys(k, (const int[]){B, A, C}, 3);
    CHECK_RC(MPI_Win_free(&k->win));
    expect_free(k);
    mtest_end();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    /* Datatype errors go to MPI_COMM_SELF's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    test_comm();
    test_type();
    test_win();

    /* MPI_Finalize deletes MPI_COMM_SELF's attributes (and Tern
     * MPI_COMM_WORLD's) with the same callbacks. */
    self_kind.comm = MPI_COMM_SELF;
    world_kind.comm = MPI_COMM_WORLD;
    make_keys(&self_kind, 3);
    make_keys(&world_kind, 4);
    set_keys(&self_kind, (const int[]){B, A, C}, 3);
    set_keys(&world_kind, (const int[]){B, A, C}, 3);
    snprintf(mtest_subname, sizeof mtest_subname, "attr_reentrant_finalize");
    int errors_before = mtest_errors;
    int rc = mtest_finalize();
    expect_free(&self_kind);
    expect_free(&world_kind);
    if (mtest_rank == 0)
        printf("test attr_reentrant_finalize %s\n", mtest_errors == errors_before ? "ok" : "FAILED");
    return rc || mtest_errors ? 1 : 0;
}
