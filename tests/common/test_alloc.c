/* aitk_grow: room for one more item, doubling from `first`; the contents
 * survive a move; an overflowing size and a failed allocation give NULL and
 * leave the old array and its capacity as they were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>

#include "common/alloc.h"

static void test_grow_doubles_and_keeps(void **state)
{
    (void)state;
    int *a = NULL;
    size_t n = 0, cap = 0;
    /* Capacities seen while adding 20 ints from first = 4: 4, 8, 16, 32. */
    size_t caps[4] = {0}, ncaps = 0;
    for (int i = 0; i < 20; i++) {
        size_t before = cap;
        int *g = aitk_grow(a, sizeof *a, n, &cap, 4);
        assert_non_null(g);
        if (cap != before)
            caps[ncaps++] = cap;
        else
            assert_ptr_equal(g, a); /* room left: the same array, no allocation */
        a = g;
        a[n++] = i * 3;
    }
    assert_int_equal(ncaps, 4);
    assert_int_equal(caps[0], 4);
    assert_int_equal(caps[1], 8);
    assert_int_equal(caps[2], 16);
    assert_int_equal(caps[3], 32);
    for (int i = 0; i < 20; i++)
        assert_int_equal(a[i], i * 3);
    aitk_free(a);
}

static void test_grow_failure_leaves_array(void **state)
{
    (void)state;
    size_t cap = 0;
    int *a = aitk_grow(NULL, sizeof *a, 0, &cap, 2);
    assert_non_null(a);
    a[0] = 7;
    a[1] = 8;
    aitk_alloc_fail_after(0);
    int *g = aitk_grow(a, sizeof *a, 2, &cap, 2);
    aitk_alloc_fail_after(-1);
    assert_null(g);
    assert_int_equal(cap, 2);
    assert_int_equal(a[0], 7);
    assert_int_equal(a[1], 8);

    /* Twice the capacity, or that many items, would not fit in a size_t. */
    size_t huge = SIZE_MAX / 2 + 1;
    assert_null(aitk_grow(a, 1, huge, &huge, 2));
    assert_int_equal(huge, SIZE_MAX / 2 + 1);
    size_t small = 2;
    assert_null(aitk_grow(a, SIZE_MAX / 3, 2, &small, 2));
    assert_int_equal(small, 2);
    aitk_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles_and_keeps),
        cmocka_unit_test(test_grow_failure_leaves_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
