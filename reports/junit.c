/* Report -> JUnit XML (the Ant/Jenkins dialect every CI reader accepts).
 *
 * Two passes over the same cases: the first counts per suite, because the
 * counts are attributes of the <testsuite> element that opens before its
 * cases. A "case" is a check, or one target of a workload.
 *
 * Checks are grouped into suites by category once, by sorting, so a report
 * with tens of thousands of checks renders in n log n, not n squared. */
#include "reports/junit.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "reports/fields.h"
#include "reports/xml_escape.h"

typedef enum outcome { OUT_PASS, OUT_FAIL, OUT_SKIP, OUT_WARN } outcome;

typedef struct suite_totals {
    int tests, failures, skipped;
    double seconds;
} suite_totals;

static void attr(aitk_str *out, const char *name, const char *value)
{
    aitk_str_appendf(out, " %s=\"", name);
    aitk_xml_escape(out, value);
    aitk_str_append(out, "\"");
}

static outcome check_outcome(const char *status, int strict)
{
    if (strcmp(status, "fail") == 0)
        return OUT_FAIL;
    if (strcmp(status, "skip") == 0)
        return OUT_SKIP;
    if (strcmp(status, "warn") == 0)
        return strict ? OUT_FAIL : OUT_WARN;
    return OUT_PASS;
}

/* "observed: x / expected: y / fix: z" as the failure body. */
static void detail(aitk_str *out, const char *message, const char *follows, const char *observed,
                   const char *expected, const char *remedy, const char *source)
{
    if (*message)
        aitk_str_appendf(out, "%s\n", message);
    if (*follows)
        aitk_str_appendf(out, "follows from %s: fixing that may clear this\n", follows);
    if (*observed)
        aitk_str_appendf(out, "observed: %s\n", observed);
    if (*expected)
        aitk_str_appendf(out, "expected: %s\n", expected);
    if (*remedy)
        aitk_str_appendf(out, "fix: %s\n", remedy);
    if (*source)
        aitk_str_appendf(out, "source: %s\n", source);
}

static void testcase(aitk_str *out, const char *classname, const char *name, double seconds,
                     outcome o, const char *message, const aitk_str *body)
{
    aitk_str_append(out, "    <testcase");
    attr(out, "name", name);
    attr(out, "classname", classname);
    aitk_str_appendf(out, " time=\"%.3f\"", seconds > 0 ? seconds : 0);
    if (o == OUT_PASS) {
        aitk_str_append(out, "/>\n");
        return;
    }
    aitk_str_append(out, ">\n      ");
    if (o == OUT_FAIL) {
        aitk_str_append(out, "<failure");
        attr(out, "message", *message ? message : name);
        attr(out, "type", "aitk.fail");
        aitk_str_append(out, ">");
        aitk_xml_escape(out, aitk_str_cstr(body));
        aitk_str_append(out, "</failure>\n");
    } else if (o == OUT_SKIP) {
        aitk_str_append(out, "<skipped");
        if (*message)
            attr(out, "message", message);
        aitk_str_append(out, "/>\n");
    } else {
        aitk_str_append(out, "<system-out>warning: ");
        aitk_xml_escape(out, aitk_str_cstr(body));
        aitk_str_append(out, "</system-out>\n");
    }
    aitk_str_append(out, "    </testcase>\n");
}

/* One check in its suite: `first` is where its category first appears in
 * the report, `order` where the check itself is. Sorting by (first, order)
 * gives suites in first-seen order and cases in report order, as a reader
 * of the report would list them. */
typedef struct check_ref {
    const cJSON *check;
    const char *category;
    size_t first, order;
} check_ref;

static int by_category(const void *a, const void *b)
{
    const check_ref *x = a, *y = b;
    int c = strcmp(x->category, y->category);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int by_suite(const void *a, const void *b)
{
    const check_ref *x = a, *y = b;
    if (x->first != y->first)
        return (x->first > y->first) - (x->first < y->first);
    return (x->order > y->order) - (x->order < y->order);
}

/* The checks in suite order (free with aitk_free); *n = 0 and NULL for
 * none. Two sorts: by category to find where each first appears, then by
 * that first appearance. */
static aitk_status group_checks(const cJSON *checks, check_ref **refs, size_t *n)
{
    *refs = NULL;
    *n = (size_t)cJSON_GetArraySize(checks);
    if (*n == 0)
        return AITK_OK;
    check_ref *r = aitk_malloc(*n * sizeof *r);
    if (!r)
        return AITK_E_NOMEM;
    size_t i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, checks)
    {
        r[i] = (check_ref){.check = c, .category = aitk_field_str(c, "category"), .order = i};
        i++;
    }
    qsort(r, *n, sizeof *r, by_category);
    for (i = 0; i < *n; i++)
        r[i].first = i > 0 && strcmp(r[i].category, r[i - 1].category) == 0 ? r[i - 1].first
                                                                             : r[i].order;
    qsort(r, *n, sizeof *r, by_suite);
    *refs = r;
    return AITK_OK;
}

/* Emits (when out != NULL) or counts the cases of one suite: refs[0..n),
 * all of one category. */
static void check_cases(aitk_str *out, const check_ref *refs, size_t n, int strict,
                        suite_totals *t)
{
    aitk_str body = AITK_STR_INIT, cls = AITK_STR_INIT;
    for (size_t i = 0; i < n; i++) {
        const cJSON *c = refs[i].check;
        outcome o = check_outcome(aitk_field_str(c, "status"), strict);
        double ms = 0;
        aitk_field_num(c, "duration_ms", &ms);
        t->tests++;
        t->failures += o == OUT_FAIL;
        t->skipped += o == OUT_SKIP;
        t->seconds += ms > 0 ? ms / 1000 : 0;
        if (!out)
            continue;
        aitk_str_clear(&body);
        aitk_str_clear(&cls);
        detail(&body, aitk_field_str(c, "message"), aitk_field_str(c, "follows"),
               aitk_field_str(c, "observed"),
               aitk_field_str(c, "expected"), aitk_field_str(c, "remedy"),
               aitk_field_str(c, "source"));
        aitk_str_appendf(&cls, "aitk.%s", refs[i].category);
        const char *msg = *aitk_field_str(c, "message") ? aitk_field_str(c, "message")
                                                        : aitk_field_str(c, "title");
        testcase(out, aitk_str_cstr(&cls), aitk_field_str(c, "id"), ms / 1000, o, msg, &body);
    }
    aitk_field_scratch_free(out, &body);
    aitk_field_scratch_free(out, &cls);
}

/* A workload's targets: its time per 1000 steps, its peak memory. A target
 * without a status (no figure to compare with) is reported as skipped. */
static void workload_cases(aitk_str *out, const cJSON *workloads, suite_totals *t)
{
    static const char *const targets[] = {"time_per_1000_steps", "memory"};
    const cJSON *w;
    aitk_str name = AITK_STR_INIT, body = AITK_STR_INIT, obs = AITK_STR_INIT,
             exp = AITK_STR_INIT;
    cJSON_ArrayForEach(w, workloads)
    {
        for (int k = 0; k < 2; k++) {
            const cJSON *tg = aitk_field_obj(w, targets[k]);
            const char *status = aitk_field_str(tg, "status");
            outcome o = !tg || !*status ? OUT_SKIP : check_outcome(status, 0);
            if (strcmp(aitk_field_str(w, "status"), "failed") == 0)
                o = OUT_FAIL;
            t->tests++;
            t->failures += o == OUT_FAIL;
            t->skipped += o == OUT_SKIP;
            if (!out)
                continue;
            aitk_str_clear(&name);
            aitk_str_clear(&body);
            aitk_str_clear(&obs);
            aitk_str_clear(&exp);
            aitk_str_appendf(&name, "workload.%s.%s", aitk_field_str(w, "name"),
                             k == 0 ? "time_per_1000_steps" : "peak_memory");
            double v;
            if (k == 0) {
                if (aitk_field_num(tg, "measured_s", &v))
                    aitk_str_appendf(&obs, "%.0f s per 1000 steps", v);
                if (aitk_field_num(tg, "target_s", &v))
                    aitk_str_appendf(&exp, "<= %.0f s (%s)", v, aitk_field_str(tg, "target_gpu"));
            } else {
                if (aitk_field_num(tg, "peak_bytes", &v))
                    aitk_str_appendf(&obs, "peak %.2f GiB", v / 1073741824.0);
                if (aitk_field_num(tg, "vram_bytes", &v))
                    aitk_str_appendf(&exp, "<= VRAM %.2f GiB", v / 1073741824.0);
                if (aitk_field_num(tg, "documented_min_bytes", &v))
                    aitk_str_appendf(&exp, "%sdocumented minimum %.2f GiB", exp.len ? ", " : "",
                                     v / 1073741824.0);
            }
            const char *msg = *aitk_field_str(w, "message") ? aitk_field_str(w, "message")
                              : o == OUT_SKIP                 ? "no target to compare with"
                                                              : aitk_str_cstr(&obs);
            detail(&body, aitk_field_str(w, "message"), "", aitk_str_cstr(&obs),
                   aitk_str_cstr(&exp), "", aitk_field_str(tg, "source"));
            testcase(out, "aitk.workload", aitk_str_cstr(&name), 0, o, msg, &body);
        }
    }
    aitk_field_scratch_free(out, &name);
    aitk_field_scratch_free(out, &body);
    aitk_field_scratch_free(out, &obs);
    aitk_field_scratch_free(out, &exp);
}

static void suite_open(aitk_str *out, const char *name, const suite_totals *t,
                       const char *stamp, const char *host)
{
    aitk_str_append(out, "  <testsuite");
    attr(out, "name", name);
    aitk_str_appendf(out, " tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" "
                          "time=\"%.3f\"",
                     t->tests, t->failures, t->skipped, t->seconds);
    attr(out, "timestamp", stamp);
    attr(out, "hostname", host);
    aitk_str_append(out, ">\n");
}

aitk_status aitk_render_junit(const cJSON *report, aitk_str *out)
{
    const cJSON *checks = aitk_field_array(report, "checks");
    if (!checks)
        return AITK_E_INVAL;
    const cJSON *workloads = aitk_field_array(report, "workloads");
    int strict = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "strict"));
    /* The Ant schema's timestamp has no zone designator; ours is UTC. */
    aitk_str stamp = AITK_STR_INIT;
    const char *created = aitk_field_str(report, "created_at");
    aitk_str_appendn(&stamp, created, strcspn(created, "Z"));
    if (!stamp.len)
        aitk_str_append(&stamp, "1970-01-01T00:00:00");
    const char *host = aitk_field_str(aitk_field_obj(report, "host"), "hostname");
    if (!*host)
        host = "localhost";

    check_ref *refs = NULL;
    size_t n = 0;
    if (group_checks(checks, &refs, &n)) {
        aitk_str_free(&stamp);
        return AITK_E_NOMEM;
    }
    suite_totals all = {0};
    aitk_str body = AITK_STR_INIT;
    for (size_t i = 0, end; i < n; i = end) {
        end = i + 1;
        while (end < n && refs[end].first == refs[i].first)
            end++;
        const char *cat = refs[i].category;
        suite_totals t = {0}, again = {0};
        check_cases(NULL, refs + i, end - i, strict, &t);
        suite_open(&body, *cat ? cat : "uncategorised", &t, aitk_str_cstr(&stamp), host);
        check_cases(&body, refs + i, end - i, strict, &again);
        aitk_str_append(&body, "  </testsuite>\n");
        all.tests += t.tests;
        all.failures += t.failures;
        all.seconds += t.seconds;
    }
    aitk_free(refs);
    if (workloads && cJSON_GetArraySize(workloads) > 0) {
        suite_totals t = {0}, again = {0};
        workload_cases(NULL, workloads, &t);
        suite_open(&body, "workloads", &t, aitk_str_cstr(&stamp), host);
        workload_cases(&body, workloads, &again);
        aitk_str_append(&body, "  </testsuite>\n");
        all.tests += t.tests;
        all.failures += t.failures;
    }
    /* No skipped total on <testsuites>: the Jenkins xUnit plugin's schema
     * (junit-10.xsd) does not allow it there and skips the whole file; each
     * <testsuite> carries its own. */
    aitk_str_append(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
    attr(out, "name", "aitk-validate");
    aitk_str_appendf(out, " tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n",
                     all.tests, all.failures, all.seconds);
    aitk_str_appendn(out, aitk_str_cstr(&body), body.len);
    aitk_str_append(out, "</testsuites>\n");
    aitk_field_scratch_free(out, &body);
    aitk_field_scratch_free(out, &stamp);
    return aitk_str_status(out);
}
