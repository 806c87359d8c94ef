/* The CPU table's storage members and the CPU backend descriptor: NF4
 * quantize/dequantize against values worked out by hand from bitsandbytes'
 * code table (not by the code under test), activation upload/download,
 * absmax, and aitk_backend_cpu's probe, memory figures and paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/math/nf4.h"
#include "kernels/ops.h"
#include "tests/kernels/kt.h"

/* One block: absmax 1 (the 1.0 at element 1), so each value is coded as it
 * is. Expected indices from the table in kernels/math/nf4.h:
 *  -1 -> 0, 1 -> 15, 0 -> 7, 0.1 -> 8 (0.0796 is 0.020 away, 0.1609 0.061),
 *  -0.3 -> 4 (-0.2844 is 0.016 away, -0.3949 0.095),
 *  0.5 -> 12 (0.4407 is 0.059 away, 0.5626 0.063),
 *  and two exact ties, each the fp32 midpoint of neighbouring codes whose
 *  fp32 distances to both are equal (checked in fp32 arithmetic by hand):
 *  0x1.45f5fep-5 between 0 (7) and 0.0796 (8) -> 7,
 *  -0x1.74f0e2p-5 between -0.0911 (6) and 0 (7) -> 6. */
static void test_nf4_known_codes(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    float x[9] = {-1.0f, 1.0f, 0.0f, 0.1f, -0.3f, 0.5f, 0x1.45f5fep-5f, -0x1.74f0e2p-5f, 0.0f};
    /* pairs (0,15) (7,8) (4,12) (7,6) and element 8 (7) alone in the high nibble */
    const uint8_t want_q[5] = {0x0F, 0x78, 0x4C, 0x76, 0x70};
    uint8_t q[5];
    float absmax[1] = {-1};
    memset(q, 0xAA, sizeof q);
    assert_int_equal(ops->nf4_quantize(q, absmax, KT_A(x), 9), AITK_OK);
    assert_memory_equal(q, want_q, sizeof q);
    assert_float_equal(absmax[0], 1.0f, 0.0);
    float back[9];
    assert_int_equal(ops->nf4_dequantize(KT_A(back), q, absmax, 9), AITK_OK);
    const float want[9] = {-1.0f, 1.0f, 0.0f, 0.07958029955625534f, -0.28444138169288635f,
                           0.44070982933044434f, 0.0f, -0.09105003625154495f, 0.0f};
    for (int i = 0; i < 9; i++)
        assert_float_equal(back[i], want[i], 0.0);
}

/* Two blocks scale separately: block 0 of 64 values 0.5 (absmax 0.5, all
 * code 15), block 1 a single -3 (absmax 3, code 0), which the first block's
 * scale would have clipped. Also: an all-zero block decodes to zeros. */
static void test_nf4_blocks_and_zero(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    float x[65], back[65];
    for (int i = 0; i < 64; i++)
        x[i] = 0.5f;
    x[64] = -3.0f;
    uint8_t q[33];
    float absmax[2];
    assert_int_equal(ops->nf4_quantize(q, absmax, KT_A(x), 65), AITK_OK);
    assert_float_equal(absmax[0], 0.5f, 0.0);
    assert_float_equal(absmax[1], 3.0f, 0.0);
    for (int i = 0; i < 32; i++)
        assert_int_equal(q[i], 0xFF);
    assert_int_equal(q[32], 0x00);
    assert_int_equal(ops->nf4_dequantize(KT_A(back), q, absmax, 65), AITK_OK);
    assert_float_equal(back[0], 0.5f, 0.0);
    assert_float_equal(back[64], -3.0f, 0.0);
    float zeros[4] = {0, 0, 0, 0};
    assert_int_equal(ops->nf4_quantize(q, absmax, KT_A(zeros), 4), AITK_OK);
    assert_float_equal(absmax[0], 0.0f, 0.0);
    assert_int_equal(q[0], 0x77);
    assert_int_equal(ops->nf4_dequantize(KT_A(back), q, absmax, 4), AITK_OK);
    for (int i = 0; i < 4; i++)
        assert_float_equal(back[i], 0.0f, 0.0);
    assert_int_equal(ops->nf4_quantize(NULL, absmax, KT_A(zeros), 4), AITK_E_INVAL);
}

static void test_nf4_table_is_bitsandbytes(void **state)
{
    (void)state;
    assert_float_equal(aitk_nf4_value(0), -1.0f, 0.0);
    assert_float_equal(aitk_nf4_value(3), -0.39491748809814453f, 0.0);
    assert_float_equal(aitk_nf4_value(7), 0.0f, 0.0);
    assert_float_equal(aitk_nf4_value(13), 0.5626170039176941f, 0.0);
    assert_float_equal(aitk_nf4_value(15), 1.0f, 0.0);
    for (unsigned i = 1; i < AITK_NF4_CODES; i++) /* sorted, so "lower index" is "lower value" */
        assert_true(aitk_nf4_value(i) > aitk_nf4_value(i - 1));
}

static void test_act_upload_download_absmax(void **state)
{
    (void)state;
    const aitk_ops *ops = aitk_ops_cpu();
    aitk_mem_account acct = {0};
    aitk_buf dev;
    const float host[4] = {0.25f, -7.5f, 3.0f, 1e-20f};
    float back[4] = {0};
    assert_int_equal(aitk_buf_alloc(ops, &acct, &dev, aitk_dtype_bytes(ops->act_dtype, 4),
                                    AITK_MEM_ACTIVATIONS, "act"),
                     AITK_OK);
    assert_int_equal(ops->upload_act(dev.ptr, host, 4), AITK_OK);
    assert_int_equal(ops->download_act(back, dev.ptr, 4), AITK_OK);
    assert_memory_equal(back, host, sizeof host); /* fp32 storage: exact */
    float amax = 0;
    assert_int_equal(ops->absmax(&amax, dev.ptr, 4), AITK_OK);
    assert_float_equal(amax, 7.5f, 0.0);
    assert_int_equal(ops->upload_act(NULL, host, 4), AITK_E_INVAL);
    assert_int_equal(ops->absmax(NULL, dev.ptr, 4), AITK_E_INVAL);
    aitk_buf_free(ops, &acct, &dev);
    assert_int_equal(acct.current_total, 0);
}

static void test_backend_cpu_descriptor(void **state)
{
    (void)state;
    const aitk_backend *be = aitk_backend_cpu();
    assert_non_null(be);
    assert_int_equal(be->abi_version, AITK_BACKEND_ABI);
    assert_string_equal(be->name, "cpu");
    assert_ptr_equal(be->ops, aitk_ops_cpu());
    aitk_backend_probe p;
    memset(&p, 0xFF, sizeof p);
    assert_int_equal(be->probe(&p), AITK_OK);
    assert_int_equal(p.device_count, 1);
    assert_int_equal(p.n_devices, 1);
    assert_int_equal(p.devices[0].index, 0);
    assert_true(p.devices[0].name[0] != '\0');
    assert_true(p.devices[0].sm_count >= 1);
    assert_int_equal(p.runtime_version, 0);
    assert_int_equal(p.devices[0].cc_major, 0);
    assert_string_equal(p.error, "");
    assert_int_equal(be->open(1), AITK_E_INVAL); /* one device only */
    assert_int_equal(be->open(0), AITK_OK);
    assert_int_equal(be->synchronize(), AITK_OK);
    size_t free_b = 0, total_b = 0;
    aitk_status st = be->mem_info(&free_b, &total_b);
    /* Linux (/proc/meminfo) and Windows (GlobalMemoryStatusEx) both answer. */
    assert_int_equal(st, AITK_OK);
    assert_true(total_b > 0 && free_b <= total_b);
    assert_true(p.devices[0].total_memory_bytes > 0);
    assert_int_equal(be->workspace_bytes(), 0);
    char text[8] = "x";
    be->last_error(text, sizeof text);
    assert_string_equal(text, "");
    /* open reset the counts; one attention call shows up in the paths */
    float q[4] = {1, 0, 0, 1}, o[4], lse[2];
    assert_int_equal(be->ops->attention_forward(KT_A(o), lse, KT_A(q), KT_A(q), KT_A(q), 1, 2,
                                                1, 1, 2, 1.0f),
                     AITK_OK);
    aitk_backend_path paths[8];
    size_t n = 0;
    assert_int_equal(be->paths(paths, 8, &n), AITK_OK);
    assert_int_equal(n, 3);
    assert_string_equal(paths[0].op, "gemm");
    assert_string_equal(paths[0].kernel, "OpenBLAS sgemm (fp32)");
    assert_int_equal(paths[0].calls, 0);
    assert_string_equal(paths[1].op, "attention_forward");
    assert_string_equal(paths[1].kernel, "CPU reference (fp32, row strips)");
    assert_int_equal(paths[1].calls, 1);
    assert_int_equal(paths[2].calls, 0);
    for (size_t i = 0; i < n; i++)
        assert_true(paths[i].ms == -1.0); /* the CPU reference does not time its ops */
    assert_int_equal(be->paths(paths, 1, &n), AITK_OK); /* cut to the caller's room */
    assert_int_equal(n, 1);
    be->close();
    be->close(); /* twice is safe */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nf4_known_codes),
        cmocka_unit_test(test_nf4_blocks_and_zero),
        cmocka_unit_test(test_nf4_table_is_bitsandbytes),
        cmocka_unit_test(test_act_upload_download_absmax),
        cmocka_unit_test(test_backend_cpu_descriptor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
