/* The checks engine: order, levels, copies, durations, and a failing probe
 * turned into a finding rather than a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "common/alloc.h"
#include "validate/engine.h"

static aitk_status add_named(aitk_run_ctx *ctx, const char *id, aitk_check_status st)
{
    char buf[64];
    strcpy(buf, id); /* the engine must copy: this buffer dies on return */
    aitk_check c = {.id = buf, .category = "t", .status = st, .message = buf};
    return aitk_checklist_add(&ctx->checks, &c);
}

static aitk_status prov_a(aitk_run_ctx *ctx) { return add_named(ctx, "t.a", AITK_CHECK_PASS); }
static aitk_status prov_b(aitk_run_ctx *ctx) { return add_named(ctx, "t.b", AITK_CHECK_WARN); }
static aitk_status prov_full(aitk_run_ctx *ctx) { return add_named(ctx, "t.full", AITK_CHECK_PASS); }
static aitk_status prov_broken(aitk_run_ctx *ctx)
{
    add_named(ctx, "t.before_error", AITK_CHECK_PASS);
    return AITK_E_PARSE;
}
static aitk_status prov_nomem(aitk_run_ctx *ctx) { return AITK_E_NOMEM; }

static void test_order_and_levels(void **state)
{
    (void)state;
    const aitk_provider provs[] = {
        {"t", AITK_LEVEL_QUICK, prov_a},
        {"t", AITK_LEVEL_FULL, prov_full},
        {"t", AITK_LEVEL_QUICK, prov_b},
    };
    aitk_run_ctx ctx = {.level = AITK_LEVEL_STANDARD};
    assert_int_equal(aitk_engine_run(&ctx, provs, 3), AITK_OK);
    assert_int_equal(ctx.checks.count, 2);
    assert_string_equal(ctx.checks.items[0].id, "t.a");
    assert_string_equal(ctx.checks.items[1].id, "t.b");
    assert_string_equal(ctx.checks.items[1].message, "t.b");
    assert_string_equal(ctx.checks.items[1].title, "t.b"); /* title defaults to id */
    assert_string_equal(ctx.checks.items[0].remedy, "");    /* NULL becomes "" */
    assert_true(ctx.checks.items[0].duration_ms >= 0);
    aitk_checklist_free(&ctx.checks);

    ctx = (aitk_run_ctx){.level = AITK_LEVEL_FULL};
    assert_int_equal(aitk_engine_run(&ctx, provs, 3), AITK_OK);
    assert_int_equal(ctx.checks.count, 3);
    assert_string_equal(ctx.checks.items[1].id, "t.full");
    aitk_checklist_free(&ctx.checks);
}

static void test_failing_probe_becomes_a_failed_check(void **state)
{
    (void)state;
    const aitk_provider provs[] = {{"gpu", AITK_LEVEL_QUICK, prov_broken},
                                   {"t", AITK_LEVEL_QUICK, prov_a}};
    aitk_run_ctx ctx = {.level = AITK_LEVEL_QUICK};
    assert_int_equal(aitk_engine_run(&ctx, provs, 2), AITK_OK);
    assert_int_equal(ctx.checks.count, 3);
    assert_string_equal(ctx.checks.items[1].id, "gpu.probe");
    assert_int_equal(ctx.checks.items[1].status, AITK_CHECK_FAIL);
    assert_non_null(strstr(ctx.checks.items[1].message, "malformed input"));
    assert_true(strlen(ctx.checks.items[1].remedy) > 0);
    assert_string_equal(ctx.checks.items[2].id, "t.a"); /* the run went on */
    aitk_checklist_free(&ctx.checks);
}

static void test_out_of_memory_stops_the_run(void **state)
{
    (void)state;
    const aitk_provider provs[] = {{"t", AITK_LEVEL_QUICK, prov_nomem},
                                   {"t", AITK_LEVEL_QUICK, prov_a}};
    aitk_run_ctx ctx = {.level = AITK_LEVEL_QUICK};
    assert_int_equal(aitk_engine_run(&ctx, provs, 2), AITK_E_NOMEM);
    assert_int_equal(ctx.checks.count, 0);
    aitk_checklist_free(&ctx.checks);
}

static void test_add_rejects_incomplete_and_survives_nomem(void **state)
{
    (void)state;
    aitk_checklist l = {0};
    aitk_check no_id = {.category = "x"};
    assert_int_equal(aitk_checklist_add(&l, &no_id), AITK_E_INVAL);
    aitk_check c = {.id = "x.y", .category = "x", .observed = "o", .remedy = "r"};
    /* Fail each allocation in turn: never a partial entry, never a leak. */
    for (long n = 0; n < 12; n++) {
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_checklist_add(&l, &c);
        aitk_alloc_fail_after(-1);
        if (st == AITK_OK)
            break;
        assert_int_equal(st, AITK_E_NOMEM);
        assert_int_equal(l.count, 0);
    }
    assert_int_equal(l.count, 1);
    assert_string_equal(l.items[0].observed, "o");
    aitk_checklist_free(&l);
    assert_int_equal(l.count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_levels),
        cmocka_unit_test(test_failing_probe_becomes_a_failed_check),
        cmocka_unit_test(test_out_of_memory_stops_the_run),
        cmocka_unit_test(test_add_rejects_incomplete_and_survives_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
