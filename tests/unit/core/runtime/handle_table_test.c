/* The handle tables: handles of the table's kind, lookup of live ones only,
 * slot reuse after release, growth past the first capacity, and the walk at
 * clear. */
#include "core/runtime/handle_table.h"
#include "base/test_check.h"

static int cleared;
static void count_cleared(void *obj)
{
    (void)obj;
    cleared++;
}

int main(void)
{
    tern_handle_table_t t = TERN_HANDLE_TABLE(TERN_KIND_GROUP, 2);
    tern_handle_table_t other = TERN_HANDLE_TABLE(TERN_KIND_COMM, 2);
    int objs[100], h[100];
    for (int i = 0; i < 100; i++) {
        CHECK(tern_handle_new(&t, &objs[i], &h[i]) == TERN_OK);
        CHECK(((unsigned)h[i] & 0xfc000000u) == (TERN_HANDLE_DYNAMIC | TERN_KIND_GROUP));
    }
    for (int i = 0; i < 100; i++)
        CHECK(tern_handle_get(&t, h[i]) == &objs[i]);
    /* Another kind's table, a predefined or out-of-range handle: nothing. */
    CHECK(tern_handle_get(&other, h[0]) == NULL);
    CHECK(tern_handle_get(&t, (int)(TERN_HANDLE_PREDEFINED | TERN_KIND_GROUP)) == NULL);
    CHECK(tern_handle_get(&t, (int)(TERN_HANDLE_DYNAMIC | TERN_KIND_GROUP | 5000u)) == NULL);
    /* A released handle is dead and its slot is reused. */
    tern_handle_release(&t, h[7]);
    CHECK(tern_handle_get(&t, h[7]) == NULL);
    tern_handle_release(&t, h[7]); /* twice: harmless */
    int again;
    CHECK(tern_handle_new(&t, &objs[7], &again) == TERN_OK);
    CHECK(again == h[7]);
    CHECK(tern_handle_get(&t, again) == &objs[7]);
    tern_handle_release(&t, h[3]);
    tern_handle_table_clear(&t, count_cleared);
    CHECK(cleared == 99);
    CHECK(tern_handle_get(&t, h[0]) == NULL);
    /* Usable again after a clear. */
    CHECK(tern_handle_new(&t, &objs[0], &h[0]) == TERN_OK);
    CHECK(tern_handle_get(&t, h[0]) == &objs[0]);
    tern_handle_table_clear(&t, NULL);
    return tern_check_result("handle_table_test");
}
