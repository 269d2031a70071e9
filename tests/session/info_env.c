/* MPI_Info_get_string's buflen rules and MPI_Info_create_env before and
 * after MPI_Init (run with the arguments "alpha beta"). */
#include "../mpi/mtest.h"

#include <sys/utsname.h>

static void check_key(MPI_Info info, const char *key, const char *want)
{
    char v[4096] = "";
    int len = sizeof v, flag = 0;
    CHECK_RC(MPI_Info_get_string(info, key, &len, v, &flag));
    if (!want) {
        CHECK(!flag, "key %s is there (\"%s\")", key, v);
        return;
    }
    CHECK(flag, "no key %s", key);
    if (flag && want[0])
        CHECK(strcmp(v, want) == 0, "%s is \"%s\", expected \"%s\"", key, v, want);
}

int main(int argc, char **argv)
{
    /* Before MPI runs: the command and arguments given. */
    MPI_Info before = MPI_INFO_NULL;
    int rc = MPI_Info_create_env(argc, argv, &before);
    mtest_init(&argc, &argv);
    mtest_begin("create_env before MPI_Init");
    CHECK_RC(rc);
    struct utsname u;
    uname(&u);
    check_key(before, "command", argv[0]);
    check_key(before, "argv", "alpha beta");
    check_key(before, "arch", u.machine);
    check_key(before, "host", "");
    check_key(before, "wdir", "");
    char size[16];
    snprintf(size, sizeof size, "%d", mtest_size);
    /* From the launcher (PMI_SIZE): the same before MPI_Init and after. */
    check_key(before, "maxprocs", size);
    check_key(before, "thread_level", NULL);
    MPI_Info_free(&before);
    mtest_end();

    mtest_begin("create_env after MPI_Init");
    MPI_Info env;
    CHECK_RC(MPI_Info_create_env(0, NULL, &env));
    check_key(env, "maxprocs", size);
    /* The level granted is MPI_INFO_ENV's, not a created object's (it
     * would differ from one made before MPI_Init). */
    check_key(env, "thread_level", NULL);
    check_key(MPI_INFO_ENV, "thread_level", "MPI_THREAD_SINGLE");
    check_key(env, "argv", "alpha beta");
    /* The object is the caller's to change (MPI_INFO_ENV is not). */
    CHECK_RC(MPI_Info_set(env, "extra", "1"));
    MPI_Info_free(&env);
    mtest_end();

    mtest_begin("get_string");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "k", "hello");
    char buf[16];
    int len = 0, flag = 0;
    CHECK_RC(MPI_Info_get_string(info, "k", &len, NULL, &flag));
    CHECK(flag && len == 6, "length query: flag %d buflen %d", flag, len);
    memset(buf, 'x', sizeof buf);
    len = 3;
    CHECK_RC(MPI_Info_get_string(info, "k", &len, buf, &flag));
    CHECK(flag && len == 6 && strcmp(buf, "he") == 0 && buf[3] == 'x',
          "truncated: flag %d buflen %d \"%s\"", flag, len, buf);
    len = 6;
    CHECK_RC(MPI_Info_get_string(info, "k", &len, buf, &flag));
    CHECK(flag && len == 6 && strcmp(buf, "hello") == 0, "exact: buflen %d \"%s\"", len, buf);
    len = 9;
    flag = 1;
    CHECK_RC(MPI_Info_get_string(info, "missing", &len, buf, &flag));
    CHECK(!flag && len == 9, "missing key: flag %d buflen %d", flag, len);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    len = -1;
    CHECK_CLASS(MPI_Info_get_string(info, "k", &len, buf, &flag), MPI_ERR_ARG, "negative buflen");
    len = 4;
    CHECK_CLASS(MPI_Info_get_string(info, "k", &len, NULL, &flag), MPI_ERR_ARG, "NULL value");
    CHECK_CLASS(MPI_Info_get_string(info, "", &len, buf, &flag), MPI_ERR_INFO_KEY, "empty key");
    CHECK_CLASS(MPI_Info_get_string(MPI_INFO_NULL, "k", &len, buf, &flag), MPI_ERR_INFO,
                "MPI_INFO_NULL");
    len = 0;
    CHECK_RC(MPI_Info_get_string(MPI_INFO_ENV, "maxprocs", &len, NULL, &flag));
    CHECK(flag && len == (int)strlen(size) + 1, "MPI_INFO_ENV maxprocs: buflen %d", len);
    MPI_Info_free(&info);
    mtest_end();
    return mtest_finalize();
}
