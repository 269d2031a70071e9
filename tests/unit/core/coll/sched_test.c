/* Unit test of the schedule runner (coll_sched.h) in one process, with no
 * transport: the local steps (copy, reduce, pack, unpack, poll, scratch)
 * run in the order they were added, in an immediate schedule as each is
 * added and in a stored one when it runs; a poll step holds the steps
 * after it until it is done; the first error stops the schedule and is
 * what it returns; a persistent request restarts the same steps at each
 * start; freed schedules are pooled and come back clean. */
#include "core/coll/coll_sched.h"
#include "base/test_check.h"
#include "core/datatype/datatype.h"
#include "core/datatype/dtype_build.h"
#include "core/pt2pt/progress.h"
#include "core/pt2pt/start.h"

#include <stdint.h>
#include <string.h>

static tern_comm_t *self_comm(void) { return tern_comm_lookup(MPI_COMM_SELF); }

/* A poll step done at its n-th call; records the calls and what the
 * buffer it watches held when it was done. */
typedef struct {
    int calls, done_at, seen;
    const int *watch;
    tern_status_t fail_with;
    tern_sched_t *s; /* to note why it failed */
} poll_ctx_t;

static int poll_step(void *ctx, tern_status_t *st)
{
    poll_ctx_t *p = ctx;
    if (++p->calls < p->done_at)
        return 0;
    p->seen = p->watch ? *p->watch : 0;
    *st = p->fail_with;
    if (p->fail_with != TERN_OK)
        tern_sched_note(p->s, "the poll step failed on purpose at call %d", p->calls);
    return 1;
}

/* copy, reduce (sum of ints), pack and unpack of a strided int vector,
 * run both ways: the results must be the same. */
static void build_local(tern_sched_t *s, int *a, int *b, int *out, int *packed,
                        MPI_Datatype vec)
{
    tern_sched_copy(s, a, b, 4 * sizeof(int));       /* b = a */
    tern_sched_reduce(s, a, b, 4, MPI_INT, MPI_SUM);  /* b = 2a */
    tern_sched_reduce(s, b, b + 4, 4, MPI_INT, MPI_SUM); /* b[4..] += 2a */
    tern_sched_pack(s, b, 1, vec, packed);           /* every other int of b */
    tern_sched_unpack(s, packed, out, 1, vec);
}

static void test_local_steps(int blocking)
{
    MPI_Datatype vec = MPI_DATATYPE_NULL;
    tern_dtype_args_t args = {.combiner = MPI_COMBINER_VECTOR};
    CHECK(tern_dtype_build_vector(4, 1, 2 * sizeof(int), MPI_INT, &args, &vec) == TERN_OK);
    CHECK(tern_dtype_commit(vec) == TERN_OK);
    int a[4] = {1, 2, 3, 4}, b[8] = {0, 0, 0, 0, 10, 20, 30, 40}, out[8], packed[4];
    memset(out, 0xff, sizeof out);
    tern_sched_t *s = tern_sched_create(self_comm(), blocking);
    CHECK(s != NULL);
    build_local(s, a, b, out, packed, vec);
    if (blocking) /* an immediate schedule has already run its steps */
        CHECK(b[0] == 2 && b[4] == 12 && out[0] == 2);
    else /* a stored one has not */
        CHECK(b[0] == 0 && b[4] == 10);
    CHECK(tern_sched_run(s) == TERN_OK);
    tern_sched_free(s);
    int want_b[8] = {2, 4, 6, 8, 12, 24, 36, 48};
    CHECK(memcmp(b, want_b, sizeof b) == 0);
    int want_packed[4] = {2, 6, 12, 36};
    CHECK(memcmp(packed, want_packed, sizeof packed) == 0);
    for (int i = 0; i < 8; i++) /* the gaps of the vector are untouched */
        CHECK(out[i] == (i % 2 ? -1 : want_b[i]));
    tern_datatype_release(vec);
}

/* A poll step stops the schedule until done: the copy after it has not
 * run while it polls, the copy before it has. */
static void test_poll_orders(void)
{
    int x = 1, y = 0, z = 0;
    poll_ctx_t p = {.done_at = 5, .watch = &y, .fail_with = TERN_OK};
    tern_sched_t *s = tern_sched_create(self_comm(), 0);
    tern_sched_copy(s, &x, &y, sizeof x);
    tern_sched_poll(s, poll_step, &p, MPI_DATATYPE_NULL);
    tern_sched_copy(s, &y, &z, sizeof y);
    CHECK(tern_sched_run(s) == TERN_OK);
    tern_sched_free(s);
    CHECK(p.calls == 5);
    CHECK(p.seen == 1); /* the copy before the poll had run */
    CHECK(z == 1);
}

/* The first error wins and the steps after it do not run. */
static void test_error_stops(void)
{
    int x = 7, y = 0;
    poll_ctx_t p = {.done_at = 2, .fail_with = TERN_ERR_TRUNCATE};
    tern_sched_t *s = tern_sched_create(self_comm(), 0);
    p.s = s;
    tern_sched_poll(s, poll_step, &p, MPI_DATATYPE_NULL);
    tern_sched_copy(s, &x, &y, sizeof x);
    tern_status_t st = tern_sched_run(s);
    CHECK(st == TERN_ERR_TRUNCATE);
    const char *why = tern_status_take_detail(st);
    CHECK(why && strstr(why, "failed on purpose at call 2"));
    CHECK(y == 0);
    tern_sched_free(s);

    /* A build error (scratch memory that cannot exist) is what run returns,
     * and no step runs. */
    s = tern_sched_create(self_comm(), 0);
    tern_sched_copy(s, &x, &y, sizeof x);
    CHECK(tern_sched_tmp(s, SIZE_MAX / 2) == NULL);
    CHECK(tern_sched_error(s) != TERN_OK);
    CHECK(tern_sched_run(s) != TERN_OK);
    CHECK(y == 0);
    tern_sched_free(s);
}

/* Scratch memory is aligned, distinct, and writable to its end. */
static void test_scratch(void)
{
    tern_sched_t *s = tern_sched_create(self_comm(), 0);
    char *t[5];
    size_t sizes[5] = {1, 7, 64, 4096, 1 << 20};
    for (int i = 0; i < 5; i++) {
        t[i] = tern_sched_tmp(s, sizes[i]);
        CHECK(t[i] != NULL && ((uintptr_t)t[i] % 8) == 0);
        memset(t[i], i + 1, sizes[i]);
    }
    for (int i = 0; i < 5; i++)
        CHECK(t[i][0] == i + 1 && t[i][sizes[i] - 1] == i + 1);
    CHECK(tern_sched_run(s) == TERN_OK);
    tern_sched_free(s);
}

/* A persistent request runs the same steps at each start; between starts
 * the inputs change and the outputs follow. */
static void test_persistent(void)
{
    int a[4] = {1, 1, 1, 1}, b[4] = {0};
    tern_sched_t *s = tern_sched_create(self_comm(), 0);
    tern_sched_copy(s, a, b, sizeof a);
    tern_sched_reduce(s, a, b, 4, MPI_INT, MPI_SUM);
    tern_req_t *req = NULL;
    CHECK(tern_sched_request(s, 1, &req) == TERN_OK && req != NULL);
    CHECK(b[0] == 0); /* a persistent request waits for its start */
    for (int round = 1; round <= 3; round++) {
        for (int i = 0; i < 4; i++)
            a[i] = round * (i + 1);
        CHECK(tern_req_start(req) == TERN_OK);
        for (int spins = 0; !req->complete && spins < 1000000; spins++)
            tern_progress();
        CHECK(req->complete && req->error == TERN_OK);
        for (int i = 0; i < 4; i++)
            CHECK(b[i] == 2 * round * (i + 1));
    }
    tern_req_release(req);
}

/* Freed schedules come back from the pool with no steps and no error. */
static void test_pool(void)
{
    for (int i = 0; i < 100; i++) {
        tern_sched_t *s = tern_sched_create(self_comm(), i % 2);
        CHECK(s != NULL && tern_sched_error(s) == TERN_OK);
        int x = i, y = -1;
        tern_sched_copy(s, &x, &y, sizeof x);
        if (i % 7 == 0)
            (void)tern_sched_tmp(s, SIZE_MAX / 2); /* leaves a build error */
        tern_status_t st = tern_sched_run(s);
        CHECK(i % 7 == 0 ? st != TERN_OK : (st == TERN_OK && y == i));
        tern_sched_free(s);
    }
}

int main(void)
{
    tern_comm_init_predefined(0, 1);
    test_local_steps(1);
    test_local_steps(0);
    test_poll_orders();
    test_error_stops();
    test_scratch();
    test_persistent();
    test_pool();
    return tern_check_result("sched_test");
}
