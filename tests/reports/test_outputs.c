/* The outputs of a real run: `--output-dir DIR` writes report.json,
 * report.html, report.md and junit.xml; `render` reproduces the HTML,
 * Markdown and JUnit byte for byte from report.json (renderers are pure
 * functions of the report); --redact and bad usage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report_test_util.h"

static void file_in(aitk_str *p, const char *dir, const char *name)
{
    aitk_str_clear(p);
    aitk_str_appendf(p, "%s/%s", dir, name);
}

static void test_output_dir_and_render(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, again = AITK_STR_INIT, a = AITK_STR_INIT, b = AITK_STR_INIT,
             out = AITK_STR_INIT, err = AITK_STR_INIT;
    rt_dir(&dir, "output-dir");
    rt_dir(&again, "output-dir-render");
    const char *run[] = {AITK_EXE, "--quick", "--output-dir", dir.ptr, NULL};
    int rc = rt_run(run, NULL, &out, &err);
    if (rc != 0 && rc != 1)
        fail_msg("exit %d: %s", rc, aitk_str_cstr(&err));
    static const char *const names[] = {"report.json", "report.html", "report.md", "junit.xml"};
    for (int i = 0; i < 4; i++) {
        file_in(&a, dir.ptr, names[i]);
        if (!rt_exists(a.ptr))
            fail_msg("%s missing; stdout:\n%s", a.ptr, aitk_str_cstr(&out));
        assert_non_null(strstr(out.ptr, a.ptr)); /* the run names each file */
    }
    file_in(&a, dir.ptr, "report.json");
    cJSON *r = rt_load(a.ptr);
    assert_non_null(r);
    assert_null(cJSON_GetObjectItemCaseSensitive(r, "redacted"));
    cJSON_Delete(r);

    /* render from the saved JSON gives the same three files. */
    aitk_str html = AITK_STR_INIT, md = AITK_STR_INIT, xml = AITK_STR_INIT;
    file_in(&html, again.ptr, "report.html");
    file_in(&md, again.ptr, "report.md");
    file_in(&xml, again.ptr, "junit.xml");
    const char *render[] = {AITK_EXE, "render", a.ptr, "--html", html.ptr, "--markdown", md.ptr,
                            "--junit", xml.ptr, NULL};
    assert_int_equal(rt_run(render, NULL, NULL, NULL), 0);
    for (int i = 1; i < 4; i++) {
        file_in(&b, dir.ptr, names[i]);
        aitk_str *mine = i == 1 ? &html : i == 2 ? &md : &xml;
        char *x = rt_read(b.ptr), *y = rt_read(mine->ptr);
        assert_non_null(x);
        assert_non_null(y);
        if (strcmp(x, y) != 0)
            fail_msg("render %s differs from the run's %s", mine->ptr, b.ptr);
        aitk_free(x);
        aitk_free(y);
    }
    char *page = rt_read(html.ptr);
    assert_non_null(strstr(page, "<table id=\"checks\">"));
    aitk_free(page);
    aitk_str_free(&html);
    aitk_str_free(&md);
    aitk_str_free(&xml);
    aitk_str_free(&dir);
    aitk_str_free(&again);
    aitk_str_free(&a);
    aitk_str_free(&b);
    aitk_str_free(&out);
    aitk_str_free(&err);
}

static void test_single_files_and_redact(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, html = AITK_STR_INIT, xml = AITK_STR_INIT, js = AITK_STR_INIT;
    rt_dir(&dir, "single-files");
    file_in(&html, dir.ptr, "page.html");
    file_in(&xml, dir.ptr, "ci.xml");
    file_in(&js, dir.ptr, "r.json");
    const char *run[] = {AITK_EXE, "--quick", "-Q",       "--redact", "--html", html.ptr,
                         "--junit", xml.ptr,  "--json",   js.ptr,     NULL};
    int rc = rt_run(run, NULL, NULL, NULL);
    assert_true(rc == 0 || rc == 1);
    assert_true(rt_exists(html.ptr));
    char *x = rt_read(xml.ptr);
    assert_non_null(x);
    assert_non_null(strstr(x, "<testsuites"));
    aitk_free(x);
    cJSON *r = rt_load(js.ptr);
    assert_non_null(r);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "redacted")));
    cJSON_Delete(r);
    aitk_str_free(&dir);
    aitk_str_free(&html);
    aitk_str_free(&xml);
    aitk_str_free(&js);
}

static void test_bad_usage(void **state)
{
    (void)state;
    const char *empty_bundle[] = {AITK_EXE, "--quick", "--support-bundle", "", NULL};
    assert_int_equal(rt_run(empty_bundle, NULL, NULL, NULL), 2);
    const char *no_value[] = {AITK_EXE, "--quick", "--html", NULL};
    assert_int_equal(rt_run(no_value, NULL, NULL, NULL), 2);
    const char *render_bad[] = {AITK_EXE, "render", FIXTURE, "--pdf", "x", NULL};
    assert_int_equal(rt_run(render_bad, NULL, NULL, NULL), 2);
    const char *render_unwritable[] = {AITK_EXE, "render", FIXTURE, "--html",
                                       "/nonexistent-dir/x.html", NULL};
    assert_int_equal(rt_run(render_unwritable, NULL, NULL, NULL), 2);
    /* No output option: Markdown on stdout. */
    aitk_str out = AITK_STR_INIT;
    const char *render_md[] = {AITK_EXE, "render", FIXTURE, NULL};
    assert_int_equal(rt_run(render_md, NULL, &out, NULL), 0);
    assert_non_null(strstr(out.ptr, "## aitk-validate: FAIL"));
    aitk_str_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_dir_and_render),
        cmocka_unit_test(test_single_files_and_redact),
        cmocka_unit_test(test_bad_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
