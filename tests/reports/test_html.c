/* The HTML renderer on the synthetic report (which has workloads,
 * microbenchmarks and a broken dependency tree): every section is there,
 * failures come first, everything is escaped, nothing is fetched from the
 * network, and a failing allocation is reported rather than crashed on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>

#include "reports/html.h"
#include "reports/html_parts.h"
#include "reports/xml_escape.h"
#include "report_test_util.h"
#include "tests/reports/gemm_in_step_fixture.h"

static char *render(const cJSON *r)
{
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_render_html(r, &out), AITK_OK);
    return aitk_str_steal(&out);
}

static void test_sections(void **state)
{
    (void)state;
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    char *html = render(r);
    assert_non_null(strstr(html, "<!DOCTYPE html>"));
    assert_non_null(strstr(html, "FAIL: this machine is not ready"));
    assert_non_null(strstr(html, "class=\"banner v-fail\""));
    /* Two workloads, each with a time chart and a memory chart. */
    assert_int_equal(rt_count(html, "<svg class=\"chart\""), 4);
    assert_non_null(strstr(html, "<title>Time per 1000 steps for flux1-dev</title>"));
    assert_non_null(strstr(html, "VRAM 24.0 GiB"));
    assert_non_null(strstr(html, "documented minimum 29.8 GiB"));
    assert_non_null(strstr(html, "extrapolated from 50 steps, ±1.1%"));
    assert_non_null(strstr(html, "38 min 20 s"));
    assert_non_null(strstr(html, "2 h 15 min"));
    /* The interval says what it is of; the kernels that ran, escaped. */
    assert_non_null(strstr(html, "<tr><th>95% CI of the mean</th><td class=\"num\">2.290 – "
                                 "2.330 s</td></tr>"));
    assert_null(strstr(html, "95% CI low"));
    assert_non_null(strstr(html, "<h3>Kernels that ran</h3>"));
    assert_non_null(strstr(html, "<tr><th>attention_forward</th><td>cuDNN 9.14.0 fused "
                                 "SDPA</td><td class=\"num\">5700 calls</td></tr>"));
    assert_non_null(strstr(html, "<td>plain kernel: cuDNN refused: &lt;head_dim 72&gt;</td>"));
    assert_int_equal(rt_count(html, "<h3>Kernels that ran</h3>"), 1); /* chroma has none */
    /* Microbenchmarks: three rows. */
    assert_non_null(strstr(html, "<table id=\"micro-table\">"));
    assert_non_null(strstr(html, "152.4 TFLOP/s"));
    /* The broken library and its missing dependency. */
    assert_non_null(strstr(html, "<li class=\"missing\"><span class=\"mono\">libcudnn.so.9"));
    assert_non_null(strstr(html, "libcudnn.so.9</span> — not_found"));
    assert_int_equal(rt_count(html, "<li class=\"ok\">"), 3);
    /* All 8 checks in the table. */
    const char *table = strstr(html, "<table id=\"checks\">");
    assert_non_null(table);
    assert_int_equal(rt_count(table, "<tr><td><span class=\"badge"), 8);
    /* Failures with their remedies come before everything else. */
    const char *failed = strstr(html, "What failed, and how to fix it");
    const char *fix = strstr(html, "<strong>Fix:</strong> Install the NVIDIA driver 550");
    assert_non_null(failed);
    assert_non_null(fix);
    assert_true(failed < strstr(html, "id=\"workloads\""));
    assert_true(fix < table);
    /* Environment, dark mode, print. */
    assert_non_null(strstr(html, "AMD EPYC 7B13 (16 logical CPUs)"));
    assert_non_null(strstr(html, "prefers-color-scheme:dark"));
    assert_non_null(strstr(html, "@media print"));
    aitk_free(html);
    cJSON_Delete(r);
}

static void test_escaping_and_self_contained(void **state)
{
    (void)state;
    cJSON *r = rt_load(FIXTURE);
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "workloads"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(w, "name",
                                           cJSON_CreateString("x\"><img src=x onerror=alert(2)>"));
    cJSON_ReplaceItemInObjectCaseSensitive(r, "profile",
                                           cJSON_CreateString("bad \x01 byte \xff end"));
    char *html = render(r);
    /* The fixture's check text holds <script>alert(1)</script>. */
    assert_null(strstr(html, "<script"));
    assert_non_null(strstr(html, "no driver &lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_null(strstr(html, "<img"));
    assert_non_null(strstr(html, "x&quot;&gt;&lt;img src=x"));
    assert_non_null(strstr(html, "&gt;= 550.54 &amp; &quot;CUDA 12.4&quot;"));
    /* Control bytes and invalid UTF-8 become U+FFFD. */
    assert_non_null(strstr(html, "bad \xEF\xBF\xBD byte \xEF\xBF\xBD end"));
    /* Nothing to fetch: no links, sources, imports or scripts. */
    assert_null(strstr(html, "http:"));
    assert_null(strstr(html, "https:"));
    assert_null(strstr(html, " src=\""));
    assert_null(strstr(html, " href=\""));
    assert_null(strstr(html, "@import"));
    assert_null(strstr(html, "url("));
    aitk_free(html);
    cJSON_Delete(r);
}

/* The provider's place: environment.deps.<group>.libraries[].tree, here in
 * the plain shape; healthy trees are not shown. */
static void test_deps_in_environment(void **state)
{
    (void)state;
    cJSON *r = rt_load(FIXTURE);
    cJSON_DeleteItemFromObjectCaseSensitive(r, "deps");
    cJSON *env = cJSON_GetObjectItemCaseSensitive(r, "environment");
    cJSON *tree = cJSON_Parse(
        "{\"cuda\": {\"dir\": \"/usr/local/cuda/lib64\", \"libraries\": ["
        "{\"path\": \"/x/libok.so\", \"tree\": {\"library\": \"libok.so\", \"found\": true}},"
        "{\"path\": \"/x/libnccl.so.2\", \"tree\": {\"library\": \"libnccl.so.2\", \"found\": true,"
        " \"needed\": [{\"library\": \"libgone.so.1\", \"found\": false, \"error\": \"no such file\"}]}}]}}");
    assert_non_null(tree);
    cJSON_AddItemToObject(env, "deps", tree);
    char *html = render(r);
    assert_non_null(strstr(html, "id=\"deps\""));
    assert_non_null(strstr(html, "<li class=\"missing\"><span class=\"mono\">libgone.so.1</span> — no such file"));
    assert_null(strstr(html, "<span class=\"mono\">libok.so</span>"));
    aitk_free(html);
    cJSON_Delete(r);
}

/* Numbers of the environment record read as report.json has them: a
 * multi-GPU link's 24.2 GB/s is "24.2", not the "24.199999999999999" that
 * %.17g writes; a third keeps the digits it needs to read back. */
static void test_environment_numbers_as_in_json(void **state)
{
    (void)state;
    cJSON *r = rt_load(FIXTURE);
    cJSON *link = cJSON_Parse("{\"gbs_per_direction\": 24.2, \"ratio\": 0.1, "
                              "\"third\": 0.333333333333333314829616256247390992939472198486328125, "
                              "\"bytes\": 1048576}");
    assert_non_null(link);
    cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(r, "environment"), "link", link);
    char *html = render(r);
    assert_non_null(strstr(html, "<dt>gbs_per_direction</dt><dd>24.2</dd>"));
    assert_non_null(strstr(html, "<dt>ratio</dt><dd>0.1</dd>"));
    assert_non_null(strstr(html, "<dt>third</dt><dd>0.33333333333333331</dd>"));
    assert_non_null(strstr(html, "<dt>bytes</dt><dd>1048576</dd>"));
    aitk_free(html);
    cJSON_Delete(r);
}

static void test_minimal_report(void **state)
{
    (void)state;
    /* A --quick report: no workloads, no micro, no deps; those sections vanish. */
    cJSON *r = rt_load(FIXTURE);
    cJSON_DeleteItemFromObjectCaseSensitive(r, "workloads");
    cJSON_DeleteItemFromObjectCaseSensitive(r, "micro");
    cJSON_DeleteItemFromObjectCaseSensitive(r, "deps");
    char *html = render(r);
    assert_null(strstr(html, "<svg"));
    assert_null(strstr(html, "id=\"micro\""));
    assert_null(strstr(html, "id=\"deps\""));
    assert_non_null(strstr(html, "<table id=\"checks\">"));
    aitk_free(html);
    /* Not a report at all: refused, not rendered. */
    cJSON *bad = cJSON_CreateObject();
    aitk_str out = AITK_STR_INIT;
    assert_int_equal(aitk_render_html(bad, &out), AITK_E_INVAL);
    aitk_str_free(&out);
    cJSON_Delete(bad);
    cJSON_Delete(r);
}

/* The step's GEMMs against the same GEMMs alone in each workload's card:
 * the verdict as a badge, the ratio and target, the slowest problems (the
 * one never timed alone says so), the reason a workload was not measured;
 * text escaped; no table where there are no problems. */
static void test_gemm_in_step(void **state)
{
    (void)state;
    cJSON *r = rt_load(FIXTURE);
    const char *wl = GEMM_IN_STEP_WORKLOADS;
    cJSON_ReplaceItemInObjectCaseSensitive(r, "workloads", cJSON_Parse(wl));
    char *html = render(r);
    assert_non_null(strstr(html, "<h3>GEMMs in the step against alone</h3><div class=\"muted\">"
                                 "<span class=\"badge v-warn\">warn</span> 84% of the isolated "
                                 "rate (target 85%); problems timed alone cover 97% of the GEMM "
                                 "FLOPs · a &lt;note&gt;</div>"));
    assert_non_null(strstr(html, "<tr><td>m=1000 n=2000 k=500</td><td class=\"num\">40</td>"
                                 "<td class=\"num\">80</td><td class=\"num\">1</td>"
                                 "<td class=\"num\">1.25</td><td class=\"num\">80%</td></tr>"));
    assert_non_null(strstr(html, "<tr><td>m=16 n=1000 k=1000</td><td class=\"num\">100</td>"
                                 "<td class=\"num\">10</td><td class=\"num\">0.32</td>"
                                 "<td class=\"num\">not timed alone</td><td></td></tr>"));
    assert_non_null(strstr(html, "<span class=\"badge v-skip\">skip</span> · not measured: set "
                                 "AITK_TIME_OPS=1 (op timing adds CUDA events around every "
                                 "op)</div>"));
    assert_int_equal(rt_count(html, "<h3>GEMMs in the step against alone</h3>"), 2);
    assert_int_equal(rt_count(html, "<table class=\"stats gemm-in-step\">"), 1);
    aitk_free(html);
    cJSON_Delete(r);
}

/* Fail each allocation in turn: the renderer reports NOMEM, or it returns
 * the whole page; never a crash, never a page with a piece silently missing. */
static void test_allocation_failures(void **state)
{
    (void)state;
    cJSON *r = rt_load(FIXTURE);
    char *want = render(r);
    int failures = 0, ok_in_a_row = 0;
    for (long n = 0; n < 20000 && ok_in_a_row < 20; n++) {
        aitk_str out = AITK_STR_INIT;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_render_html(r, &out);
        aitk_alloc_fail_after(-1);
        assert_true(st == AITK_OK || st == AITK_E_NOMEM);
        if (st == AITK_OK) {
            ok_in_a_row++;
            assert_string_equal(aitk_str_cstr(&out), want);
        } else {
            ok_in_a_row = 0;
            failures++;
        }
        aitk_str_free(&out);
    }
    assert_true(failures > 0);
    assert_int_equal(ok_in_a_row, 20);
    aitk_free(want);
    cJSON_Delete(r);
}

/* Any bytes in, well-formed text out: no raw markup, every '&' starts an
 * entity, only valid UTF-8 (checked by hand-decoding the lead bytes). */
static void test_escape_random_bytes(void **state)
{
    (void)state;
    unsigned long long seed = 99; /* 64 bits on Windows too (LLP64) */
    aitk_str in = AITK_STR_INIT, out = AITK_STR_INIT;
    for (int i = 0; i < 3000; i++) {
        aitk_str_clear(&in);
        aitk_str_clear(&out);
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t n = (seed >> 33) % 64;
        for (size_t k = 0; k < n; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            char c = (char)((seed >> 33) & 0xff);
            aitk_str_appendc(&in, c ? c : 'x');
        }
        assert_int_equal(aitk_xml_escape(&out, aitk_str_cstr(&in)), AITK_OK);
        const unsigned char *p = (const unsigned char *)aitk_str_cstr(&out);
        for (; *p; p++) {
            assert_true(*p != '<' && *p != '>' && *p != '"');
            if (*p == '&')
                assert_true(strncmp((const char *)p, "&amp;", 5) == 0 ||
                            strncmp((const char *)p, "&lt;", 4) == 0 ||
                            strncmp((const char *)p, "&gt;", 4) == 0 ||
                            strncmp((const char *)p, "&quot;", 6) == 0 ||
                            strncmp((const char *)p, "&#39;", 5) == 0);
            if (*p < 0x20)
                assert_true(*p == '\t' || *p == '\n' || *p == '\r');
            if (*p >= 0x80) {
                int len = *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : 2;
                assert_true(*p >= 0xC2 && *p <= 0xF4);
                for (int k = 1; k < len; k++)
                    assert_true(p[k] >= 0x80 && p[k] <= 0xBF);
                p += len - 1;
            }
        }
    }
    aitk_str_free(&in);
    aitk_str_free(&out);
}

/* A remedy's commands between backticks (gpu.c: "check `lsmod | grep
 * nvidia`") show in <code>, not as backticks around plain text; what is
 * inside is escaped as any text, and a backtick with no partner stays. */
static void test_remedy_commands_in_code(void **state)
{
    (void)state;
    cJSON *r = rt_load(FIXTURE);
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 2);
    cJSON_ReplaceItemInObjectCaseSensitive(
        c, "remedy",
        cJSON_CreateString("check `lsmod | grep nvidia` & ``wsl --set-version <distribution> 2``;"
                           " a lone ` stays"));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status")),
                        "fail");
    char *html = render(r);
    const char *want = "<strong>Fix:</strong> check <code>lsmod | grep nvidia</code> &amp; "
                       "<code>wsl --set-version &lt;distribution&gt; 2</code>; a lone ` stays</div>";
    if (!strstr(html, want))
        fail_msg("no\n%s\nin:\n%s", want, html);
    aitk_free(html);
    cJSON_Delete(r);
}

/* The relative luminance of colour "--NAME:#rrggbb" in the style block
 * that starts at `block` (WCAG 2.1, "relative luminance"). */
static double luminance(const char *block, const char *name)
{
    char key[32];
    snprintf(key, sizeof key, "--%s:#", name);
    const char *at = strstr(block, key);
    assert_non_null(at);
    unsigned rgb[3];
    assert_int_equal(sscanf(at + strlen(key), "%2x%2x%2x", &rgb[0], &rgb[1], &rgb[2]), 3);
    double l[3];
    for (int i = 0; i < 3; i++) {
        double c = rgb[i] / 255.0;
        l[i] = c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
    }
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
}

/* Every status colour is text on every status background: its own in a
 * badge, the verdict's in the banner's counts ("1 skipped" on a failed
 * run's red). WCAG 2.1 (1.4.3) asks 4.5:1 for text of this size (12 and
 * 15 pixels, bold), in the light scheme and the dark one. The light
 * scheme's grey was 3.90:1 on its own badge and its amber 4.24:1 on the
 * failed banner. */
static void test_status_colours_contrast(void **state)
{
    (void)state;
    static const char *const status[] = {"pass", "warn", "fail", "skip"};
    const char *blocks[] = {aitk_html_css, strstr(aitk_html_css, "prefers-color-scheme:dark")};
    assert_non_null(blocks[1]);
    for (int b = 0; b < 2; b++) {
        for (int fg = 0; fg < 4; fg++) {
            for (int bg = 0; bg < 4; bg++) {
                char bg_name[16];
                snprintf(bg_name, sizeof bg_name, "%s-bg", status[bg]);
                double l1 = luminance(blocks[b], status[fg]), l2 = luminance(blocks[b], bg_name);
                double ratio = (fmax(l1, l2) + 0.05) / (fmin(l1, l2) + 0.05);
                if (ratio < 4.5)
                    fail_msg("%s scheme: --%s on --%s is %.2f:1", b ? "dark" : "light",
                             status[fg], bg_name, ratio);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sections),
        cmocka_unit_test(test_escaping_and_self_contained),
        cmocka_unit_test(test_deps_in_environment),
        cmocka_unit_test(test_environment_numbers_as_in_json),
        cmocka_unit_test(test_status_colours_contrast),
        cmocka_unit_test(test_remedy_commands_in_code),
        cmocka_unit_test(test_minimal_report),
        cmocka_unit_test(test_gemm_in_step),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_escape_random_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
