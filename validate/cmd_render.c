/* `aitk-validate render REPORT.json [--markdown F] [--html F] [--junit F]
 * [--json F] [--redact]`: renderers are pure functions of the saved report,
 * so any report can be re-rendered anywhere. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/cliopt.h"
#include "common/fileio.h"
#include "common/log.h"
#include "reports/compare.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/markdown.h"
#include "reports/redact.h"
#include "reports/report.h"
#include "validate/cli.h"
#include "validate/commands.h"
#include "validate/libdeps/render_md.h"

#define MAX_REPORT_BYTES (64u << 20)

static void render_help(void)
{
    fputs("Usage: aitk-validate render REPORT.json [--markdown FILE] [--html FILE]\n"
          "                            [--junit FILE] [--json FILE] [--redact]\n"
          "\n"
          "Re-renders a saved report. Without an output option the Markdown goes to\n"
          "standard output; FILE - is standard output too, for one output at most.\n"
          "Files are written atomically. A saved `deps --json` is rendered as\n"
          "Markdown only (--markdown FILE or standard output).\n"
          "  --markdown FILE   the Markdown summary (for an issue body)\n"
          "  --html FILE       the self-contained HTML page (charts, every check)\n"
          "  --junit FILE      JUnit XML for CI test reporters\n"
          "  --json FILE       the report itself (useful with --redact)\n"
          "  --redact          replace user and host names, home paths, addresses,\n"
          "                    GPU serials and UUIDs, tokens and keys first\n"
          "\n"
          "Exit codes: 0 rendered, 2 bad usage or an unreadable or malformed report,\n"
          "3 internal error or an output that could not be written.\n",
          stdout);
}

typedef aitk_status (*renderer)(const cJSON *report, aitk_str *out);

/* A whole number >= 0, as the schema requires of every count. */
static int is_count(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1e15 &&
           v->valuedouble == (double)(long long)v->valuedouble;
}

/* The summary every renderer shows: checked once here, before any renderer
 * runs, so that a malformed report is refused the same way (exit 2, the
 * file and the field named) whichever outputs were asked for, instead of one
 * renderer failing while another quietly prints "PASS" or "0 failed".
 * aitk_report_parse has checked the top level, schema_version and checks[]. */
static aitk_status check_summary(const char *path, const cJSON *report, aitk_str *err)
{
    static const char *const counts_keys[] = {"pass", "warn", "fail", "skip", "total"};
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(summary, "counts");
    aitk_verdict verdict;
    if (!cJSON_IsObject(summary)) {
        aitk_str_appendf(err, "%s: summary: missing or not an object", path);
        return AITK_E_PARSE;
    }
    if (!cJSON_IsObject(counts)) {
        aitk_str_appendf(err, "%s: summary.counts: missing or not an object", path);
        return AITK_E_PARSE;
    }
    for (size_t i = 0; i < sizeof counts_keys / sizeof *counts_keys; i++) {
        if (!is_count(cJSON_GetObjectItemCaseSensitive(counts, counts_keys[i]))) {
            aitk_str_appendf(err, "%s: summary.counts.%s: missing or not a whole number >= 0",
                             path, counts_keys[i]);
            return AITK_E_PARSE;
        }
    }
    if (aitk_report_verdict(report, &verdict)) {
        aitk_str_appendf(err, "%s: summary.verdict: missing or not one of pass, warn, fail",
                         path);
        return AITK_E_PARSE;
    }
    return AITK_OK;
}

/* A saved `deps --json` (schema aitk-deps/1): Markdown only, to --markdown
 * FILE or standard output; the page comes from validate/libdeps/render_md.c. */
static int render_deps(const char *path, cJSON *doc, const char *md, bool others, bool redact)
{
    aitk_str page = AITK_STR_INIT, err = AITK_STR_INIT;
    int rc = AITK_EXIT_OK;
    if (others) {
        aitk_log(AITK_LOG_ERROR, "render: %s is a deps report: it renders as Markdown only "
                                 "(--markdown FILE, or standard output)", path);
        rc = AITK_EXIT_USAGE;
    } else if (aitk_deps_render_saved(doc, redact, &page)) {
        aitk_log(AITK_LOG_ERROR, "%s: could not render Markdown (out of memory)", path);
        rc = AITK_EXIT_INTERNAL;
    } else if (!md || aitk_output_is_stdout(md)) {
        aitk_fputs_printable(aitk_str_cstr(&page), stdout);
    } else if (aitk_file_write_atomic(md, aitk_str_cstr(&page), page.len, &err)) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        rc = AITK_EXIT_INTERNAL;
    }
    aitk_str_free(&page);
    aitk_str_free(&err);
    cJSON_Delete(doc);
    return rc;
}

static aitk_status render_json(const cJSON *report, aitk_str *out)
{
    return aitk_report_to_json(report, out);
}

enum { MD, HTML, JUNIT, JSON, NOUT };

/* What the command line asks for: the report and where each rendering
 * goes (NULL: not asked for, "-": standard output). */
typedef struct render_args {
    const char *report;
    const char *paths[NOUT];
    bool redact;
} render_args;

/* -1 when the run goes on, else the exit code (help, or bad usage). */
static int parse_args(int argc, char **argv, render_args *a)
{
    static const struct option opts[] = {
        {"markdown", required_argument, NULL, 'm'},
        {"html", required_argument, NULL, 'H'},
        {"junit", required_argument, NULL, 'j'},
        {"json", required_argument, NULL, 'J'},
        {"redact", no_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    bool given[sizeof opts / sizeof *opts] = {false};
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        aitk_str err = AITK_STR_INIT;
        if (aitk_opt_once(c, opts, given, NULL, NULL, &err) == AITK_OK) {
            switch (c) {
            case 'm': a->paths[MD] = optarg; continue;
            case 'H': a->paths[HTML] = optarg; continue;
            case 'j': a->paths[JUNIT] = optarg; continue;
            case 'J': a->paths[JSON] = optarg; continue;
            case 'r': a->redact = true; continue;
            case 'h': render_help(); return AITK_EXIT_OK;
            default: aitk_opt_error("render", c, argv[optind - 1], optopt, opts, &err);
            }
        }
        return aitk_opt_usage_error("render", &err);
    }
    if (optind != argc - 1) {
        aitk_log(AITK_LOG_ERROR, "render: give exactly one report file (see render --help)");
        return AITK_EXIT_USAGE;
    }
    a->report = argv[optind];
    return -1;
}

/* `render out/report.json --markdown out/report.json` would replace the
 * report it renders: refused, as is one output written twice, and two
 * outputs on standard output ("-"), which would run together there. An
 * output that cannot be created is bad usage, found before any work; a
 * write that fails later (a full disk) is exit 3. */
static aitk_status check_outputs(const render_args *a, aitk_str *err)
{
    static const char *const options[NOUT] = {"--markdown", "--html", "--junit", "--json"};
    aitk_named_path outs[NOUT];
    for (int i = 0; i < NOUT; i++)
        outs[i] = (aitk_named_path){options[i], a->paths[i]};
    const aitk_named_path in = {"render", a->report};
    aitk_status st = aitk_outputs_distinct(outs, NOUT, &in, 1, err);
    for (int i = 0; !st && i < NOUT; i++)
        if (outs[i].path && !aitk_output_is_stdout(outs[i].path))
            st = aitk_output_file_ready(outs[i].path, err);
    return st;
}

/* The saved report, refused (positioned) unless every renderer can show it. */
static aitk_status load_report(const char *path, const char *text, size_t len, cJSON **report,
                               aitk_str *err)
{
    aitk_status st = aitk_report_parse(path, text, len, report, err);
    if (!st)
        st = check_summary(path, *report, err);
    /* The figures the renderers show, as compare reads them: a negative or
     * infinite step time, a step time written as a string, two workloads of
     * one name are refused here as there, not shown as "-2.3 s" or "". */
    if (!st)
        st = aitk_compare_check_report(*report, path, err);
    return st;
}

/* A report from elsewhere (an older build) is rendered without secrets
 * too, and redacted when asked: redacted first, so that its secrets get
 * numbered placeholders, then scrubbed where --redact does not rewrite. */
static int scrub(const char *path, cJSON *report, bool redact)
{
    int rc = AITK_EXIT_OK;
    if (redact && aitk_redact_report(report, NULL, NULL)) {
        aitk_log(AITK_LOG_ERROR, "%s: could not redact (out of memory)", path);
        rc = AITK_EXIT_INTERNAL;
    }
    if (aitk_scrub_secrets(report)) {
        aitk_log(AITK_LOG_ERROR, "%s: out of memory", path);
        rc = AITK_EXIT_INTERNAL;
    }
    return rc;
}

/* Renders everything asked for, even after one failure: each file stands
 * alone. */
static int write_renderings(const char *path, const cJSON *report, const char *const *paths)
{
    static const renderer renderers[NOUT] = {aitk_render_markdown, aitk_render_html,
                                             aitk_render_junit, render_json};
    static const char *const names[NOUT] = {"Markdown", "HTML", "JUnit XML", "JSON"};
    int rc = AITK_EXIT_OK;
    aitk_str out = AITK_STR_INIT, err = AITK_STR_INIT;
    for (int i = 0; i < NOUT; i++) {
        if (!paths[i])
            continue;
        aitk_str_clear(&out);
        aitk_str_clear(&err);
        if (renderers[i](report, &out)) {
            aitk_log(AITK_LOG_ERROR, "%s: could not render %s", path, names[i]);
            rc = AITK_EXIT_INTERNAL;
            break; /* out of memory: the next would fail alike */
        } else if (aitk_output_is_stdout(paths[i])) {
            aitk_fputs_printable(aitk_str_cstr(&out), stdout);
        } else if (aitk_file_write_atomic(paths[i], aitk_str_cstr(&out), out.len, &err)) {
            aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
            rc = AITK_EXIT_INTERNAL;
        }
    }
    aitk_str_free(&out);
    aitk_str_free(&err);
    return rc;
}

int aitk_cmd_render(int argc, char **argv)
{
    render_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char *path = a.report;
    char *text = NULL;
    size_t len = 0;
    aitk_str err = AITK_STR_INIT;
    cJSON *report = NULL;
    aitk_status st = check_outputs(&a, &err);
    if (!st)
        st = aitk_file_read(path, MAX_REPORT_BYTES, &text, &len, &err);
    cJSON *deps = NULL;
    aitk_status ds = st ? AITK_E_NOTFOUND : aitk_deps_json_load(path, text, len, &deps, &err);
    if (ds != AITK_E_NOTFOUND) { /* a deps report, or a malformed one */
        aitk_free(text);
        if (ds)
            aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        aitk_str_free(&err);
        return ds ? AITK_EXIT_USAGE
                  : render_deps(path, deps, a.paths[MD],
                                a.paths[HTML] || a.paths[JUNIT] || a.paths[JSON], a.redact);
    }
    if (!st)
        st = load_report(path, text, len, &report, &err);
    aitk_free(text);
    if (st) {
        aitk_log(AITK_LOG_ERROR, "%s", aitk_str_cstr(&err));
        aitk_str_free(&err);
        cJSON_Delete(report);
        return st == AITK_E_NOMEM ? AITK_EXIT_INTERNAL : AITK_EXIT_USAGE;
    }
    aitk_str_free(&err);
    if (!(a.paths[MD] || a.paths[HTML] || a.paths[JUNIT] || a.paths[JSON]))
        a.paths[MD] = "-";
    /* Nothing is written from a report that could not be scrubbed. */
    rc = scrub(path, report, a.redact);
    if (rc == AITK_EXIT_OK)
        rc = write_renderings(path, report, a.paths);
    cJSON_Delete(report);
    return rc;
}
