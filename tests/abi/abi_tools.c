/* The tools interface (MPI_T) and the MPIX_ extensions (ULFM) through the
 * standard ABI: every control and performance variable enumerated with the
 * ABI's values of verbosity, binding, scope, class and datatype; a counter
 * read after known traffic; an event callback given the ABI's safety level;
 * the ABI's MPI_T error codes; and MPIX_Comm_revoke/agree/shrink/get_failed
 * with the ABI's MPIX_ERR_REVOKED. */
#include "abi_test.h"

#include <mpi-ext.h>
#include <string.h>

static int rank, size;

static int abi_verbosity(int v)
{
    return v == MPI_T_VERBOSITY_USER_BASIC || v == MPI_T_VERBOSITY_USER_DETAIL ||
           v == MPI_T_VERBOSITY_USER_ALL || v == MPI_T_VERBOSITY_TUNER_BASIC ||
           v == MPI_T_VERBOSITY_TUNER_DETAIL || v == MPI_T_VERBOSITY_TUNER_ALL ||
           v == MPI_T_VERBOSITY_MPIDEV_BASIC || v == MPI_T_VERBOSITY_MPIDEV_DETAIL ||
           v == MPI_T_VERBOSITY_MPIDEV_ALL;
}

/* A predefined datatype of the ABI (a small value MPI_Type_size knows). */
static void check_type(MPI_Datatype dt, const char *name)
{
    int sz = 0;
    CHECK((uintptr_t)dt < 0x400, "%s: datatype %p is not an ABI constant", name, (void *)dt);
    CHECK_OK(MPI_Type_size(dt, &sz));
    CHECK(sz > 0, "%s: datatype size %d", name, sz);
}

static void cvars(void)
{
    int n = 0;
    CHECK_OK(MPI_T_cvar_get_num(&n));
    CHECK(n > 0, "%d control variables", n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verb = -1, bind = -1, scope = -1;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum en = MPI_T_ENUM_NULL;
        CHECK_OK(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope));
        CHECK(abi_verbosity(verb), "cvar %s: verbosity %d", name, verb);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "cvar %s: bind %d", name, bind);
        CHECK(scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ, "cvar %s: scope %d",
              name, scope);
        check_type(dt, name);
        int idx = -1;
        CHECK_OK(MPI_T_cvar_get_index(name, &idx));
        CHECK(idx == i, "cvar %s: index %d, not %d", name, idx, i);
    }
    /* A collective's algorithm knob: writable by all, read back. */
    int idx, count, scope;
    CHECK_OK(MPI_T_cvar_get_index("TERN_BCAST_ALGORITHM", &idx));
    CHECK_OK(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope));
    CHECK(scope == MPI_T_SCOPE_ALL_EQ, "TERN_BCAST_ALGORITHM scope %d", scope);
    MPI_T_cvar_handle ch;
    CHECK_OK(MPI_T_cvar_handle_alloc(idx, NULL, &ch, &count));
    char now[1024];
    CHECK(MPI_T_cvar_write(ch, "no_such_algorithm") == MPI_T_ERR_INVALID, "bad value accepted");
    CHECK_OK(MPI_T_cvar_write(ch, "binomial"));
    CHECK_OK(MPI_T_cvar_read(ch, now));
    CHECK(strcmp(now, "binomial") == 0, "read back %s", now);
    CHECK_OK(MPI_T_cvar_handle_free(&ch));
    CHECK(ch == MPI_T_CVAR_HANDLE_NULL, "handle not nulled");
    /* The ABI's error codes. */
    CHECK(MPI_T_cvar_get_info(n + 5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
              MPI_T_ERR_INVALID_INDEX, "a bad index is not MPI_T_ERR_INVALID_INDEX");
    CHECK(MPI_T_cvar_get_index("no_such_variable", &idx) == MPI_T_ERR_INVALID_NAME,
          "a bad name is not MPI_T_ERR_INVALID_NAME");
}

static int pvar_index(const char *want, int want_class)
{
    int n = 0, found = -1;
    CHECK_OK(MPI_T_pvar_get_num(&n));
    CHECK(n > 0, "%d performance variables", n);
    for (int i = 0; i < n; i++) {
        char name[256];
        int nl = sizeof name, verb, cls = -1, bind = -1, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        CHECK_OK(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &en, NULL, NULL, &bind, &ro,
                                     &cont, &atomic));
        CHECK(abi_verbosity(verb), "pvar %s: verbosity %d", name, verb);
        CHECK(cls >= MPI_T_PVAR_CLASS_STATE && cls <= MPI_T_PVAR_CLASS_GENERIC,
              "pvar %s: class %d", name, cls);
        CHECK(bind >= MPI_T_BIND_NO_OBJECT && bind <= MPI_T_BIND_MPI_SESSION, "pvar %s: bind %d",
              name, bind);
        check_type(dt, name);
        int idx = -1;
        CHECK_OK(MPI_T_pvar_get_index(name, cls, &idx));
        CHECK(idx == i, "pvar %s: index %d, not %d", name, idx, i);
        if (strcmp(name, want) == 0) {
            CHECK(cls == want_class, "%s: class %d, not %d", name, cls, want_class);
            found = i;
        }
    }
    CHECK(found >= 0, "no performance variable %s", want);
    int idx;
    CHECK(MPI_T_pvar_get_index(want, MPI_T_PVAR_CLASS_TIMER, &idx) == MPI_T_ERR_INVALID_NAME,
          "%s found under the wrong class", want);
    return found;
}

static int queued, safety_seen = -1, freed;
static void *ud_seen;

static void on_queued(MPI_T_event_instance inst, MPI_T_event_registration reg,
                      MPI_T_cb_safety cb_safety, void *user_data)
{
    (void)reg;
    int tag = -1;
    CHECK_OK(MPI_T_event_read(inst, 1, &tag));
    if (tag == 77)
        queued++;
    safety_seen = cb_safety;
    ud_seen = user_data;
}

static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety cb_safety, void *user_data)
{
    (void)reg;
    CHECK(cb_safety == MPI_T_CB_REQUIRE_NONE, "free callback safety %d", cb_safety);
    CHECK(user_data == &freed, "free callback user data %p", user_data);
    freed++;
}

static void tools(void)
{
    int provided = -1;
    CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
              provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
          "MPI_T_init_thread provided %d", provided);
    cvars();
    int sent = pvar_index("tern_p2p_eager_sent", MPI_T_PVAR_CLASS_COUNTER);

    MPI_T_pvar_session sess;
    MPI_T_pvar_handle h;
    int count;
    CHECK_OK(MPI_T_pvar_session_create(&sess));
    CHECK(sess != MPI_T_PVAR_SESSION_NULL, "null session");
    CHECK_OK(MPI_T_pvar_handle_alloc(sess, sent, NULL, &h, &count));
    CHECK(count == 1, "count %d", count);
    CHECK_OK(MPI_T_pvar_start(sess, h));

    int ev;
    MPI_T_event_registration reg;
    CHECK_OK(MPI_T_event_get_index("tern_p2p_unexpected_queued", &ev));
    CHECK_OK(MPI_T_event_handle_alloc(ev, NULL, MPI_INFO_NULL, &reg));
    CHECK(MPI_T_event_register_callback(reg, 5, MPI_INFO_NULL, NULL, on_queued) != MPI_SUCCESS,
          "safety level 5 accepted");
    CHECK_OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                           &queued, on_queued));

    unsigned long long before = 0, after = 0;
    CHECK_OK(MPI_T_pvar_read(sess, h, &before));
    /* Rank 0 sends three eager messages (tag 77) then one (tag 78) to rank
     * 1, which receives tag 78 first: the three wait in its unexpected
     * queue. Alone, rank 0 sends them to itself. */
    char buf[3][64];
    memset(buf, 5, sizeof buf);
    int peer = size > 1 ? 1 : 0;
    MPI_Request rq[4];
    int nrq = 0;
    if (rank == 0) {
        for (int i = 0; i < 3; i++)
            CHECK_OK(MPI_Isend(buf[i], 64, MPI_BYTE, peer, 77, MPI_COMM_WORLD, &rq[nrq++]));
        CHECK_OK(MPI_Isend(buf[0], 1, MPI_BYTE, peer, 78, MPI_COMM_WORLD, &rq[nrq++]));
    }
    if (rank == peer) {
        char in[64];
        MPI_Status st;
        CHECK_OK(MPI_Recv(in, 1, MPI_BYTE, 0, 78, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 3; i++) {
            CHECK_OK(MPI_Recv(in, 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 77 && in[63] == 5,
                  "status %d/%d, data %d", st.MPI_SOURCE, st.MPI_TAG, in[63]);
        }
    }
    CHECK_OK(MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE));
    CHECK_OK(MPI_T_pvar_read(sess, h, &after));
    if (rank == 0)
        CHECK(after - before == 4, "eager messages sent: %llu", after - before);
    if (rank == peer && size > 1) {
        CHECK(queued == 3, "%d unexpected-queued events", queued);
    } else if (rank == peer) {
        CHECK(queued >= 1, "%d unexpected-queued events", queued);
    }
    if (rank == peer) {
        CHECK(safety_seen == MPI_T_CB_REQUIRE_THREAD_SAFE, "callback safety %d", safety_seen);
        CHECK(ud_seen == &queued, "callback user data %p", ud_seen);
    }
    CHECK_OK(MPI_T_event_handle_free(reg, &freed, on_free));
    CHECK(freed == 1, "free callback ran %d times", freed);

    CHECK_OK(MPI_T_pvar_stop(sess, h));
    CHECK_OK(MPI_T_pvar_handle_free(sess, &h));
    CHECK(h == MPI_T_PVAR_HANDLE_NULL, "pvar handle not nulled");
    CHECK_OK(MPI_T_pvar_session_free(&sess));
    CHECK(sess == MPI_T_PVAR_SESSION_NULL, "session not nulled");
    CHECK_OK(MPI_T_finalize());
}

static void ulfm(void)
{
    MPI_Comm dup, shrunk;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    int flag = rank == 0 ? 1 : 3;
    CHECK_OK(MPIX_Comm_agree(dup, &flag));
    CHECK(flag == 1, "agree gave %d (1 & 3 expected)", flag);
    MPI_Group failed;
    CHECK_OK(MPIX_Comm_get_failed(dup, &failed));
    int n = -1;
    CHECK_OK(MPI_Group_size(failed, &n));
    CHECK(n == 0, "%d failed processes", n);
    CHECK_OK(MPI_Group_free(&failed));
    CHECK_OK(MPIX_Comm_shrink(dup, &shrunk));
    int s = 0, cmp = -1;
    CHECK_OK(MPI_Comm_size(shrunk, &s));
    CHECK(s == size, "shrunk to %d of %d", s, size);
    CHECK_OK(MPI_Comm_compare(shrunk, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "shrunk compares %d", cmp);
    CHECK_OK(MPI_Comm_free(&shrunk));

    int revoked = 1;
    CHECK_OK(MPIX_Comm_is_revoked(dup, &revoked));
    CHECK(!revoked, "revoked before revoke");
    CHECK_OK(MPI_Barrier(dup));
    if (rank == 0)
        CHECK_OK(MPIX_Comm_revoke(dup));
    /* Every rank learns of it: a barrier on it fails with MPIX_ERR_REVOKED. */
    int err = MPI_Barrier(dup), cls = -1;
    CHECK(err != MPI_SUCCESS, "barrier on a revoked communicator succeeded");
    CHECK_OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPIX_ERR_REVOKED, "class %d, not MPIX_ERR_REVOKED (%d)", cls, MPIX_ERR_REVOKED);
    CHECK_OK(MPIX_Comm_is_revoked(dup, &revoked));
    CHECK(revoked, "not revoked after revoke");
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK_OK(MPI_Error_string(err, text, &len));
    CHECK(len > 0, "no text for code %d", err);
    CHECK_OK(MPI_Comm_free(&dup));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tools();
    ulfm();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("test abi_tools ok\n");
    MPI_Finalize();
    return 0;
}
