/* The console view (console.h): the run's summary on the terminal. It is a
 * renderer like the others, a function of the report tree alone, so that
 * main.c only prints the text it returns. */
#include "reports/console.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "common/log.h"
#include "reports/buyer.h"
#include "reports/causes.h"
#include "reports/fields.h"

static const char *status_label(const char *status, bool color)
{
    if (strcmp(status, "pass") == 0)
        return color ? AITK_GREEN "PASS" AITK_RESET : "PASS";
    if (strcmp(status, "warn") == 0)
        return color ? AITK_YELLOW "WARN" AITK_RESET : "WARN";
    if (strcmp(status, "fail") == 0)
        return color ? AITK_RED "FAIL" AITK_RESET : "FAIL";
    return color ? AITK_DIM "SKIP" AITK_RESET : "SKIP";
}

/* An indented "label: text" line under a check, when the field has text.
 * A check's text quotes what it found (a requirements file's line, a
 * library's name, a path): made printable, on one line, so none of it can
 * move the cursor or start a line that looks like another check's. */
static void detail(aitk_str *out, const char *label, const cJSON *c, const char *key)
{
    const char *text = aitk_field_str(c, key);
    if (!*text)
        return;
    aitk_str_appendf(out, "        %s", label);
    aitk_str_append_printable(out, text, false);
    aitk_str_append(out, "\n");
}

static void render_check(aitk_str *out, const cJSON *c, int verbosity, bool color)
{
    const char *st = aitk_field_str(c, "status");
    aitk_str_appendf(out, "  %s  %-24s ", status_label(st, color), aitk_field_str(c, "id"));
    aitk_str_append_printable(out, aitk_field_str(c, "title"), false);
    if (*aitk_field_str(c, "observed")) {
        aitk_str_append(out, ": ");
        aitk_str_append_printable(out, aitk_field_str(c, "observed"), false);
    }
    aitk_str_append(out, "\n");
    bool bad = strcmp(st, "fail") == 0 || strcmp(st, "warn") == 0;
    bool skipped = strcmp(st, "skip") == 0;
    if (bad || skipped || verbosity > 0)
        detail(out, "", c, "message");
    if (verbosity > 0)
        detail(out, "expected: ", c, "expected");
    if (bad && *aitk_field_str(c, "follows")) {
        aitk_str_append(out, "        follows from ");
        aitk_str_append_printable(out, aitk_field_str(c, "follows"), false);
        aitk_str_append(out, ": fixing that may clear this\n");
    }
    if (bad)
        detail(out, "fix: ", c, "remedy");
    if (verbosity > 0)
        detail(out, "source: ", c, "source");
}

/* The buyer's answer, one sentence a model (buyer.h), where the console
 * leaves it in view: just above the verdict. */
static void render_buyer(aitk_str *out, const cJSON *buyer)
{
    if (cJSON_GetArraySize(buyer) == 0)
        return;
    aitk_str_appendf(out, "%s\n", AITK_BUYER_HEADING);
    const cJSON *e;
    cJSON_ArrayForEach(e, buyer)
    {
        aitk_str line = AITK_STR_INIT;
        aitk_buyer_sentence(e, &line);
        aitk_str_appendf(out, "  %s\n", aitk_str_cstr(&line));
        aitk_field_scratch_free(out, &line);
    }
}

static double count_of(const cJSON *counts, const char *key)
{
    double n = 0;
    aitk_field_num(counts, key, &n);
    return n;
}

/* Report text on a terminal: control characters shown escaped. */
static void printable(aitk_str *out, const char *text)
{
    aitk_str_append_printable(out, text, false);
}

static void render_verdict(aitk_str *out, const cJSON *summary)
{
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(summary, "counts");
    const char *v = aitk_field_str(summary, "verdict");
    const double warned = count_of(counts, "warn");
    aitk_str_appendf(out, "Verdict: %s (%g failed, %g warning%s, %g passed, %g skipped)\n",
                     strcmp(v, "fail") == 0   ? "FAIL"
                     : strcmp(v, "warn") == 0 ? "PASS with warnings"
                                              : "PASS",
                     count_of(counts, "fail"), warned, warned == 1 ? "" : "s",
                     count_of(counts, "pass"), count_of(counts, "skip"));
    aitk_fix_first_lines(out, summary, "Fix first: ", "\n", printable);
}

aitk_status aitk_render_console(const cJSON *report, const char *version, int verbosity,
                                bool color, aitk_str *out)
{
    aitk_str_appendf(out, "aitk-validate %s · level %s · profile %s\n", version,
                     aitk_field_str(report, "level"), aitk_field_str(report, "profile"));
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "checks"))
        render_check(out, c, verbosity, color);
    render_buyer(out, cJSON_GetObjectItemCaseSensitive(report, "buyer"));
    render_verdict(out, cJSON_GetObjectItemCaseSensitive(report, "summary"));
    return aitk_str_status(out);
}
