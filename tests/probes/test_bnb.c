/* python.bitsandbytes: which native library bitsandbytes loads for torch's
 * CUDA. The expected files below are bitsandbytes' own answers:
 * bitsandbytes.cextension.get_cuda_bnb_library_path of the real 0.45.5,
 * 0.49.2 and 0.50.2 wheels from PyPI, asked with the same CUDA versions and
 * BNB_CUDA_VERSION values (realworld.linux.bitsandbytes asks it again
 * where PyPI can be reached); the folders hold those wheels' file names.
 * Only "not judged" (before 0.43.1) is this tool's own choice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/aitk_config.h"
#include "bnb_env.h"
#include "probe_test.h"
#include "validate/engine.h"
#include "validate/probes/bnb.h"

#ifdef _WIN32
#define SUF ".dll"
#else
#define SUF ".so"
#endif
#define L(v) "libbitsandbytes_cuda" #v SUF

/* The CUDA builds of each wheel, with a few of the other files beside them. */
static char *const bnb045[] = {"libbitsandbytes_cpu" SUF, L(117), L(118), L(120), L(121), L(122),
                               L(123), L(124), L(125), L(126), L(128), "cextension.py"};
static char *const bnb050[] = {"libbitsandbytes_cpu" SUF, L(118), L(121), L(124), L(126), L(128),
                               L(130), L(132), "libbitsandbytes_rocm72" SUF, "libbitsandbytes_xpu2026" SUF};

static aitk_bnb_choice pick(const char *version, const char *cuda, const char *override,
                            char *const *names, size_t n, aitk_str *out, bool *nearest)
{
    return aitk_bnb_pick(version, cuda, override, names, n, "0.43.1", "0.50.0", out, nearest);
}

static void test_pick_rules(void **state)
{
    (void)state;
    static const struct {
        const char *version, *cuda, *override;
        int wheel; /* 0: 0.45.5's files, 1: 0.50.2's */
        aitk_bnb_choice choice;
        const char *name;
        bool nearest;
    } cases[] = {
        {"0.45.5", "12.4", NULL, 0, AITK_BNB_FOUND, L(124), false},
        {"0.45.5", "12.9", NULL, 0, AITK_BNB_ABSENT, L(129), false},
        {"0.45.5", "13.2", NULL, 0, AITK_BNB_ABSENT, L(132), false},
        {"0.45.5", "13.0", "128", 0, AITK_BNB_FOUND, L(128), false},
        {"0.45.5", "12.9", "", 0, AITK_BNB_ABSENT, L(129), false}, /* empty: unset */
        {"0.50.2", "12.9", NULL, 1, AITK_BNB_FOUND, L(128), true},
        {"0.50.2", "12.7", NULL, 1, AITK_BNB_FOUND, L(126), true},
        {"0.50.2", "13.1", NULL, 1, AITK_BNB_FOUND, L(130), true},
        {"0.50.2", "13.4", NULL, 1, AITK_BNB_FOUND, L(132), true},
        {"0.50.2", "12.0", NULL, 1, AITK_BNB_FOUND, L(121), true}, /* the lowest above */
        {"0.50.2", "13.2", NULL, 1, AITK_BNB_FOUND, L(132), false},
        {"0.50.2", "14.0", NULL, 1, AITK_BNB_ABSENT, L(140), false}, /* no other major */
        {"0.50.2", "12.9", "129", 1, AITK_BNB_ABSENT, L(129), false}, /* no fallback */
        {"0.50.2", "12.9", "", 1, AITK_BNB_BAD_OVERRIDE, "", false},
        {"0.50.2", "12.9", "12.8", 1, AITK_BNB_BAD_OVERRIDE, "", false},
        {"0.43.0", "12.1", NULL, 0, AITK_BNB_NOT_JUDGED, "", false},
    };
    aitk_str out = AITK_STR_INIT;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bool nearest = true;
        char *const *names = cases[i].wheel ? bnb050 : bnb045;
        size_t n = cases[i].wheel ? sizeof bnb050 / sizeof *bnb050 : sizeof bnb045 / sizeof *bnb045;
        aitk_str_clear(&out);
        aitk_bnb_choice c = pick(cases[i].version, cases[i].cuda, cases[i].override, names, n,
                                 &out, &nearest);
        if (c != cases[i].choice ||
            (*cases[i].name && strcmp(aitk_str_cstr(&out), cases[i].name) != 0) ||
            nearest != cases[i].nearest)
            fail_msg("bitsandbytes %s, CUDA %s, override %s: choice %d '%s' nearest %d; want %d "
                     "'%s' %d",
                     cases[i].version, cases[i].cuda,
                     cases[i].override ? cases[i].override : "(unset)", c, aitk_str_cstr(&out),
                     nearest, cases[i].choice, cases[i].name, cases[i].nearest);
    }
    aitk_str_free(&out);
}

/* The check on an environment record as the python provider leaves it,
 * over a folder with the wheel's file names. */
static const aitk_check *run(aitk_run_ctx *ctx, const char *version, const char *cuda,
                             const char *folder)
{
    ctx->env = bnb_env(version, cuda, folder, NULL);
    assert_int_equal(aitk_bnb_checks(ctx), AITK_OK);
    assert_int_equal(ctx->checks.count, 1);
    assert_string_equal(ctx->checks.items[0].id, "python.bitsandbytes");
    return &ctx->checks.items[0];
}

static void done(aitk_run_ctx *ctx)
{
    aitk_checklist_free(&ctx->checks);
    cJSON_Delete(ctx->env);
    memset(ctx, 0, sizeof *ctx);
}

static void test_verdicts(void **state)
{
    (void)state;
    char *site = pt_tempdir("bnb");
    for (size_t i = 0; i < sizeof bnb045 / sizeof *bnb045; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "bitsandbytes/%s", bnb045[i]);
        pt_write(site, rel, "");
    }
    unsetenv("BNB_CUDA_VERSION");
    aitk_run_ctx ctx = {0};
    /* torch 2.15's CUDA 13.2 over a bitsandbytes with no CUDA 13 build: the
     * example configs' adamw8bit fails at its first step. */
    const aitk_check *c = run(&ctx, "0.45.5", "13.2", site);
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    pt_assert_contains(c->observed, "no " L(132));
    pt_assert_contains(c->message, "8-bit optimizers fail at the first training step");
    pt_assert_contains(c->message, "adamw8bit, is one of them");
    pt_assert_contains(c->remedy, "pip install -U bitsandbytes");
    pt_assert_contains(c->source, "PyPI bitsandbytes 0.50.2");
    done(&ctx);
    /* A job whose optimizer does not call bitsandbytes: a warning. */
    aitk_train_config cfg = {.optimizer = "prodigy8bit"};
    ctx.train_config = &cfg;
    c = run(&ctx, "0.45.5", "13.2", site);
    assert_int_equal(c->status, AITK_CHECK_WARN);
    pt_assert_contains(c->message, "prodigy8bit, is not one of them");
    done(&ctx);
    cfg.optimizer = "AdamW8bit";
    ctx.train_config = &cfg;
    c = run(&ctx, "0.45.5", "13.2", site);
    assert_int_equal(c->status, AITK_CHECK_FAIL);
    done(&ctx);
    /* Its build is there. */
    c = run(&ctx, "0.45.5", "12.4", site);
    assert_int_equal(c->status, AITK_CHECK_PASS);
    pt_assert_contains(c->observed, "picks " L(124));
    done(&ctx);
    /* A build of another major than torch's, by BNB_CUDA_VERSION. */
    setenv("BNB_CUDA_VERSION", "118", 1);
    c = run(&ctx, "0.45.5", "13.2", site);
    unsetenv("BNB_CUDA_VERSION");
    assert_int_equal(c->status, AITK_CHECK_WARN);
    pt_assert_contains(c->message, "load a CUDA 11 build beside torch's CUDA 13 libraries");
    pt_assert_contains(c->remedy, "Unset BNB_CUDA_VERSION");
    done(&ctx);
    /* Before 0.43.1 it chose by the CUDA runtime it found: not judged. */
    c = run(&ctx, "0.42.0", "12.1", site);
    assert_int_equal(c->status, AITK_CHECK_SKIP);
    done(&ctx);
    free(site);
}

static void test_nothing_to_judge(void **state)
{
    (void)state;
    aitk_run_ctx ctx = {0};
    ctx.env = cJSON_Parse("{\"python\": {\"environments\": [{\"packages\": {}, \"torch\": "
                          "{\"cuda\": \"12.8\"}}]}}");
    assert_int_equal(aitk_bnb_checks(&ctx), AITK_OK);
    assert_int_equal(ctx.checks.items[0].status, AITK_CHECK_SKIP);
    pt_assert_contains(ctx.checks.items[0].message, "not installed");
    done(&ctx);
    /* A CPU-only torch loads no CUDA library of bitsandbytes. */
    const aitk_check *c = run(&ctx, "0.50.2", "", "/nowhere");
    assert_int_equal(c->status, AITK_CHECK_SKIP);
    pt_assert_contains(c->message, "no CUDA build");
    done(&ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_rules),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_nothing_to_judge),
    };
    return pt_finish(cmocka_run_group_tests(tests, NULL, NULL));
}
