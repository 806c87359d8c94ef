/* The GPU link's kind and nominal rate from an NVML record
 * (validate/probes/links.h). Records are written here as JSON literals, the
 * shape nvml.c writes; every expected rate is worked by hand beside it from
 * the per-lane and per-link figures links.h cites. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "validate/probes/links.h"

static void near(double got, double want, double eps)
{
    if (!(fabs(got - want) <= eps))
        fail_msg("%.9g, expected %.9g", got, want);
}

static void test_pcie_lane_rates(void **state)
{
    (void)state;
    /* gen 1: 2.5 GT/s * 8/10 / 8 bits = 0.25 GB/s; gen 2: 0.5; gen 3: 8 GT/s *
     * 128/130 / 8 = 0.98461538; gen 4: 1.96923077; gen 5: 3.93846154. */
    near(aitk_link_pcie_lane_gbs(1), 0.25, 1e-12);
    near(aitk_link_pcie_lane_gbs(2), 0.5, 1e-12);
    near(aitk_link_pcie_lane_gbs(3), 0.98461538, 1e-8);
    near(aitk_link_pcie_lane_gbs(4), 1.96923077, 1e-8);
    near(aitk_link_pcie_lane_gbs(5), 3.93846154, 1e-8);
    near(aitk_link_pcie_lane_gbs(0), 0.0, 0);
    near(aitk_link_pcie_lane_gbs(6), 0.0, 0);
}

static void test_nvlink_per_link(void **state)
{
    (void)state;
    /* P100 160 GB/s over 4 links both ways: 20 per direction; A100 600 over
     * 12: 25; H100 900 over 18: 25; B200 1800 over 18: 50. NVML versions: 1
     * = 1.0, 4 = 3.0, 6 = 4.0, 7 = 5.0. */
    near(aitk_link_nvlink_gbs(1), 20.0, 0);
    near(aitk_link_nvlink_gbs(4), 25.0, 0);
    near(aitk_link_nvlink_gbs(6), 25.0, 0);
    near(aitk_link_nvlink_gbs(7), 50.0, 0);
    near(aitk_link_nvlink_gbs(0), 0.0, 0);
    assert_string_equal(aitk_link_nvlink_name(6), "4.0");
    assert_string_equal(aitk_link_nvlink_name(99), "unknown");
}

static cJSON *devices(const char *json)
{
    cJSON *d = cJSON_Parse(json);
    assert_non_null(d);
    return d;
}

static void test_nvlink_fewest_links_sets_the_rate(void **state)
{
    (void)state;
    /* Two H100 SXM (NVLink 4.0 = NVML 6), one with 18 active links, one with
     * 16: 16 * 25 = 400 GB/s per direction. */
    cJSON *d = devices("[{\"nvlink\":{\"active_links\":18,\"version\":6},"
                       "\"pcie\":{\"generation\":5,\"width\":16}},"
                       "{\"nvlink\":{\"active_links\":16,\"version\":6},"
                       "\"pcie\":{\"generation\":5,\"width\":16}}]");
    aitk_link l;
    aitk_str t = AITK_STR_INIT;
    assert_int_equal(aitk_link_from_nvml(d, 2, &l, &t), AITK_OK);
    assert_string_equal(l.kind, "NVLink");
    near(l.gbs, 400.0, 1e-9);
    assert_non_null(strstr(aitk_str_cstr(&t), "NVLink 4.0: 16 links x 25 GB/s = 400 GB/s"));
    aitk_str_free(&t);
    cJSON_Delete(d);
}

static void test_pcie_when_one_gpu_has_no_nvlink(void **state)
{
    (void)state;
    /* One GPU with NVLink, one without (active_links 0): PCIe. gen 4 x16 =
     * 16 * 1.96923077 = 31.5076923; gen 3 x8 = 8 * 0.98461538 = 7.87692308,
     * the slower, so the rate. */
    cJSON *d = devices("[{\"nvlink\":{\"active_links\":4,\"version\":4},"
                       "\"pcie\":{\"generation\":4,\"width\":16}},"
                       "{\"nvlink\":{\"active_links\":0},"
                       "\"pcie\":{\"generation\":3,\"width\":8}}]");
    aitk_link l;
    aitk_str t = AITK_STR_INIT;
    assert_int_equal(aitk_link_from_nvml(d, 2, &l, &t), AITK_OK);
    assert_string_equal(l.kind, "PCIe");
    near(l.gbs, 7.87692308, 1e-7);
    assert_non_null(strstr(aitk_str_cstr(&t), "PCIe gen 3 x8"));
    aitk_str_free(&t);
    cJSON_Delete(d);
}

static void test_nothing_known(void **state)
{
    (void)state;
    /* No link facts at all, and a record with fewer devices than asked. */
    cJSON *d = devices("[{\"name\":\"a\"},{\"name\":\"b\"}]");
    aitk_link l;
    aitk_str t = AITK_STR_INIT;
    assert_int_equal(aitk_link_from_nvml(d, 2, &l, &t), AITK_E_NOTFOUND);
    assert_string_equal(l.kind, "unknown");
    near(l.gbs, 0.0, 0);
    aitk_str_clear(&t);
    assert_int_equal(aitk_link_from_nvml(d, 3, &l, &t), AITK_E_NOTFOUND);
    assert_non_null(strstr(aitk_str_cstr(&t), "2 of the 3"));
    aitk_str_clear(&t);
    assert_int_equal(aitk_link_from_nvml(NULL, 2, &l, &t), AITK_E_NOTFOUND);
    aitk_str_free(&t);
    cJSON_Delete(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcie_lane_rates),
        cmocka_unit_test(test_nvlink_per_link),
        cmocka_unit_test(test_nvlink_fewest_links_sets_the_rate),
        cmocka_unit_test(test_pcie_when_one_gpu_has_no_nvlink),
        cmocka_unit_test(test_nothing_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
