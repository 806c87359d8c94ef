/* The buyer section's words ("Can this machine train these LoRAs?") for
 * each source of figures, and its place in the Markdown and HTML pages.
 * Every expected sentence is written out here. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "reports/buyer.h"
#include "reports/html.h"
#include "reports/markdown.h"

static void expect_sentence(const char *entry_json, const char *want)
{
    cJSON *e = cJSON_Parse(entry_json);
    assert_non_null(e);
    aitk_str s = AITK_STR_INIT;
    assert_int_equal(aitk_buyer_sentence(e, &s), AITK_OK);
    assert_string_equal(aitk_str_cstr(&s), want);
    aitk_str_free(&s);
    cJSON_Delete(e);
}

#define FLUX_TARGET "\"target_minutes\": 45, \"target_gb\": 24, \"target_gpu\": \"RTX 4090\""

static void test_measured(void **state)
{
    (void)state;
    expect_sentence("{\"model\": \"flux1-dev\", \"title\": \"FLUX.1-dev LoRA\", \"fits\": true, "
                    "\"minutes_per_1000\": 52.4, \"source\": \"measured\", \"gpu\": \"NVIDIA "
                    "GeForce RTX 4090\", " FLUX_TARGET "}",
                    "FLUX.1-dev LoRA: fits; 52 min per 1000 steps, measured on NVIDIA GeForce "
                    "RTX 4090. Target: 24 GB, RTX 4090, 45 min per 1000 steps.");
}

static void test_predicted(void **state)
{
    (void)state;
    expect_sentence("{\"model\": \"chroma\", \"title\": \"Chroma LoRA\", \"fits\": true, "
                    "\"minutes_per_1000\": 200, \"source\": \"predicted\", \"gpu\": \"NVIDIA "
                    "A100-SXM4-80GB\", \"target_minutes\": 120, \"target_gb\": 32, "
                    "\"target_gpu\": \"A100\"}",
                    "Chroma LoRA: fits; 3 h 20 min per 1000 steps, predicted for NVIDIA "
                    "A100-SXM4-80GB. Target: 32 GB, A100, 2 h per 1000 steps.");
    /* A prediction for PyTorch on Windows says so (no flash attention
     * there); one for Linux says nothing more. */
    expect_sentence("{\"model\": \"flux1-dev\", \"title\": \"FLUX.1-dev LoRA\", \"fits\": true, "
                    "\"minutes_per_1000\": 70.4, \"source\": \"predicted\", \"gpu\": \"NVIDIA "
                    "GeForce RTX 4090\", \"os\": \"windows\", " FLUX_TARGET "}",
                    "FLUX.1-dev LoRA: fits; 70 min per 1000 steps, predicted for NVIDIA GeForce "
                    "RTX 4090 with PyTorch on Windows. Target: 24 GB, RTX 4090, 45 min per 1000 "
                    "steps.");
    expect_sentence("{\"model\": \"flux1-dev\", \"title\": \"FLUX.1-dev LoRA\", \"fits\": true, "
                    "\"minutes_per_1000\": 62.6, \"source\": \"predicted\", \"gpu\": \"NVIDIA "
                    "GeForce RTX 4090\", \"os\": \"linux\", " FLUX_TARGET "}",
                    "FLUX.1-dev LoRA: fits; 63 min per 1000 steps, predicted for NVIDIA GeForce "
                    "RTX 4090. Target: 24 GB, RTX 4090, 45 min per 1000 steps.");
    /* No time is given for a job that does not fit. */
    expect_sentence("{\"model\": \"omnigen2\", \"title\": \"OmniGen2 LoRA\", \"fits\": false, "
                    "\"minutes_per_1000\": null, \"source\": \"predicted\", \"gpu\": \"NVIDIA "
                    "GeForce RTX 3060\", \"target_minutes\": 240, \"target_gb\": 48, "
                    "\"target_gpu\": \"2x A100\"}",
                    "OmniGen2 LoRA: does not fit, predicted for NVIDIA GeForce RTX 3060. "
                    "Target: 48 GB, 2x A100, 4 h per 1000 steps.");
    /* What ai-toolkit's code does that the figure leaves out follows the
     * target, in its own words. */
    expect_sentence("{\"model\": \"chroma\", \"title\": \"Chroma LoRA\", \"fits\": true, "
                    "\"minutes_per_1000\": 90, \"source\": \"measured\", \"gpu\": \"NVIDIA "
                    "H200\", \"target_minutes\": 120, \"target_gb\": 32, \"target_gpu\": "
                    "\"A100\", \"not_modelled\": \"a mask the step does not build\"}",
                    "Chroma LoRA: fits; 90 min per 1000 steps, measured on NVIDIA H200. "
                    "Target: 32 GB, A100, 2 h per 1000 steps. Not in this figure (ai-toolkit's "
                    "code): a mask the step does not build.");
}

static void test_nothing_measured_keeps_cpu_figures_apart(void **state)
{
    (void)state;
    expect_sentence("{\"model\": \"flux1-dev\", \"title\": \"FLUX.1-dev LoRA\", \"fits\": null, "
                    "\"minutes_per_1000\": null, \"source\": \"none\", \"gpu\": null, "
                    "\"reason\": \"no GPU was detected\", \"cpu_minutes_per_1000\": 3.5, "
                    FLUX_TARGET "}",
                    "FLUX.1-dev LoRA: not measured (no GPU was detected). Target: 24 GB, "
                    "RTX 4090, 45 min per 1000 steps. CPU figures of the small configuration "
                    "(not a GPU measurement): 3.5 min per 1000 steps.");
}

/* A report with the section: it comes before the checks in both pages. */
static cJSON *report_with_buyer(void)
{
    cJSON *r = cJSON_Parse(
        "{\"schema_version\": \"1.0\", \"tool\": {\"name\": \"aitk-validate\", \"version\": "
        "\"0.1.0\", \"git_commit\": \"abc\"}, \"created_at\": \"2026-12-03T18:00:00Z\", "
        "\"command\": \"validate\", \"level\": \"quick\", \"profile\": \"default\", "
        "\"strict\": false, \"host\": {}, \"summary\": {\"counts\": {\"pass\": 1, \"warn\": 0, "
        "\"fail\": 1, \"skip\": 0}, \"verdict\": \"fail\"}, \"checks\": [{\"id\": \"gpu.plugin\", "
        "\"category\": \"gpu\", \"title\": \"t\", \"status\": \"fail\", \"observed\": \"\", "
        "\"expected\": \"\", \"message\": \"m\", \"remedy\": \"r\", \"source\": \"\", "
        "\"duration_ms\": 0}], \"buyer\": [{\"model\": \"chroma\", \"title\": \"Chroma LoRA\", "
        "\"fits\": null, \"minutes_per_1000\": null, \"source\": \"none\", \"gpu\": null, "
        "\"reason\": \"no GPU was detected\", \"target_minutes\": 120, \"target_gb\": 32, "
        "\"target_gpu\": \"A100\"}]}");
    assert_non_null(r);
    return r;
}

static void test_markdown_section_first(void **state)
{
    (void)state;
    cJSON *r = report_with_buyer();
    aitk_str md = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    const char *sec = strstr(md.ptr, "\n### Can this machine train these LoRAs?\n\n- Chroma "
                                     "LoRA: not measured (no GPU was detected). Target: 32 GB, "
                                     "A100, 2 h per 1000 steps.\n");
    assert_non_null(sec);
    const char *failed = strstr(md.ptr, "gpu.plugin");
    assert_non_null(failed);
    assert_true(sec < failed);
    aitk_str_free(&md);
    cJSON_Delete(r);
}

static void test_html_section_first(void **state)
{
    (void)state;
    cJSON *r = report_with_buyer();
    aitk_str html = AITK_STR_INIT;
    assert_int_equal(aitk_render_html(r, &html), AITK_OK);
    const char *sec = strstr(html.ptr, "<section id=\"buyer\"><h2>Can this machine train these "
                                       "LoRAs?</h2>\n<ul>\n<li>Chroma LoRA: not measured (no GPU "
                                       "was detected). Target: 32 GB, A100, 2 h per 1000 "
                                       "steps.</li>\n</ul></section>");
    assert_non_null(sec);
    assert_true(sec < strstr(html.ptr, "gpu.plugin"));
    aitk_str_free(&html);
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured),
        cmocka_unit_test(test_predicted),
        cmocka_unit_test(test_nothing_measured_keeps_cpu_figures_apart),
        cmocka_unit_test(test_markdown_section_first),
        cmocka_unit_test(test_html_section_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
