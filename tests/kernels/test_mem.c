/* Allocation with accounting: current and peak bytes per purpose and in
 * total, the "allocating N MiB for ..." lines, the simulated memory limit,
 * an allocation that fails (fault injection), and the table check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "kernels/ops.h"

#define MIB ((size_t)1 << 20)

static void test_peak_tracks_current(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    aitk_mem_account acct = {0};
    aitk_buf w, act, ws;
    assert_int_equal(ops->alloc(&acct, &w, MIB, AITK_MEM_WEIGHTS, "w"), AITK_OK);
    assert_int_equal(ops->alloc(&acct, &act, 2 * MIB, AITK_MEM_ACTIVATIONS, "block inputs"),
                     AITK_OK);
    assert_int_equal(acct.current_total, 3 * MIB);
    ops->free(&acct, &act);
    assert_null(act.ptr);
    assert_int_equal(ops->alloc(&acct, &ws, MIB / 2, AITK_MEM_WORKSPACE, "attention"), AITK_OK);
    assert_int_equal(acct.current_total, MIB + MIB / 2);
    assert_int_equal(acct.peak_total, 3 * MIB);
    assert_int_equal(acct.current[AITK_MEM_ACTIVATIONS], 0);
    assert_int_equal(acct.peak[AITK_MEM_ACTIVATIONS], 2 * MIB);
    assert_int_equal(acct.peak[AITK_MEM_WORKSPACE], MIB / 2);
    /* Memory comes zeroed: gradients start at 0. */
    const unsigned char *bytes = ws.ptr;
    for (size_t i = 0; i < ws.bytes; i += 4096)
        assert_int_equal(bytes[i], 0);
    ops->free(&acct, &w);
    ops->free(&acct, &ws);
    ops->free(&acct, &ws); /* freeing an emptied buffer is harmless */
    assert_int_equal(acct.current_total, 0);
    assert_int_equal(acct.peak_total, 3 * MIB);
}

static void test_log_lines(void **state)
{
    (void)state;
    FILE *f = tmpfile(); /* ISO C, so the test also runs in the Windows build */
    assert_non_null(f);
    aitk_mem_account acct = {.log = f};
    aitk_buf b;
    assert_int_equal(aitk_ops_cpu()->alloc(&acct, &b, 3 * MIB / 2, AITK_MEM_OPTIMIZER,
                                           "adamw moments"),
                     AITK_OK);
    aitk_ops_cpu()->free(&acct, &b);
    char text[128] = {0};
    rewind(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    assert_true(got > 0);
    assert_string_equal(text, "allocating 1.50 MiB for optimizer (adamw moments)\n");
}

static void test_limit_and_failures_change_nothing(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    aitk_mem_account acct = {.limit = 4 * MIB};
    aitk_buf a, b;
    assert_int_equal(ops->alloc(&acct, &a, 3 * MIB, AITK_MEM_WEIGHTS, "a"), AITK_OK);
    assert_int_equal(ops->alloc(&acct, &b, 2 * MIB, AITK_MEM_GRADIENTS, "b"), AITK_E_NOMEM);
    assert_null(b.ptr);
    assert_int_equal(acct.current_total, 3 * MIB);
    assert_int_equal(acct.peak[AITK_MEM_GRADIENTS], 0);
    /* The host allocation itself fails: reported, accounting rolled back. */
    aitk_alloc_fail_after(0);
    assert_int_equal(ops->alloc(&acct, &b, MIB, AITK_MEM_GRADIENTS, "b"), AITK_E_NOMEM);
    aitk_alloc_fail_after(-1);
    assert_int_equal(acct.current_total, 3 * MIB);
    assert_int_equal(acct.current[AITK_MEM_GRADIENTS], 0);
    assert_int_equal(acct.peak_total, 3 * MIB);
    /* Zero bytes: nothing allocated, nothing counted. */
    assert_int_equal(ops->alloc(&acct, &b, 0, AITK_MEM_GRADIENTS, "empty"), AITK_OK);
    assert_null(b.ptr);
    assert_int_equal(ops->alloc(&acct, &b, 8, AITK_MEM_TAG_COUNT, "bad tag"), AITK_E_INVAL);
    assert_int_equal(aitk_mem_note_alloc(&acct, SIZE_MAX, AITK_MEM_WEIGHTS, "huge"),
                     AITK_E_RANGE);
    ops->free(&acct, &a);
    assert_int_equal(acct.current_total, 0);
    assert_string_equal(aitk_mem_tag_name(AITK_MEM_ACTIVATIONS), "activations");
    assert_string_equal(aitk_mem_tag_name((aitk_mem_tag)99), "unknown");
}

static void test_ops_table_check(void **state)
{
    (void)state;
    const char *missing = "x";
    assert_int_equal(aitk_ops_check(aitk_ops_cpu(), &missing), AITK_OK);
    assert_null(missing);
    aitk_ops partial = *aitk_ops_cpu();
    partial.attention_backward = NULL;
    assert_int_equal(aitk_ops_check(&partial, &missing), AITK_E_INTERNAL);
    assert_string_equal(missing, "attention_backward");
    partial = *aitk_ops_cpu();
    partial.zero = NULL; /* the last member: the check list must reach it */
    assert_int_equal(aitk_ops_check(&partial, &missing), AITK_E_INTERNAL);
    assert_string_equal(missing, "zero");
    assert_int_equal(aitk_ops_check(NULL, &missing), AITK_E_INVAL);
    assert_string_equal(aitk_ops_cpu()->name, "cpu");
}

static void test_upload_download(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    float host[3] = {1, 2, 3}, back[3] = {0};
    aitk_mem_account acct = {0};
    aitk_buf dev;
    assert_int_equal(ops->alloc(&acct, &dev, sizeof host, AITK_MEM_WEIGHTS, "t"), AITK_OK);
    assert_int_equal(ops->upload(dev.ptr, host, sizeof host), AITK_OK);
    assert_int_equal(ops->download(back, dev.ptr, sizeof back), AITK_OK);
    assert_memory_equal(host, back, sizeof host);
    assert_int_equal(ops->upload(NULL, host, 4), AITK_E_INVAL);
    assert_int_equal(ops->zero(dev.ptr, dev.bytes), AITK_OK);
    assert_int_equal(ops->download(back, dev.ptr, sizeof back), AITK_OK);
    assert_float_equal(back[0], 0.0f, 0.0);
    assert_float_equal(back[2], 0.0f, 0.0);
    ops->free(&acct, &dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peak_tracks_current),
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_limit_and_failures_change_nothing),
        cmocka_unit_test(test_ops_table_check),
        cmocka_unit_test(test_upload_download),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
