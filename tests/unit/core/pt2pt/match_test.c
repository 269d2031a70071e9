/* Unit test of the matching engine: order, wildcards, contexts, removal. */
#include "core/pt2pt/match.h"
#include "base/test_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tern_req_t *recv_req(uint32_t ctx, int src, int tag)
{
    tern_req_t *r = tern_req_alloc(TERN_REQ_RECV);
    r->context_id = ctx;
    r->peer = src;
    r->tag = tag;
    return r;
}

static void add_msg(uint32_t ctx, int src, int tag, const char *data)
{
    tern_msg_t m = {.type = 1, .src_world = src, .src = src, .tag = tag, .context_id = ctx,
                    .size = strlen(data), .data = data};
    CHECK(tern_match_add_unexpected(&m) == TERN_OK);
}

static void test_posted_order_and_wildcards(void)
{
    tern_req_t *a = recv_req(0, MPI_ANY_SOURCE, 5);
    tern_req_t *b = recv_req(0, 1, MPI_ANY_TAG);
    tern_req_t *c = recv_req(0, 1, 5);
    tern_req_t *d = recv_req(2, 1, 5); /* other communicator */
    tern_match_post(a);
    tern_match_post(b);
    tern_match_post(c);
    tern_match_post(d);
    /* (ctx 0, src 1, tag 5) matches a first: posting order wins. */
    CHECK(tern_match_take_posted(0, 1, 5) == a);
    CHECK(tern_match_take_posted(0, 1, 5) == b);
    CHECK(tern_match_take_posted(0, 1, 5) == c);
    CHECK(tern_match_take_posted(0, 1, 5) == NULL);
    /* Tag 7 from rank 3 in ctx 2 does not match d (source 1). */
    CHECK(tern_match_take_posted(2, 3, 7) == NULL);
    CHECK(tern_match_take_posted(2, 1, 5) == d);
    CHECK(tern_match_take_posted(2, 1, 5) == NULL);
    tern_req_release(a);
    tern_req_release(b);
    tern_req_release(c);
    tern_req_release(d);
}

static void test_unpost(void)
{
    tern_req_t *a = recv_req(0, 0, 1), *b = recv_req(0, 0, 1), *c = recv_req(0, 0, 1);
    tern_match_post(a);
    tern_match_post(b);
    tern_match_post(c);
    CHECK(tern_match_unpost(b) == 1);
    CHECK(tern_match_unpost(b) == 0);
    CHECK(tern_match_unpost(c) == 1); /* the tail: later posts must still link */
    tern_match_post(c);
    CHECK(tern_match_take_posted(0, 0, 1) == a);
    CHECK(tern_match_take_posted(0, 0, 1) == c);
    CHECK(tern_match_take_posted(0, 0, 1) == NULL);
    tern_req_release(a);
    tern_req_release(b);
    tern_req_release(c);
}

static void test_unexpected(void)
{
    add_msg(0, 1, 10, "first");
    add_msg(0, 2, 10, "second");
    add_msg(0, 1, 11, "third");
    add_msg(4, 1, 10, "other-ctx");
    /* Peek does not remove. */
    tern_unexp_t *u = tern_match_find_unexpected(0, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    CHECK(u && strncmp(u->msg.data, "first", 5) == 0);
    /* Specific source skips earlier non-matching entries, keeps order. */
    u = tern_match_find_unexpected(0, 2, MPI_ANY_TAG, 1);
    CHECK(u && u->msg.size == 6 && memcmp(u->msg.data, "second", 6) == 0);
    tern_match_free_unexpected(u);
    u = tern_match_find_unexpected(0, 1, 11, 1);
    CHECK(u && memcmp(u->msg.data, "third", 5) == 0);
    tern_match_free_unexpected(u);
    u = tern_match_find_unexpected(0, MPI_ANY_SOURCE, 10, 1);
    CHECK(u && memcmp(u->msg.data, "first", 5) == 0);
    tern_match_free_unexpected(u);
    CHECK(tern_match_find_unexpected(0, MPI_ANY_SOURCE, MPI_ANY_TAG, 1) == NULL);
    u = tern_match_find_unexpected(4, 1, 10, 1);
    CHECK(u && memcmp(u->msg.data, "other-ctx", 9) == 0);
    tern_match_free_unexpected(u);
    /* The queue is empty and still usable (tail reset). */
    add_msg(0, 0, 0, "again");
    u = tern_match_find_unexpected(0, 0, 0, 1);
    CHECK(u && memcmp(u->msg.data, "again", 5) == 0);
    tern_match_free_unexpected(u);
}

static void test_copy_is_private(void)
{
    char buf[8] = "payload";
    tern_msg_t m = {.type = 1, .src = 0, .tag = 0, .context_id = 0, .size = 7, .data = buf};
    CHECK(tern_match_add_unexpected(&m) == TERN_OK);
    memset(buf, 'x', 7); /* the transport reuses its cell */
    tern_unexp_t *u = tern_match_find_unexpected(0, 0, 0, 1);
    CHECK(u && memcmp(u->msg.data, "payload", 7) == 0);
    tern_match_free_unexpected(u);
}

static void test_many(void)
{
    /* 10000 messages with interleaved tags come back in order per tag. */
    char data[16];
    for (int i = 0; i < 10000; i++) {
        snprintf(data, sizeof data, "%d", i);
        add_msg(0, i % 3, i % 2, data);
    }
    for (int tag = 1; tag >= 0; tag--) {
        for (int i = tag; i < 10000; i += 2) {
            tern_unexp_t *u = tern_match_find_unexpected(0, MPI_ANY_SOURCE, tag, 1);
            snprintf(data, sizeof data, "%d", i);
            CHECK(u && u->msg.size == strlen(data) && memcmp(u->msg.data, data, u->msg.size) == 0);
            if (u)
                tern_match_free_unexpected(u);
        }
    }
    CHECK(tern_match_find_unexpected(0, MPI_ANY_SOURCE, MPI_ANY_TAG, 0) == NULL);
}

/* A long queue gets a per-source index (match.c): a random mix of adds,
 * finds (one source, any source, any tag, peeks), cancels by sequence and
 * takes by predicate, over 100 sources (bins shared) and two contexts,
 * checked against a plain list in arrival order. */
enum { MODEL_MAX = 20000 };
static struct {
    uint32_t ctx;
    int src, tag, alive;
} model[MODEL_MAX];
static int n_model, first_alive;
static uint64_t rng = 88172645463325252ull;

static unsigned next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

static int model_find(uint32_t ctx, int src, int tag)
{
    while (first_alive < n_model && !model[first_alive].alive)
        first_alive++;
    for (int i = first_alive; i < n_model; i++)
        if (model[i].alive && tern_match_fits(model[i].ctx, model[i].src, model[i].tag, ctx, src, tag))
            return i;
    return -1;
}

static int pred_tag3_src7(const tern_msg_t *msg, void *arg)
{
    (void)arg;
    return msg->tag == 3 && msg->src == 7;
}

static void test_indexed(void)
{
    int checked = 0;
    for (int step = 0; step < 60000; step++) {
        unsigned op = next_rand() % 16;
        if (op < 7 && n_model < MODEL_MAX) {
            int id = n_model++;
            model[id].ctx = next_rand() % 2 ? 4 : 0;
            model[id].src = (int)(next_rand() % 100);
            model[id].tag = (int)(next_rand() % 4);
            model[id].alive = 1;
            tern_msg_t m = {.type = 1, .src_world = model[id].src, .src = model[id].src,
                            .tag = model[id].tag, .context_id = model[id].ctx, .size = sizeof id,
                            .data = &id, .seq = (uint64_t)id};
            CHECK(tern_match_add_unexpected(&m) == TERN_OK);
            continue;
        }
        uint32_t ctx = next_rand() % 2 ? 4 : 0;
        int src = next_rand() % 8 ? (int)(next_rand() % 100) : MPI_ANY_SOURCE;
        int tag = next_rand() % 4 ? (int)(next_rand() % 4) : MPI_ANY_TAG;
        tern_unexp_t *u = NULL;
        int want = -1, take = 1;
        if (op == 14 && n_model) {
            want = (int)(next_rand() % (unsigned)n_model); /* a cancelled send */
            u = tern_match_take_unexpected_seq(model[want].src, (uint64_t)want);
            if (!model[want].alive)
                want = -1;
        } else if (op == 15) {
            for (int i = 0; i < n_model; i++)
                if (model[i].alive && model[i].src == 7 && model[i].tag == 3) {
                    want = i;
                    break;
                }
            u = tern_match_take_unexpected_if(pred_tag3_src7, NULL);
        } else {
            take = op != 13;
            want = model_find(ctx, src, tag);
            u = tern_match_find_unexpected(ctx, src, tag, take);
        }
        int got = -1;
        if (u)
            memcpy(&got, u->msg.data, sizeof got);
        CHECK(got == want);
        if (got != want) {
            fprintf(stderr, "step %d op %u: got %d, want %d\n", step, op, got, want);
            return;
        }
        checked++;
        if (u && take) {
            model[want].alive = 0;
            tern_match_free_unexpected(u);
        }
    }
    /* Drain: everything left comes back in arrival order. */
    for (int i = 0; i < n_model; i++) {
        if (!model[i].alive)
            continue;
        tern_unexp_t *u = tern_match_find_unexpected(model[i].ctx, MPI_ANY_SOURCE, MPI_ANY_TAG, 1);
        int got = -1;
        if (u)
            memcpy(&got, u->msg.data, sizeof got);
        CHECK(got == i);
        if (u)
            tern_match_free_unexpected(u);
        if (got != i)
            return;
    }
    CHECK(tern_match_find_unexpected(0, MPI_ANY_SOURCE, MPI_ANY_TAG, 0) == NULL);
    CHECK(tern_match_find_unexpected(4, MPI_ANY_SOURCE, MPI_ANY_TAG, 0) == NULL);
    CHECK(checked > 30000);
}

int main(void)
{
    test_posted_order_and_wildcards();
    test_unpost();
    test_unexpected();
    test_copy_is_private();
    test_many();
    test_indexed();
    return tern_check_result("match_test");
}
