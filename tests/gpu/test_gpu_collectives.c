/* The multi-GPU collectives on the CUDA backend: NCCL all-reduce,
 * all-gather and reduce-scatter over every visible GPU through the
 * plugin's collectives entry, driven by the bench sweep the validator runs
 * (bench/micro/collectives.h) at 1, 4 and 16 MiB.
 *
 * Asserted: the peer matrix's diagonal is 1; every collective runs at
 * every size (nine micro[] entries); each time is positive and each busbw
 * is algbw times nccl-tests' factor for that collective (checked from the
 * entry's own fields, since the factor is written here, not computed by the
 * code under test); the communicator is made again after close. Printed:
 * NCCL's version, the peer matrix and each busbw.
 *
 * Exit 77 (skipped) when the plugin cannot be loaded or no device answers
 * (gpu_test.h), when the plugin was built without NCCL, when libnccl
 * cannot be opened, and with fewer than two GPUs. Never run in this
 * project's CI, which has no GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "bench/collective_bw.h"
#include "bench/config.h"
#include "bench/micro/collectives.h"
#include "gpu_test.h"

static const aitk_backend *g_be;
static aitk_backend_peers g_peers;

/* nccl-tests' busbw / algbw (doc/PERFORMANCE.md "Summary"), for n GPUs. */
static double factor_of(const char *name, int n)
{
    if (strstr(name, "all_reduce"))
        return 2.0 * (n - 1) / n;
    return (double)(n - 1) / n;
}

static double num(const cJSON *e, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, key);
    assert_true(cJSON_IsNumber(x));
    return x->valuedouble;
}

static void sweep_once(aitk_bench_config *cfg, int n)
{
    cJSON *micro = cJSON_CreateArray();
    aitk_str notes = AITK_STR_INIT;
    aitk_coll_best best;
    assert_int_equal(aitk_coll_sweep(cfg, g_be, n, 0.0, micro, &best, &notes), AITK_OK);
    if (notes.len)
        fail_msg("collectives that did not run: %s", aitk_str_cstr(&notes));
    /* 3 collectives x sizes 1, 4, 16 MiB. */
    assert_int_equal(cJSON_GetArraySize(micro), 9);
    const cJSON *e;
    cJSON_ArrayForEach(e, micro) {
        const char *name = cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring;
        double alg = num(e, "algbw_gbs"), bus = num(e, "busbw_gbs"), ms = num(e, "time_ms");
        printf("%-34s %9.3f ms  algbw %8.2f GB/s  busbw %8.2f GB/s\n", name, ms, alg, bus);
        assert_true(ms > 0.0);
        assert_true(alg > 0.0);
        double want = alg * factor_of(name, n);
        if (bus < want * (1 - 1e-9) || bus > want * (1 + 1e-9))
            fail_msg("%s: busbw %g, expected algbw %g x factor = %g", name, bus, alg, want);
        assert_null(cJSON_GetObjectItemCaseSensitive(e, "link_gbs")); /* none was given */
    }
    aitk_str_free(&notes);
    cJSON_Delete(micro);
}

static void gpu_collectives_sweep(void **state)
{
    (void)state;
    aitk_bench_config *cfg = NULL;
    aitk_str err = AITK_STR_INIT;
    if (aitk_bench_config_load(&cfg, &err))
        fail_msg("bench/workloads.yaml: %s", aitk_str_cstr(&err));
    cfg->coll_min_mib = 1;
    cfg->coll_max_mib = 16;
    cfg->coll_factor = 4;
    cfg->coll_warmup = 2;
    cfg->coll_iters = 5;
    for (int i = 0; i < g_peers.n_devices; i++)
        assert_int_equal(g_peers.can_access[i][i], 1);
    sweep_once(cfg, g_peers.n_devices);
    /* The sweep closed the communicator; a second one makes it again. */
    sweep_once(cfg, g_peers.n_devices);
    aitk_bench_config_free(cfg);
    aitk_str_free(&err);
}

int main(void)
{
    const int rc = gpu_test_open(&g_be);
    if (rc != 0)
        return rc;
    if (!g_be->collectives) {
        printf("skipped: the plugin was built without NCCL (nccl.h not found)\n");
        g_be->close();
        return GPU_TEST_SKIP;
    }
    if (g_be->collectives->peers(&g_peers) != AITK_OK) {
        printf("skipped: NCCL cannot be used: %s\n", g_peers.error);
        g_be->close();
        return GPU_TEST_SKIP;
    }
    printf("NCCL %d, %d GPUs\n", g_peers.library_version, g_peers.n_devices);
    for (int i = 0; i < g_peers.n_devices; i++) {
        printf("peer access from GPU%d:", i);
        for (int j = 0; j < g_peers.n_devices; j++)
            printf(" %d", g_peers.can_access[i][j]);
        printf("\n");
    }
    if (g_peers.n_devices < 2) {
        printf("skipped: %d GPU visible; the collectives need two\n", g_peers.n_devices);
        g_be->close();
        return GPU_TEST_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_collectives_sweep),
    };
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (failed)
        gpu_test_print_last_error(g_be, "last_error");
    g_be->close();
    return failed;
}
