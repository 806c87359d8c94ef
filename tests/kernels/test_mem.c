/* Allocation with accounting (kernels/mem.c through the CPU table's raw
 * alloc): current and peak bytes per purpose and in total, the "allocating
 * N MiB for ..." lines, the simulated memory limit, an allocation that fails
 * (fault injection) and what it records; the table check (ops_check.c),
 * dtype names and sizes, and activation addressing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "kernels/ops.h"

/* aitk_buf_alloc/aitk_buf_free on the CPU table. */
static aitk_status buf_alloc(aitk_mem_account *acct, aitk_buf *out, size_t bytes,
                             aitk_mem_tag tag, const char *what)
{
    return aitk_buf_alloc(aitk_ops_cpu(), acct, out, bytes, tag, what);
}

static void buf_free(aitk_mem_account *acct, aitk_buf *buf)
{
    aitk_buf_free(aitk_ops_cpu(), acct, buf);
}

#define MIB ((size_t)1 << 20)

static void test_peak_tracks_current(void **state)
{
    (void)state;
    aitk_mem_account acct = {0};
    aitk_buf w, act, ws;
    assert_int_equal(buf_alloc(&acct, &w, MIB, AITK_MEM_WEIGHTS, "w"), AITK_OK);
    assert_int_equal(buf_alloc(&acct, &act, 2 * MIB, AITK_MEM_ACTIVATIONS, "block inputs"),
                     AITK_OK);
    assert_int_equal(acct.current_total, 3 * MIB);
    buf_free(&acct, &act);
    assert_null(act.ptr);
    assert_int_equal(buf_alloc(&acct, &ws, MIB / 2, AITK_MEM_WORKSPACE, "attention"), AITK_OK);
    assert_int_equal(acct.current_total, MIB + MIB / 2);
    assert_int_equal(acct.peak_total, 3 * MIB);
    assert_int_equal(acct.current[AITK_MEM_ACTIVATIONS], 0);
    assert_int_equal(acct.peak[AITK_MEM_ACTIVATIONS], 2 * MIB);
    assert_int_equal(acct.peak[AITK_MEM_WORKSPACE], MIB / 2);
    /* Memory comes zeroed: gradients start at 0. */
    const unsigned char *bytes = ws.ptr;
    for (size_t i = 0; i < ws.bytes; i += 4096)
        assert_int_equal(bytes[i], 0);
    buf_free(&acct, &w);
    buf_free(&acct, &ws);
    buf_free(&acct, &ws); /* freeing an emptied buffer is harmless */
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
    assert_int_equal(buf_alloc(&acct, &b, 3 * MIB / 2, AITK_MEM_OPTIMIZER, "adamw moments"),
                     AITK_OK);
    buf_free(&acct, &b);
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
    aitk_mem_account acct = {.limit = 4 * MIB};
    aitk_buf a, b;
    assert_int_equal(buf_alloc(&acct, &a, 3 * MIB, AITK_MEM_WEIGHTS, "a"), AITK_OK);
    assert_int_equal(buf_alloc(&acct, &b, 2 * MIB, AITK_MEM_GRADIENTS, "b"), AITK_E_NOMEM);
    assert_null(b.ptr);
    /* The refusal names what did not fit. */
    assert_string_equal(acct.failed_what, "b");
    assert_int_equal(acct.failed_tag, AITK_MEM_GRADIENTS);
    assert_int_equal(acct.failed_bytes, 2 * MIB);
    assert_int_equal(acct.current_total, 3 * MIB);
    assert_int_equal(acct.peak[AITK_MEM_GRADIENTS], 0);
    /* The host allocation itself fails: reported, accounting rolled back. */
    aitk_alloc_fail_after(0);
    assert_int_equal(buf_alloc(&acct, &b, MIB, AITK_MEM_OPTIMIZER, "adamw v"), AITK_E_NOMEM);
    aitk_alloc_fail_after(-1);
    assert_string_equal(acct.failed_what, "adamw v");
    assert_int_equal(acct.failed_tag, AITK_MEM_OPTIMIZER);
    assert_int_equal(acct.failed_bytes, MIB);
    assert_int_equal(acct.current_total, 3 * MIB);
    assert_int_equal(acct.current[AITK_MEM_GRADIENTS], 0);
    assert_int_equal(acct.peak_total, 3 * MIB);
    /* Zero bytes: nothing allocated, nothing counted. */
    assert_int_equal(buf_alloc(&acct, &b, 0, AITK_MEM_GRADIENTS, "empty"), AITK_OK);
    assert_null(b.ptr);
    assert_int_equal(buf_alloc(&acct, &b, 8, AITK_MEM_TAG_COUNT, "bad tag"), AITK_E_INVAL);
    assert_int_equal(aitk_mem_note_alloc(&acct, SIZE_MAX, AITK_MEM_WEIGHTS, "huge"),
                     AITK_E_RANGE);
    assert_string_equal(acct.failed_what, "huge");
    buf_free(&acct, &a);
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
    partial.axpy = NULL; /* the last member: the check list must reach it */
    assert_int_equal(aitk_ops_check(&partial, &missing), AITK_E_INTERNAL);
    assert_string_equal(missing, "axpy");
    /* members new in this version of the contract are checked too */
    const char *fresh[] = {"upload_act", "draw_act", "nf4_quantize"};
    for (int i = 0; i < 3; i++) {
        partial = *aitk_ops_cpu();
        if (i == 0)
            partial.upload_act = NULL;
        else if (i == 1)
            partial.draw_act = NULL;
        else
            partial.nf4_quantize = NULL;
        assert_int_equal(aitk_ops_check(&partial, &missing), AITK_E_INTERNAL);
        assert_string_equal(missing, fresh[i]);
    }
    partial = *aitk_ops_cpu();
    partial.act_dtype = AITK_DTYPE_NF4; /* not an activation storage */
    assert_int_equal(aitk_ops_check(&partial, &missing), AITK_E_INTERNAL);
    assert_string_equal(missing, "act_dtype");
    partial.act_dtype = AITK_DTYPE_BF16;
    assert_int_equal(aitk_ops_check(&partial, &missing), AITK_OK);
    assert_int_equal(aitk_ops_check(NULL, &missing), AITK_E_INVAL);
    assert_string_equal(aitk_ops_cpu()->name, "cpu");
    assert_int_equal(aitk_ops_cpu()->act_dtype, AITK_DTYPE_F32);
}

static void test_upload_download(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    float host[3] = {1, 2, 3}, back[3] = {0};
    aitk_mem_account acct = {0};
    aitk_buf dev;
    assert_int_equal(buf_alloc(&acct, &dev, sizeof host, AITK_MEM_WEIGHTS, "t"), AITK_OK);
    assert_int_equal(ops->upload(dev.ptr, host, sizeof host), AITK_OK);
    assert_int_equal(ops->download(back, dev.ptr, sizeof back), AITK_OK);
    assert_memory_equal(host, back, sizeof host);
    assert_int_equal(ops->upload(NULL, host, 4), AITK_E_INVAL);
    assert_int_equal(ops->zero(dev.ptr, dev.bytes), AITK_OK);
    assert_int_equal(ops->download(back, dev.ptr, sizeof back), AITK_OK);
    assert_float_equal(back[0], 0.0f, 0.0);
    assert_float_equal(back[2], 0.0f, 0.0);
    buf_free(&acct, &dev);
}

static void test_dtype_names_and_bytes(void **state)
{
    (void)state;
    assert_string_equal(aitk_dtype_name(AITK_DTYPE_F32), "f32");
    assert_string_equal(aitk_dtype_name(AITK_DTYPE_BF16), "bf16");
    assert_string_equal(aitk_dtype_name(AITK_DTYPE_FP8_E4M3), "fp8_e4m3");
    assert_string_equal(aitk_dtype_name(AITK_DTYPE_NF4), "nf4");
    assert_string_equal(aitk_dtype_name(AITK_DTYPE_COUNT), "unknown");
    assert_int_equal(aitk_dtype_bytes(AITK_DTYPE_F32, 10), 40);
    assert_int_equal(aitk_dtype_bytes(AITK_DTYPE_BF16, 10), 20);
    assert_int_equal(aitk_dtype_bytes(AITK_DTYPE_FP8_E4M3, 10), 10);
    assert_int_equal(aitk_dtype_bytes(AITK_DTYPE_NF4, 10), 5);
    assert_int_equal(aitk_dtype_bytes(AITK_DTYPE_NF4, 11), 6); /* a half byte rounds up */
    assert_int_equal(aitk_dtype_bytes(AITK_DTYPE_COUNT, 10), 0);
    assert_int_equal(aitk_dtype_bytes(AITK_DTYPE_F32, SIZE_MAX / 2), SIZE_MAX);
    assert_int_equal(aitk_nf4_blocks(64), 1);
    assert_int_equal(aitk_nf4_blocks(65), 2);
}

static void test_act_at_knows_the_element_size(void **state)
{
    (void)state;
    float buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    aitk_act *p = (aitk_act *)buf;
    /* fp32 activations: element 5 is 20 bytes on */
    assert_ptr_equal(aitk_act_at(aitk_ops_cpu(), p, 5), &buf[5]);
    assert_float_equal(*(const float *)aitk_act_cat(aitk_ops_cpu(), p, 3), 3.0f, 0.0);
    /* a bf16 table steps 2 bytes per element over the same memory */
    aitk_ops bf16 = *aitk_ops_cpu();
    bf16.act_dtype = AITK_DTYPE_BF16;
    assert_ptr_equal(aitk_act_at(&bf16, p, 5), (unsigned char *)buf + 10);
    assert_ptr_equal(aitk_act_cat(&bf16, p, 0), p);
    assert_null(aitk_act_at(aitk_ops_cpu(), NULL, 5)); /* absent stays absent */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peak_tracks_current),
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_limit_and_failures_change_nothing),
        cmocka_unit_test(test_ops_table_check),
        cmocka_unit_test(test_upload_download),
        cmocka_unit_test(test_dtype_names_and_bytes),
        cmocka_unit_test(test_act_at_knows_the_element_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
