/* The Markdown report as GitHub shows it: the report of a Windows machine
 * whose texts hold what Markdown reads as markup (backslashes before
 * punctuation, 8.3 short names with tildes, __init__, a pipe inside a
 * command, <lambda>, a link, an image) is rendered by cmark-gfm, GitHub's
 * own renderer, with the extensions GitHub turns on (table, autolink,
 * strikethrough, tagfilter). Each text must come back character for
 * character, each table row with its four cells, and nothing may turn into
 * emphasis, a link, an image or raw HTML. The expected HTML was written by
 * hand and checked against cmark-gfm 0.29.0.gfm.6 (Debian 12). Skipped (77)
 * only when no cmark-gfm is installed (ci/install-deps.sh installs it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "reports/markdown.h"
#include "report_test_util.h"

static const char *cmark;

/* Renders `md` as GitHub would into `html`. */
static void github_render(const char *md, aitk_str *html)
{
    aitk_str dir = AITK_STR_INIT, file = AITK_STR_INIT, err = AITK_STR_INIT;
    rt_dir(&dir, "gfm");
    aitk_str_appendf(&file, "%s/report.md", dir.ptr);
    assert_int_equal(aitk_file_write_atomic(file.ptr, md, strlen(md), NULL), AITK_OK);
    const char *argv[] = {cmark,       "-e", "table",         "-e", "autolink", "-e",
                          "strikethrough", "-e", "tagfilter", file.ptr,   NULL};
    int rc = rt_run(argv, NULL, html, &err);
    if (rc != 0)
        fail_msg("cmark-gfm exited %d:\n%s", rc, aitk_str_cstr(&err));
    aitk_str_free(&dir);
    aitk_str_free(&file);
    aitk_str_free(&err);
}

static void expect(const char *html, const char *want)
{
    if (!strstr(html, want))
        fail_msg("cmark-gfm shows no\n%s\nin:\n%s", want, html);
}

static void test_windows_texts_read_as_written(void **state)
{
    (void)state;
    aitk_report_meta m = {"0.1.0", "abc", "quick", "p", "validate", false};
    cJSON *r = aitk_report_new(&m);
    aitk_check torch = {
        .id = "python.import_torch", .category = "python", .title = "import torch",
        .status = AITK_CHECK_FAIL,
        .message = "Error loading \"C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python310\\lib"
                   "\\site-packages\\torch\\lib\\fbgemm.dll\" or one of its dependencies.",
        .observed = "C:\\PROGRA~1\\NVIDIA~1\\CUDA\\v12.1\\bin; torch\\_C.cp310-win_amd64.pyd; "
                    "\\\\nas\\share\\",
        .expected = "__init__.py and *.dll",
        .remedy = "check `lsmod | grep nvidia` and `wsl --set-version <distribution> 2`",
        .source = "[docs](https://evil.example) ![x](https://evil.example/p.png) &copy; <lambda>"};
    aitk_check pipes = {.id = "host.pipes", .category = "host", .title = "Pipes",
                        .status = AITK_CHECK_PASS, .observed = "`a | b` and c|d",
                        .expected = "ends in a backslash\\"};
    aitk_report_add_check(r, &torch);
    aitk_report_add_check(r, &pipes);
    aitk_report_finish(r, NULL);
    aitk_str md = AITK_STR_INIT, html = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    github_render(md.ptr, &html);
    const char *h = aitk_str_cstr(&html);
    expect(h, "<li><strong>import torch</strong> (<code>python.import_torch</code>): Error "
              "loading &quot;C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python310\\lib"
              "\\site-packages\\torch\\lib\\fbgemm.dll&quot; or one of its dependencies.\n");
    expect(h, "<li>observed: C:\\PROGRA~1\\NVIDIA~1\\CUDA\\v12.1\\bin; "
              "torch\\_C.cp310-win_amd64.pyd; \\\\nas\\share\\; expected: __init__.py and "
              "*.dll</li>\n");
    /* A command between backticks stays a code span, pipe and <...> included. */
    expect(h, "<li><strong>fix:</strong> check <code>lsmod | grep nvidia</code> and "
              "<code>wsl --set-version &lt;distribution&gt; 2</code></li>\n");
    /* A bare URL is shown as itself (GitHub links any URL it sees); the
     * link text and the image around it stay text. */
    expect(h, "<li>source: [docs](<a href=\"https://evil.example\">https://evil.example</a>) "
              "![x](<a href=\"https://evil.example/p.png\">https://evil.example/p.png</a>) "
              "&amp;copy; &lt;lambda&gt;</li>\n");
    expect(h, "<tr>\n<td>fail</td>\n<td><code>python.import_torch</code> import torch</td>\n"
              "<td>C:\\PROGRA~1\\NVIDIA~1\\CUDA\\v12.1\\bin; torch\\_C.cp310-win_amd64.pyd; "
              "\\\\nas\\share\\</td>\n<td>__init__.py and *.dll</td>\n</tr>\n");
    expect(h, "<tr>\n<td>pass</td>\n<td><code>host.pipes</code> Pipes</td>\n"
              "<td><code>a | b</code> and c|d</td>\n<td>ends in a backslash\\</td>\n</tr>\n");
    assert_null(strstr(h, "<img"));
    assert_null(strstr(h, "<em>"));
    assert_null(strstr(h, "<del>"));
    aitk_str_free(&md);
    aitk_str_free(&html);
    cJSON_Delete(r);
}

/* A report from elsewhere (render reads any report.json) whose version
 * holds backticks: the version line stays one code span, and the link
 * between the backticks stays text in it. */
static void test_version_cannot_end_its_code_span(void **state)
{
    (void)state;
    aitk_report_meta m = {"1`[x](https://evil.example)`", "a_b", "quick", "p", "validate",
                          false};
    cJSON *r = aitk_report_new(&m);
    aitk_report_finish(r, NULL);
    aitk_str md = AITK_STR_INIT, html = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    github_render(md.ptr, &html);
    expect(html.ptr, "<p><code>aitk-validate 1`[x](https://evil.example)` (a_b)</code> · level "
                     "quick · profile p · ");
    assert_null(strstr(html.ptr, "<a "));
    aitk_str_free(&md);
    aitk_str_free(&html);
    cJSON_Delete(r);
}

int main(void)
{
    const char *const names[] = {"cmark-gfm", NULL};
    cmark = rt_which(names);
    if (!cmark) {
        printf("no cmark-gfm on PATH: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_texts_read_as_written),
        cmocka_unit_test(test_version_cannot_end_its_code_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
