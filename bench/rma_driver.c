/* tern-bench: one-sided benchmark loop (see rma_driver.h). */
#include "rma_driver.h"

#include <stdint.h>

/* Window memory of the bandwidth benchmarks: a slot per operation of the
 * window of operations, up to this many bytes (then slots are reused: the
 * same bytes put again). */
#define RMA_REGION_CAP ((size_t)64 << 20)

typedef struct rma_state {
    const bench_rma *b;
    const bench_opts *o;
    MPI_Comm pair;         /* ranks 0 and 1 */
    MPI_Group peer_group;  /* the other rank, for PSCW */
    MPI_Win win;
    char *wmem;            /* this rank's window memory */
    MPI_Aint peer_base;    /* dynamic: the peer's region address; else 0 */
    int me, peer;
    size_t elem;           /* bytes of one element (1, 4 or 8) */
    char *sbuf, *rbuf;     /* origin and result buffers, one slot per operation */
    int64_t operand, compare;  /* fetch_and_op and compare_and_swap */
    long done;             /* operations this rank issued for the size */
} rma_state;

static int64_t *i64(char *p) { return (int64_t *)(void *)p; }

/* Accumulate input of rank src, element i. */
static int acc_input(size_t i, size_t size, int src)
{
    return (int)((i * 3 + size + (size_t)src * 7) % 1000) + 1;
}

static void make_window(rma_state *s, size_t bytes)
{
    switch (s->o->flavor) {
    case BENCH_WIN_CREATE:
        s->wmem = bench_alloc(bytes);
        BENCH_CHECK(MPI_Win_create(s->wmem, (MPI_Aint)bytes, 1, MPI_INFO_NULL, s->pair, &s->win));
        break;
    case BENCH_WIN_ALLOCATE:
        BENCH_CHECK(MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, s->pair, &s->wmem, &s->win));
        break;
    default: {
        s->wmem = bench_alloc(bytes);
        BENCH_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, s->pair, &s->win));
        BENCH_CHECK(MPI_Win_attach(s->win, s->wmem, (MPI_Aint)bytes));
        MPI_Aint mine;
        BENCH_CHECK(MPI_Get_address(s->wmem, &mine));
        BENCH_CHECK(MPI_Sendrecv(&mine, 1, MPI_AINT, s->peer, 7, &s->peer_base, 1, MPI_AINT, s->peer, 7,
                                 s->pair, MPI_STATUS_IGNORE));
        break;
    }
    }
}

static void free_window(rma_state *s)
{
    if (s->o->flavor == BENCH_WIN_DYNAMIC) BENCH_CHECK(MPI_Win_detach(s->win, s->wmem));
    BENCH_CHECK(MPI_Win_free(&s->win));
    if (s->o->flavor != BENCH_WIN_ALLOCATE) free(s->wmem);
}

/* One operation on the peer's slot. */
static void op(rma_state *s, size_t size, int slot)
{
    const MPI_Aint disp = s->peer_base + (MPI_Aint)((size_t)slot * size);
    char *sb = s->sbuf + (size_t)slot * size, *rb = s->rbuf + (size_t)slot * size;
    const int n = (int)(size / s->elem);
    switch (s->b->op) {
    case BENCH_RMA_PUT:
        BENCH_CHECK(MPI_Put(sb, n, MPI_BYTE, s->peer, disp, n, MPI_BYTE, s->win));
        break;
    case BENCH_RMA_GET:
        BENCH_CHECK(MPI_Get(rb, n, MPI_BYTE, s->peer, disp, n, MPI_BYTE, s->win));
        break;
    case BENCH_RMA_ACC:
        BENCH_CHECK(MPI_Accumulate(sb, n, MPI_INT, s->peer, disp, n, MPI_INT, MPI_SUM, s->win));
        break;
    case BENCH_RMA_GACC:
        BENCH_CHECK(MPI_Get_accumulate(sb, n, MPI_INT, rb, n, MPI_INT, s->peer, disp, n, MPI_INT, MPI_SUM,
                                       s->win));
        break;
    case BENCH_RMA_FOP:
        BENCH_CHECK(MPI_Fetch_and_op(&s->operand, rb, MPI_INT64_T, s->peer, disp, MPI_SUM, s->win));
        break;
    default:
        /* Swaps k for k + 1: every swap succeeds when the target holds the
         * count of the swaps before it. The origin buffers change only
         * after the epoch that used them has ended. */
        BENCH_CHECK(MPI_Compare_and_swap(&s->operand, &s->compare, rb, MPI_INT64_T, s->peer, disp, s->win));
        break;
    }
    s->done++;
}

/* Next compare-and-swap operands, between epochs. */
static void next_operands(rma_state *s)
{
    if (s->b->op != BENCH_RMA_CAS) return;
    s->compare = s->done + (s->o->corrupt ? 1 : 0); /* corrupt: never matches */
    s->operand = s->done + 1;
}

/* Local access to this rank's own window memory, outside any other epoch. */
static void self_lock(rma_state *s, int type)
{
    BENCH_CHECK(MPI_Win_lock(type, s->me, 0, s->win));
}

static void prepare(rma_state *s, size_t size, int slots)
{
    const size_t bytes = size * (size_t)slots;
    self_lock(s, MPI_LOCK_EXCLUSIVE);
    if (s->b->op == BENCH_RMA_GET) {
        for (int j = 0; j < slots; j++) bench_fill(s->wmem + (size_t)j * size, size, size, s->me, j, s->o);
    } else {
        memset(s->wmem, 0, bytes);
    }
    BENCH_CHECK(MPI_Win_unlock(s->me, s->win));
    memset(s->rbuf, 0, bytes);
    if (s->b->op == BENCH_RMA_PUT) {
        for (int j = 0; j < slots; j++) bench_fill(s->sbuf + (size_t)j * size, size, size, s->me, j, s->o);
    } else if (s->b->op == BENCH_RMA_ACC || s->b->op == BENCH_RMA_GACC) {
        int *v = (int *)(void *)s->sbuf;
        size_t n = size / sizeof(int);
        for (size_t i = 0; i < n; i++) v[i] = acc_input(i, size, s->me);
        if (s->o->corrupt && n) v[n / 2] += 1;
    }
    s->operand = s->o->corrupt ? 2 : 1;
    s->done = 0;
    next_operands(s);
    BENCH_CHECK(MPI_Barrier(s->pair));
}

/* Expected value at a target that took `arg` accumulates of rank src. */
typedef struct { long times; int src; } acc_expect_t;
static int acc_expect(size_t i, size_t size, void *arg)
{
    const acc_expect_t *e = arg;
    return (int)(e->times * acc_input(i, size, e->src));
}

/* After the timed loop: the target checks its window, the origin what it
 * fetched. `taken`: operations this rank's window received. */
static void check(rma_state *s, size_t size, int slots, long taken)
{
    const long issued = s->done;
    BENCH_CHECK(MPI_Barrier(s->pair));
    if (taken > 0) {
        self_lock(s, MPI_LOCK_SHARED);
        if (s->b->op == BENCH_RMA_PUT) {
            for (int j = 0; j < slots; j++)
                bench_check(s->wmem + (size_t)j * size, size, size, s->peer, j, "window bytes after the puts");
        } else if (s->b->op == BENCH_RMA_ACC || s->b->op == BENCH_RMA_GACC) {
            acc_expect_t e = {taken, s->peer};
            bench_check_int((int *)(void *)s->wmem, size / sizeof(int), size, "window sum after the accumulates",
                            acc_expect, &e);
        } else if (s->b->op == BENCH_RMA_FOP || s->b->op == BENCH_RMA_CAS) {
            bench_check_value(*i64(s->wmem), taken, size,
                              s->b->op == BENCH_RMA_FOP ? "window value after fetch_and_op"
                                                        : "window value after compare_and_swap");
        }
        BENCH_CHECK(MPI_Win_unlock(s->me, s->win));
    }
    if (issued > 0) {
        if (s->b->op == BENCH_RMA_GET) {
            for (int j = 0; j < slots; j++)
                bench_check(s->rbuf + (size_t)j * size, size, size, s->peer, j, "data got");
        } else if (s->b->op == BENCH_RMA_GACC) {
            /* The last get_accumulate fetched the sum of the ones before. */
            acc_expect_t e = {issued - 1, s->me};
            bench_check_int((int *)(void *)s->rbuf, size / sizeof(int), size, "data get_accumulate fetched",
                            acc_expect, &e);
        } else if (s->b->op == BENCH_RMA_FOP || s->b->op == BENCH_RMA_CAS) {
            bench_check_value(*i64(s->rbuf), issued - 1, size, "value fetched last");
        }
    }
}

/* Passive target: rank 0's epochs. */
static void passive_begin(rma_state *s)
{
    if (s->o->sync == BENCH_SYNC_FLUSH) BENCH_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, s->peer, 0, s->win));
    if (s->o->sync == BENCH_SYNC_LOCK_ALL) BENCH_CHECK(MPI_Win_lock_all(0, s->win));
}

static void passive_end(rma_state *s)
{
    if (s->o->sync == BENCH_SYNC_FLUSH) BENCH_CHECK(MPI_Win_unlock(s->peer, s->win));
    if (s->o->sync == BENCH_SYNC_LOCK_ALL) BENCH_CHECK(MPI_Win_unlock_all(s->win));
}

/* `count` operations in one passive-target step. */
static void passive_step(rma_state *s, size_t size, int count, int slots)
{
    if (s->o->sync == BENCH_SYNC_LOCK) BENCH_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, s->peer, 0, s->win));
    for (int j = 0; j < count; j++) op(s, size, j % slots);
    if (s->o->sync == BENCH_SYNC_LOCK) BENCH_CHECK(MPI_Win_unlock(s->peer, s->win));
    else BENCH_CHECK(MPI_Win_flush(s->peer, s->win));
    next_operands(s);
}

/* One access epoch of `count` operations (count 0: exposure only), fence or PSCW. */
static void active_epoch(rma_state *s, size_t size, int count, int slots, int expose)
{
    if (s->o->sync == BENCH_SYNC_FENCE) {
        for (int j = 0; j < count; j++) op(s, size, j % slots);
        BENCH_CHECK(MPI_Win_fence(0, s->win));
    } else {
        if (expose) BENCH_CHECK(MPI_Win_post(s->peer_group, 0, s->win));
        if (count) {
            BENCH_CHECK(MPI_Win_start(s->peer_group, 0, s->win));
            for (int j = 0; j < count; j++) op(s, size, j % slots);
            BENCH_CHECK(MPI_Win_complete(s->win));
        }
        if (expose) BENCH_CHECK(MPI_Win_wait(s->win));
    }
    if (count) next_operands(s);
}

/* Timed loop of one size; returns rank 0's elapsed seconds and sets *taken. */
static double run_size(rma_state *s, size_t size, int slots, int warmup, int iters, long *taken)
{
    const int passive = s->o->sync <= BENCH_SYNC_LOCK_ALL;
    const int window = s->b->measure == BENCH_RMA_LATENCY ? 1 : s->o->window;
    double t0 = 0;
    *taken = 0;
    if (passive) {
        if (s->me == 0) {
            passive_begin(s);
            for (int i = 0; i < warmup + iters; i++) {
                if (i == warmup) t0 = MPI_Wtime();
                passive_step(s, size, window, slots);
            }
            passive_end(s);
        } else {
            *taken = (long)(warmup + iters) * window;
        }
        return MPI_Wtime() - t0;
    }
    if (s->o->sync == BENCH_SYNC_FENCE) BENCH_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, s->win));
    for (int i = 0; i < warmup + iters; i++) {
        if (i == warmup) t0 = MPI_Wtime();
        if (s->b->measure == BENCH_RMA_BIBW) {
            /* Both ranks origins and targets of one epoch. */
            if (s->o->sync == BENCH_SYNC_FENCE) {
                active_epoch(s, size, window, slots, 1);
            } else {
                BENCH_CHECK(MPI_Win_post(s->peer_group, 0, s->win));
                BENCH_CHECK(MPI_Win_start(s->peer_group, 0, s->win));
                for (int j = 0; j < window; j++) op(s, size, j % slots);
                BENCH_CHECK(MPI_Win_complete(s->win));
                BENCH_CHECK(MPI_Win_wait(s->win));
            }
        } else if (s->b->measure == BENCH_RMA_BW) {
            active_epoch(s, size, s->me == 0 ? window : 0, slots, s->me == 1);
        } else {
            /* Ping-pong: rank 0's operation, then rank 1's. */
            active_epoch(s, size, s->me == 0, slots, s->me == 1);
            active_epoch(s, size, s->me == 1, slots, s->me == 0);
        }
    }
    double elapsed = MPI_Wtime() - t0;
    if (s->o->sync == BENCH_SYNC_FENCE) BENCH_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win));
    if (s->b->measure == BENCH_RMA_BIBW || s->b->measure == BENCH_RMA_LATENCY)
        *taken = (long)(warmup + iters) * window;
    else if (s->me == 1)
        *taken = (long)(warmup + iters) * window;
    return elapsed;
}

int bench_rma_main(int argc, char **argv, const bench_rma *b)
{
    bench_opts o;
    bench_init(&argc, &argv, &b->desc, &o);
    rma_state s = {.b = b, .o = &o, .elem = 1};
    if (b->op == BENCH_RMA_ACC || b->op == BENCH_RMA_GACC) s.elem = sizeof(int);
    if (b->op == BENCH_RMA_FOP || b->op == BENCH_RMA_CAS) {
        s.elem = sizeof(int64_t);
        o.min_size = o.max_size = sizeof(int64_t); /* one element: sizes do not apply */
    }
    if (o.min_size < s.elem) o.min_size = s.elem;
    if (o.max_size < o.min_size) o.max_size = o.min_size;
    static const char *const cols[] = {"Latency (us)", "Bandwidth (MB/s)", "Bi-Bandwidth (MB/s)"};
    static const char *const keys[] = {"latency_us", "bw_mbs", "bibw_mbs"};
    bench_table t = {.cols = {cols[b->measure]}, .keys = {keys[b->measure]}, .ncols = 1};

    const int active = bench_rank < 2;
    BENCH_CHECK(MPI_Comm_split(MPI_COMM_WORLD, active ? 0 : MPI_UNDEFINED, bench_rank, &s.pair));
    size_t region = o.max_size;
    if (b->measure != BENCH_RMA_LATENCY) {
        size_t want = o.max_size * (size_t)o.window;
        region = want < RMA_REGION_CAP ? want : RMA_REGION_CAP;
        if (region < o.max_size) region = o.max_size;
    }
    if (active) {
        s.me = bench_rank;
        s.peer = 1 - bench_rank;
        MPI_Group all;
        BENCH_CHECK(MPI_Comm_group(s.pair, &all));
        BENCH_CHECK(MPI_Group_incl(all, 1, &s.peer, &s.peer_group));
        BENCH_CHECK(MPI_Group_free(&all));
        make_window(&s, region);
        s.sbuf = bench_alloc(region);
        s.rbuf = bench_alloc(region);
    }
    bench_table_begin(&t, &b->desc, &o);
    for (size_t size = o.min_size; size <= o.max_size; size = bench_next_size(size)) {
        if (size % s.elem) continue;
        const int iters = bench_iters(&o, size), warmup = bench_warmup(&o, size);
        double v = 0;
        if (active) {
            int slots = 1;
            if (b->measure != BENCH_RMA_LATENCY) {
                size_t fit = region / size;
                slots = fit < (size_t)o.window ? (int)fit : o.window;
            }
            prepare(&s, size, slots);
            long taken;
            double elapsed = run_size(&s, size, slots, warmup, iters, &taken);
            check(&s, size, slots, taken);
            if (b->measure == BENCH_RMA_LATENCY)
                v = elapsed * 1e6 / iters / (o.sync >= BENCH_SYNC_FENCE ? 2.0 : 1.0);
            else
                v = (double)size * o.window * iters * (b->measure == BENCH_RMA_BIBW ? 2 : 1) / elapsed / 1e6;
        }
        bench_table_row(&t, size, &v, iters);
    }
    if (active) {
        free_window(&s);
        BENCH_CHECK(MPI_Group_free(&s.peer_group));
        BENCH_CHECK(MPI_Comm_free(&s.pair));
        free(s.sbuf);
        free(s.rbuf);
    }
    return bench_finalize(&t);
}
