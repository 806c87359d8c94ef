/* The HTML pages in a real browser (the report page, then the trend page
 * below): headless Chromium loads the rendered synthetic report, its DOM must hold the charts (svg) and the check table,
 * and a screenshot is saved as a test artifact
 * (tests/reports-out/browser/report.png, and report-dark.png with the dark
 * colour scheme). A page whose checks hold a path wider than the window
 * must stay as wide as the window, and so must a page in a window 500
 * pixels wide. Skipped (77) only when no Chromium is installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <unistd.h>

#include "reports/html.h"
#include "reports/trend.h"
#include "report_test_util.h"

static const char *chromium;

/* Chromium with its window `window` pixels wide. */
static void browser_at(int window, const char *const *extra, aitk_str *out)
{
    char size[64];
    snprintf(size, sizeof size, "--window-size=%d,3300", window);
    /* --no-sandbox: CI runs as root in a container, where the sandbox cannot start. */
    const char *argv[16] = {chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--hide-scrollbars", size};
    size_t n = 6;
    for (size_t i = 0; extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    aitk_str err = AITK_STR_INIT;
    int rc = rt_run(argv, NULL, out, &err);
    if (rc != 0)
        fail_msg("chromium exited %d:\n%s", rc, aitk_str_cstr(&err));
    aitk_str_free(&err);
}

static void browser(const char *const *extra, aitk_str *out)
{
    browser_at(1100, extra, out);
}

/* A screenshot that is a real page: a PNG, and not a blank frame. */
static void check_png(const char *dir, const char *name)
{
    aitk_str png = AITK_STR_INIT;
    aitk_str_appendf(&png, "%s/%s", dir, name);
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(aitk_file_read(png.ptr, 64u << 20, &data, &len, NULL), AITK_OK);
    assert_true(len > 20000);
    assert_memory_equal(data, "\x89PNG\r\n\x1a\n", 8);
    printf("screenshot: %s (%zu bytes)\n", png.ptr, len);
    aitk_free(data);
    aitk_str_free(&png);
}

/* The page as the browser laid it out: a copy of the page with a script
 * (the page itself has none) that writes into the DOM, for --dump-dom to
 * show, the document's scroll width, the window's width and how many of
 * the check table's ids and durations run over more than one line. */
static void laid_out(const char *html, const char *dir, int width, long *scroll, long *window,
                     long *wrapped)
{
    static const char measure[] =
        "<script>addEventListener('load',()=>{let n=0;"
        "for(const e of document.querySelectorAll('#checks code,#checks td.num')){"
        "const r=document.createRange();r.selectNodeContents(e);"
        "if(new Set([...r.getClientRects()].map(x=>Math.round(x.top))).size>1)n++}"
        "const p=document.createElement('pre');p.id='width';"
        "p.textContent=document.documentElement.scrollWidth+' '+innerWidth+' '+n;"
        "document.body.appendChild(p)})</script>";
    aitk_str page = AITK_STR_INIT, url = AITK_STR_INIT, dom = AITK_STR_INIT;
    aitk_str_appendf(&page, "%s/width.html", dir);
    aitk_str_appendf(&url, "file://%s", page.ptr);
    aitk_str copy = AITK_STR_INIT;
    aitk_str_appendf(&copy, "%s%s", html, measure);
    assert_int_equal(aitk_file_write_atomic(page.ptr, copy.ptr, copy.len, NULL), AITK_OK);
    const char *dump[] = {"--dump-dom", url.ptr, NULL};
    browser_at(width, dump, &dom);
    const char *w = strstr(aitk_str_cstr(&dom), "<pre id=\"width\">");
    assert_non_null(w);
    assert_int_equal(sscanf(w, "<pre id=\"width\">%ld %ld %ld", scroll, window, wrapped), 3);
    aitk_str_free(&page);
    aitk_str_free(&url);
    aitk_str_free(&dom);
    aitk_str_free(&copy);
}

static void test_dom_and_screenshot(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, page = AITK_STR_INIT, url = AITK_STR_INIT, shot = AITK_STR_INIT,
             dark = AITK_STR_INIT, dom = AITK_STR_INIT;
    rt_dir(&dir, "browser");
    aitk_str_appendf(&page, "%s/report.html", dir.ptr);
    aitk_str_appendf(&url, "file://%s", page.ptr);
    aitk_str_appendf(&shot, "--screenshot=%s/report.png", dir.ptr);
    aitk_str_appendf(&dark, "--screenshot=%s/report-dark.png", dir.ptr);

    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    aitk_str html = AITK_STR_INIT;
    assert_int_equal(aitk_render_html(r, &html), AITK_OK);
    assert_int_equal(aitk_file_write_atomic(page.ptr, html.ptr, html.len, NULL), AITK_OK);
    aitk_str_free(&html);
    cJSON_Delete(r);

    /* The DOM as the browser built it, not as we wrote it. */
    const char *dump[] = {"--dump-dom", url.ptr, NULL};
    browser(dump, &dom);
    const char *d = aitk_str_cstr(&dom);
    assert_int_equal(rt_count(d, "<svg class=\"chart\""), 4);
    assert_int_equal(rt_count(d, "<rect class=\"bar "), 6);
    const char *table = strstr(d, "<table id=\"checks\">");
    assert_non_null(table);
    /* The parser adds nothing and drops nothing: 8 rows in the table body. */
    assert_int_equal(rt_count(table, "<tr><td><span class=\"badge"), 8);
    assert_non_null(strstr(d, "FAIL: this machine is not ready"));
    assert_non_null(strstr(d, "<table id=\"micro-table\">"));
    assert_null(strstr(d, "<script"));

    const char *light[] = {shot.ptr, url.ptr, NULL};
    browser(light, NULL);
    const char *dark_args[] = {"--force-dark-mode", dark.ptr, url.ptr, NULL};
    browser(dark_args, NULL);
    check_png(dir.ptr, "report.png");
    check_png(dir.ptr, "report-dark.png");
    aitk_str_free(&dir);
    aitk_str_free(&page);
    aitk_str_free(&url);
    aitk_str_free(&shot);
    aitk_str_free(&dark);
    aitk_str_free(&dom);
}

/* The trend page of five nights whose last flux1-dev step is 10% slower:
 * the browser's DOM holds one line chart per series, one red dot (the
 * regression), a row per series and per run; a screenshot is kept
 * (tests/reports-out/browser/trend.png), and the page fits a window 500
 * pixels wide. */
static void test_trend_page(void **state)
{
    (void)state;
    aitk_str dir = AITK_STR_INIT, page = AITK_STR_INIT, url = AITK_STR_INIT, shot = AITK_STR_INIT,
             dom = AITK_STR_INIT, err = AITK_STR_INIT, html = AITK_STR_INIT;
    rt_dir(&dir, "browser");
    aitk_str_appendf(&page, "%s/trend.html", dir.ptr);
    aitk_str_appendf(&url, "file://%s", page.ptr);
    aitk_str_appendf(&shot, "--screenshot=%s/trend.png", dir.ptr);
    aitk_trend t;
    assert_int_equal(aitk_trend_init(&t, 5, 7), AITK_OK);
    for (int night = 1; night <= 5; night++) {
        cJSON *r = rt_load(FIXTURE);
        assert_non_null(r);
        char when[32], label[32];
        snprintf(when, sizeof when, "2026-11-%02dT05:00:00Z", night);
        snprintf(label, sizeof label, "nightly/2026-11-%02d/report.json", night);
        cJSON_ReplaceItemInObjectCaseSensitive(r, "created_at", cJSON_CreateString(when));
        cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "workloads"), 0);
        cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(w, "step_time_s"),
                                               "median",
                                               cJSON_CreateNumber(night == 5 ? 2.53 : 2.30));
        assert_int_equal(aitk_trend_add_report(&t, r, label, &err), AITK_OK);
        cJSON_Delete(r);
    }
    assert_int_equal(aitk_trend_finish(&t, 0), AITK_OK);
    assert_int_equal(aitk_trend_render(&t, AITK_TREND_HTML, &html), AITK_OK);
    assert_int_equal(aitk_file_write_atomic(page.ptr, html.ptr, html.len, NULL), AITK_OK);

    const char *dump[] = {"--dump-dom", url.ptr, NULL};
    browser(dump, &dom);
    const char *d = aitk_str_cstr(&dom);
    /* checks failed + the fixture's 2 failing checks + 2 workloads x 7 + 3 micro */
    assert_int_equal(t.nseries, 20);
    assert_int_equal(rt_count(d, "<svg class=\"chart trend\""), t.nseries);
    assert_int_equal(rt_count(d, "<circle class=\"pt bad\""), 1);
    assert_int_equal(rt_count(d, "<circle class=\"pt"), 5 * t.nseries);
    const char *series = strstr(d, "<table id=\"series\">"), *runs = strstr(d, "<table id=\"runs\">");
    assert_non_null(series);
    assert_non_null(runs);
    assert_int_equal(rt_count(series, "<tr><td><a href="), t.nseries);
    assert_int_equal(rt_count(runs, "<tr><td class=\"num\">"), 5);
    assert_non_null(strstr(d, "REGRESSION: 1 series got worse in the latest run"));
    assert_null(strstr(d, "<script"));

    const char *args[] = {shot.ptr, url.ptr, NULL};
    browser(args, NULL);
    check_png(dir.ptr, "trend.png");
    /* Its series table, in a window 500 pixels wide (566 without the
     * narrow layout). */
    long scroll = 0, window = 0, wrapped = -1;
    laid_out(html.ptr, dir.ptr, 500, &scroll, &window, &wrapped);
    if (scroll > window)
        fail_msg("the trend page is %ld pixels wide in a window of %ld", scroll, window);
    aitk_trend_free(&t);
    aitk_str_free(&dir);
    aitk_str_free(&page);
    aitk_str_free(&url);
    aitk_str_free(&shot);
    aitk_str_free(&dom);
    aitk_str_free(&err);
    aitk_str_free(&html);
}

/* A Windows path is one word as wide as the page (two of them joined by a
 * ';', as PATH holds them): it breaks inside its card and its table cell,
 * and the page stays as wide as the window, so the table's expected and ms
 * columns stay on it (without the wrapping, 1527 pixels in a window of
 * 1100). Only the long values break: no check id and no duration in the
 * table is split over two lines to make room. */
static void test_long_path_stays_on_page(void **state)
{
    (void)state;
    static const char path[] =
        "C:\\Users\\averyveryverylongusername\\AppData\\Local\\Programs\\Python\\Python310"
        "\\lib\\site-packages\\torch\\lib\\cudnn_engines_precompiled64_9.dll;C:\\Users"
        "\\averyveryverylongusername\\AppData\\Local\\Programs\\Python\\Python310\\lib"
        "\\site-packages\\nvidia\\cudnn\\bin\\cudnn_graph64_9.dll";
    aitk_str dir = AITK_STR_INIT, html = AITK_STR_INIT;
    rt_dir(&dir, "browser");
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "checks"))
    {
        cJSON_ReplaceItemInObjectCaseSensitive((cJSON *)c, "observed", cJSON_CreateString(path));
        cJSON_ReplaceItemInObjectCaseSensitive((cJSON *)c, "message", cJSON_CreateString(path));
        cJSON_ReplaceItemInObjectCaseSensitive((cJSON *)c, "duration_ms",
                                               cJSON_CreateNumber(1234.5));
    }
    cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(first, "id",
                                           cJSON_CreateString("host.disk.model_cache"));
    assert_int_equal(aitk_render_html(r, &html), AITK_OK);
    cJSON_Delete(r);
    long scroll = 0, window = 0, wrapped = -1;
    laid_out(html.ptr, dir.ptr, 1100, &scroll, &window, &wrapped);
    assert_int_equal(window, 1100);
    if (scroll > window)
        fail_msg("the page is %ld pixels wide in a window of %ld", scroll, window);
    assert_int_equal(wrapped, 0);
    aitk_str_free(&dir);
    aitk_str_free(&html);
}

/* A window 500 pixels wide, the narrowest headless Chromium opens: the
 * report whose microbenchmarks and checks hold the widest words that do
 * not break (a benchmark's name, the longest check id, attention.flux_joint
 * and env.cuda_visible_devices) stays as wide as the window (without the
 * narrow layout, 578 pixels; a --quick run's checks alone were 514), and
 * still no check id or duration is split over two lines. */
static void test_narrow_window(void **state)
{
    (void)state;
    static const char message[] =
        "libnvidia-ml.so.1: cannot open shared object file: No such file or directory; "
        "libnvidia-ml.so: cannot open shared object file: No such file or directory";
    aitk_str dir = AITK_STR_INIT, html = AITK_STR_INIT;
    rt_dir(&dir, "browser");
    cJSON *r = rt_load(FIXTURE);
    assert_non_null(r);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "checks"))
    {
        cJSON_ReplaceItemInObjectCaseSensitive((cJSON *)c, "observed",
                                               cJSON_CreateString(message));
        cJSON_ReplaceItemInObjectCaseSensitive((cJSON *)c, "expected",
                                               cJSON_CreateString("loadable, initialises"));
    }
    cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "checks"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(first, "id",
                                           cJSON_CreateString("env.cuda_visible_devices"));
    assert_int_equal(aitk_render_html(r, &html), AITK_OK);
    cJSON_Delete(r);
    long scroll = 0, window = 0, wrapped = -1;
    laid_out(html.ptr, dir.ptr, 500, &scroll, &window, &wrapped);
    assert_int_equal(window, 500);
    if (scroll > window)
        fail_msg("the page is %ld pixels wide in a window of %ld", scroll, window);
    assert_int_equal(wrapped, 0);
    aitk_str_free(&dir);
    aitk_str_free(&html);
}

int main(void)
{
    const char *const names[] = {"chromium", "chromium-browser", "google-chrome", NULL};
    chromium = rt_which(names);
    if (!chromium) {
        printf("no chromium on PATH: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dom_and_screenshot),
        cmocka_unit_test(test_trend_page),
        cmocka_unit_test(test_long_path_stays_on_page),
        cmocka_unit_test(test_narrow_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
