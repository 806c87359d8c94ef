/* `deps --markdown FILE` and `render DEPS.json`: the torch-2.4.0-shaped
 * fixture's broken chain, the folders in order and the fix reach the page;
 * a saved --json renders to the same page; a damaged deps document and an
 * output that would replace an input are refused (exit 2) naming the field
 * or the option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/fileio.h"
#include "common/proc.h"
#include "fixtures.h"

static int run(const char *const *args, aitk_str *out, aitk_str *errout)
{
    const char *argv[16] = {AITK_EXE};
    size_t n = 1;
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    aitk_proc_opts o = {.timeout_ms = 60000};
    aitk_proc_result r = {0};
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_proc_run(argv, &o, &r, out, errout, &err), AITK_OK);
    aitk_str_free(&err);
    assert_true(r.exited);
    return r.exit_code;
}

static char *slurp(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_file_read(path, 1u << 20, &text, &len, &err), AITK_OK);
    aitk_str_free(&err);
    return text;
}

static void need_pe(void)
{
    if (!fx_exists(FX_TORCH "/fbgemm.dll"))
        skip();
}

#define MD_OUT FX "/deps-test.md"
#define JSON_OUT FX "/deps-test.json"
#define MD_AGAIN FX "/deps-test-rendered.md"

static void test_markdown_page(void **state)
{
    (void)state;
    need_pe();
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    const char *args[] = {"deps", "--windows-root", FX_WINROOT, "--markdown", MD_OUT,
                          FX_TORCH "/fbgemm.dll", NULL};
    assert_int_equal(run(args, &out, &err), 1);
    /* The text still goes to standard output. */
    assert_non_null(strstr(aitk_str_cstr(&out), "PROBLEM: fbgemm.dll -> libomp140.x86_64.dll"));
    char *md = slurp(MD_OUT);
    const char *want[] = {
        "## aitk-validate deps: FAIL\n",
        "1 problem · 0 warnings · 0 unknown · 1 library examined",
        "### fbgemm.dll: FAIL",
        "- **PROBLEM**: fbgemm.dll -> libomp140.x86_64.dll: not found\n",
        "  - searched, in order:\n    1. " FX_TORCH " (the DLL's folder)\n",
        "  - **fix:** Upgrade torch to 2.4.1",
        /* In code: pasted into an issue, it must not cross-reference
         * pytorch's issue. */
        "  - source: `pytorch/pytorch#131662`"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(md, want[i]))
            fail_msg("page lacks '%s':\n%s", want[i], md);

    /* A saved --json renders to the same page. */
    const char *json[] = {"deps", "--json", "--windows-root", FX_WINROOT,
                          FX_TORCH "/fbgemm.dll", NULL};
    aitk_str_clear(&out);
    assert_int_equal(run(json, &out, &err), 1);
    assert_int_equal(aitk_file_write_atomic(JSON_OUT, out.ptr, out.len, &err), AITK_OK);
    const char *render[] = {"render", JSON_OUT, "--markdown", MD_AGAIN, NULL};
    assert_int_equal(run(render, &out, &err), 0);
    char *again = slurp(MD_AGAIN);
    assert_string_equal(again, md);
    aitk_free(again);
    aitk_free(md);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void test_markdown_refusals(void **state)
{
    (void)state;
    need_pe();
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    /* The page would replace the DLL it examines. */
    const char *same[] = {"deps", "--markdown", FX_TORCH "/c10.dll", FX_TORCH "/c10.dll", NULL};
    assert_int_equal(run(same, &out, &err), 2);
    assert_non_null(strstr(aitk_str_cstr(&err), "--markdown"));
    assert_int_equal(out.len, 0);
    /* A deps document with a damaged field: one line naming it. */
    const char *bad = "{\"schema\": \"aitk-deps/1\", \"ok\": false, \"roots\": "
                      "[{\"path\": \"a.dll\", \"ok\": false, \"problems\": 5, "
                      "\"warnings\": []}], \"skipped\": []}";
    aitk_str_clear(&err);
    assert_int_equal(aitk_file_write_atomic(JSON_OUT, bad, strlen(bad), &err), AITK_OK);
    const char *render[] = {"render", JSON_OUT, NULL};
    assert_int_equal(run(render, &out, &err), 2);
    assert_non_null(strstr(aitk_str_cstr(&err), "deps-test.json: roots[0].problems: missing or "
                                                "not a list"));
    assert_int_equal(out.len, 0);
    /* Only Markdown: an HTML page of a deps report is refused, not faked. */
    const char *good = "{\"schema\": \"aitk-deps/1\", \"ok\": true, \"roots\": [], "
                       "\"skipped\": []}";
    assert_int_equal(aitk_file_write_atomic(JSON_OUT, good, strlen(good), &err), AITK_OK);
    const char *html[] = {"render", JSON_OUT, "--html", FX "/deps-test.html", NULL};
    aitk_str_clear(&err);
    assert_int_equal(run(html, &out, &err), 2);
    assert_non_null(strstr(aitk_str_cstr(&err), "renders as Markdown only"));
    aitk_str_free(&out);
    aitk_str_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markdown_page),
        cmocka_unit_test(test_markdown_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
