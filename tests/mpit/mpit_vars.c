/* The MPI tools interface against numbers this test knows (2 ranks):
 * every control variable enumerated and read, before MPI_Init and after
 * MPI_Finalize too; the string-length protocol; wrong indices, handles and
 * sessions get their MPI_T_ERR_* codes; counters read before and after
 * traffic the test makes; the unexpected queue's level, mark and events
 * for three messages sent before their receives; a collective algorithm
 * forced by writing its control variable, seen in its counter and in the
 * algorithm-chosen event. With argument "threads" (MPI_THREAD_MULTIPLE,
 * run under ThreadSanitizer): a second thread reads counters of its own
 * session while the main thread communicates. */
#include "mpit_util.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

/* Every control variable: its info, its index by name, its value. */
static void all_cvars(void)
{
    int n = 0;
    RC(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    CHECK(n > 50, "only %d control variables", n);
    for (int i = 0; i < n; i++) {
        int name_len = 0, desc_len = 0, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum et;
        /* Lengths first (NULL buffers), then the strings. */
        RC(MPI_T_cvar_get_info(i, NULL, &name_len, &verb, &dt, &et, NULL, &desc_len, &bind,
                               &scope), MPI_SUCCESS);
        char *name = malloc((size_t)name_len), *desc = malloc((size_t)desc_len);
        int nl = name_len, dl = desc_len;
        RC(MPI_T_cvar_get_info(i, name, &nl, NULL, NULL, NULL, desc, &dl, NULL, NULL),
           MPI_SUCCESS);
        CHECK(nl == name_len && (int)strlen(name) == name_len - 1, "cvar %d name length", i);
        CHECK(dl == desc_len && dl > 10, "cvar %d description length %d", i, dl);
        CHECK(strncmp(name, "TERN_", 5) == 0, "cvar %d is named %s", i, name);
        int idx = -1;
        RC(MPI_T_cvar_get_index(name, &idx), MPI_SUCCESS);
        CHECK(idx == i, "%s: index %d, not %d", name, idx, i);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s bind", name);
        /* Writable: the collectives' algorithms (all equal), the eager
         * limit (local: mpit_eager). */
        CHECK(scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_ALL_EQ ||
                  (scope == MPI_T_SCOPE_LOCAL && strcmp(name, "TERN_P2P_EAGER_MAX") == 0),
              "%s scope %d", name, scope);
        CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "%s verbosity", name);
        MPI_T_cvar_handle h;
        int count = 0;
        RC(MPI_T_cvar_handle_alloc(i, NULL, &h, &count), MPI_SUCCESS);
        if (dt == MPI_CHAR) {
            char *v = malloc((size_t)count);
            RC(MPI_T_cvar_read(h, v), MPI_SUCCESS);
            CHECK(strlen(v) < (size_t)count, "%s unterminated", name);
            free(v);
        } else if (dt == MPI_INT) {
            int v = -7;
            RC(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
            if (et != MPI_T_ENUM_NULL) {
                int items = 0;
                RC(MPI_T_enum_get_info(et, &items, NULL, NULL), MPI_SUCCESS);
                CHECK(v >= 0 && v < items, "%s = %d of %d items", name, v, items);
                RC(MPI_T_enum_get_item(et, items, NULL, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
            } else {
                CHECK(v == 0 || v == 1, "%s = %d (a bool)", name, v);
            }
        } else {
            CHECK(dt == MPI_UNSIGNED_LONG_LONG, "%s datatype", name);
            unsigned long long v;
            RC(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
        }
        if (scope == MPI_T_SCOPE_READONLY)
            RC(MPI_T_cvar_write(h, "1"), MPI_T_ERR_CVAR_SET_NEVER);
        RC(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset");
        free(name);
        free(desc);
    }
    /* Categories hold every variable once. */
    int ncat, total = 0;
    RC(MPI_T_category_get_num(&ncat), MPI_SUCCESS);
    for (int c = 0; c < ncat; c++) {
        int nc, np, nsub, ne;
        RC(MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &nc, &np, &nsub), MPI_SUCCESS);
        RC(MPI_T_category_get_num_events(c, &ne), MPI_SUCCESS);
        total += nc;
    }
    CHECK(total == n, "categories hold %d control variables of %d", total, n);
}

/* The string protocol and the error codes. */
static void protocol(void)
{
    char buf[8];
    int len = 4;
    int idx;
    RC(MPI_T_cvar_get_index("TERN_LOG_LEVEL", &idx), MPI_SUCCESS);
    RC(MPI_T_cvar_get_info(idx, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       MPI_SUCCESS);
    CHECK(len == 4 && strcmp(buf, "TER") == 0, "truncated name '%s', len %d", buf, len);
    len = 0;
    RC(MPI_T_cvar_get_info(idx, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       MPI_SUCCESS);
    CHECK(len == (int)sizeof "TERN_LOG_LEVEL", "length %d", len);

    int n;
    RC(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    RC(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       MPI_T_ERR_INVALID_INDEX);
    RC(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       MPI_T_ERR_INVALID_INDEX);
    RC(MPI_T_cvar_get_index("TERN_NO_SUCH_KNOB", &idx), MPI_T_ERR_INVALID_NAME);
    RC(MPI_T_pvar_get_num(&n), MPI_SUCCESS);
    RC(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                           NULL), MPI_T_ERR_INVALID_INDEX);
    RC(MPI_T_pvar_get_index("tern_p2p_eager_sent", MPI_T_PVAR_CLASS_LEVEL, &idx),
       MPI_T_ERR_INVALID_NAME);
    RC(MPI_T_event_get_num(&n), MPI_SUCCESS);
    RC(MPI_T_event_handle_alloc(n, NULL, MPI_INFO_NULL, &(MPI_T_event_registration){0}),
       MPI_T_ERR_INVALID_INDEX);
    RC(MPI_T_category_get_num(&n), MPI_SUCCESS);
    RC(MPI_T_category_get_cvars(n, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    RC(MPI_T_source_get_timestamp(1, &(MPI_Count){0}), MPI_T_ERR_INVALID_INDEX);

    MPI_T_pvar_session s, bad = (MPI_T_pvar_session)&n;
    RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    RC(MPI_T_pvar_session_free(&bad), MPI_T_ERR_INVALID_SESSION);
    unsigned long long v;
    RC(MPI_T_pvar_read(s, (MPI_T_pvar_handle)&n, &v), MPI_T_ERR_INVALID_HANDLE);
    RC(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    RC(MPI_T_cvar_read((MPI_T_cvar_handle)&n, &v), MPI_T_ERR_INVALID_HANDLE);
    RC(MPI_T_enum_get_info((MPI_T_enum)&n, NULL, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    int level;
    MPI_T_pvar_handle h;
    int count;
    RC(MPI_T_pvar_get_index("tern_p2p_unexpected_len", MPI_T_PVAR_CLASS_LEVEL, &level),
       MPI_SUCCESS);
    RC(MPI_T_pvar_handle_alloc(s, level, NULL, &h, &count), MPI_SUCCESS);
    RC(MPI_T_pvar_start(s, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
    RC(MPI_T_pvar_reset(s, h), MPI_T_ERR_PVAR_NO_WRITE);
    RC(MPI_T_pvar_write(s, h, &v), MPI_T_ERR_PVAR_NO_WRITE);
    RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not reset");
}

static MPI_T_pvar_handle pvar(const char *name, int cls, int start)
{
    return mpit_handle(name, cls, -1, NULL, start);
}

/* Events seen: unexpected messages of tag 7 queued and matched, the last
 * algorithm chosen. */
static int queued7, matched7, last_algo = -1;
static MPI_Count t_first;
static MPI_T_event_registration reg_q, reg_m, reg_c;

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety cs,
                     void *user)
{
    (void)cs;
    (void)user;
    MPI_Count t;
    int src_index = -1;
    RC(MPI_T_event_get_timestamp(ev, &t), MPI_SUCCESS);
    RC(MPI_T_event_get_source(ev, &src_index), MPI_SUCCESS);
    CHECK(src_index == 0 && t >= t_first, "source %d, time %lld", src_index, (long long)t);
    if (reg == reg_c) {
        RC(MPI_T_event_read(ev, 0, &last_algo), MPI_SUCCESS);
        return;
    }
    struct {
        int source, tag;
        unsigned long long bytes;
    } d;
    RC(MPI_T_event_copy(ev, &d), MPI_SUCCESS);
    int tag = -1;
    RC(MPI_T_event_read(ev, 1, &tag), MPI_SUCCESS);
    RC(MPI_T_event_read(ev, 3, &tag), MPI_T_ERR_INVALID_INDEX);
    CHECK(tag == d.tag, "read %d, copied %d", tag, d.tag);
    if (d.tag == 7 && d.source == 0 && d.bytes == 100)
        ++*(reg == reg_q ? &queued7 : &matched7);
}

static MPI_T_event_registration listen(const char *name)
{
    int idx = -1;
    MPI_T_event_registration r = MPI_T_EVENT_REGISTRATION_NULL;
    RC(MPI_T_event_get_index(name, &idx), MPI_SUCCESS);
    RC(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &r), MPI_SUCCESS);
    RC(MPI_T_event_register_callback(r, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                     on_event), MPI_SUCCESS);
    return r;
}

/* Three 100-byte messages from rank 0 to rank 1 that arrive before their
 * receives (a fourth, received first, comes after them). */
static void traffic(void)
{
    MPI_T_pvar_handle sent = pvar("tern_p2p_eager_sent", MPI_T_PVAR_CLASS_COUNTER, 1);
    MPI_T_pvar_handle sent_b = pvar("tern_p2p_eager_sent_bytes", MPI_T_PVAR_CLASS_COUNTER, 1);
    MPI_T_pvar_handle recvd_b = pvar("tern_p2p_eager_recvd_bytes", MPI_T_PVAR_CLASS_COUNTER, 0);
    MPI_T_pvar_handle len = pvar("tern_p2p_unexpected_len", MPI_T_PVAR_CLASS_LEVEL, 0);
    MPI_T_pvar_handle hwm = pvar("tern_p2p_unexpected_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, 1);
    char buf[3][100];
    memset(buf, rank + 1, sizeof buf);
    reg_q = listen("tern_p2p_unexpected_queued");
    reg_m = listen("tern_p2p_unexpected_matched");
    RC(MPI_T_source_get_timestamp(0, &t_first), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unsigned long long s0 = rd(sent), b0 = rd(sent_b);
        for (int i = 0; i < 3; i++)
            MPI_Send(buf[i], 100, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        CHECK(rd(sent) - s0 == 3, "eager messages sent: %llu", rd(sent) - s0);
        CHECK(rd(sent_b) - b0 == 300, "eager bytes sent: %llu", rd(sent_b) - b0);
        /* readreset: the value, then zero. */
        unsigned long long v = 0;
        RC(MPI_T_pvar_readreset(sess, sent_b, &v), MPI_SUCCESS);
        CHECK(v >= 300 && rd(sent_b) == 0, "readreset %llu then %llu", v, rd(sent_b));
        MPI_Send(buf[0], 1, MPI_BYTE, 1, 8, MPI_COMM_WORLD);
    } else {
        /* Messages arrive in order: when tag 8 is here, the three wait. */
        MPI_Recv(buf[0], 1, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        unsigned long long l0 = rd(len);
        CHECK(l0 >= 3, "unexpected queue holds %llu", l0);
        CHECK(rd(hwm) >= 3, "high-water mark %llu", rd(hwm));
        CHECK(queued7 == 3, "%d queued events for tag 7", queued7);
        RC(MPI_T_pvar_start(sess, recvd_b), MPI_SUCCESS);
        for (int i = 0; i < 3; i++)
            MPI_Recv(buf[i], 100, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        RC(MPI_T_pvar_stop(sess, recvd_b), MPI_SUCCESS);
        CHECK(rd(recvd_b) == 300, "eager bytes received: %llu", rd(recvd_b));
        CHECK(l0 - rd(len) == 3, "queue went from %llu to %llu", l0, rd(len));
        CHECK(matched7 == 3, "%d matched events for tag 7", matched7);
        CHECK(buf[2][99] == 1, "data");
        /* A reset mark restarts from the level now. */
        RC(MPI_T_pvar_reset(sess, hwm), MPI_SUCCESS);
        CHECK(rd(hwm) == rd(len), "mark %llu after reset, level %llu", rd(hwm), rd(len));
    }
    RC(MPI_T_event_handle_free(reg_q, NULL, NULL), MPI_SUCCESS);
    RC(MPI_T_event_handle_free(reg_m, NULL, NULL), MPI_SUCCESS);
}

/* Forcing MPI_Bcast's algorithm by its control variable. */
static void forced_bcast(void)
{
    int idx, count;
    RC(MPI_T_cvar_get_index("TERN_BCAST_ALGORITHM", &idx), MPI_SUCCESS);
    int scope;
    RC(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope),
       MPI_SUCCESS);
    CHECK(scope == MPI_T_SCOPE_ALL_EQ, "scope %d", scope);
    MPI_T_cvar_handle ch;
    RC(MPI_T_cvar_handle_alloc(idx, NULL, &ch, &count), MPI_SUCCESS);
    char old[1024], now[1024];
    RC(MPI_T_cvar_read(ch, old), MPI_SUCCESS);
    RC(MPI_T_cvar_write(ch, "no_such_algorithm"), MPI_T_ERR_INVALID);
    RC(MPI_T_cvar_read(ch, now), MPI_SUCCESS);
    CHECK(strcmp(old, now) == 0, "a refused write changed it to %s", now);
    reg_c = listen("tern_coll_algorithm_chosen");
    /* All collectives' calls: the sum of the per-algorithm counts. */
    MPI_T_pvar_handle calls = pvar("tern_coll_calls", MPI_T_PVAR_CLASS_COUNTER, 1);
    const char *algos[] = {"scatter_allgather", "binomial"};
    for (int a = 0; a < 2; a++) {
        char name[64];
        snprintf(name, sizeof name, "tern_coll_bcast_%s", algos[a]);
        MPI_T_pvar_handle h = pvar(name, MPI_T_PVAR_CLASS_COUNTER, 1);
        RC(MPI_T_cvar_write(ch, algos[a]), MPI_SUCCESS);
        RC(MPI_T_cvar_read(ch, now), MPI_SUCCESS);
        CHECK(strcmp(now, algos[a]) == 0, "read back %s", now);
        int v = rank == 0 ? 42 : 0;
        MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(v == 42, "bcast value %d", v);
        CHECK(rd(h) == 1, "%s counted %llu calls", name, rd(h));
        /* The event names it by the enumeration of algorithms. */
        int evi;
        MPI_T_enum et;
        RC(MPI_T_event_get_index("tern_coll_algorithm_chosen", &evi), MPI_SUCCESS);
        MPI_Datatype types[4];
        MPI_Aint displs[4];
        int nel = 4;
        RC(MPI_T_event_get_info(evi, NULL, NULL, NULL, types, displs, &nel, &et, NULL, NULL,
                                NULL, NULL), MPI_SUCCESS);
        CHECK(nel == 3 && types[0] == MPI_INT && types[2] == MPI_UNSIGNED_LONG_LONG, "layout");
        char item[64];
        int ilen = sizeof item, value;
        RC(MPI_T_enum_get_item(et, last_algo, &value, item, &ilen), MPI_SUCCESS);
        snprintf(name, sizeof name, "bcast:%s", algos[a]);
        CHECK(strcmp(item, name) == 0, "event names %s, not %s", item, name);
    }
    CHECK(rd(calls) == 2, "tern_coll_calls %llu after 2 bcasts", rd(calls));
    RC(MPI_T_cvar_write(ch, "auto"), MPI_SUCCESS);
    RC(MPI_T_cvar_handle_free(&ch), MPI_SUCCESS);
    /* Freed, the registration hears nothing more (nor costs: the watch
     * word's bit went with it). */
    RC(MPI_T_event_handle_free(reg_c, NULL, NULL), MPI_SUCCESS);
    last_algo = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(last_algo == -1, "event after its registration was freed");
    CHECK(rd(calls) == 3, "tern_coll_calls %llu after the barrier", rd(calls));
}

/* The threads variant: counters read beside traffic. */
static volatile int stop_reader;

static void *reader(void *arg)
{
    (void)arg;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int idx, count;
    RC(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    RC(MPI_T_pvar_get_index("tern_p2p_eager_sent", MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_SUCCESS);
    RC(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count), MPI_SUCCESS);
    RC(MPI_T_pvar_start(s, h), MPI_SUCCESS);
    unsigned long long last = 0, v = 0;
    while (!__atomic_load_n(&stop_reader, __ATOMIC_ACQUIRE)) {
        RC(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
        CHECK(v >= last, "counter went back from %llu to %llu", last, v);
        last = v;
    }
    RC(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    return NULL;
}

static void threads(void)
{
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    int peer = 1 - rank, v = 0;
    for (int i = 0; i < 2000; i++)
        MPI_Sendrecv_replace(&v, 1, MPI_INT, peer, 0, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    __atomic_store_n(&stop_reader, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    int with_threads = argc > 1 && strcmp(argv[1], "threads") == 0;
    int provided, n;
    /* Before MPI_Init. */
    RC(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    RC(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    all_cvars();
    protocol();
    if (with_threads)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mtest_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2) {
        if (rank == 0)
            fprintf(stderr, "mpit_vars runs on 2 ranks\n");
        MPI_Finalize();
        return 77;
    }
    RC(MPI_T_pvar_session_create(&sess), MPI_SUCCESS);
    if (with_threads) {
        threads();
    } else {
        traffic();
        forced_bcast();
    }
    RC(MPI_T_pvar_session_free(&sess), MPI_SUCCESS);
    MPI_Finalize();
    /* After MPI_Finalize: still there, until the last MPI_T_finalize. */
    all_cvars();
    RC(MPI_T_finalize(), MPI_SUCCESS);
    RC(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    if (mtest_errors)
        fprintf(stderr, "rank %d: %d errors\n", rank, mtest_errors);
    return mtest_errors != 0;
}
