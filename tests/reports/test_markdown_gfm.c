/* The Markdown report as GitHub shows it: the report of a Windows machine
 * whose texts hold what Markdown reads as markup (backslashes before
 * punctuation, 8.3 short names with tildes, __init__, a pipe inside a
 * command, <lambda>, a link, an image) is rendered by cmark-gfm, GitHub's
 * own renderer, with the extensions GitHub turns on (table, autolink,
 * strikethrough, tagfilter). Each text must come back character for
 * character, each table row with its four cells, and nothing may turn into
 * emphasis, a link, an image or raw HTML; no URL, address, @name or issue
 * reference may stand where GitHub links it. The expected HTML was written
 * by hand and checked against cmark-gfm 0.29.0.gfm.6 (Debian 12). Skipped
 * (77) only when no cmark-gfm is installed (ci/install-deps.sh installs it). */
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
    /* A bare URL is shown as itself, in code (its word but the brackets
     * at its edges), where GitHub links nothing; the link text and the
     * image around it stay text. */
    expect(h, "<li>source: [<code>docs](https://evil.example</code>) "
              "![<code>x](https://evil.example/p.png</code>) &amp;copy; &lt;lambda&gt;</li>\n");
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

/* What a report quotes from elsewhere (a pip error, a loader message, the
 * source a rule cites) holds URLs, e-mail addresses, @names and issue
 * references. Pasted into an issue, cmark-gfm would link the URLs and
 * addresses (showing the backslashes that escape a URL's _ ~ &), and
 * github.com would ping @jdoe and cross-reference the issues it names; it
 * does neither inside code. Each comes back as the same characters, its
 * word in a code span but for the punctuation at its edges, in a list item
 * and in a table cell; look-alikes that GitHub leaves alone (torch @ file:,
 * pkg@1.0, C#1) stay plain text. */
static void test_links_and_mentions_stay_text(void **state)
{
    (void)state;
    aitk_report_meta m = {"0.1.0", "abc", "quick", "p", "validate", false};
    cJSON *r = aitk_report_new(&m);
    aitk_check pip = {
        .id = "python.requirements", .category = "python", .title = "requirements",
        .status = AITK_CHECK_FAIL,
        .message = "pip could not reach https://pypi.corp.example/simple/__init__/?a=1&b=~2 (see "
                   "https://github.com/ostris/ai-toolkit/issues/36); ask @jdoe or mail "
                   "first.last@corp.example.org",
        .observed = "www.example.com/a_b|c, ostris/ai-toolkit#91, #490 and GH-12",
        .expected = "torch @ file:///wheels/t.whl, pkg@1.0, C#1, me@localhost",
        .remedy = "wrap the step in @torch.compile, or ask @org/team-a",
        .source = "pytorch/pytorch#119989; git+https://github.com/huggingface/diffusers@v0.30.0"};
    /* Text right beside a span is a text of its own to GitHub ("@jdoe"
     * after one pings; "GH-12" before one links): the whole word is code. */
    aitk_check touching = {.id = "host.touching", .category = "host", .title = "Touching",
                           .status = AITK_CHECK_WARN,
                           .message = "`pip`https://x.org/a_b and GH-12`x` and `y`@jdoe",
                           .observed = "C:\\Users\\first.last@corp.example.org\\AppData"};
    aitk_report_add_check(r, &pip);
    aitk_report_add_check(r, &touching);
    aitk_report_finish(r, NULL);
    aitk_str md = AITK_STR_INIT, html = AITK_STR_INIT;
    assert_int_equal(aitk_render_markdown(r, &md), AITK_OK);
    github_render(md.ptr, &html);
    const char *h = aitk_str_cstr(&html);
    expect(h, "(<code>python.requirements</code>): pip could not reach "
              "<code>https://pypi.corp.example/simple/__init__/?a=1&amp;b=~2</code> (see "
              "<code>https://github.com/ostris/ai-toolkit/issues/36</code>); ask "
              "<code>@jdoe</code> or mail <code>first.last@corp.example.org</code>\n");
    expect(h, "<li>observed: <code>www.example.com/a_b|c</code>, "
              "<code>ostris/ai-toolkit#91</code>, <code>#490</code> and <code>GH-12</code>; "
              "expected: torch @ file:///wheels/t.whl, pkg@1.0, C#1, me@localhost</li>\n");
    expect(h, "<li><strong>fix:</strong> wrap the step in <code>@torch.compile</code>, or ask "
              "<code>@org/team-a</code></li>\n");
    expect(h, "<li>source: <code>pytorch/pytorch#119989</code>; "
              "<code>git+https://github.com/huggingface/diffusers@v0.30.0</code></li>\n");
    /* The table's cells: a pipe inside the span does not end the cell. */
    expect(h, "<td><code>www.example.com/a_b|c</code>, <code>ostris/ai-toolkit#91</code>, "
              "<code>#490</code> and <code>GH-12</code></td>\n"
              "<td>torch @ file:///wheels/t.whl, pkg@1.0, C#1, me@localhost</td>\n");
    expect(h, "(<code>host.touching</code>): <code>piphttps://x.org/a_b</code> and "
              "<code>GH-12x</code> and <code>y@jdoe</code>\n<ul>\n<li>observed: "
              "<code>C:\\Users\\first.last@corp.example.org\\AppData</code></li>\n");
    assert_null(strstr(h, "<a "));
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
        cmocka_unit_test(test_links_and_mentions_stay_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
